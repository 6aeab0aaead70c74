// Row matching (matcher.h).

#include "tools/compare/matcher.h"

#include <algorithm>
#include <deque>
#include <string_view>
#include <unordered_map>

namespace tprobe::compare {
namespace {

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

std::string ShapeKey(const std::vector<int64_t>& shape) {
  std::string key = "[";
  for (int64_t d : shape) key += std::to_string(d) + ",";
  return key + "]";
}

// Queues of row indices by key, taken front first.
using Queues = std::unordered_map<std::string, std::deque<size_t>>;

// msprobe's update_backward_call: each backward entry's call index becomes
// the number of backward calls of its API (or cell) before it in dump order
// ("Functional.linear.1.backward", the first backward of linear, is
// "Functional.linear.0.backward"). Other entries keep their names.
std::vector<std::string> BackwardRenumbered(const Dump& dump) {
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> backward_calls;
  for (const std::string& entry : dump.entries) {
    names.push_back(entry);
    const size_t last_dot = entry.rfind('.');
    if (last_dot == std::string::npos || last_dot == 0) continue;
    const size_t dot = entry.rfind('.', last_dot - 1);
    if (dot == std::string::npos) continue;
    std::string head = entry.substr(dot + 1, last_dot - dot - 1);
    std::string tail = entry.substr(last_dot + 1);
    if (head == "parameters_grad" || tail == "parameters_grad") continue;
    if (head == "forward" || tail == "forward") continue;
    if (head != "backward" && tail != "backward") continue;
    const std::string op = entry.substr(0, dot);
    const std::string order = std::to_string(backward_calls[op]++);
    if (IsNumber(head)) head = order;
    if (IsNumber(tail)) tail = order;
    names.back() = op + "." + head + "." + tail;
  }
  return names;
}

// The names rows are matched by: a target row's after the mappings
// (nullopt: it takes part in no pair), a baseline row's as it stands; both
// backward-renumbered, or without call indices under --fuzzy.
struct RowKeys {
  std::vector<std::optional<std::string>> target;
  std::vector<std::string> baseline;
};

RowKeys KeysOf(const Dump* target, const Dump* baseline,
               const MatchOptions& options) {
  // A data mapping names whole rows: msprobe matches them exactly, fuzzy
  // or not.
  const bool fuzzy = options.fuzzy &&
                     !(options.msprobe &&
                       options.msprobe->kind() == MsprobeMapping::Kind::kData);
  // Exact matching renumbers backward calls as msprobe's
  // update_backward_call does: a baseline row is found by its entry's
  // renumbered name, and so is a target row, but under msprobe's mappings,
  // where the target's key is its mapped name as it stands (as in msprobe).
  std::vector<std::string> target_renumbered;
  std::vector<std::string> baseline_renumbered;
  if (!fuzzy) {
    if (target && !options.msprobe) {
      target_renumbered = BackwardRenumbered(*target);
    }
    if (baseline) baseline_renumbered = BackwardRenumbered(*baseline);
  }
  // `dump`'s row `i` under its entry's renumbered name (`renumbered` empty:
  // as it stands).
  auto renamed = [](const Dump& dump, size_t i,
                    const std::vector<std::string>& renumbered) {
    const Row& row = dump.rows[i];
    const std::string& entry = dump.entries[row.entry];
    if (renumbered.empty() || !row.name.starts_with(entry)) return row.name;
    return renumbered[row.entry] + row.name.substr(entry.size());
  };
  RowKeys keys;
  for (size_t i = 0; target && i < target->rows.size(); ++i) {
    std::optional<std::string> name = renamed(*target, i, target_renumbered);
    if (options.mapping) name = options.mapping->Map(*name);
    if (options.msprobe) {
      name =
          options.msprobe->Key(*name, target->entries[target->rows[i].entry]);
    }
    if (name && fuzzy) name = WithoutCallIndex(*name);
    keys.target.push_back(std::move(name));
  }
  for (size_t i = 0; baseline && i < baseline->rows.size(); ++i) {
    const std::string name = renamed(*baseline, i, baseline_renumbered);
    keys.baseline.push_back(fuzzy ? WithoutCallIndex(name) : name);
  }
  return keys;
}

// Which baseline row each target row matched.
struct Matches {
  std::vector<std::optional<size_t>> of_target;
  std::vector<bool> shape_differs;  // by target row
  std::vector<bool> baseline_used;
};

// Pairs rows by name and shape first, then by the name alone for what is
// left (a shape mismatch); of equal keys, the first with the first.
Matches Match(const Dump* target, const Dump* baseline, const RowKeys& keys) {
  const size_t nt = keys.target.size(), nb = keys.baseline.size();
  Matches m{std::vector<std::optional<size_t>>(nt),
            std::vector<bool>(nt, false), std::vector<bool>(nb, false)};
  Queues by_key;
  for (size_t b = 0; b < nb; ++b) {
    by_key[keys.baseline[b] + "|" + ShapeKey(baseline->rows[b].shape)]
        .push_back(b);
  }
  for (size_t t = 0; t < nt; ++t) {
    if (!keys.target[t]) continue;
    auto it =
        by_key.find(*keys.target[t] + "|" + ShapeKey(target->rows[t].shape));
    if (it == by_key.end() || it->second.empty()) continue;
    m.of_target[t] = it->second.front();
    m.baseline_used[it->second.front()] = true;
    it->second.pop_front();
  }
  Queues by_name;
  for (size_t b = 0; b < nb; ++b) {
    if (!m.baseline_used[b]) by_name[keys.baseline[b]].push_back(b);
  }
  for (size_t t = 0; t < nt && !by_name.empty(); ++t) {
    if (m.of_target[t] || !keys.target[t]) continue;
    auto it = by_name.find(*keys.target[t]);
    if (it == by_name.end() || it->second.empty()) continue;
    m.of_target[t] = it->second.front();
    m.shape_differs[t] = true;
    m.baseline_used[it->second.front()] = true;
    it->second.pop_front();
  }
  return m;
}

// The pairs in target order, each missing row anchored after the target
// row its baseline predecessor matched (-1: before everything).
std::vector<RowPair> InOrder(const Matches& matches) {
  const size_t nt = matches.of_target.size();
  const size_t nb = matches.baseline_used.size();
  std::vector<ptrdiff_t> target_of(nb, -1);
  for (size_t t = 0; t < nt; ++t) {
    if (matches.of_target[t]) {
      target_of[*matches.of_target[t]] = static_cast<ptrdiff_t>(t);
    }
  }
  std::vector<std::pair<ptrdiff_t, size_t>> missing;
  ptrdiff_t anchor = -1;
  for (size_t b = 0; b < nb; ++b) {
    if (matches.baseline_used[b]) {
      anchor = std::max(anchor, target_of[b]);
    } else {
      missing.emplace_back(anchor, b);
    }
  }
  std::stable_sort(
      missing.begin(), missing.end(),
      [](const auto& x, const auto& y) { return x.first < y.first; });

  std::vector<RowPair> pairs;
  pairs.reserve(nt + missing.size());
  size_t m = 0;
  auto emit_missing_until = [&](ptrdiff_t t) {
    while (m < missing.size() && missing[m].first < t) {
      pairs.push_back({std::nullopt, missing[m].second, false});
      ++m;
    }
  };
  for (size_t t = 0; t < nt; ++t) {
    emit_missing_until(static_cast<ptrdiff_t>(t));
    pairs.push_back({t, matches.of_target[t], matches.shape_differs[t]});
  }
  emit_missing_until(static_cast<ptrdiff_t>(nt) + 1);
  return pairs;
}

}  // namespace

std::string WithoutCallIndex(const std::string& name) {
  std::vector<std::string_view> parts;
  std::string_view rest = name;
  for (size_t dot; (dot = rest.find('.')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, dot));
    rest.remove_prefix(dot + 1);
  }
  parts.push_back(rest);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != "forward" && parts[i] != "backward" &&
        parts[i] != "parameters_grad") {
      continue;
    }
    if (i + 1 < parts.size() && IsNumber(parts[i + 1])) {
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
    if (i > 0 && IsNumber(parts[i - 1])) {
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) - 1);
    }
    break;
  }
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '.';
    out += p;
  }
  return out;
}

std::vector<RowPair> MatchRows(const Dump* target, const Dump* baseline,
                               const MatchOptions& options) {
  const RowKeys keys = KeysOf(target, baseline, options);
  const Matches matches = Match(target, baseline, keys);
  return InOrder(matches);
}

}  // namespace tprobe::compare
