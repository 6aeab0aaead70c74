#include "daemon/process/fs_identity.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tprobe::daemon {
namespace {

// Only this thread's supplementary groups (see the header).
int ThreadSetGroups(size_t n, const gid_t* groups) {
  return static_cast<int>(::syscall(SYS_setgroups, n, groups));
}

// The daemon's own supplementary groups, read once, by the first guard
// before it changes its thread's (guards do not nest, so a thread has them
// whenever a guard begins).
const std::vector<gid_t>& DaemonGroups() {
  static const std::vector<gid_t> groups = [] {
    std::vector<gid_t> g(
        static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
    g.resize(static_cast<size_t>(
        std::max(0, ::getgroups(static_cast<int>(g.size()), g.data()))));
    return g;
  }();
  return groups;
}

}  // namespace

std::vector<gid_t> RankGroups(gid_t gid, pid_t pid) {
  std::vector<gid_t> groups{gid};
  if (pid <= 0) return groups;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("Groups:")) continue;
    std::istringstream ids(line.substr(7));
    for (gid_t g; ids >> g;) groups.push_back(g);
    break;
  }
  return groups;
}

FsIdentity::FsIdentity(uid_t uid, gid_t gid, std::span<const gid_t> groups) {
  if (::geteuid() != 0 || uid == 0) return;
  (void)DaemonGroups();  // read while this thread still has them
  active_ = true;
  // setfsuid/setfsgid return the previous value, whether or not they took
  // the new one: calling them again with the same value says which.
  const gid_t primary[1] = {gid};
  if (groups.empty()) groups = primary;
  ok_ = ThreadSetGroups(groups.size(), groups.data()) == 0;
  fsgid_ = static_cast<gid_t>(::setfsgid(gid));
  ok_ = ok_ && static_cast<gid_t>(::setfsgid(gid)) == gid;
  fsuid_ = static_cast<uid_t>(::setfsuid(uid));
  ok_ = ok_ && static_cast<uid_t>(::setfsuid(uid)) == uid;
}

FsIdentity::~FsIdentity() {
  if (!active_) return;
  ::setfsuid(fsuid_);
  ::setfsgid(fsgid_);
  const std::vector<gid_t>& groups = DaemonGroups();
  (void)ThreadSetGroups(groups.size(), groups.data());
}

}  // namespace tprobe::daemon
