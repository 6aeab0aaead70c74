#ifndef TPROBE_COMMON_CONTROL_PEER_CHECK_H_
#define TPROBE_COMMON_CONTROL_PEER_CHECK_H_

// Who is listening on a control socket. A client (trainer or CLI) checks the
// daemon's uid with SO_PEERCRED right after connect and before it sends a
// byte: a socket another user put in place must never receive a Register
// (it carries the whole config) or a command.
//
// Trusted: the caller's own effective uid, root (a node's shared daemon),
// and the uid named by $TPROBE_DAEMON_UID (a number or a user name) for a
// daemon run under a service account.

#include <string>

#include "common/status.h"

namespace tprobe::control {

// Checks the process on the other end of the connected Unix socket `fd`.
// Returns an error naming `socket_path`, the listener's uid and pid, and
// how to trust it, when it is not a trusted uid or its credentials cannot be
// read.
Status CheckDaemonPeer(int fd, const std::string& socket_path);

}  // namespace tprobe::control

#endif  // TPROBE_COMMON_CONTROL_PEER_CHECK_H_
