#ifndef TPROBE_DAEMON_PROCESS_DAEMONIZE_H_
#define TPROBE_DAEMON_PROCESS_DAEMONIZE_H_

// Detaching tprobed into the background (the default; --foreground skips
// it). The command that started it returns only once the daemon listens, so
// a script or a trainer can connect right after it: with status 0, or with
// status 1 and the daemon's reason on stderr.

#include <string>
#include <string_view>

#include "common/status.h"

namespace tprobe::daemon {

// How the (background) daemon tells the waiting parent how start-up went.
// A default-constructed report (the --foreground case) goes nowhere. Only
// the first call has an effect.
class StartupReport {
 public:
  StartupReport() = default;
  explicit StartupReport(int fd) : fd_(fd) {}
  ~StartupReport();
  StartupReport(StartupReport&& other) noexcept;
  StartupReport& operator=(StartupReport&& other) noexcept;
  StartupReport(const StartupReport&) = delete;

  // The socket listens: the parent exits 0.
  void Ready();
  // Start-up failed: the parent prints `reason` and exits 1.
  void Failed(std::string_view reason);

 private:
  int fd_ = -1;
};

// Forks. The parent waits for the child's StartupReport and exits (0 on
// Ready, 1 otherwise, including when the child dies first); it never returns.
// The child starts a new session (setsid), moves to "/", reads stdin from
// /dev/null, appends stdout and stderr to `log_path` (mode 0600, opened
// with O_NOFOLLOW; its directory is made and checked by MakePrivateDirs), and
// returns the report to fill in.
//
// REQUIRES: no thread has been started yet (fork copies only the caller).
// Returns an error when the log file cannot be opened or fork fails.
Result<StartupReport> Daemonize(const std::string& log_path);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_DAEMONIZE_H_
