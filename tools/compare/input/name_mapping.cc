// Name maps from YAML or JSON files (name_mapping.h), read as mapping files
// (mapping_file.h).

#include "tools/compare/input/name_mapping.h"

#include <utility>

#include "tools/compare/input/mapping_file.h"

namespace tprobe::compare {
Result<NameMapping> NameMapping::Load(const std::string& path) {
  Result<MappingFile> file = LoadMappingFile(path);
  if (!file.ok()) return file.status();
  return FromFile(*file);
}

Result<NameMapping> NameMapping::Parse(const std::string& text,
                                       const std::string& what) {
  Result<MappingFile> file = ParseMappingFile(text, what);
  if (!file.ok()) return file.status();
  return FromFile(*file);
}

Result<NameMapping> NameMapping::FromFile(const MappingFile& file) {
  NameMapping mapping;
  if (file.value.is_null()) return mapping;
  if (!file.value.is_object()) {
    return Status::InvalidArgument(file.Where("") +
                                   ": expected 'target name: baseline name' "
                                   "lines");
  }
  for (const auto& [key, value] : file.value.items()) {
    if (key.empty() || !value.is_string() || value.get<std::string>().empty()) {
      return Status::InvalidArgument(file.Where("/" + PointerToken(key)) +
                                     ": expected 'target name: baseline name'");
    }
    mapping.Set(key, value.get<std::string>());
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
