#include "daemon/process/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tprobe::daemon {

Status NotifyService(const std::string& state) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env == nullptr || *env == '\0') return Status::Ok();
  const std::string path(env);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if ((path[0] != '/' && path[0] != '@') ||
      path.size() >= sizeof addr.sun_path) {
    return Status::Error("NOTIFY_SOCKET '" + path +
                         "' is not a Unix socket path");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // the abstract namespace
  const socklen_t len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return Status::Error(std::string("cannot create a socket: ") +
                         std::strerror(errno));
  }
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&addr), len);
  const int err = errno;
  ::close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return Status::Error("cannot notify systemd on " + path + ": " +
                         std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace tprobe::daemon
