#ifndef TPROBE_TOOLS_COMPARE_REPORT_REPORT_FORMAT_H_
#define TPROBE_TOOLS_COMPARE_REPORT_REPORT_FORMAT_H_

// How the reports (CSV, HTML, terminal) write numbers and file names.
// Values written as Python writes them are python_repr.h's.
//
// Thread safety: pure functions.

#include <optional>
#include <string>

#include "tools/compare/tree_pairs.h"

namespace tprobe::compare {

// A metric as msprobe writes it: at most 12 decimals, trailing zeros cut
// ("0.5", "1e-07" stays fixed: "0.0000001"), "Nan" for NaN, "inf" and
// "-inf".
std::string FormatNumber(double v);
// A metric as msprobe 26.x writes it: rounded to 12 decimals, then
// PyRepr ("Nan" for NaN, as msprobe's metrics write it).
std::string FormatMetric(double v);
// FormatNumber, or "N/A" when there is none.
std::string FormatNumber(const std::optional<double>& v);
// The CSV file name of a pair: compare_result.csv for a single pair,
// compare_result_step0_rank1.csv otherwise.
std::string CsvFileName(const DumpPair& pair);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_REPORT_FORMAT_H_
