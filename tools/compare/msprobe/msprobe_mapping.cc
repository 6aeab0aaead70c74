// msprobe's mapping options (msprobe_mapping.h).

#include "tools/compare/msprobe/msprobe_mapping.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/input/mapping_file.h"
#include "tools/compare/input/python_json.h"
#include "tools/compare/msprobe/ms_to_pt_api.h"

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

std::string ReplaceAll(std::string s, std::string_view from,
                       std::string_view to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// msprobe's API name of a row or entry: its first two parts.
std::string_view ApiName(std::string_view name) {
  const size_t first = name.find('.');
  if (first == std::string_view::npos) return name;
  return name.substr(0, name.find('.', first + 1));
}

// A row's state as msprobe's read_op gives it: the pattern after its
// entry's name (".input.") and the file's term for it ("args"); nullopt
// for a debug row or a name that does not extend `entry`.
std::optional<std::pair<std::string_view, std::string_view>> RowState(
    std::string_view name, std::string_view entry) {
  if (entry.empty() || !name.starts_with(entry)) return std::nullopt;
  std::string_view last = entry.substr(entry.rfind('.') + 1);
  std::string_view before = entry.substr(0, entry.rfind('.'));
  before = before.substr(before.rfind('.') + 1);
  if (last == "parameters_grad" || before == "parameters_grad") {
    return std::pair{".parameters_grad.", "parameters_grad"};
  }
  if (last == "debug") return std::nullopt;
  const std::string_view rest = name.substr(entry.size());
  for (const auto& [word, term] :
       {std::pair{".input", "args"}, std::pair{".output", "output"},
        std::pair{".parameters", "parameters"}}) {
    if (rest == word || rest.starts_with(std::string(word) + ".")) {
      return std::pair{word == std::string_view(".input")    ? ".input."
                       : word == std::string_view(".output") ? ".output."
                                                             : ".parameters.",
                       std::string_view(term)};
    }
  }
  return std::nullopt;
}

constexpr std::string_view kTerms[] = {"args", "output", "parameters",
                                       "parameters_grad"};

// One item as read, before its lists are paired.
struct RawItem {
  int line = 0;
  std::optional<std::string> ms_api, pt_api;
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;
};

// Records `key: value` (a scalar, or a list when `list` is set) in `item`.
Status SetKey(RawItem& item, std::string_view key, std::string scalar,
              std::optional<std::vector<std::string>> list,
              const std::string& where) {
  if (key == "ms_api" || key == "pt_api") {
    if (list || scalar.empty()) {
      return Status::InvalidArgument(where + ": " + std::string(key) +
                                     " must be an API name (\"Mint.add\")");
    }
    (key == "ms_api" ? item.ms_api : item.pt_api) = std::move(scalar);
    return Status::Ok();
  }
  bool known = false;
  for (std::string_view term : kTerms) {
    if (key.substr(key.find('_') + 1) == term &&
        (key.starts_with("ms_") || key.starts_with("pt_"))) {
      known = true;
    }
  }
  if (!known) {
    return Status::InvalidArgument(
        where + ": unknown key '" + std::string(key) +
        "' (expected ms_api, pt_api, ms_args, pt_args, ms_output, "
        "pt_output, ms_parameters, pt_parameters, ms_parameters_grad, "
        "pt_parameters_grad)");
  }
  if (!list) {
    return Status::InvalidArgument(where + ": " + std::string(key) +
                                   " must be a list of places ([0, 1])");
  }
  for (auto& [k, v] : item.lists) {
    if (k == key) {
      v = std::move(*list);
      return Status::Ok();
    }
  }
  item.lists.emplace_back(std::string(key), std::move(*list));
  return Status::Ok();
}

Result<ApiArgMapping> Finish(RawItem raw, const std::string& what) {
  const std::string where = what + ":" + std::to_string(raw.line);
  if (!raw.ms_api || !raw.pt_api) {
    return Status::InvalidArgument(where +
                                   ": an item needs both ms_api and pt_api");
  }
  ApiArgMapping item;
  item.ms_api = std::move(*raw.ms_api);
  item.pt_api = std::move(*raw.pt_api);
  item.line = raw.line;
  auto list = [&](const std::string& key) {
    for (const auto& [k, v] : raw.lists) {
      if (k == key) return v;
    }
    return std::vector<std::string>();
  };
  for (std::string_view term : kTerms) {
    const std::vector<std::string> ms = list("ms_" + std::string(term));
    const std::vector<std::string> pt = list("pt_" + std::string(term));
    if (ms.size() != pt.size()) {
      return Status::InvalidArgument(
          where + ": ms_" + std::string(term) + " and pt_" + std::string(term) +
          " must list as many places (" + std::to_string(ms.size()) + " and " +
          std::to_string(pt.size()) + ")");
    }
    if (ms.empty()) continue;
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i < ms.size(); ++i) pairs.emplace_back(ms[i], pt[i]);
    item.places.emplace_back(std::string(term), std::move(pairs));
  }
  return item;
}

// A place as Python's str() writes the YAML or JSON value; nullopt for one
// that is no place (null, a list, a map).
std::optional<std::string> Place(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return std::nullopt;
}

// The item at `pointer` of `file` (a map of "key: value").
Result<ApiArgMapping> ItemOf(const MappingFile& file, const Json& entry,
                             const std::string& pointer) {
  if (!entry.is_object()) {
    return Status::InvalidArgument(file.Where(pointer) +
                                   ": expected an item of 'key: value' lines");
  }
  RawItem raw;
  raw.line = file.Line(pointer);
  for (const auto& [key, value] : entry.items()) {
    const std::string at = file.Where(pointer + "/" + PointerToken(key));
    std::optional<std::vector<std::string>> list;
    std::string scalar;
    if (value.is_array()) {
      list.emplace();
      for (const Json& v : value) {
        std::optional<std::string> place = Place(v);
        if (!place || place->empty()) {
          return Status::InvalidArgument(at + ": an empty place in " + key);
        }
        list->push_back(std::move(*place));
      }
    } else {
      scalar = Place(value).value_or("");
    }
    Status set = SetKey(raw, key, std::move(scalar), std::move(list), at);
    if (!set.ok()) return set;
  }
  return Finish(std::move(raw), file.what);
}
}  // namespace

const std::vector<std::pair<std::string, std::string>>& ApiArgMapping::Places(
    std::string_view term) const {
  static const std::vector<std::pair<std::string, std::string>> kNone;
  for (const auto& [t, pairs] : places) {
    if (t == term) return pairs;
  }
  return kNone;
}

Result<std::vector<ApiArgMapping>> ParseApiArgMappings(
    const std::string& text, const std::string& what) {
  Result<MappingFile> file = ParseMappingFile(text, what);
  if (!file.ok()) return file.status();
  return ApiArgMappingsOf(*file);
}

Result<std::vector<ApiArgMapping>> ApiArgMappingsOf(const MappingFile& file) {
  std::vector<ApiArgMapping> items;
  if (file.value.is_null()) return items;
  if (!file.value.is_array()) {
    return Status::InvalidArgument(
        file.Where("") + ": expected a list of '- ms_api: ...' items");
  }
  for (size_t i = 0; i < file.value.size(); ++i) {
    Result<ApiArgMapping> item =
        ItemOf(file, file.value[i], "/" + std::to_string(i));
    if (!item.ok()) return item.status();
    items.push_back(std::move(*item));
  }
  return items;
}

Result<std::vector<ApiArgMapping>> LoadApiArgMappings(const std::string& path) {
  Result<MappingFile> file = LoadMappingFile(path);
  if (!file.ok()) return file.status();
  return ApiArgMappingsOf(*file);
}

namespace {

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

MsprobeMapping MsprobeMapping::Api(std::vector<ApiArgMapping> items) {
  MsprobeMapping m = Api();
  m.api_items_ = std::move(items);
  return m;
}

MsprobeMapping MsprobeMapping::ForPair(const Dump& target,
                                       const Dump& baseline) const {
  if (api_items_.empty()) return *this;
  auto apis = [](const Dump& dump) {
    std::set<std::string, std::less<>> names;
    for (const Row& row : dump.rows) names.emplace(ApiName(row.name));
    return names;
  };
  const auto target_apis = apis(target);
  const auto baseline_apis = apis(baseline);
  MsprobeMapping m = *this;
  m.api_items_.clear();
  for (const ApiArgMapping& item : api_items_) {
    if (target_apis.contains(item.ms_api) &&
        baseline_apis.contains(item.pt_api)) {
      m.api_items_.push_back(item);
    }
  }
  return m;
}

MsprobeMapping MsprobeMapping::Of(Kind kind, NameMapping map) {
  MsprobeMapping m;
  m.kind_ = kind;
  m.map_ = std::move(map);
  return m;
}

std::optional<std::string> MsprobeMapping::Key(const std::string& name) const {
  return Key(name, "");
}

std::optional<std::string> MsprobeMapping::Key(const std::string& name,
                                               std::string_view entry) const {
  switch (kind_) {
    case Kind::kNone:
      return name;
    case Kind::kApi:
      return ApiKey(name, entry);
    case Kind::kCell:
      return CellKey(name);
    case Kind::kData:
      if (const std::string* to = map_.Find(name)) return *to;
      return name;
  }
  return name;
}

std::string MsprobeMapping::ApiKey(const std::string& name,
                                   std::string_view entry) const {
  const std::string_view api = ApiName(name);
  // msprobe's process_internal_api_mapping: Mint and MintFunctional by
  // their class, then its built-in table by the API's name; each replaces
  // all occurrences, as Python's str.replace.
  std::string key = [&]() -> std::string {
    // The API's class is the name's first part.
    const std::string_view cls = api.substr(0, api.find('.'));
    if (cls == "Mint") return ReplaceAll(name, "Mint", "Torch");
    if (cls == "MintFunctional") {
      return ReplaceAll(name, "MintFunctional", "Functional");
    }
    if (const auto pt_api = MsToPtApi(api)) {
      return ReplaceAll(name, api, *pt_api);
    }
    return name;
  }();
  // FILE's items on top, as msprobe's
  // modify_compare_data_with_user_mapping: the row's name with the
  // MindSpore API replaced (its first occurrence), and a listed place
  // replaced by its pair; an unlisted row is abandoned.
  for (const ApiArgMapping& item : api_items_) {
    if (item.ms_api != api) continue;
    const std::string op_name = ReplaceFirst(name, item.ms_api, item.pt_api);
    const std::string origin =
        ReplaceFirst(std::string(entry), item.ms_api, item.pt_api);
    bool matched = false;
    if (const auto state = RowState(name, entry)) {
      const auto [pattern, term] = *state;
      std::string_view place = op_name;
      const std::string prefix = origin + std::string(pattern);
      if (place.starts_with(prefix)) place.remove_prefix(prefix.size());
      for (const auto& [ms, pt] : item.Places(term)) {
        if (place != ms) continue;
        key = ReplaceAll(op_name, std::string(pattern) + ms,
                         std::string(pattern) + pt);
        matched = true;
      }
    }
    if (!matched) key = op_name + "abandoned";
  }
  return key;
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
