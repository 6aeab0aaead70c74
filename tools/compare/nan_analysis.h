#ifndef TPROBE_TOOLS_COMPARE_NAN_ANALYSIS_H_
#define TPROBE_TOOLS_COMPARE_NAN_ANALYSIS_H_

// `tprobe nan-analyze`: where an inf or NaN first appeared in one step,
// across its ranks.
//
// On each rank the dump order is walked to the first call with a
// non-finite value, judged by the statistics of dump.json (a NaN anywhere
// in a tensor makes its Max, Min, Mean and Norm NaN; an infinity makes Max
// or Min infinite; a value row by its number). That call either made it
// (its inputs and parameters are finite, an output is not) or received it
// (an input already was). Communication calls (Distributed.*) carry values
// between ranks: a rank whose first non-finite value comes out of one got
// it from another rank, so the origin is the rank whose first non-finite
// call is not such a receipt, the earliest by the number of communication
// calls it made before it (ties: dump order, then rank).
//
// Thread safety: AnalyzeNan may be called concurrently; ranks are read in
// parallel.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tprobe::compare {

struct NanFinding {
  std::string rank_label;  // "rank1"
  std::optional<int> rank;
  std::string entry;           // the call
  std::string module_path;     // construct.json's chain to it
  std::string row;             // its first non-finite row
  bool made_here = false;      // inputs finite, an output not
  bool communication = false;  // a Distributed.* call
  size_t communications_before = 0;
  size_t position = 0;  // the entry's index in dump.json
};

struct NanReport {
  size_t ranks = 0;
  std::vector<NanFinding> findings;  // one per rank that has any, rank order
  std::optional<size_t> origin;      // index into findings
};

// Analyzes `step_dir` (a step{N} folder, a rank folder or a dump.json).
// Returns InvalidArgument for a path that holds no dump.json or a file
// that is not one.
Result<NanReport> AnalyzeNan(const std::string& step_dir, size_t threads);

// The report as text for the terminal.
std::string DescribeNanReport(const NanReport& report);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_NAN_ANALYSIS_H_
