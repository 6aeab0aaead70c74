#ifndef TPROBE_TOOLS_IMPORT_CONSTRUCT_H_
#define TPROBE_TOOLS_IMPORT_CONSTRUCT_H_

// The calls of a step in msprobe's cell order, with the construct.json
// parent of each.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/import/tensor_record.h"

namespace tprobe::import {

// One call of a cell: a dump.json entry, a stack.json key and a
// construct.json node.
struct CellCall {
  std::string entry;                  // "Cell.model.layers.0.Block.forward.1"
  std::optional<std::string> parent;  // the parent's entry, or null
};

// Returns the calls that `records` belong to, in msprobe's cell order, each
// with its parent.
//
// Order: a call sits where its last input was dumped, or, if it has no
// dumped input, where its first output was dumped (msprobe's cell_list).
// For forward calls this puts a parent before its children.
//
// Parent: a call of the cell whose {path} is this cell's {path} minus its
// last dotted component, or minus a trailing ".layers.{N}", with the same
// direction; null when there is none. Of that cell's calls, the last one
// placed before this call is taken, which is the call that encloses it;
// if none is placed before, the first one. (msprobe always takes the
// first, which is wrong for the second call of a parent.)
//
// REQUIRES: `records` is in execution order with calls assigned.
std::vector<CellCall> BuildCellCalls(const std::vector<TensorRecord>& records);

// The {path}s whose cell may be the parent of a cell at `path`: `path`
// minus its last dotted component, then `path` minus a trailing
// ".layers.{N}". Empty for a top-level path (no dot).
std::vector<std::string_view> ParentPathCandidates(std::string_view path);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_CONSTRUCT_H_
