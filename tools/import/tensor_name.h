#ifndef TPROBE_TOOLS_IMPORT_TENSOR_NAME_H_
#define TPROBE_TOOLS_IMPORT_TENSOR_NAME_H_

// The names that MindSpore graph-mode cell dumps use, and the names that
// msprobe gives the same tensors once they are imported.
//
// msprobe's cell dump (mindspore/dump/cell_dump_process.py) wraps each
// cell's construct() with TensorDump operators. Each one writes
//
//   Cell.{path}.{Class}.{forward|backward}.{input|output}.{index}_{dtype}_{id}.npy
//
// or, for a TensorDump in "in" mode, `{index}_in_{dtype}_{id}.npy` at the
// end. {id} is TensorDump's counter, so it gives the execution order, and
// {dtype} is the tensor's original dtype ("float32", "bfloat16"). The same
// cell called again writes the same name with a later {id}. The statistics
// task names the kernel after the same string with '-' for '.', which
// statistic_csv.h turns back into `Cell.{path}.{Class}.{dir}.{io}.{index}`.
//
// After import, the n-th call of a cell is the dump.json entry
// `Cell.{path}.{Class}.{dir}.{n}` and its tensor file is
// `Cell.{path}.{Class}.{dir}.{n}.{io}.{index}.npy` (msprobe's data_name).

#include <cstdint>
#include <string>
#include <string_view>

#include "common/record/record.h"
#include "common/status.h"

namespace tprobe::import {

// The direction of the ring's call records, named as msprobe names it.
using record::Direction;
enum class Io : uint8_t { kInput, kOutput };

// "forward" / "backward", and "input" / "output".
std::string_view DirectionName(Direction direction);
std::string_view IoName(Io io);

// One tensor position of a cell: its index-th input or output, forward or
// backward. `cell` is "Cell.{path}.{Class}"; {path} may itself be dotted.
struct TensorSlot {
  std::string cell;
  Direction direction = Direction::kForward;
  Io io = Io::kInput;
  uint32_t index = 0;
};

// "Cell.a.A.forward.input.0": the slot without a call index. Records with
// the same key are calls of the same cell position.
std::string SlotKey(const TensorSlot& slot);

// "Cell.a.A.forward.3": the dump.json entry of call `call`.
std::string EntryName(const TensorSlot& slot, uint64_t call);

// "Cell.a.A.forward.3.input.0.npy": msprobe's data_name of the slot's tensor
// in call `call`, a file name inside dump_tensor_data/.
std::string DataName(const TensorSlot& slot, uint64_t call);

// The {path} of "Cell.{path}.{Class}": "model.layers.0" for
// "Cell.model.layers.0.Block".
// REQUIRES: `cell` passed IsCellPrefix.
std::string_view CellPath(std::string_view cell);

// True when `cell` is "Cell." followed by at least two non-empty dotted
// components ({path} and {Class}).
bool IsCellPrefix(std::string_view cell);

// A parsed TensorDump file name.
struct TensorFileName {
  TensorSlot slot;
  std::string dtype;     // as written in the name: "float32", "bfloat16"
  bool in_mode = false;  // the `_in_` form
  uint64_t id = 0;
};

// Parses a TensorDump file name (a base name, not a path). On failure the
// message quotes the name and says which part is wrong.
Result<TensorFileName> ParseTensorFileName(std::string_view file_name);

// True for a name already in msprobe's data_name form (what an earlier
// import wrote), which an import into the source tree leaves beside the
// TensorDump files.
bool IsImportedFileName(std::string_view file_name);

// Parses "Cell.{path}.{Class}.{forward|backward}.{input|output}.{index}", the
// statistics task's cell name after '-' has been turned back into '.'. On
// failure the message quotes the name.
Result<TensorSlot> ParseSlotName(std::string_view name);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_TENSOR_NAME_H_
