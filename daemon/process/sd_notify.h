#ifndef TPROBE_DAEMON_PROCESS_SD_NOTIFY_H_
#define TPROBE_DAEMON_PROCESS_SD_NOTIFY_H_

// systemd's readiness protocol (sd_notify(3)), written from its published
// description rather than linked from libsystemd: when $NOTIFY_SOCKET names
// a Unix datagram socket (a path, or "@name" for the abstract namespace),
// one datagram of "KEY=VALUE" lines is sent to it. A unit with Type=notify
// counts tprobed as started once "READY=1" arrives.

#include <string>

#include "common/status.h"

namespace tprobe::daemon {

// Sends `state` (for example "READY=1\nSTATUS=listening") to
// $NOTIFY_SOCKET. Does nothing and returns Ok when the variable is unset;
// returns an error naming the socket when the datagram cannot be sent.
Status NotifyService(const std::string& state);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_SD_NOTIFY_H_
