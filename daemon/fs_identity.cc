#include "daemon/fs_identity.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tprobe::daemon {
namespace {

// Only this thread's supplementary groups (see the header).
int ThreadSetGroups(size_t n, const gid_t* groups) {
  return static_cast<int>(::syscall(SYS_setgroups, n, groups));
}

}  // namespace

FsIdentity::FsIdentity(uid_t uid, gid_t gid) {
  if (::geteuid() != 0 || uid == 0) return;
  const int n = ::getgroups(0, nullptr);
  if (n > 0) {
    groups_.resize(static_cast<size_t>(n));
    groups_.resize(static_cast<size_t>(::getgroups(n, groups_.data())));
  }
  active_ = true;
  // setfsuid/setfsgid return the previous value, whether or not they took
  // the new one: calling them again with the same value says which.
  const gid_t one[1] = {gid};
  ok_ = ThreadSetGroups(1, one) == 0;
  fsgid_ = static_cast<gid_t>(::setfsgid(gid));
  ok_ = ok_ && static_cast<gid_t>(::setfsgid(gid)) == gid;
  fsuid_ = static_cast<uid_t>(::setfsuid(uid));
  ok_ = ok_ && static_cast<uid_t>(::setfsuid(uid)) == uid;
}

FsIdentity::~FsIdentity() {
  if (!active_) return;
  ::setfsuid(fsuid_);
  ::setfsgid(fsgid_);
  (void)ThreadSetGroups(groups_.size(), groups_.data());
}

}  // namespace tprobe::daemon
