#ifndef TPROBE_TOOLS_IMPORT_CALL_ORDER_H_
#define TPROBE_TOOLS_IMPORT_CALL_ORDER_H_

// Execution order and call numbering of a step's records.

#include <vector>

#include "tools/import/tensor_record.h"

namespace tprobe::import {

// Sorts `records` by `order` (the TensorDump id, or the Timestamp rank).
// The sort is stable, so records with equal orders keep the order they
// were found in.
void SortByExecution(std::vector<TensorRecord>& records);

// Numbers the calls of each cell in execution order: the k-th record (from
// 0) of a slot key ("Cell.a.A.forward.input.0") gets `call` k, so that
// `…forward.input.0` becomes `…forward.{k}.input.0`, as msprobe's
// rename_filename does.
// REQUIRES: `records` is sorted by SortByExecution, duplicates dropped.
void AssignCallIndices(std::vector<TensorRecord>& records);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_CALL_ORDER_H_
