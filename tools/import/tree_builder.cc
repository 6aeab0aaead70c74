#include "tools/import/tree_builder.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace tprobe::import {

using dump::Json;

StepDocuments BuildStepDocuments(const StepDocumentsSpec& spec,
                                 const std::vector<TensorRecord>& records,
                                 const std::vector<CellCall>& calls) {
  std::unordered_map<std::string, std::vector<const TensorRecord*>> of_entry;
  for (const TensorRecord& record : records) {
    of_entry[EntryName(record.slot, record.call)].push_back(&record);
  }

  StepDocuments docs{dump::StepTree(spec.task, "L0", "mindspore",
                                    dump::StackStyle::kPerEntry)};
  docs.tree.set_dump_data_dir(spec.dump_data_dir);
  for (const CellCall& call : calls) {
    std::vector<const TensorRecord*>& tensors = of_entry[call.entry];
    assert(!tensors.empty() && "calls must come from the records");
    std::sort(tensors.begin(), tensors.end(),
              [](const TensorRecord* a, const TensorRecord* b) {
                return a->slot.index < b->slot.index;
              });
    Json body = Json::object();
    body["input_args"] = Json::array();
    body["input_kwargs"] = Json::object();
    body["output"] = Json::array();
    for (const TensorRecord* record : tensors) {
      Json tensor = record->tensor;
      if (spec.with_data_name) {
        tensor["data_name"] = DataName(record->slot, record->call);
      }
      const char* key = record->slot.io == Io::kInput ? "input_args" : "output";
      body[key].push_back(std::move(tensor));
    }
    docs.tree.AddEntry(call.entry, std::move(body));
    docs.tree.SetParent(call.entry, call.parent);
    docs.tree.AddStack(call.entry, {});
  }
  return docs;
}

}  // namespace tprobe::import
