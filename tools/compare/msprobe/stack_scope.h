#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_STACK_SCOPE_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_STACK_SCOPE_H_

// The frame part of an API's layer scope under `--layer-mapping`
// (layer_mapping.h), from the API's stack lines, as msprobe 26.2's
// DumpDataItem.set_stack_scope takes it (msprobe's "frame_stack_scope"):
//
//   1. The lines that matter lie after the last line naming "Template" (the
//      dump's API wrapper, e.g. "return ApiTemplate(...)") and before the
//      first later line that marks the caller's layer: "construct" in a
//      MindSpore dump, the regex "in (for|back)ward," in a PyTorch one. No
//      "Template" line: from the first line; no end: to the last.
//   2. Of those, the leading run of lines whose file (the text before the
//      first ',') lies in the framework ("site-packages/torch",
//      "package/torch", "site-packages/mindspore", "package/mindspore")
//      ends at the framework's entry point: its last line.
//   3. That line gives its function's name ("in __getitem__" ->
//      "__getitem__", the second word of the third ','-separated field),
//      unless its file names "msprobe" or "MindSpeed" or its function
//      names "construct" or "__call__".
//
// An API called straight from user code has no frame part (""); one that
// the framework calls for it (MindSpore's Tensor.__getitem__ calling
// Tensor.__add__) gets the framework function's name, which then stands
// between its layer and its name: "TopLayer.__getitem__.__add__".
//
// Where msprobe fails (a line whose fields it indexes past, an unknown
// framework) this returns "" and the API keeps its layer scope.
//
// Thread safety: a pure function.

#include <string>
#include <string_view>
#include <vector>

namespace tprobe::compare {

// `lines` are one entry's stack.json lines ("File /p/x.py, line 3, in f,
// \n code"), innermost first; `framework` is dump.json's ("mindspore",
// "pytorch"). Returns the function name, or "" for none.
std::string FrameStackScope(const std::vector<std::string>& lines,
                            std::string_view framework);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_STACK_SCOPE_H_
