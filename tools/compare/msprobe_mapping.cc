// msprobe's mapping options (msprobe_mapping.h).

#include "tools/compare/msprobe_mapping.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

namespace tprobe::compare {
namespace {

std::string ReplaceFirst(std::string s, std::string_view from,
                         std::string_view to) {
  if (from.empty()) return s;
  if (const size_t at = s.find(from); at != std::string::npos) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The earliest ".forward.", ".backward." or ".parameters_grad." in `s`.
size_t CallMarker(std::string_view s, bool with_params_grad) {
  size_t at = std::string_view::npos;
  for (std::string_view m : {".forward.", ".backward.", ".parameters_grad."}) {
    if (!with_params_grad && m == ".parameters_grad.") continue;
    at = std::min(at, s.find(m));
  }
  return at;
}

bool HasPart(std::string_view name, std::string_view part) {
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('.', begin);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(begin, end - begin) == part) return true;
    begin = end + 1;
  }
  return false;
}

// The family of a dtype in msprobe's cross-framework table; "" for one
// outside it.
std::string_view Family(std::string_view d) {
  if (d.starts_with("torch.")) {
    d.remove_prefix(6);
  } else if (!d.empty() && d[0] >= 'A' && d[0] <= 'Z') {
    // MindSpore's spelling: "Float32", "UInt8", "BFloat16".
  } else {
    return "";
  }
  std::string lower(d);
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  for (std::string_view n : {"int8", "uint8", "int16", "uint16", "int32",
                             "uint32", "int64", "uint64"}) {
    if (lower == n) return "int";
  }
  for (std::string_view n : {"float16", "float32", "float64", "bfloat16"}) {
    if (lower == n) return "float";
  }
  if (lower == "bool") return "bool";
  if (lower == "complex64" || lower == "complex128") return "complex";
  return "";
}

}  // namespace

Result<MsprobeMapping> MsprobeMapping::Load(Kind kind,
                                            const std::string& path) {
  Result<NameMapping> map = NameMapping::Load(path);
  if (!map.ok()) return map.status();
  return Of(kind, std::move(*map));
}

MsprobeMapping MsprobeMapping::Api() { return Of(Kind::kApi, {}); }

MsprobeMapping MsprobeMapping::Of(Kind kind, NameMapping map) {
  MsprobeMapping m;
  m.kind_ = kind;
  m.map_ = std::move(map);
  return m;
}

std::optional<std::string> MsprobeMapping::Key(const std::string& name) const {
  switch (kind_) {
    case Kind::kNone:
      return name;
    case Kind::kApi: {
      // The API's class is the name's first part.
      const std::string_view cls =
          std::string_view(name).substr(0, name.find('.'));
      if (cls == "Mint") return ReplaceFirst(name, "Mint", "Torch");
      if (cls == "MintFunctional") {
        return ReplaceFirst(name, "MintFunctional", "Functional");
      }
      return name;
    }
    case Kind::kCell:
      return CellKey(name);
    case Kind::kData:
      if (const std::string* to = map_.Find(name)) return *to;
      return name;
  }
  return name;
}

std::optional<std::string> MsprobeMapping::CellKey(
    const std::string& name) const {
  if (name.empty()) return std::nullopt;
  if (!HasPart(name, "parameters_grad") &&
      CallMarker(name, false) == std::string::npos) {
    return std::nullopt;
  }
  std::string key = ReplaceFirst(name, "Cell", "Module");
  if (map_.empty()) return key;
  const size_t dot = key.find('.');
  const std::string_view rest = dot == std::string::npos
                                    ? std::string_view(key)
                                    : std::string_view(key).substr(dot + 1);
  const std::string cell(rest.substr(0, CallMarker(rest, true)));
  std::string mapped;
  if (const std::string* to = map_.Find(cell)) {
    mapped = *to;
  } else {
    mapped = cell;
    for (const auto& [from, to] : map_.entries()) {
      mapped = ReplaceFirst(std::move(mapped), from, to);
    }
  }
  return mapped == cell ? key : ReplaceFirst(key, cell, mapped);
}

bool CrossFrameworkDtypesMatch(const std::string& a, const std::string& b) {
  if (a.starts_with("torch.") == b.starts_with("torch.")) return false;
  const std::string_view fa = Family(a);
  return !fa.empty() && fa == Family(b);
}

}  // namespace tprobe::compare
