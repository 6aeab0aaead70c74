#ifndef TPROBE_COMMON_DUMP_TREE_WRITER_H_
#define TPROBE_COMMON_DUMP_TREE_WRITER_H_

// Writes a StepTree as dump_path/step{N}/rank{R}/ the way msprobe does:
// dump.json, stack.json and construct.json in Python json.dump(indent=1)
// bytes, plus tprobe.json with the loss accounting. Every file is written to
// a temporary name and renamed (common/fs/atomic_file.h), so a reader never
// sees half a file.

#include <string>
#include <string_view>

#include "common/dump/tree.h"
#include "common/status.h"

namespace tprobe::dump {

// Creates `dir` and its parents (mode 0750).
Status MakeDirs(const std::string& dir);

// Writes the four files of `tree` into `dir`, creating it; a debug-level
// tree (StepTree::debug_level) gets debug.json and tprobe.json only.
Status WriteStepTree(const std::string& dir, const StepTree& tree);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_TREE_WRITER_H_
