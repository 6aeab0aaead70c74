#ifndef TPROBE_TOOLS_COMPARE_MATCHER_H_
#define TPROBE_TOOLS_COMPARE_MATCHER_H_

// Pairing the rows of a target dump with those of a baseline dump, as
// msprobe's compare does, and ordering the pairs by execution.
//
//   - By default a target row matches the baseline row of the same name
//     (after the mapping) and the same shape. Rows of one name that occur
//     several times pair in order.
//   - Backward calls are renumbered on both sides first, as msprobe's
//     update_backward_call does: a backward entry's call index becomes its
//     place among its API's (or cell's) backward entries in dump order, so
//     "Functional.linear.1.backward", the first backward of linear in a
//     PyTorch dump, matches as "Functional.linear.0.backward", and the
//     n-th backward of an API pairs with the n-th whatever forward calls it
//     came from. `mapping` then applies to the renumbered name. Under
//     `msprobe` only the baseline is renumbered; the target's key is its
//     mapped name as it stands, as in msprobe. Reports keep the dumped
//     names.
//   - `fuzzy` drops the call index of the names ("Functional.linear.3.
//     forward" and "Module.fc.Linear.forward.3" lose the 3), so the n-th
//     call of an API matches the n-th call, still with equal shapes; it
//     renumbers nothing.
//   - `msprobe` (msprobe_mapping.h) gives the name a target row is looked
//     up by, after `mapping`; a row it leaves out stays unpaired. Under
//     its data mapping `fuzzy` is ignored, as msprobe ignores it.
//   - A row left over on both sides under the same name but another shape
//     pairs as a shape mismatch.
//   - What is left is a row only the target has (extra) or only the
//     baseline has (missing). Nothing is dropped.
//
// The pairs come in the target's dump order; a missing row goes right
// after the target row that its baseline predecessor matched.
//
// Thread safety: MatchRows may be called concurrently.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/input/name_mapping.h"
#include "tools/compare/msprobe/msprobe_mapping.h"

namespace tprobe::compare {

struct MatchOptions {
  bool fuzzy = false;
  const NameMapping* mapping = nullptr;     // may be null
  const MsprobeMapping* msprobe = nullptr;  // may be null
};

struct RowPair {
  std::optional<size_t> target;    // index into the target's rows
  std::optional<size_t> baseline;  // index into the baseline's rows
  bool shape_differs = false;
};

// `target` or `baseline` may be null: every row of the other is then
// extra or missing.
std::vector<RowPair> MatchRows(const Dump* target, const Dump* baseline,
                               const MatchOptions& options);

// `name` without its call index ("Tensor.add.2.forward.input.0" ->
// "Tensor.add.forward.input.0"), for --fuzzy.
std::string WithoutCallIndex(const std::string& name);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MATCHER_H_
