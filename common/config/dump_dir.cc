#include "common/config/dump_dir.h"

namespace tprobe::config {

std::string RankDirName(int rank) {
  return rank < 0 ? std::string("rank") : "rank" + std::to_string(rank);
}

std::string StepRankDir(const std::string& dump_path, uint32_t step, int rank) {
  return dump_path + "/step" + std::to_string(step) + "/" + RankDirName(rank);
}

}  // namespace tprobe::config
