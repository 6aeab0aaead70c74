#ifndef TPROBE_TOOLS_IMPORT_TREE_BUILDER_H_
#define TPROBE_TOOLS_IMPORT_TREE_BUILDER_H_

// Assembles the documents of one step{N}/rank{R}/ directory from a step's
// records, in the layout msprobe's MindSpore cell dump writes.

#include <optional>
#include <string>
#include <vector>

#include "common/dump/json_writer.h"
#include "common/dump/tree.h"
#include "tools/import/construct.h"
#include "tools/import/tensor_record.h"

namespace tprobe::import {

struct StepDocuments {
  // dump.json ("level" L0, "framework" mindspore), construct.json, and
  // stack.json in the per-entry style {"<entry>": []}: msprobe's cell dump
  // has no call stacks and writes that older per-name form.
  dump::StepTree tree;
};

struct StepDocumentsSpec {
  std::string task;  // "tensor" or "statistics"
  // dump.json's dump_data_dir: the destination's dump_tensor_data/ for the
  // tensor task, null for statistics.
  std::optional<std::string> dump_data_dir;
  // Adds "data_name": DataName(slot, call) to every tensor (tensor task).
  bool with_data_name = false;
};

// Builds the documents. Each call in `calls` becomes the entry
//   {"input_args": [...], "input_kwargs": {}, "output": [...]}
// with its records' tensors in index order (backward calls too: msprobe's
// cell dump uses the same keys for them); construct.json gets every call
// with its parent, stack.json an empty list per call.
//
// REQUIRES: `calls` is BuildCellCalls(records).
StepDocuments BuildStepDocuments(const StepDocumentsSpec& spec,
                                 const std::vector<TensorRecord>& records,
                                 const std::vector<CellCall>& calls);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_TREE_BUILDER_H_
