#ifndef TPROBE_TOOLS_COMPARE_TREE_PAIRS_H_
#define TPROBE_TOOLS_COMPARE_TREE_PAIRS_H_

// Which dump.json of the target goes with which of the baseline. Each input
// is one of:
//   - a dump.json file (or a rank folder holding one): one pair;
//   - a step folder, step{N}/: its rank folders are paired by rank number
//     (rank{R}); folders without a number (msprobe's rank, proc{pid}) are
//     paired in name order;
//   - a dump root: its step{N} folders are paired by N, then their ranks.
// A step or rank that only one side has is still listed, with the other
// side empty, so that its rows show as missing or extra.
//
// Thread safety: FindPairs may be called concurrently.

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tprobe::compare {

struct DumpPair {
  std::string label;                    // "step0/rank1"; "" for one pair
  std::optional<int> step;              // from step{N}
  std::optional<int> rank;              // from rank{R}
  std::optional<std::string> target;    // a dump.json path
  std::optional<std::string> baseline;  // a dump.json path
};

// The pairs of `target` and `baseline`, steps then ranks in increasing
// order. Returns InvalidArgument when a path does not exist, holds no
// dump.json, or the two inputs are of different kinds (a file and a root).
Result<std::vector<DumpPair>> FindPairs(const std::string& target,
                                        const std::string& baseline);

// The dump.json files of one step folder (or one rank folder, or one
// dump.json) with their rank numbers, for nan-analyze; the ranks in order.
struct RankDump {
  std::string label;  // "rank1", "proc1234"
  std::optional<int> rank;
  std::string dump_json;
};
Result<std::vector<RankDump>> FindRanks(const std::string& step_dir);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_TREE_PAIRS_H_
