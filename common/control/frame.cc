#include "common/control/frame.h"

#include <google/protobuf/message_lite.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tprobe::control {
namespace {

FrameResult Fail(FrameError error, int sys_errno = 0) {
  FrameResult r;
  r.error = error;
  r.sys_errno = sys_errno;
  return r;
}

// Waits until `fd` is ready for `events` or the deadline passes.
FrameResult Wait(int fd, short events, Deadline deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, events, 0};
    const int r =
        ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (r > 0) return {};
    if (r == 0) return Fail(FrameError::kTimeout);
    if (errno != EINTR) return Fail(FrameError::kSystem, errno);
  }
}

FrameResult FromErrno(int e) {
  return Fail(
      e == ECONNRESET || e == EPIPE ? FrameError::kReset : FrameError::kSystem,
      e);
}

// Takes the descriptors of an SCM_RIGHTS message: the first into
// `*passed_fd` when it is free (-1), every other one is closed.
void TakeDescriptors(msghdr& msg, int* passed_fd) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (passed_fd != nullptr && *passed_fd < 0) {
        *passed_fd = fd;
      } else {
        ::close(fd);
      }
    }
  }
}

// recv(MSG_DONTWAIT), which also takes the descriptors that come with the
// bytes (TakeDescriptors).
ssize_t Receive(int fd, char* out, size_t size, int* passed_fd) {
  iovec iov{out, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n >= 0) TakeDescriptors(msg, passed_fd);
  return n;
}

FrameResult ReadExact(int fd, char* out, size_t size, Deadline deadline,
                      int* passed_fd) {
  for (size_t done = 0; done < size;) {
    const ssize_t n = Receive(fd, out + done, size - done, passed_fd);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0) {
      return Fail(FrameError::kClosed);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (FrameResult w = Wait(fd, POLLIN, deadline); !w.ok()) return w;
    } else if (errno != EINTR) {
      return FromErrno(errno);
    }
  }
  return {};
}

}  // namespace

std::string EncodeFrame(const google::protobuf::MessageLite& message) {
  const auto n = static_cast<uint32_t>(message.ByteSizeLong());
  std::string frame(kFrameHeaderBytes, '\0');
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) {
    frame[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  }
  message.AppendToString(&frame);
  return frame;
}

uint32_t FrameBodySize(const unsigned char* header) {
  return header[0] | (header[1] << 8) | (header[2] << 16) |
         (static_cast<uint32_t>(header[3]) << 24);
}

FrameResult WriteFrame(int fd, const google::protobuf::MessageLite& message,
                       Deadline deadline) {
  size_t sent = 0;
  return WriteFrameRest(fd, EncodeFrame(message), &sent, deadline);
}

FrameResult WriteFrameRest(int fd, const std::string& frame, size_t* sent,
                           Deadline deadline) {
  while (*sent < frame.size()) {
    const ssize_t n = ::send(fd, frame.data() + *sent, frame.size() - *sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      *sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (FrameResult w = Wait(fd, POLLOUT, deadline); !w.ok()) return w;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return FromErrno(n < 0 ? errno : EPIPE);
    }
  }
  return {};
}

ssize_t SendWithDescriptor(int socket, const char* data, size_t size,
                           int passed_fd) {
  iovec iov{const_cast<char*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &passed_fd, sizeof passed_fd);
  ssize_t n;
  do {
    n = ::sendmsg(socket, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

FrameResult ReadFrame(int fd, google::protobuf::MessageLite* message,
                      Deadline deadline, uint32_t max_body_bytes,
                      int* passed_fd) {
  unsigned char header[kFrameHeaderBytes];
  FrameResult r = ReadExact(fd, reinterpret_cast<char*>(header), sizeof header,
                            deadline, passed_fd);
  if (!r.ok()) return r;
  const uint32_t size = FrameBodySize(header);
  if (size > max_body_bytes) {
    r.error = FrameError::kTooLarge;
    r.body_size = size;
    return r;
  }
  std::string body(size, '\0');
  r = ReadExact(fd, body.data(), size, deadline, passed_fd);
  if (!r.ok()) return r;
  if (!message->ParseFromString(body)) return Fail(FrameError::kMalformed);
  return {};
}

}  // namespace tprobe::control
