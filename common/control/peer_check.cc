#include "common/control/peer_check.h"

#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace tprobe::control {
namespace {

// The uid $TPROBE_DAEMON_UID names, if it is set and names one.
std::optional<uid_t> ExtraTrustedUid() {
  const char* env = std::getenv("TPROBE_DAEMON_UID");
  if (env == nullptr || *env == '\0') return std::nullopt;
  const std::string_view text(env);
  uid_t uid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), uid);
  if (ec == std::errc() && end == text.data() + text.size()) return uid;
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwnam_r(env, &pw, buf, sizeof buf, &found) == 0 && found) {
    return found->pw_uid;
  }
  return std::nullopt;
}

}  // namespace

Status CheckDaemonPeer(int fd, const std::string& socket_path) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::Error("cannot read the credentials of the daemon on " +
                         socket_path + ": " + std::strerror(errno));
  }
  const uid_t me = ::geteuid();
  if (cred.uid == me || cred.uid == 0 || cred.uid == ExtraTrustedUid()) {
    return Status::Ok();
  }
  return Status::Error(
      "refusing the daemon on " + socket_path + ": it runs as uid " +
      std::to_string(cred.uid) + " (pid " + std::to_string(cred.pid) +
      "), not as you (uid " + std::to_string(me) +
      ") or root; nothing was sent. If that daemon is a trusted shared one, "
      "set TPROBE_DAEMON_UID=" +
      std::to_string(cred.uid));
}

}  // namespace tprobe::control
