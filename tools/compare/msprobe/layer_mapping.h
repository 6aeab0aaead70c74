#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_LAYER_MAPPING_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_LAYER_MAPPING_H_

// `tprobe compare --layer-mapping FILE`, msprobe 26.2's `msprobe compare
// -lm`: a MindSpore target against a PyTorch baseline whose layers are
// named differently. For each pair of dumps it makes a data mapping
// (msprobe_mapping.h, Kind::kData) of whole row names, as msprobe does:
//
//   1. Every entry of each dump gets a scope, a dotted path whose first
//      part stands for the top layer: a Cell/Module call's name less its
//      last 4 parts ("Cell.fc1.Dense.forward.0" -> "Cell"), a
//      parameters_grad entry's less its last 3, an API call's parent in
//      construct.json less its last 3, or "TopLayer" without a parent.
//      Where stack.json has 8.x's form (entry -> lines), an API's frame
//      scope follows (stack_scope.h: the framework function that called
//      it, "__getitem__"); 26.x's indexed form gives none, as in msprobe,
//      whose lookup by entry name never matches it. The entry's own name
//      (the cell's attribute, the API's name) ends it: "Cell.fc1",
//      "Cell.fc1.MatMul", "TopLayer.tanh", "TopLayer.__getitem__.__add__".
//      A backward entry takes its forward twin's scope.
//   2. Each dump's scopes make a tree; a node is named by the class of the
//      last entry that ends there ("Dense") and keeps that node's entries
//      by state (forward, backward, parameters_grad) in dump order.
//   3. A target entry's scope is rewritten node by node: under a node of
//      class C, the child path "a.b" of a rule "C: {a.b: x}" becomes "x"
//      (longer rules first; a value's text from "(" on is dropped; the class
//      "Cell" stands for the top layer). The baseline entry at the
//      rewritten scope with the same state and the same position among that
//      node's entries of the state is its twin, else "N/A".
//   4. Each row of the target entry maps to the twin's row of the same
//      suffix (".input.0"), or "N/A".
//
// The file is YAML of two levels, "ClassName:" then indented "child path:
// new name" lines, read as msprobe's yaml.safe_load reads it
// (mapping_file.h). A target dump without both stack.json and construct.json
// gives no mapping (a plain compare), as in msprobe. Not reproduced: the
// renumbering of ParallelTransformer layers (MindFormers' pipeline-parallel
// global layer numbers).
//
// Thread safety: immutable once loaded; DataMapping may be called
// concurrently.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/compare/input/dump_rows.h"
#include "tools/compare/input/mapping_file.h"
#include "tools/compare/msprobe/msprobe_mapping.h"

namespace tprobe::compare {

// One entry's place in a layer tree (step 1 above).
struct LayerItem {
  std::string name;        // "Cell.fc1.Dense.forward.0"
  std::string type_name;   // "Dense", "tanh"
  std::string state;       // "forward", "backward", "parameters_grad"
  std::string full_scope;  // "Cell.fc1"
};

// The items of `dump`'s entries in dump order; InvalidArgument for an entry
// name of fewer than 4 parts.
Result<std::vector<LayerItem>> LayerItems(const Dump& dump);

class LayerMapping {
 public:
  LayerMapping() = default;

  // Reads `path`; an InvalidArgument error names the file and the line of
  // a YAML error or of a value not of this form.
  static Result<LayerMapping> Load(const std::string& path);
  // From text (tests); `what` names it in errors.
  static Result<LayerMapping> Parse(const std::string& text,
                                    const std::string& what);
  // From a mapping file already read (mapping_file.h).
  static Result<LayerMapping> FromFile(const MappingFile& file);

  // The data mapping of `target`'s rows to `baseline`'s; an empty mapping
  // (Kind::kNone) when the target has no stack.json or construct.json.
  Result<MsprobeMapping> DataMapping(const Dump& target,
                                     const Dump& baseline) const;

  // One "child path: new name" of a class.
  struct Rule {
    std::string origin;  // "a.b"
    std::string target;  // "x"
    size_t level = 1;    // parts of origin
  };

 private:
  // The baseline entry of each of `ours` (step 3): the name of one of
  // `theirs`, or kNotAvailable.
  std::vector<std::string> Twins(const std::vector<LayerItem>& ours,
                                 const std::vector<LayerItem>& theirs) const;

  // class name -> first part of the child path -> rules, longest first.
  std::map<std::string, std::map<std::string, std::vector<Rule>>> rules_;
};

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_LAYER_MAPPING_H_
