// Pairing the dump.json files of two trees (tree_pairs.h).

#include "tools/compare/tree_pairs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

namespace tprobe::compare {
namespace {

namespace fs = std::filesystem;

enum class Kind { kDumpJson, kStep, kRoot };

// The number after `prefix` in a folder name ("step12" -> 12), or nullopt.
std::optional<int> NumberAfter(const std::string& name,
                               std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) {
    return std::nullopt;
  }
  int n = 0;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || n < 0) return std::nullopt;
  return n;
}

std::vector<std::string> SubdirNames(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    if (item.is_directory(ec)) names.push_back(item.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<Kind> KindOf(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return Kind::kDumpJson;
  if (!fs::is_directory(path, ec)) {
    return Status::InvalidArgument(path + ": no such file or folder");
  }
  if (fs::is_regular_file(fs::path(path) / "dump.json", ec)) {
    return Kind::kDumpJson;
  }
  for (const std::string& name : SubdirNames(path)) {
    if (NumberAfter(name, "step")) return Kind::kRoot;
  }
  for (const std::string& name : SubdirNames(path)) {
    if (fs::is_regular_file(fs::path(path) / name / "dump.json", ec)) {
      return Kind::kStep;
    }
  }
  return Status::InvalidArgument(
      path +
      ": holds no dump.json (expected a dump.json, a rank folder, a "
      "step{N} folder or a dump root)");
}

std::string DumpJsonOf(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  return (fs::path(path) / "dump.json").string();
}

// The rank folders of a step, keyed for pairing: rank{R} by R, the others
// ("rank", "proc{pid}") by their position among the unnumbered, after
// every numbered one.
std::map<std::pair<int, int>, RankDump> RankKeys(const std::string& step) {
  std::map<std::pair<int, int>, RankDump> keyed;
  int unnumbered = 0;
  std::error_code ec;
  for (const std::string& name : SubdirNames(step)) {
    const fs::path json = fs::path(step) / name / "dump.json";
    if (!fs::is_regular_file(json, ec)) continue;
    const std::optional<int> rank = NumberAfter(name, "rank");
    RankDump dump{name, rank, json.string()};
    if (rank) {
      keyed.emplace(std::pair(0, *rank), std::move(dump));
    } else {
      keyed.emplace(std::pair(1, unnumbered++), std::move(dump));
    }
  }
  return keyed;
}

void PairSteps(const std::string& target, const std::string& baseline,
               std::optional<int> step, std::vector<DumpPair>& out) {
  auto mine = RankKeys(target);
  auto theirs = RankKeys(baseline);
  std::map<std::pair<int, int>, DumpPair> pairs;
  const std::string prefix = step ? "step" + std::to_string(*step) + "/" : "";
  for (auto& [key, dump] : mine) {
    DumpPair& pair = pairs[key];
    pair.label = prefix + dump.label;
    pair.step = step;
    pair.rank = dump.rank;
    pair.target = dump.dump_json;
  }
  for (auto& [key, dump] : theirs) {
    DumpPair& pair = pairs[key];
    if (pair.label.empty()) pair.label = prefix + dump.label;
    pair.step = step;
    pair.rank = dump.rank;
    pair.baseline = dump.dump_json;
  }
  for (auto& [key, pair] : pairs) out.push_back(std::move(pair));
}

std::map<int, std::string> Steps(const std::string& root) {
  std::map<int, std::string> steps;
  for (const std::string& name : SubdirNames(root)) {
    if (auto n = NumberAfter(name, "step")) {
      steps[*n] = (fs::path(root) / name).string();
    }
  }
  return steps;
}

}  // namespace

Result<std::vector<DumpPair>> FindPairs(const std::string& target,
                                        const std::string& baseline) {
  Result<Kind> mine = KindOf(target);
  if (!mine.ok()) return mine.status();
  Result<Kind> theirs = KindOf(baseline);
  if (!theirs.ok()) return theirs.status();
  if (*mine != *theirs) {
    return Status::InvalidArgument(
        "TARGET and BASELINE are of different kinds (give two dump.json "
        "files, two step folders or two dump roots)");
  }
  std::vector<DumpPair> pairs;
  switch (*mine) {
    case Kind::kDumpJson:
      pairs.push_back({"", std::nullopt, std::nullopt, DumpJsonOf(target),
                       DumpJsonOf(baseline)});
      break;
    case Kind::kStep:
      PairSteps(target, baseline, std::nullopt, pairs);
      break;
    case Kind::kRoot: {
      const auto a = Steps(target);
      const auto b = Steps(baseline);
      std::map<int, std::pair<std::string, std::string>> steps;
      for (const auto& [n, dir] : a) steps[n].first = dir;
      for (const auto& [n, dir] : b) steps[n].second = dir;
      for (const auto& [n, dirs] : steps) {
        // A missing step pairs its ranks with an empty folder.
        PairSteps(dirs.first, dirs.second, n, pairs);
      }
      break;
    }
  }
  return pairs;
}

Result<std::vector<RankDump>> FindRanks(const std::string& step_dir) {
  Result<Kind> kind = KindOf(step_dir);
  if (!kind.ok()) return kind.status();
  std::vector<RankDump> ranks;
  if (*kind == Kind::kDumpJson) {
    ranks.push_back({"", std::nullopt, DumpJsonOf(step_dir)});
  } else if (*kind == Kind::kStep) {
    for (auto& [key, dump] : RankKeys(step_dir)) {
      ranks.push_back(std::move(dump));
    }
  } else {
    return Status::InvalidArgument(
        step_dir + ": a dump root; give one step{N} folder of it");
  }
  return ranks;
}

}  // namespace tprobe::compare
