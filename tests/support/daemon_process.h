#ifndef TPROBE_TESTS_SUPPORT_DAEMON_PROCESS_H_
#define TPROBE_TESTS_SUPPORT_DAEMON_PROCESS_H_

// A real tprobed process for end-to-end tests: started on its own socket in
// its own temp directory, stopped with SIGTERM. Waits use deadlines, never
// fixed sleeps.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace tprobe::testing {

// A fresh directory under `base`, or under $TMPDIR (or /tmp) when `base` is
// empty, removed by the destructor. path() is empty when it could not be
// made.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "");
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The command line of a test's daemon: `binary --socket socket --foreground
// --log-level warn`, then `extra`.
std::vector<std::string> DaemonArgv(const std::string& binary,
                                    const std::string& socket,
                                    const std::vector<std::string>& extra = {});

class DaemonProcess {
 public:
  // Starts DaemonArgv(binary, socket) and waits until the socket
  // accepts connections (up to 10 s). started() tells whether it did.
  DaemonProcess(const std::string& binary, const std::string& socket);
  // Runs `argv` as it is (argv[0] looked up in PATH), for a daemon with other
  // flags or under another user, and waits the same way for `socket`.
  DaemonProcess(const std::vector<std::string>& argv,
                const std::string& socket);
  // Stops it with SIGTERM if still running.
  ~DaemonProcess();

  bool started() const { return started_; }
  pid_t pid() const { return pid_; }
  // Sends SIGTERM and returns the exit status (or -1 on timeout).
  int Terminate();

 private:
  pid_t pid_ = -1;
  bool started_ = false;
};

// True once a Unix stream socket at `path` accepts a connection.
bool SocketAnswers(const std::string& path);

// Runs a command through /bin/sh and returns its exit status; what it
// prints (standard error too, with `with_stderr`) goes to *output when not
// null.
int RunCommand(const std::string& command, std::string* output,
               bool with_stderr = true);

std::string ReadFile(const std::string& path);

// True while process `pid` maps the segment labelled `label` (a memory
// file: "/memfd:LABEL" in /proc/PID/maps).
bool MapsSegment(pid_t pid, const std::string& label);

// What process `pid` has cost so far, for idle-cost tests. Neither figure is
// a timing: `sleeps` counts voluntary context switches over every thread
// (each idle poll is one), which load can only lower, since a loaded
// machine lengthens sleeps; `cpu` is user + system time, which only a spin
// could push near the elapsed time. Tests bound both loosely enough that a
// busy machine cannot fail them while a poll or spin regression does.
struct ProcessCost {
  std::chrono::milliseconds cpu{0};
  long sleeps = 0;
};
ProcessCost CostOf(pid_t pid);

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_DAEMON_PROCESS_H_
