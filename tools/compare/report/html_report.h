#ifndef TPROBE_TOOLS_COMPARE_REPORT_HTML_REPORT_H_
#define TPROBE_TOOLS_COMPARE_REPORT_HTML_REPORT_H_

// report.html: one self-contained page (inline CSS, JS and SVG; nothing is
// fetched) with the summary per pair, the first divergence with its chain
// of modules, the module tree of the pair that diverged first (or the
// first pair) coloured by the worst verdict under each node
// (module_tree.h), a plot of that pair's error along execution order, and
// a table sortable by any column.
// The table holds every row that did not pass and as many passing rows as
// fit in kMaxTableRows; the CSV files hold them all. When its script has
// run the page sets <body data-ready="1"> (a test's hook).
//
// Thread safety: WriteHtmlReport may be called concurrently for different
// folders.

#include <cstddef>
#include <string>

#include "common/status.h"
#include "tools/compare/comparison.h"

namespace tprobe::compare {

inline constexpr size_t kMaxTableRows = 20000;

// The page's text.
std::string HtmlReport(const CompareResult& result, const std::string& target,
                       const std::string& baseline);

// Writes HtmlReport to `dir`/report.html.
Status WriteHtmlReport(const CompareResult& result, const std::string& target,
                       const std::string& baseline, const std::string& dir);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_HTML_REPORT_H_
