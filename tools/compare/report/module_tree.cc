// report.html's module tree (module_tree.h).

#include "tools/compare/report/module_tree.h"

#include <array>
#include <map>
#include <set>
#include <string_view>

namespace tprobe::compare {
namespace {

constexpr size_t kMaxDepth = 256;  // a cycle in a bad construct.json ends

int Severity(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return 0;
    case Verdict::kMissing:
    case Verdict::kExtra:
      return 1;
    case Verdict::kWarning:
      return 2;
    case Verdict::kError:
      return 3;
  }
  return 0;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

struct Node {
  Verdict worst = Verdict::kPass;
  std::array<size_t, kVerdictCount> counts{};
  std::vector<std::string> children;  // in order of first appearance
  bool on_chain = false;
};

class Tree {
 public:
  explicit Tree(const PairResult& p) {
    for (const RowResult& r : p.rows) {
      const Dump& dump = p.DumpOf(r);
      const std::string& entry = dump.entries[p.RowOf(r).entry];
      std::string child;
      std::string node = entry;
      for (size_t depth = 0; depth < kMaxDepth; ++depth) {
        Node& n = nodes_[node];
        if (!child.empty() && seen_[node].insert(child).second) {
          n.children.push_back(child);
        }
        ++n.counts[static_cast<size_t>(r.verdict)];
        if (Severity(r.verdict) > Severity(n.worst)) n.worst = r.verdict;
        const auto parent = dump.parents.find(node);
        if (parent == dump.parents.end() || parent->second.empty()) {
          AddRoot(node);
          break;
        }
        child = node;
        node = parent->second;
      }
    }
    for (const std::string& n : DivergenceChain(p)) {
      if (auto it = nodes_.find(n); it != nodes_.end())
        it->second.on_chain = true;
    }
  }

  std::string Html() const {
    std::string out = "<div class=\"tree\">";
    for (const std::string& root : roots_) Draw(root, 0, out);
    return out + "</div>";
  }

 private:
  void AddRoot(const std::string& node) {
    if (root_set_.insert(node).second) roots_.push_back(node);
  }

  void Draw(const std::string& name, size_t depth, std::string& out) const {
    const Node& n = nodes_.at(name);
    std::string counts;
    for (int v = 0; v < kVerdictCount; ++v) {
      if (n.counts[v] == 0) continue;
      if (!counts.empty()) counts += ", ";
      counts += std::to_string(n.counts[v]) + " " +
                VerdictName(static_cast<Verdict>(v));
    }
    const std::string label =
        "<span class=\"" + std::string(VerdictName(n.worst)) +
        "\">&#9632;</span> " +
        (n.on_chain ? "<b>" + Escape(name) + "</b>" : Escape(name)) +
        " <small>(" + counts + ")</small>";
    const bool expand = n.worst != Verdict::kPass && !n.children.empty() &&
                        depth + 1 < kMaxDepth;
    if (!expand) {
      out += "<div class=\"leaf\">" + label + "</div>";
      return;
    }
    out += std::string("<details") + (n.on_chain ? " open" : "") +
           "><summary>" + label + "</summary>";
    for (const std::string& c : n.children) Draw(c, depth + 1, out);
    out += "</details>";
  }

  std::map<std::string, Node, std::less<>> nodes_;
  std::map<std::string, std::set<std::string>, std::less<>> seen_;
  std::vector<std::string> roots_;
  std::set<std::string> root_set_;
};

}  // namespace

std::vector<std::string> DivergenceChain(const PairResult& p) {
  if (!p.first_divergence) return {};
  const RowResult& r = p.rows[*p.first_divergence];
  const Dump& dump = p.DumpOf(r);
  std::vector<std::string> chain{dump.entries[p.RowOf(r).entry]};
  for (size_t i = 0; i < kMaxDepth; ++i) {
    const auto it = dump.parents.find(chain.back());
    if (it == dump.parents.end() || it->second.empty()) break;
    chain.push_back(it->second);
  }
  return {chain.rbegin(), chain.rend()};
}

std::string ModuleTreeHtml(const PairResult& p) {
  if (p.rows.empty()) return "";
  return Tree(p).Html();
}

}  // namespace tprobe::compare
