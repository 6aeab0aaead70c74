#ifndef TPROBE_TOOLS_COMPARE_COMPARISON_H_
#define TPROBE_TOOLS_COMPARE_COMPARISON_H_

// `tprobe compare`'s engine: finds the pairs of dump.json files
// (tree_pairs.h), loads them, matches their rows (matcher.h), compares every
// pair of rows (row_compare.h), judges each call's rows as msprobe does
// (msprobe_verdicts.h) and finds the first divergence. Loading runs
// in parallel across pairs, comparing across rows of every pair, on a
// small pool of threads.
//
// Thread safety: CompareTrees may be called concurrently; the Reporter is
// thread-safe.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/common/reporter.h"
#include "tools/compare/input/dump_rows.h"
#include "tools/compare/input/name_mapping.h"
#include "tools/compare/msprobe/layer_mapping.h"
#include "tools/compare/msprobe/msprobe_mapping.h"
#include "tools/compare/row_compare.h"
#include "tools/compare/tree_pairs.h"

namespace tprobe::compare {

struct CompareOptions {
  bool fuzzy = false;
  // Besides msprobe 26.x's verdicts (msprobe_verdicts.h), tprobe's stricter
  // per-row rules (row_compare.h) where they are worse.
  bool strict_verdicts = false;
  NameMapping mapping;
  MsprobeMapping msprobe_mapping;  // msprobe's -cm/-am/-dm
  // msprobe's -lm: a data mapping per pair, in place of msprobe_mapping.
  std::optional<LayerMapping> layer_mapping;
  size_t threads = 0;  // 0: one per core
};

// One target dump against one baseline dump.
struct PairResult {
  DumpPair pair;
  std::optional<Dump> target;
  std::optional<Dump> baseline;
  Mode mode = Mode::kStatistics;
  std::string note;             // why the mode is not each side's own, say
  std::vector<RowResult> rows;  // in execution order
  std::array<size_t, kVerdictCount> counts{};
  std::optional<size_t> first_divergence;  // index into rows

  bool passed() const { return !first_divergence; }
  // The row's name on whichever side has it, and its entry and module path.
  const Row& RowOf(const RowResult& r) const;
  const Dump& DumpOf(const RowResult& r) const;
};

struct CompareResult {
  std::vector<PairResult> pairs;
  std::optional<size_t> first_pair;  // the pair of the first divergence
  size_t rows = 0;
  std::array<size_t, kVerdictCount> counts{};
  bool passed() const { return !first_pair; }
};

// Compares `target` with `baseline` (two dump.json files, step folders or
// dump roots). Returns InvalidArgument for inputs that cannot be paired or
// a dump.json that cannot be read; progress goes to `reporter`.
Result<CompareResult> CompareTrees(const std::string& target,
                                   const std::string& baseline,
                                   const CompareOptions& options,
                                   tools::Reporter& reporter);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_COMPARISON_H_
