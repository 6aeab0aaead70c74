#include "tools/cli/control_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/control/frame.h"
#include "common/control/peer_check.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"

namespace tprobe::cli {
namespace {

std::string SystemError() { return std::strerror(errno); }

std::string TimeoutText(std::chrono::milliseconds timeout) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", timeout.count() / 1000.0);
  return text;
}

}  // namespace

ControlClient::ControlClient(int fd, std::string socket_path,
                             std::chrono::milliseconds timeout)
    : fd_(fd), socket_path_(std::move(socket_path)), timeout_(timeout) {}

ControlClient::~ControlClient() { ::close(fd_); }

Result<std::unique_ptr<ControlClient>> ControlClient::Connect(
    const std::string& socket_path, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof addr.sun_path) {
    return Status::Error("socket path " + socket_path + " is too long (" +
                         std::to_string(socket_path.size()) +
                         " bytes, at most " +
                         std::to_string(sizeof addr.sun_path - 1) + ")");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error("cannot create a socket: " + SystemError());
  // Bounds connect (a full backlog), every send and every receive.
  timeval tv{};
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) !=
      0) {
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN || err == EINPROGRESS) {
      return Status::Error("tprobed on " + socket_path +
                           " did not accept the connection within " +
                           TimeoutText(timeout) +
                           " (it is overloaded or "
                           "stuck; see its log)");
    }
    return Status::Error("no tprobed answers on " + socket_path + " (" +
                         std::strerror(err) +
                         "); start one with 'tprobed' or pass --socket PATH");
  }
  // Nothing is sent to a listener that is not a trusted uid.
  if (Status s = control::CheckDaemonPeer(fd, socket_path); !s.ok()) {
    ::close(fd);
    return s;
  }
  return std::unique_ptr<ControlClient>(
      new ControlClient(fd, socket_path, timeout));
}

Result<v1::Response> ControlClient::Call(v1::Request request) {
  request.set_version(control::kProtocolVersion);
  const control::Deadline deadline =
      std::chrono::steady_clock::now() + timeout_;
  const control::FrameResult sent = control::WriteFrame(fd_, request, deadline);
  if (!sent.ok()) {
    // A daemon that refuses the connection says why before closing it.
    auto refusal = ReadResponse(deadline);
    if (refusal.ok()) return refusal;  // the daemon's reason, not ours
    return Status::Error(
        "cannot send to tprobed on " + socket_path_ + ": " +
        (sent.error == control::FrameError::kTimeout
             ? "it did not take the request within " + TimeoutText(timeout_)
             : std::string(std::strerror(sent.sys_errno))));
  }
  return ReadResponse(deadline);
}

Result<v1::Response> ControlClient::ReadResponse(control::Deadline deadline) {
  v1::Response response;
  const control::FrameResult r =
      control::ReadFrame(fd_, &response, deadline, control::kMaxFrameBytes);
  const std::string daemon = "tprobed on " + socket_path_;
  switch (r.error) {
    case control::FrameError::kNone:
      return response;
    case control::FrameError::kTimeout:
      return Status::Error(daemon + " did not answer within " +
                           TimeoutText(timeout_) +
                           " (raise --timeout for a long flush, or see its "
                           "log)");
    case control::FrameError::kReset:
      return Status::Error(
          daemon +
          " refused the connection and closed it without saying why (an "
          "older tprobed, or one out of resources; see its log)");
    case control::FrameError::kClosed:
      return Status::Error(daemon + " closed the connection without an answer");
    case control::FrameError::kTooLarge:
      return Status::Error(daemon + " sent a frame of " +
                           std::to_string(r.body_size) +
                           " bytes, over the limit");
    case control::FrameError::kMalformed:
      return Status::Error(daemon +
                           " answered with something that is not a "
                           "tprobe.v1.Response");
    case control::FrameError::kSystem:
      break;
  }
  return Status::Error("cannot read from " + daemon + ": " +
                       std::strerror(r.sys_errno));
}

Result<std::chrono::milliseconds> CliTimeout(
    const std::optional<std::string>& flag) {
  if (!flag) return kDefaultTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(flag->c_str(), &end);
  if (flag->empty() || end != flag->c_str() + flag->size() || !(seconds > 0) ||
      seconds > 24 * 3600) {
    return Status::Error("bad --timeout '" + *flag +
                         "': use seconds, more than 0 and at most 86400");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 + 0.5));
}

std::string CliSocketPath(const std::string& flag) {
  return control::ResolveSocketPath(flag);
}

Result<v1::Response> CallDaemon(std::string_view command,
                                const std::string& socket_path,
                                const v1::Request& request,
                                std::chrono::milliseconds timeout) {
  auto fail = [command](Status why) {
    std::fprintf(stderr, "tprobe %.*s: %s\n", static_cast<int>(command.size()),
                 command.data(), why.message().c_str());
    return why;
  };
  auto client = ControlClient::Connect(socket_path, timeout);
  if (!client.ok()) return fail(client.status());
  auto response = (*client)->Call(request);
  if (!response.ok()) return fail(response.status());
  if (Status refused = control::StatusOf(*response); !refused.ok()) {
    return fail(Status::Make(refused.code(), "tprobed: " + refused.message()));
  }
  return std::move(response).value();
}

}  // namespace tprobe::cli
