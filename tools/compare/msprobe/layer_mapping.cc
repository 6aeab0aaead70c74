// msprobe's layer mapping (layer_mapping.h), after msprobe 26.2's
// core/compare/layer_mapping/.

#include "tools/compare/msprobe/layer_mapping.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "tools/compare/input/mapping_file.h"
#include "tools/compare/msprobe/stack_scope.h"

namespace tprobe::compare {
namespace {

constexpr std::string_view kTopLayer = "TopLayer";
constexpr std::string_view kParamsGrad = "parameters_grad";
constexpr std::string_view kNotAvailable = "N/A";

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    const size_t dot = s.find('.', begin);
    parts.emplace_back(s.substr(begin, dot - begin));
    if (dot == std::string_view::npos) return parts;
    begin = dot + 1;
  }
}

std::string Join(const std::vector<std::string>& parts, size_t begin,
                 size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < parts.size(); ++i) {
    if (i > begin) out += '.';
    out += parts[i];
  }
  return out;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

std::string ReplaceAll(std::string s, std::string_view from,
                       std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// A layer tree (step 2 of layer_mapping.h): msprobe's LayerTrie.
struct Node {
  std::string type_name;
  std::map<std::string, std::vector<size_t>, std::less<>> items;  // by state
  std::map<std::string, std::unique_ptr<Node>, std::less<>> children;

  const Node* Child(const std::string& name) const {
    const auto it = children.find(name);
    return it == children.end() ? nullptr : it->second.get();
  }
};

// The tree of `items`; the root stands for the top layer.
std::unique_ptr<Node> Tree(const std::vector<LayerItem>& items) {
  auto root = std::make_unique<Node>();
  root->type_name = kTopLayer;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::vector<std::string> parts = Split(items[i].full_scope);
    Node* node = root.get();
    for (size_t p = 1; p < parts.size(); ++p) {
      std::unique_ptr<Node>& child = node->children[parts[p]];
      if (!child) {
        child = std::make_unique<Node>();
        child->type_name = parts[p];
      }
      node = child.get();
    }
    node->items[items[i].state].push_back(i);
    node->type_name = items[i].type_name;
  }
  return root;
}

// True where msprobe reads the dump's layers; else it maps nothing.
bool HasLayers(const Dump& dump) {
  return dump.has_stack && !dump.stacks.empty() && !dump.parents.empty();
}

}  // namespace

Result<std::vector<LayerItem>> LayerItems(const Dump& dump) {
  std::vector<LayerItem> items;
  std::map<std::string, size_t, std::less<>> by_name;
  for (const std::string& name : dump.entries) {
    const std::vector<std::string> parts = Split(name);
    const size_t n = parts.size();
    if (n < 4) {
      return Status::InvalidArgument(dump.dir +
                                     "/dump.json: layer mapping: the entry '" +
                                     name + "' has fewer than 4 dotted parts");
    }
    LayerItem item;
    item.name = name;
    std::string api_name;
    std::string layer_scope;
    const bool cell = parts[0] == "Cell" || parts[0] == "Module";
    if (parts[n - 1] == kParamsGrad ||
        (parts[n - 2] == kParamsGrad && IsDigits(parts[n - 1]))) {
      // "x.fc1.Dense.parameters_grad" or "...parameters_grad.0".
      const size_t last = parts[n - 1] == kParamsGrad ? n - 1 : n - 2;
      api_name = parts[last - 2];
      item.type_name = parts[last - 1];
      item.state = kParamsGrad;
      layer_scope = Join(parts, 0, n - 3);
    } else {
      item.type_name = parts[n - 3];
      if (cell) {
        api_name = parts[n - 4];
        item.state = parts[n - 2];
        layer_scope = Join(parts, 0, n - 4);
      } else {
        api_name = item.type_name;
        item.state = parts[n - 1];
        const auto parent = dump.parents.find(name);
        if (parent != dump.parents.end() && !parent->second.empty()) {
          const std::vector<std::string> of = Split(parent->second);
          layer_scope = Join(of, 0, of.size() >= 3 ? of.size() - 3 : 0);
        }
      }
    }
    if (layer_scope.empty()) layer_scope = kTopLayer;
    item.full_scope = layer_scope;
    // An API's frame scope, from 8.x's stack.json (msprobe reads no stack
    // for cells, primitives and jit calls).
    const bool stackless =
        item.state != kParamsGrad &&
        (cell || parts[0] == "Primitive" || parts[0] == "Jit");
    if (const auto lines = dump.named_stacks.find(name);
        !stackless && lines != dump.named_stacks.end()) {
      const std::string frame = FrameStackScope(lines->second, dump.framework);
      if (!frame.empty()) item.full_scope += "." + frame;
    }
    item.full_scope += "." + api_name;
    by_name[name] = items.size();
    items.push_back(std::move(item));
  }
  // A backward entry takes its forward twin's scope.
  for (LayerItem& item : items) {
    std::vector<std::string> parts = Split(item.name);
    const size_t n = parts.size();
    if (parts[n - 2].find("backward") == std::string::npos &&
        parts[n - 1].find("backward") == std::string::npos) {
      continue;
    }
    for (size_t p = n - 2; p < n; ++p) {
      parts[p] = ReplaceAll(parts[p], "backward", "forward");
    }
    const auto twin = by_name.find(Join(parts, 0, n));
    if (twin != by_name.end()) item.full_scope = items[twin->second].full_scope;
  }
  return items;
}

Result<LayerMapping> LayerMapping::Load(const std::string& path) {
  Result<MappingFile> file = LoadMappingFile(path);
  if (!file.ok()) return file.status();
  return FromFile(*file);
}

Result<LayerMapping> LayerMapping::Parse(const std::string& text,
                                         const std::string& what) {
  Result<MappingFile> file = ParseMappingFile(text, what);
  if (!file.ok()) return file.status();
  return FromFile(*file);
}

Result<LayerMapping> LayerMapping::FromFile(const MappingFile& file) {
  // class -> "child path: new name" in file order.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>>
      classes;
  if (!file.value.is_null() && !file.value.is_object()) {
    return Status::InvalidArgument(
        file.Where("") +
        ": expected 'ClassName:' followed by indented 'child path: new name' "
        "lines");
  }
  for (const auto& [type_name, children] : file.value.items()) {
    const std::string at = "/" + PointerToken(type_name);
    auto& entries = classes[type_name];
    if (children.is_null()) continue;
    if (!children.is_object()) {
      return Status::InvalidArgument(
          file.Where(at) + ": expected 'child path: new name' lines under '" +
          type_name + "'");
    }
    for (const auto& [key, value] : children.items()) {
      if (key.empty() || !value.is_string() ||
          value.get<std::string>().empty()) {
        return Status::InvalidArgument(
            file.Where(at + "/" + PointerToken(key)) +
            ": expected 'child path: new name' under '" + type_name + "'");
      }
      entries.emplace_back(key, value.get<std::string>());
    }
  }
  // The class "Cell" stands for the top layer (msprobe's older spelling).
  if (auto cell = classes.find("Cell"); cell != classes.end()) {
    classes[std::string(kTopLayer)] = std::move(cell->second);
    classes.erase("Cell");
  }
  LayerMapping mapping;
  for (const auto& [type_name, entries] : classes) {
    auto& by_prefix = mapping.rules_[type_name];
    for (const auto& [key, value] : entries) {
      Rule rule;
      rule.origin = key;
      rule.target = value.substr(0, value.find('('));
      rule.level = Split(key).size();
      by_prefix[key.substr(0, key.find('.'))].push_back(std::move(rule));
    }
    for (auto& [prefix, rules] : by_prefix) {
      std::stable_sort(
          rules.begin(), rules.end(),
          [](const Rule& a, const Rule& b) { return a.level > b.level; });
    }
  }
  return mapping;
}

std::vector<std::string> LayerMapping::Twins(
    const std::vector<LayerItem>& ours,
    const std::vector<LayerItem>& theirs) const {
  const std::unique_ptr<Node> our_tree = Tree(ours);
  const std::unique_ptr<Node> their_tree = Tree(theirs);
  static const std::vector<Rule> kNoRules;

  std::vector<std::string> twin(ours.size(), std::string(kNotAvailable));
  for (size_t i = 0; i < ours.size(); ++i) {
    const LayerItem& item = ours[i];
    const std::vector<std::string> scope = Split(item.full_scope);
    const Node* node = our_tree.get();
    std::string new_scope(kTopLayer);
    for (size_t at = 0; node && at + 1 < scope.size();) {
      const std::string& child = scope[at + 1];
      const std::vector<Rule>* rules = &kNoRules;
      if (auto by_class = rules_.find(node->type_name);
          by_class != rules_.end()) {
        if (auto by_prefix = by_class->second.find(child);
            by_prefix != by_class->second.end()) {
          rules = &by_prefix->second;
        }
      }
      std::string renamed = child;
      size_t step = 1;
      for (const Rule& rule : *rules) {
        if (Join(scope, at + 1, at + 1 + rule.level) == rule.origin) {
          renamed = rule.target;
          step = rule.level;
          break;
        }
      }
      new_scope += "." + renamed;
      for (size_t s = 0; s < step && node; ++s) node = node->Child(scope[++at]);
    }
    if (!node) continue;
    // The item's place among its node's entries of its state.
    std::optional<size_t> index;
    if (auto of_state = node->items.find(item.state);
        of_state != node->items.end()) {
      for (size_t k = 0; k < of_state->second.size(); ++k) {
        if (ours[of_state->second[k]].name == item.name) index = k;
      }
    }
    const std::vector<std::string> path = Split(new_scope);
    const Node* there = their_tree.get();
    for (size_t p = 1; there && p < path.size(); ++p) {
      there = there->Child(path[p]);
    }
    if (!there) continue;
    const auto of_state = there->items.find(item.state);
    if (of_state == there->items.end() || of_state->second.empty()) continue;
    const std::vector<size_t>& candidates = of_state->second;
    // msprobe's index -1 (never found) is Python's last element.
    const size_t k = index ? *index : candidates.size() - 1;
    if (k < candidates.size()) twin[i] = theirs[candidates[k]].name;
  }
  return twin;
}

Result<MsprobeMapping> LayerMapping::DataMapping(const Dump& target,
                                                 const Dump& baseline) const {
  if (!HasLayers(target)) return MsprobeMapping();
  Result<std::vector<LayerItem>> ours = LayerItems(target);
  if (!ours.ok()) return ours.status();
  std::vector<LayerItem> theirs;
  if (HasLayers(baseline)) {
    Result<std::vector<LayerItem>> items = LayerItems(baseline);
    if (!items.ok()) return items.status();
    theirs = std::move(*items);
  }
  const std::vector<std::string> twin = Twins(*ours, theirs);

  // Row by row (step 4): the same suffix in the twin entry.
  std::set<std::string, std::less<>> baseline_rows;
  for (const Row& row : baseline.rows) baseline_rows.insert(row.name);
  std::map<std::string, size_t, std::less<>> item_of;
  for (size_t i = 0; i < ours->size(); ++i) item_of[(*ours)[i].name] = i;
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Row& row : target.rows) {
    const std::string& entry = target.entries[row.entry];
    const auto it = item_of.find(entry);
    std::string to(kNotAvailable);
    if (it != item_of.end() && twin[it->second] != kNotAvailable &&
        row.name.starts_with(entry)) {
      std::string candidate = twin[it->second] + row.name.substr(entry.size());
      if (baseline_rows.count(candidate)) to = std::move(candidate);
    }
    rows.emplace_back(row.name, std::move(to));
  }
  return MsprobeMapping::Of(MsprobeMapping::Kind::kData,
                            NameMapping::Of(std::move(rows)));
}

}  // namespace tprobe::compare
