#ifndef TPROBE_TOOLS_IMPORT_TENSOR_TASK_H_
#define TPROBE_TOOLS_IMPORT_TENSOR_TASK_H_

// Loading a tensor-task dump: TensorDump .npy files into records.

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "tools/common/reporter.h"
#include "tools/import/source_layout.h"
#include "tools/import/tensor_record.h"

namespace tprobe::import {

// Parses every file name of `sources`, then reads and summarises every
// file on `threads` threads (0: DefaultThreadCount()), counting them as
// progress. Each record's order is its TensorDump id, its origin and
// source_file the file's path.
//
// Returns the records of each source, in the order of `sources`, or the
// first error in source order: a file name that does not parse, or a file
// that is not a valid .npy (the message names the file).
Result<std::vector<StepRecords>> LoadTensorSteps(
    const std::vector<TensorStepSource>& sources, size_t threads,
    tools::Reporter& reporter);

// Says whether two records of a tensor step hold identical data: same
// dtype and CRC, then the same bytes on disk.
Result<bool> SameTensorRecordData(const TensorRecord& first,
                                  const TensorRecord& again);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_TENSOR_TASK_H_
