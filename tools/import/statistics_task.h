#ifndef TPROBE_TOOLS_IMPORT_STATISTICS_TASK_H_
#define TPROBE_TOOLS_IMPORT_STATISTICS_TASK_H_

// Loading a statistics-task dump: statistic.csv rows into records.

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "tools/common/reporter.h"
#include "tools/import/source_layout.h"
#include "tools/import/tensor_record.h"

namespace tprobe::import {

// Reads every CSV of `sources` on `threads` threads (0:
// DefaultThreadCount()), counting them as progress, and merges the kept
// rows of each step (all graphs) into records ordered by Timestamp; equal
// timestamps keep file order. A tensor gets "Max", "Min", "Mean" and
// "Norm" for each statistic column that any CSV of its step has, null
// where its own file lacks it, as pandas' concat does.
//
// Returns the records of each source, in the order of `sources`, or the
// first error in source order (see ReadStatisticCsv).
Result<std::vector<StepRecords>> LoadStatisticsSteps(
    const std::vector<StatisticsStepSource>& sources, size_t threads,
    tools::Reporter& reporter);

// Says whether two records of a statistics step hold identical data: the
// same dtype, shape and statistics.
Result<bool> SameStatisticsRecordData(const TensorRecord& first,
                                      const TensorRecord& again);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_STATISTICS_TASK_H_
