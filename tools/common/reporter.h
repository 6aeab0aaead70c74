#ifndef TPROBE_TOOLS_COMMON_REPORTER_H_
#define TPROBE_TOOLS_COMMON_REPORTER_H_

// What an import tells its user while it runs: log lines, and on a
// terminal a progress line that redraws itself.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace tprobe::tools {

// Thread safety: every method may be called from any thread.
class Reporter {
 public:
  // Writes to `out` (nothing when null), each line starting with `prefix`.
  // `show_progress` draws the progress line; the command sets it when
  // `out` is a terminal.
  Reporter(std::FILE* out, bool show_progress, std::string prefix = "");

  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  // Writes one line, above the progress line if one is shown.
  void Log(std::string_view line);

  // Starts counting `total` units of `what` ("reading tensor files").
  void StartPhase(std::string_view what, size_t total);
  // Counts `n` more units done; redraws at most ten times a second.
  void Advance(size_t n = 1);
  // Ends the phase: the progress line shows the total and is kept.
  void FinishPhase();

 private:
  void DrawLocked(bool force);
  void ClearLocked();

  std::FILE* out_;
  bool show_progress_;
  std::string prefix_;
  std::mutex mu_;
  std::string phase_;
  size_t total_ = 0;
  size_t done_ = 0;
  bool drawn_ = false;  // a progress line is on the screen
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace tprobe::tools

#endif  // TPROBE_TOOLS_COMMON_REPORTER_H_
