#ifndef TPROBE_COMMON_CONTROL_SOCKET_PATH_H_
#define TPROBE_COMMON_CONTROL_SOCKET_PATH_H_

// Where the control socket lives when nothing says otherwise, shared by the
// client, the daemon and the CLI so that they agree.

#include <cstdint>
#include <string>

namespace tprobe::control {

// $XDG_RUNTIME_DIR/tprobe/tprobed.sock when XDG_RUNTIME_DIR is set, else
// /tmp/tprobe-<uid>/tprobed.sock.
std::string DefaultSocketPath();

// The socket to use: `explicit_path` if not empty, else $TPROBE_SOCKET if
// set, else DefaultSocketPath().
std::string ResolveSocketPath(const std::string& explicit_path);

// 2: the Register reply carries the segment as a memory file (SCM_RIGHTS)
// instead of naming a /dev/shm object. 3: a Response carries a Code instead
// of the ok, nothing_done and invalid booleans. 4: Start, Step and Goodbye
// travel in the segment's boundary ring (its last ring, one beyond
// Register.ring_count's data rings), in order with the data; the socket
// carries them only when that ring has no room.
inline constexpr uint32_t kProtocolVersion = 4;

}  // namespace tprobe::control

#endif  // TPROBE_COMMON_CONTROL_SOCKET_PATH_H_
