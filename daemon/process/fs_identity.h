#ifndef TPROBE_DAEMON_PROCESS_FS_IDENTITY_H_
#define TPROBE_DAEMON_PROCESS_FS_IDENTITY_H_

// A rank's files are made as the rank's user. In a daemon running as root,
// an FsIdentity sets the calling thread's filesystem uid and gid
// (setfsuid/setfsgid) and its supplementary groups to the rank's user,
// primary group and the groups its process has (RankGroups) for its
// lifetime. The kernel then checks every path walk,
// open, mkdir, rename and link as that user: a symlink the user planted
// cannot lead a write where the user could not write, and what is created
// belongs to the user, who can read and delete it. Changing the fsuid from
// 0 also drops the filesystem capabilities (capabilities(7)) until it is
// set back.
//
// These credentials are per thread in the kernel; the raw system calls are
// used for the groups so that only this thread changes (glibc's setgroups
// changes every thread). Without root, or for a root client, it does
// nothing: the daemon's own user writes as itself.
//
// Thread safety: a guard belongs to the thread that made it; guards on one
// thread do not nest.

#include <sys/types.h>

#include <span>
#include <vector>

namespace tprobe::daemon {

// The groups a rank's files are made with: `gid` (its primary group), then
// the supplementary groups of process `pid` ("Groups:" of /proc/PID/status,
// none when they cannot be read: the process is gone, or in another pid
// namespace). Read once, when the rank registers.
std::vector<gid_t> RankGroups(gid_t gid, pid_t pid);

class FsIdentity {
 public:
  // Takes `uid`, `gid` and the group list `groups` (RankGroups; just `gid`
  // when empty).
  FsIdentity(uid_t uid, gid_t gid, std::span<const gid_t> groups = {});
  ~FsIdentity();
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;

  // False when the identity could not be taken (the thread stays root and
  // the caller must not write for the rank).
  bool ok() const { return ok_; }

 private:
  bool active_ = false;
  bool ok_ = true;
  // The thread's own, put back at the end (and the daemon's groups).
  uid_t fsuid_ = 0;
  gid_t fsgid_ = 0;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_FS_IDENTITY_H_
