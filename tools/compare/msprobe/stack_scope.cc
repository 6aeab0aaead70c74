// An API's frame scope from its stack lines (stack_scope.h), after msprobe
// 26.2's core/compare/layer_mapping/data_scope_parser.py.

#include "tools/compare/msprobe/stack_scope.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace tprobe::compare {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// The line's fields split at each ',', as Python's str.split(",").
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t begin = 0;;) {
    const size_t comma = line.find(',', begin);
    fields.push_back(line.substr(begin, comma - begin));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// The words of `s`, as Python's str.split().
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> words;
  auto space = [](char c) {
    return std::isspace(static_cast<unsigned char>(c));
  };
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && space(s[i])) ++i;
    const size_t begin = i;
    while (i < s.size() && !space(s[i])) ++i;
    if (i > begin) words.push_back(s.substr(begin, i - begin));
  }
  return words;
}

bool InFramework(std::string_view line) {
  static constexpr std::array<std::string_view, 4> kFrameFiles = {
      "site-packages/torch", "package/torch", "site-packages/mindspore",
      "package/mindspore"};
  const std::string_view file = Fields(line).front();
  return std::any_of(kFrameFiles.begin(), kFrameFiles.end(),
                     [&](std::string_view f) { return Contains(file, f); });
}

// Step 1's end mark for `framework`; nullopt for a framework msprobe does
// not know.
std::optional<bool (*)(std::string_view)> EndMark(std::string_view framework) {
  if (framework == "mindspore") {
    return [](std::string_view line) { return Contains(line, "construct"); };
  }
  if (framework == "pytorch") {
    return [](std::string_view line) {
      return Contains(line, "in forward,") || Contains(line, "in backward,");
    };
  }
  return std::nullopt;
}

}  // namespace

std::string FrameStackScope(const std::vector<std::string>& lines,
                            std::string_view framework) {
  const auto is_end = EndMark(framework);
  if (!is_end || lines.empty()) return "";
  // Step 1: the lines between the wrapper and the caller's layer.
  std::optional<size_t> start;
  size_t end = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (Contains(lines[i], "Template")) {
      start = i;
    } else if (start && (*is_end)(lines[i])) {
      end = i;
      break;
    }
  }
  // Step 2: the last of the leading framework lines.
  const std::string* entry = nullptr;
  for (size_t i = start ? *start + 1 : 0; i < end; ++i) {
    if (!InFramework(lines[i])) break;
    entry = &lines[i];
  }
  if (!entry) return "";
  // Step 3: its function's name.
  const std::vector<std::string_view> fields = Fields(*entry);
  if (Contains(fields[0], "msprobe") || Contains(fields[0], "MindSpeed")) {
    return "";
  }
  if (fields.size() < 3) return "";
  if (Contains(fields[2], "construct") || Contains(fields[2], "__call__")) {
    return "";
  }
  const std::vector<std::string_view> words = Words(fields[2]);
  return words.size() < 2 ? "" : std::string(words[1]);
}

}  // namespace tprobe::compare
