#include "tools/import/construct.h"

#include <algorithm>
#include <unordered_map>

namespace tprobe::import {
namespace {

constexpr std::string_view kLayers = ".layers.";

struct CallInfo {
  std::string entry;
  std::string_view path;  // into the records
  Direction direction;
  size_t anchor;  // position in execution order that places the call
};

std::string PathKey(std::string_view path, Direction direction) {
  std::string key(path);
  key.push_back(direction == Direction::kForward ? '>' : '<');
  return key;
}

}  // namespace

std::vector<std::string_view> ParentPathCandidates(std::string_view path) {
  std::vector<std::string_view> candidates;
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos) return candidates;
  candidates.push_back(path.substr(0, dot));

  // A trailing ".layers.{N}" with at least one digit.
  const std::string_view digits = path.substr(dot + 1);
  const bool numeric = !digits.empty() &&
                       std::all_of(digits.begin(), digits.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  const std::string_view before = path.substr(0, dot + 1);  // "….layers."
  if (numeric && before.ends_with(kLayers)) {
    candidates.push_back(path.substr(0, before.size() - kLayers.size()));
  }
  return candidates;
}

std::vector<CellCall> BuildCellCalls(const std::vector<TensorRecord>& records) {
  std::vector<CallInfo> calls;
  std::unordered_map<std::string, size_t> call_of_entry;
  for (size_t pos = 0; pos < records.size(); ++pos) {
    const TensorRecord& record = records[pos];
    std::string entry = EntryName(record.slot, record.call);
    auto [it, inserted] = call_of_entry.emplace(entry, calls.size());
    if (inserted) {
      calls.push_back(CallInfo{std::move(entry), CellPath(record.slot.cell),
                               record.slot.direction, pos});
    }
    // An input moves the call to its position; an output places only a
    // call seen for the first time.
    if (record.slot.io == Io::kInput) calls[it->second].anchor = pos;
  }
  std::sort(
      calls.begin(), calls.end(),
      [](const CallInfo& a, const CallInfo& b) { return a.anchor < b.anchor; });

  // Where each cell's calls sit in that order, ascending.
  std::unordered_map<std::string, std::vector<size_t>> positions_of_cell;
  for (size_t i = 0; i < calls.size(); ++i) {
    positions_of_cell[PathKey(calls[i].path, calls[i].direction)].push_back(i);
  }

  std::vector<CellCall> result;
  result.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    std::optional<size_t> before;  // last candidate call placed before i
    std::optional<size_t> first;   // first candidate call overall
    for (std::string_view parent_path : ParentPathCandidates(calls[i].path)) {
      auto it =
          positions_of_cell.find(PathKey(parent_path, calls[i].direction));
      if (it == positions_of_cell.end()) continue;
      const std::vector<size_t>& positions = it->second;
      if (!first || positions.front() < *first) first = positions.front();
      auto after = std::lower_bound(positions.begin(), positions.end(), i);
      if (after != positions.begin()) {
        const size_t p = *(after - 1);
        if (!before || p > *before) before = p;
      }
    }
    CellCall call{calls[i].entry, std::nullopt};
    if (before) {
      call.parent = calls[*before].entry;
    } else if (first) {
      call.parent = calls[*first].entry;
    }
    result.push_back(std::move(call));
  }
  return result;
}

}  // namespace tprobe::import
