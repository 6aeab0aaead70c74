#include "tests/support/daemon_process.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tprobe::testing {

TempDir::TempDir(const std::string& base) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = (!base.empty() ? base
                      : tmp && *tmp ? std::string(tmp)
                                    : std::string("/tmp")) +
                     "/tprobe-test-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  path_ = made ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

bool SocketAnswers(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool ok =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::vector<std::string> DaemonArgv(const std::string& binary,
                                    const std::string& socket,
                                    const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {binary,         "--socket",    socket,
                                   "--foreground", "--log-level", "warn"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

DaemonProcess::DaemonProcess(const std::string& binary,
                             const std::string& socket)
    : DaemonProcess(DaemonArgv(binary, socket), socket) {}

DaemonProcess::DaemonProcess(const std::vector<std::string>& argv,
                             const std::string& socket) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (SocketAnswers(socket)) {
      started_ = true;
      return;
    }
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Terminate();
}

int DaemonProcess::Terminate() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

int RunCommand(const std::string& command, std::string* output,
               bool with_stderr) {
  FILE* pipe =
      ::popen((with_stderr ? command + " 2>&1" : command).c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool MapsSegment(pid_t pid, const std::string& label) {
  const std::string maps = ReadFile("/proc/" + std::to_string(pid) + "/maps");
  return maps.find("/memfd:" + label + " ") != std::string::npos;
}

ProcessCost CostOf(pid_t pid) {
  ProcessCost cost;
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string stat = ReadFile(proc + "/stat");
  if (const auto close = stat.rfind(')'); close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    long ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14 || i == 15) ticks += std::stol(field);  // utime, stime
    }
    cost.cpu = std::chrono::milliseconds(ticks * 1000 / ::sysconf(_SC_CLK_TCK));
  }
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator(proc + "/task", ec)) {
    std::istringstream lines(ReadFile(task.path().string() + "/status"));
    for (std::string line; std::getline(lines, line);) {
      constexpr std::string_view kKey = "voluntary_ctxt_switches:";
      if (line.starts_with(kKey))
        cost.sleeps += std::stol(line.substr(kKey.size()));
    }
  }
  return cost;
}

}  // namespace tprobe::testing
