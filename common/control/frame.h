#ifndef TPROBE_COMMON_CONTROL_FRAME_H_
#define TPROBE_COMMON_CONTROL_FRAME_H_

// The control protocol's framing, written once for the client, the daemon
// and the CLI: a message is its serialized size as 4 little-endian bytes,
// then its bytes (proto/tprobe/v1/control.proto). A reader checks the size
// against its cap before it allocates anything for the body.
//
// EncodeFrame and FrameBodySize are the codec (the daemon reads with Asio).
// WriteFrame and ReadFrame do blocking I/O on a stream socket's descriptor,
// bounded by a deadline (the client's control channel and the CLI); they
// never raise SIGPIPE. A frame may carry one file descriptor (SCM_RIGHTS
// on its first byte): the daemon hands a rank its shared memory so.
//
// Thread safety: pure functions; one thread at a time per descriptor.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace google::protobuf {
class MessageLite;
}

namespace tprobe::control {

inline constexpr size_t kFrameHeaderBytes = 4;
// The largest body a client or the CLI reads (a daemon's reply). The daemon
// caps requests lower (ConnectionPolicy::max_request_bytes).
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

// The frame of `message`: header and serialized bytes.
std::string EncodeFrame(const google::protobuf::MessageLite& message);

// The body size announced by the kFrameHeaderBytes bytes at `header`.
uint32_t FrameBodySize(const unsigned char* header);

// Why a frame could not be written or read.
enum class FrameError {
  kNone,
  kTimeout,    // the deadline passed
  kClosed,     // the peer closed the connection (end of file)
  kReset,      // the peer reset the connection (ECONNRESET, EPIPE)
  kTooLarge,   // the header announced more than the cap
  kMalformed,  // the body is not the expected message
  kSystem,     // another system error: see sys_errno
};

struct FrameResult {
  FrameError error = FrameError::kNone;
  int sys_errno = 0;       // kSystem, kReset
  uint32_t body_size = 0;  // kTooLarge: the size announced
  bool ok() const { return error == FrameError::kNone; }
};

using Deadline = std::chrono::steady_clock::time_point;

// Sends the frame of `message` by `deadline`.
FrameResult WriteFrame(int fd, const google::protobuf::MessageLite& message,
                       Deadline deadline);

// Sends what follows the first `*sent` bytes of an encoded `frame` by
// `deadline`, counting in `*sent` what went out: after a timeout the frame
// may be resumed from there.
FrameResult WriteFrameRest(int fd, const std::string& frame, size_t* sent,
                           Deadline deadline);

// Reads one frame by `deadline` and parses it into `*message`. A header
// announcing more than `max_body_bytes` is refused before the body is
// allocated or read. With `passed_fd`, the first file descriptor that comes
// with the frame's bytes (SCM_RIGHTS, close-on-exec) is stored there if
// `*passed_fd` is -1, and the caller owns it; without it, or for any
// further one, a descriptor that comes is closed.
FrameResult ReadFrame(int fd, google::protobuf::MessageLite* message,
                      Deadline deadline, uint32_t max_body_bytes,
                      int* passed_fd = nullptr);

// One non-blocking sendmsg of `size` bytes of `data` on the stream socket
// `socket`, with `passed_fd` as SCM_RIGHTS attached to the first byte (a
// frame's, so ReadFrame takes it). Returns the bytes sent, or -1 with
// errno set (EAGAIN: nothing was sent, and the descriptor was not passed);
// never raises SIGPIPE.
ssize_t SendWithDescriptor(int socket, const char* data, size_t size,
                           int passed_fd);

}  // namespace tprobe::control

#endif  // TPROBE_COMMON_CONTROL_FRAME_H_
