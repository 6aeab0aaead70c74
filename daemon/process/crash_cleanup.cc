#include "daemon/process/crash_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "common/config/dump_dir.h"

namespace tprobe::daemon {
namespace {

namespace stdfs = std::filesystem;

std::optional<int64_t> ParsePid(std::string_view text) {
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      pid <= 0) {
    return std::nullopt;
  }
  return pid;
}

// The daemon pid of a temporary file name "….tmp<pid>" or "….link<pid>".
std::optional<int64_t> TempFileOwner(std::string_view name) {
  for (std::string_view marker : {".tmp", ".link"}) {
    const size_t at = name.rfind(marker);
    if (at == std::string_view::npos) continue;
    if (auto pid = ParsePid(name.substr(at + marker.size()))) return pid;
  }
  return std::nullopt;
}

size_t RemoveStaleIn(const stdfs::path& dir) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : stdfs::directory_iterator(dir, ec)) {
    const auto pid = TempFileOwner(entry.path().filename().string());
    if (!pid || IsRunningDaemon(*pid)) continue;
    if (!entry.is_symlink() && !entry.is_regular_file()) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace

std::string SegmentName(uid_t uid, int32_t pid, uint64_t client_id) {
  return "tprobe." + std::to_string(uid) + "." + std::to_string(pid) + "." +
         std::to_string(client_id) + "." + std::to_string(::getpid());
}

bool IsRunningDaemon(int64_t pid) {
  if (pid == ::getpid()) return true;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(comm, name)) return false;
  return name == "tprobed";
}

size_t RemoveStaleTempFiles(const std::string& write_path, int rank) {
  size_t removed = 0;
  std::error_code ec;
  const std::string rank_dir = config::RankDirName(rank);
  for (const auto& step : stdfs::directory_iterator(write_path, ec)) {
    if (!step.path().filename().string().starts_with("step")) continue;
    const stdfs::path dir = step.path() / rank_dir;
    if (!stdfs::is_directory(stdfs::symlink_status(dir, ec))) continue;
    removed += RemoveStaleIn(dir);
    removed += RemoveStaleIn(dir / "dump_tensor_data");
  }
  return removed;
}

}  // namespace tprobe::daemon
