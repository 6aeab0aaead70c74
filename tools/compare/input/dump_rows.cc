// Loading a dump.json as rows (dump_rows.h).

#include "tools/compare/input/dump_rows.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <utility>

#include "tools/compare/input/python_json.h"
#include "tools/compare/input/python_repr.h"

namespace tprobe::compare {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// A tensor object: a "type" naming a tensor, or dtype and shape without a
// value (older trees).
bool IsTensor(const Json& v) {
  const auto type = v.find("type");
  if (type != v.end() && type->is_string()) {
    return EndsWith(type->get_ref<const std::string&>(), "Tensor");
  }
  return v.contains("dtype") && v.contains("shape") && !v.contains("value");
}

// A value's text, as Python would print it for the plain kinds.
std::string ValueText(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) {
    if (auto n = NumberOf(v)) return v.get_ref<const std::string&>().substr(1);
    return v.get_ref<const std::string&>();
  }
  if (v.is_array()) {  // str() of a list of plain values: "[2, 3]"
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      out += v[i].is_string() ? PyStrRepr(v[i].get<std::string>())
                              : ValueText(v[i]);
    }
    return out + "]";
  }
  return v.dump();
}

std::string PythonTypeOf(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return "<class 'bool'>";
  if (v.is_number_integer()) return "<class 'int'>";
  if (v.is_number()) return "<class 'float'>";
  if (v.is_string()) return NumberOf(v) ? "<class 'float'>" : "<class 'str'>";
  return "<class 'object'>";
}

// str(type(value)) of a typed value's "value".
std::string TypeOfValue(const Json& v) {
  if (v.is_null()) return "<class 'NoneType'>";
  if (v.is_array()) return "<class 'list'>";
  if (v.is_object()) return "<class 'dict'>";
  return PythonTypeOf(v);
}

class Flattener {
 public:
  Flattener(Dump* dump, size_t entry) : dump_(dump), entry_(entry) {}

  void Add(const Json& v, const std::string& name) {
    if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) {
        Add(v[i], name + "." + std::to_string(i));
      }
      return;
    }
    if (v.is_object() && IsTensor(v)) {
      AddTensor(v, name);
      return;
    }
    if (v.is_object() && v.contains("type")) {
      const Json& type = v["type"];
      const std::string type_name =
          type.is_string() ? type.get<std::string>() : type.dump();
      Row& row = NewRow(name);
      const auto value = v.find("value");
      const Json& shown = value != v.end() ? *value : v;
      // msprobe's dtype and shape cells of a typed value: its Python type,
      // but a torch.Size, slice and ellipsis by name (with a size's value,
      // a slice's numpy shape, as their shape).
      if (type_name == "torch.Size" || type_name == "slice" ||
          type_name == "ellipsis") {
        row.dtype = type_name;
        if (type_name == "torch.Size") row.shape_text = ValueText(shown);
        if (type_name == "slice" && shown.is_array()) {
          row.shape_text = "(" + std::to_string(shown.size()) + ",)";
        }
      } else {
        row.dtype =
            value != v.end() ? TypeOfValue(*value) : "<class 'NoneType'>";
      }
      row.checksum = ValueText(shown);
      SetNumber(row, shown);
      return;
    }
    if (v.is_object()) {
      for (const auto& [key, item] : v.items()) Add(item, name + "." + key);
      return;
    }
    Row& row = NewRow(name);
    row.dtype = PythonTypeOf(v);
    row.checksum = ValueText(v);
    SetNumber(row, v);
  }

 private:
  Row& NewRow(const std::string& name) {
    Row& row = dump_->rows.emplace_back();
    row.name = name;
    row.entry = entry_;
    return row;
  }

  static void SetNumber(Row& row, const Json& v) {
    if (auto n = NumberOf(v)) {
      row.stats = {n, n, n, n, uint8_t(v.is_number_integer() ? 0xF : 0)};
    }
  }

  void AddTensor(const Json& v, const std::string& name) {
    Row& row = NewRow(name);
    row.is_tensor = true;
    if (auto it = v.find("dtype"); it != v.end() && it->is_string()) {
      row.dtype = it->get<std::string>();
    }
    if (auto it = v.find("shape"); it != v.end() && it->is_array()) {
      for (const Json& d : *it) {
        if (d.is_number_integer()) row.shape.push_back(d.get<int64_t>());
      }
    }
    if (auto it = v.find("requires_grad"); it != v.end() && it->is_boolean()) {
      row.requires_grad = it->get<bool>();
    }
    auto number = [&v](const char* key) -> std::optional<double> {
      const auto it = v.find(key);
      return it == v.end() ? std::nullopt : NumberOf(*it);
    };
    row.stats = {number("Max"), number("Min"), number("Mean"), number("Norm")};
    const char* keys[] = {"Max", "Min", "Mean", "Norm"};
    for (int i = 0; i < 4; ++i) {
      const auto it = v.find(keys[i]);
      if (it != v.end() && it->is_number_integer()) {
        row.stats.integral |= 1 << i;
      }
      if (it != v.end() && it->is_boolean()) row.stats.boolean |= 1 << i;
    }
    if (auto it = v.find("md5"); it != v.end()) {
      row.checksum = it->is_string() ? it->get<std::string>() : it->dump();
    }
    if (auto it = v.find("data_name"); it != v.end() && it->is_string()) {
      row.data_name = it->get<std::string>();
    }
  }

  Dump* dump_;
  size_t entry_;
};

// The row prefix of one key of an entry.
std::string_view PartOf(std::string_view key) {
  if (key == "input_args" || key == "input_kwargs" || key == "input") {
    return "input";
  }
  return key;
}

int KeyRank(std::string_view key) {
  if (PartOf(key) == "input") return 0;
  if (key == "parameters") return 1;
  if (key == "output") return 2;
  return 3;
}

Result<Mode> ModeOf(const Dump& dump, const std::string& path) {
  if (dump.task == "structure") {
    return Status::InvalidArgument(
        path + ": task 'structure' holds no values to compare");
  }
  if (dump.task == "tensor") return Mode::kTensor;
  for (const Row& row : dump.rows) {
    if (row.is_tensor && !row.checksum.empty() && row.checksum != "null") {
      return row.checksum.starts_with("0x") ? Mode::kXor : Mode::kMd5;
    }
  }
  return Mode::kStatistics;
}

void LoadConstruct(const std::string& path, Dump& dump) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  // The parent map is the root object itself: its members are at depth 1.
  std::string node;
  auto callback = [&dump, &node](int depth, Json::parse_event_t event,
                                 Json& parsed) {
    if (depth != 1) return true;
    if (event == Json::parse_event_t::key) {
      node = parsed.get<std::string>();
      return true;
    }
    if (event == Json::parse_event_t::value) {
      dump.parents[node] =
          parsed.is_string() ? parsed.get<std::string>() : std::string();
      return false;
    }
    return true;
  };
  (void)ReadPythonJson(path, callback);  // a bad construct.json: no paths
}

// stack.json: 26.x's {"0": [[entry, ...], [line, ...]], ...} or 8.3.3's
// {entry: [line, ...]}. A file that cannot be read gives no stacks.
void LoadStacks(const std::string& path, Dump& dump) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  Result<Json> root = ReadPythonJson(path);
  if (!root.ok() || !root->is_object()) return;
  dump.has_stack = true;
  auto text = [](const Json& lines) {
    std::vector<std::string> items;
    for (const Json& l : lines) {
      if (l.is_string()) items.push_back(l.get<std::string>());
    }
    return PyListRepr(items);
  };
  if (!root->contains("0")) {
    for (const auto& [name, lines] : root->items()) {
      if (!lines.is_array()) continue;
      dump.stacks[name] = text(lines);
      std::vector<std::string>& named = dump.named_stacks[name];
      for (const Json& l : lines) {
        if (l.is_string()) named.push_back(l.get<std::string>());
      }
    }
    return;
  }
  for (const auto& [key, value] : root->items()) {
    if (!value.is_array() || value.size() != 2 || !value[0].is_array() ||
        !value[1].is_array()) {
      continue;
    }
    const std::string cell = text(value[1]);
    for (const Json& name : value[0]) {
      if (name.is_string()) dump.stacks[name.get<std::string>()] = cell;
    }
  }
}

// The framework of the first "type" in `v` (document order) naming a
// "mindspore" or "torch" class, as msprobe's detect_framework_by_dump_json
// finds it in a dump.json without "framework"; "" for none.
std::string FrameworkOfTypes(const Json& v, int depth = 0) {
  if (depth > 64) return "";  // deeper than any dump.json holds
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      if (key == "type" && value.is_string()) {
        const auto& type = value.get_ref<const std::string&>();
        if (type.starts_with("mindspore")) return "mindspore";
        if (type.starts_with("torch")) return "pytorch";
      }
      std::string found = FrameworkOfTypes(value, depth + 1);
      if (!found.empty()) return found;
    }
  } else if (v.is_array()) {
    for (const Json& item : v) {
      std::string found = FrameworkOfTypes(item, depth + 1);
      if (!found.empty()) return found;
    }
  }
  return "";
}

// Appends entry `name` and its rows to `dump`.
void AddEntry(Dump& dump, const std::string& name, const Json& body) {
  const size_t index = dump.entries.size();
  dump.entries.push_back(name);
  Flattener flat(&dump, index);
  const bool grads = name.find(".parameters_grad") != std::string::npos;
  // Inputs, then parameters, then outputs (msprobe's row order); other
  // keys keep their place after them.
  std::vector<std::pair<int, const Json::object_t::value_type*>> keys;
  for (const auto& item : body.get_ref<const Json::object_t&>()) {
    keys.emplace_back(KeyRank(item.first), &item);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  for (const auto& [rank, item] : keys) {
    const std::string& key = item->first;
    const Json& value = item->second;
    if (!value.is_array() && !value.is_object()) continue;
    if (grads && value.is_array() && value.size() == 1) {
      // msprobe 26.x: {"weight": [tensor]} -> {entry}.weight.
      flat.Add(value[0], name + "." + key);
      continue;
    }
    flat.Add(value, name + "." + std::string(PartOf(key)));
  }
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kTensor:
      return "tensor";
    case Mode::kStatistics:
      return "statistics";
    case Mode::kMd5:
      return "md5";
    case Mode::kXor:
      return "xor";
  }
  return "?";
}

std::string Dump::ModulePath(const std::string& entry) const {
  std::vector<std::string_view> chain{entry};
  // Bounded: a cycle in a corrupt construct.json ends the walk.
  for (size_t i = 0; i < 256; ++i) {
    const auto it = parents.find(chain.back());
    if (it == parents.end() || it->second.empty()) break;
    chain.push_back(it->second);
  }
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!path.empty()) path += " > ";
    path += *it;
  }
  return path;
}

Result<Dump> LoadDump(const std::string& dump_json) {
  Dump dump;
  std::string bad_entry;
  bool saw_data = false;
  std::string types_framework;
  Result<Json> root = ReadPythonJsonStreaming(
      dump_json, "data", [&](const std::string& name, Json& body) {
        saw_data = true;
        if (!body.is_object()) {
          if (bad_entry.empty()) bad_entry = name;
          return;
        }
        if (types_framework.empty()) types_framework = FrameworkOfTypes(body);
        AddEntry(dump, name, body);
      });
  if (!root.ok()) return root.status();
  // An empty "data" object comes back whole; anything else there is not a
  // dump.json.
  const auto data = root->is_object() ? root->find("data") : root->end();
  if (!root->is_object() || (data == root->end() && !saw_data) ||
      (data != root->end() && !data->is_object())) {
    return Status::InvalidArgument(dump_json +
                                   ": not a dump.json (no \"data\" object)");
  }
  if (!bad_entry.empty()) {
    return Status::InvalidArgument(dump_json + ": entry '" + bad_entry +
                                   "' is not an object");
  }
  dump.dir = std::filesystem::path(dump_json).parent_path().string();
  if (dump.dir.empty()) dump.dir = ".";
  auto text = [&](const char* key) {
    const auto it = root->find(key);
    return it != root->end() && it->is_string() ? it->get<std::string>()
                                                : std::string();
  };
  dump.task = text("task");
  dump.level = text("level");
  dump.framework = text("framework");
  if (dump.framework != "pytorch" && dump.framework != "mindspore") {
    dump.framework = types_framework;
  }
  Result<Mode> mode = ModeOf(dump, dump_json);
  if (!mode.ok()) return mode.status();
  dump.mode = *mode;
  LoadConstruct(dump.dir + "/construct.json", dump);
  LoadStacks(dump.dir + "/stack.json", dump);
  return dump;
}

}  // namespace tprobe::compare
