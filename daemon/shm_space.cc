#include "daemon/shm_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "common/config/config.h"
#include "common/shm/layout.h"

namespace tprobe::daemon {
namespace {

std::string MiB(uint64_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

}  // namespace

Status CheckShmSpace(uint64_t bytes, const std::string& what,
                     const std::string& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    return Status::Error("cannot read the free space of " + dir + ": " +
                         std::strerror(errno));
  }
  const uint64_t free = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (bytes <= free) return Status::Ok();
  return Status::Error(
      what + " need " + MiB(bytes) + " of shared memory, but " + dir + " has " +
      MiB(free) + " free (of " +
      MiB(static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize) +
      "); enlarge it (docker --shm-size, a Kubernetes emptyDir with medium "
      "Memory and a sizeLimit) or lower tprobe.ring_bytes / ring_count");
}

Status CheckExpectedRanks(int ranks, const std::string& dir) {
  if (ranks <= 0) return Status::Ok();
  const config::Config defaults;
  return CheckShmSpace(
      static_cast<uint64_t>(ranks) *
          shm::SegmentBytes(defaults.ring_count, defaults.ring_bytes),
      "--expect-ranks " + std::to_string(ranks) + ": that many ranks with " +
          std::to_string(defaults.ring_count) + " rings of " +
          MiB(defaults.ring_bytes) + " each",
      dir);
}

}  // namespace tprobe::daemon
