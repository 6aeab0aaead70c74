// Finding the first inf or NaN of a step (nan_analysis.h).

#include "tools/compare/nan_analysis.h"

#include <cmath>
#include <mutex>
#include <tuple>

#include "tools/common/parallel.h"
#include "tools/compare/input/dump_rows.h"
#include "tools/compare/tree_pairs.h"

namespace tprobe::compare {
namespace {

bool NonFinite(const std::optional<double>& v) {
  return v && !std::isfinite(*v);
}

bool NonFinite(const Row& row) {
  return NonFinite(row.stats.max) || NonFinite(row.stats.min) ||
         NonFinite(row.stats.mean) || NonFinite(row.stats.norm);
}

// An output row: the part after the entry's name starts with ".output".
bool IsOutput(const Row& row, const std::string& entry) {
  return std::string_view(row.name).substr(entry.size()).starts_with(".output");
}

std::optional<NanFinding> FirstNonFinite(const Dump& dump) {
  size_t communications = 0;
  size_t r = 0;
  for (size_t e = 0; e < dump.entries.size(); ++e) {
    const std::string& entry = dump.entries[e];
    bool bad_input = false;
    const Row* bad_output = nullptr;
    const Row* first_bad = nullptr;
    for (; r < dump.rows.size() && dump.rows[r].entry == e; ++r) {
      const Row& row = dump.rows[r];
      if (!NonFinite(row)) continue;
      if (!first_bad) first_bad = &row;
      if (IsOutput(row, entry)) {
        if (!bad_output) bad_output = &row;
      } else {
        bad_input = true;
      }
    }
    const bool communication = entry.starts_with("Distributed.");
    if (first_bad) {
      NanFinding f;
      f.entry = entry;
      f.module_path = dump.ModulePath(entry);
      f.made_here = !bad_input;
      f.row = (bad_output && !bad_input ? bad_output : first_bad)->name;
      f.communication = communication;
      f.communications_before = communications;
      f.position = e;
      return f;
    }
    if (communication) ++communications;
  }
  return std::nullopt;
}

}  // namespace

Result<NanReport> AnalyzeNan(const std::string& step_dir, size_t threads) {
  Result<std::vector<RankDump>> ranks = FindRanks(step_dir);
  if (!ranks.ok()) return ranks.status();
  std::vector<std::optional<NanFinding>> found(ranks->size());
  std::mutex mu;
  Status failed = Status::Ok();
  tools::ParallelFor(ranks->size(), threads, [&](size_t i) {
    Result<Dump> dump = LoadDump((*ranks)[i].dump_json);
    if (!dump.ok()) {
      std::lock_guard lock(mu);
      if (failed.ok()) failed = dump.status();
      return;
    }
    found[i] = FirstNonFinite(*dump);
    if (found[i]) {
      found[i]->rank_label = (*ranks)[i].label;
      found[i]->rank = (*ranks)[i].rank;
    }
  });
  if (!failed.ok()) return failed;
  NanReport report;
  report.ranks = ranks->size();
  for (auto& f : found) {
    if (f) report.findings.push_back(std::move(*f));
  }
  // A receipt is a communication call whose output went bad from finite
  // inputs: another rank sent it. Anything else can be an origin; when
  // every finding is a receipt (an all_reduce that overflowed), they all
  // can.
  auto key = [](const NanFinding& f) {
    return std::tuple(f.communications_before, f.position, f.rank.value_or(-1));
  };
  for (int pass = 0; pass < 2 && !report.origin; ++pass) {
    for (size_t i = 0; i < report.findings.size(); ++i) {
      const NanFinding& f = report.findings[i];
      const bool receipt = f.communication && f.made_here;
      if (pass == 0 && receipt) continue;
      if (!report.origin || key(f) < key(report.findings[*report.origin])) {
        report.origin = i;
      }
    }
  }
  return report;
}  // namespace tprobe::compare

std::string DescribeNanReport(const NanReport& report) {
  std::string s;
  if (report.findings.empty()) {
    return "no inf or NaN in " + std::to_string(report.ranks) + " rank" +
           (report.ranks == 1 ? "" : "s") + "\n";
  }
  auto rank_name = [](const NanFinding& f) {
    return f.rank_label.empty() ? std::string("the dump") : f.rank_label;
  };
  const NanFinding& o = report.findings[*report.origin];
  s += "origin: " + rank_name(o) + ", " + o.entry + "\n";
  s += "  module path: " + o.module_path + "\n";
  s += "  first non-finite row: " + o.row + "\n";
  s += o.made_here ? "  its inputs are finite, its output is not\n"
                   : "  it arrived in the inputs (no earlier call on this "
                     "rank produced it)\n";
  for (size_t i = 0; i < report.findings.size(); ++i) {
    if (i == *report.origin) continue;
    const NanFinding& f = report.findings[i];
    s += "  " + rank_name(f) + ": first at " + f.entry;
    if (f.communication && f.made_here) {
      s += " (received from another rank)";
    }
    s += "\n";
  }
  s += std::to_string(report.findings.size()) + " of " +
       std::to_string(report.ranks) + " ranks hold an inf or NaN\n";
  return s;
}

}  // namespace tprobe::compare
