#include "client/daemon_launcher.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace tprobe::client {
namespace {

bool IsExecutable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void MakeParentDir(const std::string& path) {
  std::string dir = DirName(path);
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    ::mkdir(dir.substr(0, pos).c_str(), 0700);
  }
}

}  // namespace

std::string FindDaemonBinary(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("TPROBED"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&FindDaemonBinary), &info) != 0 &&
      info.dli_fname != nullptr) {
    const std::string lib_dir = DirName(info.dli_fname);
    for (const char* rel : {"/../bin/tprobed", "/tprobed", "/../tprobed"}) {
      std::string candidate = lib_dir + rel;
      if (IsExecutable(candidate)) return candidate;
    }
  }
  return "tprobed";
}

Status LaunchDaemon(const std::string& binary, const std::string& socket_path) {
  MakeParentDir(socket_path);
  const std::string log = DirName(socket_path) + "/tprobed.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // Never through a symlink someone planted beside the socket.
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  std::vector<std::string> args = {binary,         "--socket",    socket_path,
                                   "--foreground", "--idle-exit", "10"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, binary.c_str(), &actions, &attr, argv.data(),
                          environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::Error("cannot start " + binary + ": " + std::strerror(rc));
  }
  return Status::Ok();
}

}  // namespace tprobe::client
