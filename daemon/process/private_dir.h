#ifndef TPROBE_DAEMON_PROCESS_PRIVATE_DIR_H_
#define TPROBE_DAEMON_PROCESS_PRIVATE_DIR_H_

// The directory that holds the control socket and tprobed.log. Only the
// owning user may enter it, so the socket's own permissions are not the only
// guard (SO_PEERCRED is the other).

#include <string>

#include "common/status.h"

namespace tprobe::daemon {

// Creates `dir` and any missing parents with mode 0700. Directories that
// already exist are left as they are. Then `dir` itself must be a real
// directory (not a symlink) owned by this process's effective uid that
// neither its group nor others can write: a directory another user created
// in advance (in /tmp, say) would let that user swap the socket or the log.
// Returns an error naming the directory and what is wrong with it.
Status MakePrivateDirs(const std::string& dir);

// The directory part of `path` ("." when it has none).
std::string DirName(const std::string& path);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_PRIVATE_DIR_H_
