#ifndef TPROBE_TOOLS_IMPORT_MINDSPORE_DTYPE_H_
#define TPROBE_TOOLS_IMPORT_MINDSPORE_DTYPE_H_

// The "dtype" string of a mindspore.Tensor in dump.json.

#include <string>
#include <string_view>

namespace tprobe::import {

// Returns str(mindspore dtype) for a numpy-style dtype name, as msprobe's
// cell dump writes it: "float32" -> "Float32", "bfloat16" -> "BFloat16",
// "bool" -> "Bool", "uint8" -> "UInt8"; numpy's aliases ("half", "single",
// "intc", "ubyte", ...) map like their canonical names. An unknown name
// gives "None", which is what msprobe writes for it (str(None)).
//
// Thread safety: pure.
std::string MindSporeDTypeName(std::string_view numpy_name);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_MINDSPORE_DTYPE_H_
