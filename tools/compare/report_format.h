#ifndef TPROBE_TOOLS_COMPARE_REPORT_FORMAT_H_
#define TPROBE_TOOLS_COMPARE_REPORT_FORMAT_H_

// How the reports (CSV, HTML, terminal) write numbers, shapes and names.
//
// Thread safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/compare/tree_pairs.h"

namespace tprobe::compare {

// A metric as msprobe writes it: at most 12 decimals, trailing zeros cut
// ("0.5", "1e-07" stays fixed: "0.0000001"), "Nan" for NaN, "inf" and
// "-inf".
std::string FormatNumber(double v);
// `v` as Python's repr(float) writes it: the shortest text that reads
// back to `v`, fixed from 1e-4 up to 1e16 ("0.17349910736083807", "2.0"),
// exponent form otherwise ("1e-05", "1.5e+16"); "nan", "inf", "-inf".
std::string PyRepr(double v);
// A metric as msprobe 26.x writes it: rounded to 12 decimals, then
// PyRepr ("Nan" for NaN, as msprobe's metrics write it).
std::string FormatMetric(double v);
// Python's repr() of the text `s` (UTF-8): in single quotes, or double
// quotes when it holds a ' and no "; \\, \n, \r, \t and other control
// characters escaped.
std::string PyStrRepr(std::string_view s);
// Python's str() of a list of texts: "['a', 'b']".
std::string PyListRepr(const std::vector<std::string>& items);
// FormatNumber, or "N/A" when there is none.
std::string FormatNumber(const std::optional<double>& v);
// A relative error as msprobe's statistics mode writes it: "12.5%".
std::string FormatPercent(const std::optional<double>& fraction);
// "[2, 3]".
std::string ShapeText(const std::vector<int64_t>& shape);
// The CSV file name of a pair: compare_result.csv for a single pair,
// compare_result_step0_rank1.csv otherwise.
std::string CsvFileName(const DumpPair& pair);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_FORMAT_H_
