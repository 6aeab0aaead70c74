#ifndef TPROBE_CLIENT_DAEMON_LAUNCHER_H_
#define TPROBE_CLIENT_DAEMON_LAUNCHER_H_

// Starting a private tprobed for a trainer when none answers (one-node use,
// a newcomer's first run). The daemon runs in its own session, logs to
// tprobed.log beside its socket, and exits once its clients are gone.

#include <string>

#include "common/status.h"

namespace tprobe::client {

// The tprobed to start: `explicit_path` if not empty, else $TPROBED, else
// bin/tprobed beside the directory holding libtprobe, else "tprobed" on PATH.
std::string FindDaemonBinary(const std::string& explicit_path);

// Spawns `binary --socket socket_path --foreground --idle-exit 10`, detached.
// An error when it cannot be started.
Status LaunchDaemon(const std::string& binary, const std::string& socket_path);

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_DAEMON_LAUNCHER_H_
