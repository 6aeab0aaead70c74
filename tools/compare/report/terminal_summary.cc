// The terminal summary of a compare (terminal_summary.h).

#include "tools/compare/report/terminal_summary.h"

#include <cstdio>

#include "tools/compare/report/report_format.h"

namespace tprobe::compare {
namespace {

constexpr size_t kMaxPairLines = 12;

std::string Counts(const std::array<size_t, kVerdictCount>& c, size_t rows) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%7zu rows  %7zu pass  %5zu warning  %5zu error  %5zu missing"
                "  %5zu extra",
                rows, c[0], c[1], c[2], c[3], c[4]);
  return buf;
}

}  // namespace

std::string DescribeFirstDivergence(const CompareResult& result) {
  if (!result.first_pair) return "";
  const PairResult& p = result.pairs[*result.first_pair];
  const RowResult& r = p.rows[*p.first_divergence];
  const Row& row = p.RowOf(r);
  const Dump& dump = p.DumpOf(r);
  const std::string& entry = dump.entries[row.entry];
  std::string s = "first divergence: " + row.name;
  if (!p.pair.label.empty()) s += " (" + p.pair.label + ")";
  s += "\n  call:        " + entry;
  s += "\n  module path: " + dump.ModulePath(entry);
  s += std::string("\n  verdict:     ") + VerdictName(r.verdict) + " (" +
       r.result + ")";
  if (r.tensor) {
    s += "\n  Cosine " + FormatNumber(r.tensor->cosine) + ", MaxAbsErr " +
         FormatNumber(r.tensor->max_abs) + ", MaxRelativeErr " +
         FormatNumber(r.tensor->max_relative);
  }
  if (!r.message.empty()) s += "\n  message:     " + r.message;
  return s + "\n";
}

std::string TerminalSummary(const CompareResult& result,
                            const std::string& out_dir) {
  std::string s;
  size_t shown = 0;
  for (const PairResult& p : result.pairs) {
    if (shown++ == kMaxPairLines) {
      s += "  ... " + std::to_string(result.pairs.size() - kMaxPairLines) +
           " more pairs in the report\n";
      break;
    }
    const std::string label = p.pair.label.empty() ? "dump" : p.pair.label;
    char head[64];
    std::snprintf(head, sizeof head, "  %-18s %-10s", label.c_str(),
                  ModeName(p.mode));
    s += head + Counts(p.counts, p.rows.size()) + "\n";
  }
  s += "  total" + std::string(24, ' ') + Counts(result.counts, result.rows) +
       "\n";
  if (result.passed()) {
    s += "every row passes\n";
  } else {
    s += DescribeFirstDivergence(result);
  }
  s += "reports: " + out_dir + "/report.html and compare_result*.csv\n";
  return s;
}

}  // namespace tprobe::compare
