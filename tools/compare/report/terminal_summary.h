#ifndef TPROBE_TOOLS_COMPARE_REPORT_TERMINAL_SUMMARY_H_
#define TPROBE_TOOLS_COMPARE_REPORT_TERMINAL_SUMMARY_H_

// The one-screen summary `tprobe compare` prints: the counts per pair (at
// most 12 pairs, then one line for the rest), the totals, the first
// divergence with its module path, and where the reports are.
//
// Thread safety: none needed (one call, one thread).

#include <string>

#include "tools/compare/comparison.h"

namespace tprobe::compare {

std::string TerminalSummary(const CompareResult& result,
                            const std::string& out_dir);

// "Functional.linear.3.forward.output.0 (step0/rank1)\n  module path: ...
// \n  ..." for the first divergence; empty when everything passed.
std::string DescribeFirstDivergence(const CompareResult& result);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_TERMINAL_SUMMARY_H_
