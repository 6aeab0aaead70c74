#ifndef TPROBE_TOOLS_COMPARE_REPORT_CSV_REPORT_H_
#define TPROBE_TOOLS_COMPARE_REPORT_CSV_REPORT_H_

// compare_result_*.csv: one file per pair of dumps, msprobe 26.x
// compare's columns for the pair's mode in its order (CompareConst; with
// NPU_Stack_Info where the target has a stack.json, and tensor mode's
// Data_name last), rows in execution order, cells as msprobe writes them
// (msprobe_cells.h, python_repr.h's PyRepr). A row only the baseline
// has is written with "N/A" as its NPU Name and "missing" as its Result; a
// row only the target has with "N/A" as its Bench Name and "extra".
//
// Thread safety: WriteCsv may be called concurrently for different files.

#include <string>

#include "common/status.h"
#include "tools/compare/comparison.h"

namespace tprobe::compare {

// Writes `pair`'s rows to `dir`/CsvFileName(pair) (through a temporary file
// and a rename). Returns an error naming the file when it cannot be written.
Status WriteCsv(const PairResult& pair, const std::string& dir);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_CSV_REPORT_H_
