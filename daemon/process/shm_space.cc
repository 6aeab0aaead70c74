#include "daemon/process/shm_space.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "common/config/config.h"
#include "common/shm/layout.h"

namespace tprobe::daemon {
namespace {

std::string MiB(uint64_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// MemAvailable from /proc/meminfo, in bytes.
std::optional<uint64_t> MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib << 10;
  }
  return std::nullopt;
}

// What is left under this process's cgroup v2 memory limit, when it has one.
std::optional<uint64_t> CgroupRoom() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroup, line)) {
    if (!line.starts_with("0::")) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    std::ifstream max_file(dir + "/memory.max");
    std::ifstream current_file(dir + "/memory.current");
    std::string max;
    uint64_t current = 0;
    if (!(max_file >> max) || max == "max" || !(current_file >> current)) {
      return std::nullopt;
    }
    std::istringstream parse(max);
    uint64_t limit = 0;
    if (!(parse >> limit)) return std::nullopt;
    return limit > current ? limit - current : 0;
  }
  return std::nullopt;
}

}  // namespace

Status CheckShmSpace(uint64_t bytes, const std::string& what) {
  std::optional<uint64_t> room = MemAvailable();
  std::string where = "this machine has";
  if (auto cgroup = CgroupRoom(); cgroup && (!room || *cgroup < *room)) {
    room = cgroup;
    where = "tprobed's memory cgroup has";
  }
  if (!room || bytes <= *room) return Status::Ok();
  return Status::Error(
      what + " need " + MiB(bytes) + " of shared memory, but " + where + " " +
      MiB(*room) +
      " available; lower tprobe.ring_bytes / ring_count, or give tprobed "
      "more memory");
}

Status CheckExpectedRanks(int ranks) {
  if (ranks <= 0) return Status::Ok();
  const config::Config defaults;
  return CheckShmSpace(
      static_cast<uint64_t>(ranks) *
          shm::SegmentBytes(defaults.ring_count + 1, defaults.ring_bytes,
                            config::kBoundaryRingBytes),
      "--expect-ranks " + std::to_string(ranks) + ": that many ranks with " +
          std::to_string(defaults.ring_count) + " rings of " +
          MiB(defaults.ring_bytes) + " each and a boundary ring of " +
          MiB(config::kBoundaryRingBytes));
}

}  // namespace tprobe::daemon
