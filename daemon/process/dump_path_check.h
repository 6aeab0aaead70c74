#ifndef TPROBE_DAEMON_PROCESS_DUMP_PATH_CHECK_H_
#define TPROBE_DAEMON_PROCESS_DUMP_PATH_CHECK_H_

// The checks a client's dump_path passes before its registration is
// accepted, so that a bad one is refused at start-up, where the trainer
// sees it, and never discovered later in the daemon's log.

#include <sys/types.h>

#include <span>
#include <string>

#include "common/status.h"

namespace tprobe::daemon {

// `path` (absolute) is resolved component by component. Every symlink on
// the way must belong to `uid` (the client), root, or the daemon's own user:
// one another user controls could point the dump anywhere that user likes.
// Then the folder is created (mode 0750) and a probe file is created and
// removed in it. A daemon running as root also checks that `uid`, with
// `gid` and its supplementary `groups`, could write there itself, so that
// it never writes where the client could not. Returns an error naming
// dump_path and the reason.
Status PrepareDumpPath(const std::string& path, uid_t uid, gid_t gid,
                       std::span<const gid_t> groups = {});

// A client's dump_path as the daemon writes it: made absolute (a relative
// one is relative to the working directory of `pid`, as msprobe's is), then
// prepared by PrepareDumpPath as the client (FsIdentity of `uid`, `gid` and
// `groups`). Used when the client registers and when a live config moves
// its dump. Returns the absolute path, or an error naming dump_path.
Result<std::string> ResolveDumpPath(const std::string& dump_path, pid_t pid,
                                    uid_t uid, gid_t gid,
                                    std::span<const gid_t> groups);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_DUMP_PATH_CHECK_H_
