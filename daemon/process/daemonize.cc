#include "daemon/process/daemonize.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "daemon/process/private_dir.h"

namespace tprobe::daemon {
namespace {

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// The parent's side: the child writes "\0" for ready or "E" + reason.
[[noreturn]] void WaitForChild(int fd, const std::string& log_path) {
  std::string message;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.append(buf, static_cast<size_t>(n));
  }
  if (!message.empty() && message[0] == '\0') ::_exit(0);
  if (!message.empty() && message[0] == 'E') {
    std::fprintf(stderr, "tprobed: %s\n", message.c_str() + 1);
  } else {
    std::fprintf(stderr, "tprobed: the daemon exited during start-up; see %s\n",
                 log_path.c_str());
  }
  ::_exit(1);
}

}  // namespace

StartupReport::~StartupReport() {
  if (fd_ >= 0) ::close(fd_);
}

StartupReport::StartupReport(StartupReport&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

StartupReport& StartupReport::operator=(StartupReport&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void StartupReport::Ready() {
  if (fd_ < 0) return;
  WriteAll(fd_, std::string_view("\0", 1));
  ::close(fd_);
  fd_ = -1;
}

void StartupReport::Failed(std::string_view reason) {
  if (fd_ < 0) return;
  WriteAll(fd_, "E" + std::string(reason));
  ::close(fd_);
  fd_ = -1;
}

Result<StartupReport> Daemonize(const std::string& log_path) {
  if (Status s = MakePrivateDirs(DirName(log_path)); !s.ok()) return s;
  int log_fd =
      ::open(log_path.c_str(),
             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log_fd < 0) {
    return Status::Error("cannot open log file " + log_path + ": " +
                         (errno == ELOOP ? std::string("it is a symbolic link, "
                                                       "which tprobed never "
                                                       "follows")
                                         : std::string(std::strerror(errno))));
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(log_fd);
    return Status::Error(std::string("cannot create a pipe: ") +
                         std::strerror(errno));
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status::Error(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid > 0) {
    ::close(log_fd);
    ::close(pipe_fds[1]);
    WaitForChild(pipe_fds[0], log_path);
  }
  ::close(pipe_fds[0]);
  ::setsid();
  if (::chdir("/") != 0) {
    // Not fatal: every path tprobed uses is absolute.
  }
  if (int null_fd = ::open("/dev/null", O_RDONLY); null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    ::close(null_fd);
  }
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  ::close(log_fd);
  return StartupReport(pipe_fds[1]);
}

}  // namespace tprobe::daemon
