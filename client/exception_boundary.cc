// Counting and reporting the exceptions the library stops at its exported
// functions (exception_boundary.h).

#include "client/exception_boundary.h"

#include <atomic>
#include <cstdio>
#include <exception>

namespace tprobe::client {
namespace {

// Past this many, only the count grows: a failure that repeats on every
// call must not flood the trainer's stderr.
constexpr uint64_t kReported = 5;

std::atomic<uint64_t> g_stopped{0};

}  // namespace

void NoteStopped(const char* where) noexcept {
  const uint64_t seen = g_stopped.fetch_add(1, std::memory_order_relaxed);
  if (seen >= kReported) return;
  const char* what = "an exception of unknown type";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(
      stderr, "tprobe: %s failed (%s); that call was skipped%s\n", where, what,
      seen + 1 == kReported ? " (further failures are only counted)" : "");
}

uint64_t StoppedExceptions() noexcept {
  return g_stopped.load(std::memory_order_relaxed);
}

}  // namespace tprobe::client
