#include "tools/import/quiet_wait.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>

namespace tprobe::import {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(500);

struct Snapshot {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  Clock::time_point newest{};  // newest modification time
  bool operator==(const Snapshot&) const = default;
};

void Include(const std::string& path, Snapshot* snap) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;  // removed meanwhile
  ++snap->entries;
  snap->bytes += static_cast<uint64_t>(st.st_size);
  const auto mtime =
      Clock::time_point(std::chrono::duration_cast<Clock::duration>(
          std::chrono::seconds(st.st_mtim.tv_sec) +
          std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
  snap->newest = std::max(snap->newest, mtime);
}

Result<Snapshot> Scan(const std::string& dir) {
  Snapshot snap;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec);
  if (ec) return Status::Error(dir + ": cannot read: " + ec.message());
  Include(dir, &snap);
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Error(dir + ": cannot read: " + ec.message());
    Include(it->path().string(), &snap);
  }
  if (ec) return Status::Error(dir + ": cannot read: " + ec.message());
  return snap;
}

}  // namespace

Status WaitUntilQuiet(const std::string& dir, std::chrono::seconds quiet,
                      tools::Reporter& reporter) {
  Result<Snapshot> last = Scan(dir);
  if (!last.ok()) return last.status();
  Clock::time_point changed_at{};  // when a poll last saw a change
  bool logged = false;
  while (true) {
    const Clock::time_point now = Clock::now();
    const Clock::time_point quiet_since =
        std::min(now, std::max(last->newest, changed_at));
    const auto quiet_for = now - quiet_since;
    if (quiet_for >= quiet) return Status::Ok();
    if (!logged) {
      reporter.Log("waiting until nothing under " + dir + " has changed for " +
                   std::to_string(quiet.count()) + " s");
      logged = true;
    }
    std::this_thread::sleep_for(
        std::min<Clock::duration>(kPollInterval, quiet - quiet_for));
    Result<Snapshot> now_snap = Scan(dir);
    if (!now_snap.ok()) return now_snap.status();
    if (!(*now_snap == *last)) {
      changed_at = Clock::now();
      last = std::move(now_snap);
    }
  }
}

}  // namespace tprobe::import
