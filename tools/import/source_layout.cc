#include "tools/import/source_layout.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>
#include <tuple>

#include "tools/import/tensor_name.h"

namespace tprobe::import {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTensorDir = "dump_tensor_data";
constexpr std::string_view kStatisticCsv = "statistic.csv";
constexpr int kStatisticsMaxDepth = 4;

struct DirEntry {
  std::string name;
  bool is_dir = false;   // following symlinks
  bool is_file = false;  // a regular file, following symlinks
  bool is_link = false;
};

// The entries of `dir`, sorted by name.
Result<std::vector<DirEntry>> ListDir(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::Error(dir + ": cannot list: " + ec.message());
  std::vector<DirEntry> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Error(dir + ": cannot list: " + ec.message());
    DirEntry entry;
    entry.name = it->path().filename().string();
    std::error_code ignored;
    entry.is_dir = it->is_directory(ignored);
    entry.is_file = it->is_regular_file(ignored);
    entry.is_link = it->is_symlink(ignored);
    entries.push_back(std::move(entry));
  }
  if (ec) return Status::Error(dir + ": cannot list: " + ec.message());
  std::sort(
      entries.begin(), entries.end(),
      [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

// The number N of a name "{prefix}N" (decimal digits only).
std::optional<uint32_t> NumberAfter(std::string_view name,
                                    std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  uint32_t n = 0;
  if (name.empty() || name[0] == '+' || name[0] == '-') return std::nullopt;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || p != name.data() + name.size()) return std::nullopt;
  return n;
}

Status CheckSourceDir(const std::string& src) {
  std::error_code ec;
  const fs::file_status st = fs::status(src, ec);
  if (!fs::exists(st)) return Status::Error(src + ": no such directory");
  if (!fs::is_directory(st)) return Status::Error(src + ": not a directory");
  return Status::Ok();
}

bool RankWanted(uint32_t rank, std::optional<int> only_rank) {
  return !only_rank || static_cast<int>(rank) == *only_rank;
}

std::string RankNote(std::optional<int> only_rank, std::string_view prefix) {
  if (!only_rank) return "";
  return " for rank " + std::to_string(*only_rank) + " (" +
         std::string(prefix) + std::to_string(*only_rank) + ")";
}

// Collects statistic.csv files under `dir` (at `depth` below rank_{R}) into
// `by_step`.
Status WalkStatistics(const std::string& dir, int depth,
                      std::map<uint32_t, std::vector<std::string>>* by_step) {
  Result<std::vector<DirEntry>> entries = ListDir(dir);
  if (!entries.ok()) return entries.status();
  for (const DirEntry& entry : *entries) {
    const std::string path = JoinPath(dir, entry.name);
    if (entry.is_file && entry.name == kStatisticCsv) {
      const std::string step_dir = fs::path(dir).filename().string();
      const std::optional<uint32_t> step = NumberAfter(step_dir, "");
      if (!step) {
        return Status::Error(path + ": cannot tell its step: directory '" +
                             step_dir + "' is not a step number");
      }
      (*by_step)[*step].push_back(path);
    } else if (entry.is_dir && !entry.is_link &&
               depth + 1 <= kStatisticsMaxDepth) {
      if (Status s = WalkStatistics(path, depth + 1, by_step); !s.ok()) {
        return s;
      }
    }
  }
  return Status::Ok();
}

// Puts `sources` in (step, rank) order.
template <typename Source>
void SortByStepAndRank(std::vector<Source>& sources) {
  std::sort(sources.begin(), sources.end(),
            [](const Source& a, const Source& b) {
              return std::tie(a.step, a.rank) < std::tie(b.step, b.rank);
            });
}

}  // namespace

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Result<std::vector<TensorStepSource>> FindTensorSteps(
    const std::string& src, std::optional<int> only_rank) {
  if (Status s = CheckSourceDir(src); !s.ok()) return s;
  Result<std::vector<DirEntry>> steps = ListDir(src);
  if (!steps.ok()) return steps.status();

  std::vector<TensorStepSource> found;
  for (const DirEntry& step_entry : *steps) {
    const std::optional<uint32_t> step = NumberAfter(step_entry.name, "step");
    if (!step || !step_entry.is_dir) continue;
    const std::string step_dir = JoinPath(src, step_entry.name);
    Result<std::vector<DirEntry>> ranks = ListDir(step_dir);
    if (!ranks.ok()) return ranks.status();
    for (const DirEntry& rank_entry : *ranks) {
      const std::optional<uint32_t> rank = NumberAfter(rank_entry.name, "rank");
      if (!rank || !rank_entry.is_dir || !RankWanted(*rank, only_rank)) {
        continue;
      }
      TensorStepSource source;
      source.step = *step;
      source.rank = static_cast<int>(*rank);
      source.data_dir = JoinPath(JoinPath(step_dir, rank_entry.name),
                                 std::string(kTensorDir));
      std::error_code ec;
      if (!fs::is_directory(source.data_dir, ec)) continue;
      Result<std::vector<DirEntry>> files = ListDir(source.data_dir);
      if (!files.ok()) return files.status();
      for (const DirEntry& file : *files) {
        if (!file.is_file || file.name.starts_with('.')) continue;
        if (IsImportedFileName(file.name)) {
          ++source.already_imported;
        } else {
          source.files.push_back(file.name);
        }
      }
      found.push_back(std::move(source));
    }
  }
  if (found.empty()) {
    return Status::Error(
        src + ": no step{N}/rank{R}/dump_tensor_data/ directory found" +
        RankNote(only_rank, "rank") +
        " (a MindSpore tensor dump has SRC/step{N}/rank{R}/"
        "dump_tensor_data/*.npy)");
  }
  SortByStepAndRank(found);
  return found;
}

Result<std::vector<StatisticsStepSource>> FindStatisticsSteps(
    const std::string& src, std::optional<int> only_rank) {
  if (Status s = CheckSourceDir(src); !s.ok()) return s;
  Result<std::vector<DirEntry>> ranks = ListDir(src);
  if (!ranks.ok()) return ranks.status();

  std::vector<StatisticsStepSource> found;
  for (const DirEntry& rank_entry : *ranks) {
    const std::optional<uint32_t> rank = NumberAfter(rank_entry.name, "rank_");
    if (!rank || !rank_entry.is_dir || !RankWanted(*rank, only_rank)) continue;
    std::map<uint32_t, std::vector<std::string>> by_step;
    if (Status s = WalkStatistics(JoinPath(src, rank_entry.name), 0, &by_step);
        !s.ok()) {
      return s;
    }
    for (auto& [step, files] : by_step) {
      std::sort(files.begin(), files.end());
      found.push_back(StatisticsStepSource{step, static_cast<int>(*rank),
                                           std::move(files)});
    }
  }
  if (found.empty()) {
    return Status::Error(
        src + ": no statistic.csv found under rank_{R}/" +
        RankNote(only_rank, "rank_") +
        " (a MindSpore statistics dump has SRC/rank_{R}/…/{N}/statistic.csv, "
        "at most 4 levels below rank_{R})");
  }
  SortByStepAndRank(found);
  return found;
}

int OutputRank(int rank, const std::vector<int>& ranks_found,
               std::optional<int> only_rank) {
  const bool single_card = !only_rank && !ranks_found.empty() &&
                           std::all_of(ranks_found.begin(), ranks_found.end(),
                                       [](int r) { return r == 0; });
  return single_card ? -1 : rank;
}

}  // namespace tprobe::import
