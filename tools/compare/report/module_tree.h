#ifndef TPROBE_TOOLS_COMPARE_REPORT_MODULE_TREE_H_
#define TPROBE_TOOLS_COMPARE_REPORT_MODULE_TREE_H_

// report.html's module tree: the call hierarchy of construct.json (modules,
// and the API calls and module entries under them) as nested, collapsible
// <details> elements, each coloured by the worst verdict of the rows under
// it (error, then warning, missing or extra, then pass) with its counts.
// Subtrees that did not pass are drawn in full, the first divergence's
// chain is open and marked; a subtree that passed is one closed line.
//
// Thread safety: pure functions.

#include <string>
#include <vector>

#include "tools/compare/comparison.h"

namespace tprobe::compare {

// The tree of `pair` as HTML ("" for a pair without rows).
std::string ModuleTreeHtml(const PairResult& pair);

// The modules around the first divergence of `pair`, outermost first,
// ending with its call; empty when it passed.
std::vector<std::string> DivergenceChain(const PairResult& pair);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_REPORT_MODULE_TREE_H_
