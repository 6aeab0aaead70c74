#ifndef TPROBE_TOOLS_IMPORT_DUPLICATES_H_
#define TPROBE_TOOLS_IMPORT_DUPLICATES_H_

// Removal of repeated dumps. In graph mode a TensorDump can fire again for
// the same tensor; the repeat has the same name and the same data, and
// msprobe's cell dump deletes it before numbering the calls.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/import/tensor_record.h"

namespace tprobe::import {

// Says whether `again` holds the same data as `first`, two records of the
// same slot key. It may read files, so it can fail.
using SameDataFn = std::function<Result<bool>(const TensorRecord& first,
                                              const TensorRecord& again)>;

// Receives one human-readable line.
using LogFn = std::function<void(const std::string& line)>;

// Drops every record whose slot key appeared earlier in `records` with
// identical data, and logs one line for each:
//   "dropped duplicate <again.origin> (same name and data as <first.origin>)"
// As in msprobe, a record is compared with the first record of its key
// only, so a later call that differs from the first is kept.
//
// REQUIRES: `records` is in execution order (SortByExecution).
// Returns the number of records dropped, or the first error of `same_data`
// (then `records` is unchanged).
Result<size_t> DropDuplicates(std::vector<TensorRecord>& records,
                              const SameDataFn& same_data, const LogFn& log);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_DUPLICATES_H_
