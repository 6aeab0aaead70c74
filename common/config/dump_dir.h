#ifndef TPROBE_COMMON_CONFIG_DUMP_DIR_H_
#define TPROBE_COMMON_CONFIG_DUMP_DIR_H_

// Where a config's dump of one step and rank goes: dump_path/step{N}/rank{R},
// msprobe's directory names. The daemon writes there; the client names it
// to its user.

#include <cstdint>
#include <string>

namespace tprobe::config {

// "rank{R}", or "rank" when there is no distributed rank (rank < 0).
std::string RankDirName(int rank);

// dump_path/step{step}/rank{R}
std::string StepRankDir(const std::string& dump_path, uint32_t step, int rank);

}  // namespace tprobe::config

#endif  // TPROBE_COMMON_CONFIG_DUMP_DIR_H_
