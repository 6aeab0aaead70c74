#ifndef TPROBE_COMMON_DUMP_TREE_H_
#define TPROBE_COMMON_DUMP_TREE_H_

// The in-memory model of one step{N}/rank{R}/ directory: dump.json entries in
// hook order, the construct.json parent map and the deduplicated stack.json
// groups. The daemon's assembler and `tprobe import` both fill one and hand
// it to WriteStepTree (common/dump/tree_writer.h).
//
// Thread safety: none; one owner at a time.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/dump/json_writer.h"

namespace tprobe::dump {

// Loss accounting written beside the tree (tprobe.json): a step with drops
// is marked incomplete so partial data never passes for clean data.
struct Accounting {
  uint64_t entries = 0;
  uint64_t duplicates_dropped = 0;
  uint64_t tensors_incomplete = 0;  // chunks lost: entry written with nulls
  uint64_t dropped_ring_full = 0;
  uint64_t dropped_too_large = 0;
  uint64_t dropped_no_daemon = 0;
  bool producer_died = false;
  bool complete() const {
    return tensors_incomplete == 0 && dropped_ring_full == 0 &&
           dropped_too_large == 0 && dropped_no_daemon == 0 &&
           !producer_died;
  }
};

class StepTree {
 public:
  StepTree(std::string task, std::string level, std::string framework);

  // Adds dump.json's data[name]. An existing name with identical content is
  // a re-dump (graph-mode TensorDump fires twice): it is dropped and false is
  // returned. An existing name with other content is merged key by key, as
  // msprobe's dict.update does, keeping the entry's position.
  bool AddEntry(const std::string& name, Json body);

  // Sets construct.json's parent of `node` (null when none). A node already
  // present keeps its position and gets the new parent.
  void SetParent(const std::string& node, std::optional<std::string> parent);

  // Records that entry `name` was called from `lines` (outermost frame last).
  // Entries with the same lines share one stack.json group.
  void AddStack(const std::string& name, const std::vector<std::string>& lines);

  void set_dump_data_dir(std::optional<std::string> dir) {
    dump_data_dir_ = std::move(dir);
  }
  Accounting& accounting() { return accounting_; }
  const Accounting& accounting() const { return accounting_; }
  bool empty() const { return data_.empty() && construct_.empty(); }
  const Json& data() const { return data_; }

  // The three documents, in msprobe's key order.
  Json DumpDocument() const;
  Json StackDocument() const;
  Json ConstructDocument() const;
  Json AccountingDocument() const;

 private:
  std::string task_;
  std::string level_;
  std::string framework_;
  std::optional<std::string> dump_data_dir_;
  Json data_ = Json::object();
  Json construct_ = Json::object();
  struct StackGroup {
    std::vector<std::string> names;
    std::vector<std::string> lines;
  };
  std::vector<StackGroup> stacks_;
  std::unordered_map<std::string, size_t> stack_index_;  // joined lines
  Accounting accounting_;
};

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_TREE_H_
