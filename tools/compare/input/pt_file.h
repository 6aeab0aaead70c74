#ifndef TPROBE_TOOLS_COMPARE_INPUT_PT_FILE_H_
#define TPROBE_TOOLS_COMPARE_INPUT_PT_FILE_H_

// Where the elements of a PyTorch tensor file (.pt, as msprobe's PyTorch
// tensor dumps write it with torch.save) lie, found without running any of
// its pickle.
//
// A .pt is a zip archive (stored, not compressed) of {prefix}/data.pkl, a
// pickle naming the storages, and {prefix}/data/{key}, each storage's raw
// little-endian bytes. data.pkl is read by a small stack machine that
// knows only the opcodes a plain tensor's pickle uses (protocol 2 to 5:
// tuples, ints, strings, bools, None, memo, empty dicts, persistent ids)
// and calls nothing: the only globals it accepts are
// torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter,
// collections.OrderedDict and the torch.*Storage types, and it evaluates
// them as data. Anything else (another global, an opcode outside that set,
// a tensor that is not contiguous, a compressed member, a big-endian
// archive) is refused with a message naming the file.
//
// Thread safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace tprobe::compare {

struct PtLayout {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // from the start of the file
  size_t count = 0;        // elements
};

// Reads the layout of the tensor saved in `file` (the bytes of `path`,
// which names it in errors).
Result<PtLayout> ParsePtLayout(const std::string& path,
                               std::span<const std::byte> file);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_PT_FILE_H_
