// Name maps from YAML or JSON files (name_mapping.h).

#include "tools/compare/input/name_mapping.h"

#include <sstream>
#include <string_view>
#include <utility>

#include "tools/compare/input/mapping_text.h"
#include "tools/compare/input/python_json.h"

namespace tprobe::compare {
Result<NameMapping> NameMapping::Load(const std::string& path) {
  Result<std::string> text = ReadMappingFile(path);
  if (!text.ok()) return text.status();
  return Parse(text.value(), path);
}

Result<NameMapping> NameMapping::Parse(const std::string& text,
                                       const std::string& what) {
  NameMapping mapping;
  const std::string_view body = Trim(text);
  if (body.starts_with("{")) {
    Result<Json> json = ParsePythonJson(body, what);
    if (!json.ok()) return json.status();
    for (const auto& [key, value] : json->items()) {
      if (!value.is_string()) {
        return Status::InvalidArgument(what + ": the value of '" + key +
                                       "' is not a string");
      }
      mapping.Set(key, value.get<std::string>());
    }
    return mapping;
  }
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string_view l = Trim(WithoutComment(line));
    if (IsBlankLine(l)) continue;
    const auto [key, value] = SplitKeyValue(l);
    if (key.empty() || value.empty()) {
      return Status::InvalidArgument(what + ":" + std::to_string(number) +
                                     ": expected 'target name: baseline name'");
    }
    mapping.Set(std::string(key), std::string(value));
  }
  return mapping;
}

NameMapping NameMapping::Of(
    std::vector<std::pair<std::string, std::string>> entries) {
  NameMapping mapping;
  for (auto& [key, value] : entries) {
    mapping.Set(std::move(key), std::move(value));
  }
  return mapping;
}

void NameMapping::Set(std::string key, std::string value) {
  auto [it, added] = map_.insert_or_assign(key, value);
  if (added) {
    entries_.emplace_back(std::move(key), std::move(value));
    return;
  }
  for (auto& entry : entries_) {
    if (entry.first == it->first) entry.second = it->second;
  }
}

const std::string* NameMapping::Find(const std::string& name) const {
  const auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

std::string NameMapping::Map(const std::string& name) const {
  if (map_.empty()) return name;
  // Longest prefix first: the whole name, then cut at each dot.
  for (size_t end = name.size(); end != std::string::npos && end > 0;
       end = name.rfind('.', end - 1)) {
    const auto it = map_.find(std::string_view(name).substr(0, end));
    if (it != map_.end()) return it->second + name.substr(end);
    if (end == 0) break;
  }
  return name;
}

}  // namespace tprobe::compare
