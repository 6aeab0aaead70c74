#include "tools/import/tensor_name.h"

#include <cassert>
#include <charconv>
#include <limits>
#include <optional>
#include <vector>

namespace tprobe::import {
namespace {

constexpr std::string_view kCellPrefix = "Cell.";
constexpr std::string_view kNpySuffix = ".npy";
constexpr std::string_view kTensorDumpForm =
    "Cell.{path}.{Class}.{forward|backward}.{input|output}.{index}[_in]_"
    "{dtype}_{id}.npy";

std::optional<uint64_t> ParseUint(std::string_view s) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  if (s.empty() || s[0] == '+' || s[0] == '-') return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Splits off the last dotted component: "a.b.c" -> {"a.b", "c"}.
bool SplitLast(std::string_view s, std::string_view* head,
               std::string_view* last) {
  const size_t dot = s.rfind('.');
  if (dot == std::string_view::npos) return false;
  *head = s.substr(0, dot);
  *last = s.substr(dot + 1);
  return true;
}

std::optional<Direction> ParseDirection(std::string_view s) {
  if (s == "forward") return Direction::kForward;
  if (s == "backward") return Direction::kBackward;
  return std::nullopt;
}

std::optional<Io> ParseIo(std::string_view s) {
  if (s == "input") return Io::kInput;
  if (s == "output") return Io::kOutput;
  return std::nullopt;
}

// Parses "Cell.{path}.{Class}.{dir}.{io}" into `slot` (all but the index).
// Returns an empty string, or why it is not that form.
std::string ParseCellDirectionIo(std::string_view s, TensorSlot* slot) {
  std::string_view rest, io, cell, direction;
  if (!SplitLast(s, &rest, &io) || !SplitLast(rest, &cell, &direction)) {
    return "too few dotted parts";
  }
  const std::optional<Io> parsed_io = ParseIo(io);
  if (!parsed_io) return Quote(io) + " is not input or output";
  const std::optional<Direction> parsed_dir = ParseDirection(direction);
  if (!parsed_dir) return Quote(direction) + " is not forward or backward";
  if (!IsCellPrefix(cell)) {
    return Quote(cell) + " is not Cell.{path}.{Class}";
  }
  slot->cell = std::string(cell);
  slot->direction = *parsed_dir;
  slot->io = *parsed_io;
  return "";
}

bool ParseIndex(std::string_view s, uint32_t* index) {
  const std::optional<uint64_t> v = ParseUint(s);
  if (!v || *v > std::numeric_limits<uint32_t>::max()) return false;
  *index = static_cast<uint32_t>(*v);
  return true;
}

bool IsDTypeWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9');
    if (!alnum) return false;
  }
  return true;
}

}  // namespace

std::string_view DirectionName(Direction direction) {
  return direction == Direction::kForward ? "forward" : "backward";
}

std::string_view IoName(Io io) { return io == Io::kInput ? "input" : "output"; }

std::string SlotKey(const TensorSlot& slot) {
  std::string key = slot.cell;
  key += '.';
  key += DirectionName(slot.direction);
  key += '.';
  key += IoName(slot.io);
  key += '.';
  key += std::to_string(slot.index);
  return key;
}

std::string EntryName(const TensorSlot& slot, uint64_t call) {
  std::string name = slot.cell;
  name += '.';
  name += DirectionName(slot.direction);
  name += '.';
  name += std::to_string(call);
  return name;
}

std::string DataName(const TensorSlot& slot, uint64_t call) {
  std::string name = EntryName(slot, call);
  name += '.';
  name += IoName(slot.io);
  name += '.';
  name += std::to_string(slot.index);
  name += kNpySuffix;
  return name;
}

bool IsCellPrefix(std::string_view cell) {
  if (!cell.starts_with(kCellPrefix)) return false;
  const std::vector<std::string_view> parts =
      Split(cell.substr(kCellPrefix.size()), '.');
  if (parts.size() < 2) return false;
  for (std::string_view part : parts) {
    if (part.empty()) return false;
  }
  return true;
}

std::string_view CellPath(std::string_view cell) {
  assert(IsCellPrefix(cell));
  const size_t class_dot = cell.rfind('.');
  return cell.substr(kCellPrefix.size(), class_dot - kCellPrefix.size());
}

Result<TensorFileName> ParseTensorFileName(std::string_view file_name) {
  auto fail = [file_name](const std::string& why) {
    return Status::Error(Quote(file_name) +
                         " is not a TensorDump file name: " + why +
                         " (expected " + std::string(kTensorDumpForm) + ")");
  };
  if (!file_name.ends_with(kNpySuffix)) return fail("no .npy suffix");
  const std::string_view stem =
      file_name.substr(0, file_name.size() - kNpySuffix.size());
  std::string_view head, tail;
  if (!SplitLast(stem, &head, &tail)) return fail("too few dotted parts");

  // tail is "{index}_{dtype}_{id}" or "{index}_in_{dtype}_{id}".
  const std::vector<std::string_view> parts = Split(tail, '_');
  const bool in_mode = parts.size() == 4 && parts[1] == "in";
  if (parts.size() != 3 && !in_mode) {
    return fail(Quote(tail) + " is not {index}_{dtype}_{id} or " +
                "{index}_in_{dtype}_{id}");
  }
  TensorFileName parsed;
  if (!ParseIndex(parts.front(), &parsed.slot.index)) {
    return fail(Quote(parts.front()) + " is not a tensor index");
  }
  const std::string_view dtype = parts[parts.size() - 2];
  if (!IsDTypeWord(dtype)) return fail(Quote(dtype) + " is not a dtype");
  const std::optional<uint64_t> id = ParseUint(parts.back());
  if (!id) return fail(Quote(parts.back()) + " is not a TensorDump id");

  if (std::string why = ParseCellDirectionIo(head, &parsed.slot);
      !why.empty()) {
    return fail(why);
  }
  parsed.dtype = std::string(dtype);
  parsed.in_mode = in_mode;
  parsed.id = *id;
  return parsed;
}

bool IsImportedFileName(std::string_view file_name) {
  if (!file_name.ends_with(kNpySuffix)) return false;
  std::string_view stem =
      file_name.substr(0, file_name.size() - kNpySuffix.size());
  std::string_view head, index, io, call, direction, cell;
  if (!SplitLast(stem, &head, &index) || !SplitLast(head, &head, &io) ||
      !SplitLast(head, &head, &call) || !SplitLast(head, &cell, &direction)) {
    return false;
  }
  uint32_t unused;
  return ParseIndex(index, &unused) && ParseIo(io) && ParseUint(call) &&
         ParseDirection(direction) && IsCellPrefix(cell);
}

Result<TensorSlot> ParseSlotName(std::string_view name) {
  auto fail = [name](const std::string& why) {
    return Status::Error(
        Quote(name) + " is not a cell tensor name: " + why +
        " (expected Cell.{path}.{Class}.{forward|backward}.{input|output}." +
        "{index})");
  };
  std::string_view head, index;
  if (!SplitLast(name, &head, &index)) return fail("too few dotted parts");
  TensorSlot slot;
  if (!ParseIndex(index, &slot.index)) {
    return fail(Quote(index) + " is not a tensor index");
  }
  if (std::string why = ParseCellDirectionIo(head, &slot); !why.empty()) {
    return fail(why);
  }
  return slot;
}

}  // namespace tprobe::import
