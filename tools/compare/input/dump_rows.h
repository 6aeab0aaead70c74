#ifndef TPROBE_TOOLS_COMPARE_INPUT_DUMP_ROWS_H_
#define TPROBE_TOOLS_COMPARE_INPUT_DUMP_ROWS_H_

// One rank's dump (a dump.json, the construct.json beside it) loaded as the
// rows that compare pairs, named as msprobe's compare names them:
//   {entry}.input.{i}[.{j}|.{key}]   input_args, input_kwargs and a
//                                     backward entry's input
//   {entry}.output.{i}[...]
//   {entry}.parameters.{name}, {entry}.parameters_grad.{name}
// A tensor is one row; a list, tuple or dict is flattened; any other value
// (an int, a float, a slice, a dtype, None) is one row holding the value.
//
// Thread safety: a Dump is immutable once loaded; LoadDump may be called
// concurrently.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tprobe::compare {

// What the rows can be compared by, from dump.json's "task" (and the
// tensors' keys: a statistics dump with "md5" values is an md5 or xor dump).
enum class Mode { kTensor, kStatistics, kMd5, kXor };

const char* ModeName(Mode mode);

struct Stats {
  std::optional<double> max, min, mean, norm;
  // Bit i (Max, Min, Mean, Norm): dump.json held the number as an integer
  // ("989", not "989.0"), which msprobe's CSV writes as such.
  uint8_t integral = 0;
  // Bit i: a bool (a bool tensor's Max and Min), written "True"/"False".
  uint8_t boolean = 0;
};

struct Row {
  std::string name;  // Functional.linear.0.forward.input.0
  size_t entry = 0;  // index into Dump::entries
  bool is_tensor = false;
  std::string dtype;  // "torch.float32"; "<class 'int'>" for a value
  std::vector<int64_t> shape;
  std::string shape_text;  // msprobe's shape cell where not `shape`'s
                           // ("[2, 3]" of a torch.Size, "(3,)" of a slice)
  std::optional<bool> requires_grad;
  Stats stats;            // a value's number goes in all four
  std::string checksum;   // "md5" (a CRC-32 or an xor), or a value's text
  std::string data_name;  // the tensor's file under dump_tensor_data/
};

struct Dump {
  std::string dir;  // the folder holding dump.json
  std::string task;
  std::string level;
  // dump.json's "framework"; without one, as msprobe detects it, that of
  // the first "type" naming a "mindspore" or "torch" class ("pytorch").
  std::string framework;
  Mode mode = Mode::kStatistics;
  std::vector<std::string> entries;  // in dump order
  std::vector<Row> rows;             // in dump order, entry by entry
  // construct.json: entry -> the module it was called in (empty: none).
  std::map<std::string, std::string, std::less<>> parents;
  // stack.json, when present: entry -> its stack as msprobe's CSV writes
  // it (Python's str() of the list of lines).
  bool has_stack = false;
  std::map<std::string, std::string, std::less<>> stacks;
  // The lines of each entry of 8.x's stack.json ({entry: [line, ...]}),
  // which msprobe's layer mapping looks up by entry name; empty for 26.x's
  // indexed form, which that lookup never matches.
  std::map<std::string, std::vector<std::string>, std::less<>> named_stacks;

  // The chain of modules around `entry`, outermost first, then the entry:
  // "Module.0.Net.forward.0 > Module.fc2.Linear.forward.0 > Functional…".
  std::string ModulePath(const std::string& entry) const;
  // Where tensor files live: dir/dump_tensor_data.
  std::string TensorDir() const { return dir + "/dump_tensor_data"; }
};

// Loads `dump_json` (a path to a dump.json) and, when present, the
// construct.json beside it. Returns an InvalidArgument error naming the file
// and what is wrong for a file that is not a dump.json (no "data" object,
// an entry that is not an object, a task compare cannot use).
Result<Dump> LoadDump(const std::string& dump_json);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_DUMP_ROWS_H_
