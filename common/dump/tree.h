#ifndef TPROBE_COMMON_DUMP_TREE_H_
#define TPROBE_COMMON_DUMP_TREE_H_

// The in-memory model of one step{N}/rank{R}/ directory: dump.json entries in
// hook order, the construct.json parent map and the stack.json stacks. The
// daemon's assembler and `tprobe import` both fill one and hand it to
// WriteStepTree (common/dump/tree_writer.h).
//
// Thread safety: none; one owner at a time.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/dump/entry_text.h"
#include "common/dump/json_writer.h"
#include "common/record_losses.h"

namespace tprobe::dump {

// Where every record of one step and rank went (tprobe.json "records"):
//   produced = written + dropped.Total() + skipped + unread
// `produced` and the client-side drops come from the rank's own count
// (client/step_ledger.h); `written` is what the daemon read and applied.
// `unread` is what the rank committed and the daemon never found (0 unless
// the stream is corrupt). Without the rank's count (it died, or never ended
// the step) the daemon's own count stands: produced = what it read plus the
// drops the ring headers show.
struct RecordLedger {
  bool from_client = false;
  // The daemon's own count covers the steps from first_step to this one
  // when several were cut short together (their Step never came): it is
  // written in the last of them, and the others carry none.
  std::optional<uint32_t> first_step;
  uint64_t produced = 0;
  uint64_t written = 0;
  StepLosses dropped;
  uint64_t skipped = 0;
  uint64_t unread = 0;
};

// Steps of a rank whose records no daemon received (it died, was stopped
// or absent), as the rank reported them to the next daemon.
struct Outage {
  uint32_t first_step = 0;
  uint32_t last_step = 0;
  uint64_t produced = 0;
  StepLosses dropped;
  uint64_t read_by_lost_daemon = 0;
};

// Whether `name` is a parameter gradients entry's,
// "{Module|Cell}.{path}.{class}.parameters_grad.{K}".
inline bool IsParamGradEntry(std::string_view name) {
  return name.find(".parameters_grad.") != std::string_view::npos;
}

// At most this many names are listed per kind (all are counted).
inline constexpr size_t kMaxIncompleteNames = 64;

// Loss accounting written beside the tree (tprobe.json): a step with drops,
// skipped records or a corrupt stream is marked incomplete, so partial data
// never passes for clean data.
struct Accounting {
  uint64_t entries = 0;
  uint64_t duplicates_dropped = 0;
  uint64_t tensors_incomplete = 0;  // chunks lost: entry written with nulls
  // Records the rank lost; no_daemon includes the ledger's daemon_gone.
  RankLosses dropped;
  // Records the daemon read but could not apply (a name or stack id that
  // was never interned, an entry late for a finished step).
  uint64_t records_skipped = 0;
  // Calls that began and never ended: their entries are missing.
  uint64_t calls_unclosed = 0;
  // The producer's stream was corrupt: what followed was never read.
  bool stream_corrupt = false;
  bool producer_died = false;
  // Attempts to write this step's files that failed (a full disk, say) and
  // were retried, and the last failure's message. Shown in tprobe.json only
  // when there were some; the data itself was kept and written later.
  uint64_t write_failures = 0;
  std::string last_write_error;
  // Tensor files (.npy) that could not be written: their data is lost.
  uint64_t tensor_files_lost = 0;
  // Written before the step closed (an explicit flush): more may come.
  bool step_open = false;
  // Rebuilt from the journal after the daemon stopped without writing the
  // step (tprobe recover, or a restarted daemon): what was captured after
  // the last journalled entry is lost.
  bool recovered = false;
  std::optional<RecordLedger> records;
  // Entries that never reached the daemon (counted by the rank), and the
  // names of those and of the entries written with an incomplete tensor;
  // the incomplete tensors as "{entry}.{key path}".
  uint64_t entries_lost = 0;
  std::vector<std::string> incomplete_entries;
  std::vector<std::string> incomplete_tensors;
  // Reported with this step: the last outage before it.
  std::optional<Outage> outage;
  // Why the rank wrote no entry in the step, as it reported it (a code of
  // docs/format.md's why_empty); shown only while `entries` is 0.
  std::string why_empty;
  void NoteIncompleteEntry(const std::string& name) {
    if (incomplete_entries.size() < kMaxIncompleteNames &&
        (incomplete_entries.empty() || incomplete_entries.back() != name)) {
      incomplete_entries.push_back(name);
    }
  }
  void NoteIncompleteTensor(const std::string& name) {
    if (incomplete_tensors.size() < kMaxIncompleteNames) {
      incomplete_tensors.push_back(name);
    }
  }
  bool complete() const {
    return tensors_incomplete == 0 && dropped.Total() == 0 &&
           records_skipped == 0 && !stream_corrupt && !producer_died &&
           !step_open && !recovered && calls_unclosed == 0 &&
           tensor_files_lost == 0 && entries_lost == 0 &&
           (!records || records->produced == records->written);
  }
};

// What StepTree::AddEntry did with an entry.
enum class AddResult {
  kNew,        // a new name: appended to data
  kMerged,     // a known name with other content: merged into it
  kDuplicate,  // a known name with identical content: dropped
};

// How stack.json is laid out.
enum class StackStyle {
  // msprobe 8.1+: {"0": [[names], [lines]], "1": ...}, one group per
  // distinct stack, numbered by first use.
  kGrouped,
  // msprobe before 8.1, and its MindSpore cell dump: {"<entry>": [lines]},
  // one item per entry in the order the entries were added.
  kPerEntry,
};

class StepTree {
 public:
  StepTree(std::string task, std::string level, std::string framework,
           StackStyle stack_style = StackStyle::kGrouped);

  // Adds dump.json's data[name]. An existing name with identical content is
  // a re-dump (graph-mode TensorDump fires twice): it is dropped and counted
  // as a duplicate. An existing name with other content is merged key by
  // key, as msprobe's dict.update does, keeping the entry's position; a
  // module or cell entry ("Module.*", "Cell.*") moves to the end, as in
  // msprobe 26.x. Contents are compared by their bytes. An empty
  // parameters_grad entry is a placeholder: the client holds the place of
  // gradients that come later (under torch.compile, after the compiled
  // backward); the first content fills it where it is, and dump.json
  // leaves out one that was never filled. Only filled entries count.
  AddResult AddEntry(const std::string& name, const EntryText& body);
  // The same for an entry given as a JSON object.
  AddResult AddEntry(const std::string& name, const Json& body) {
    return AddEntry(name, EntryText::FromJson(body));
  }

  // Sets construct.json's parent of `node` (null when none). A node already
  // present keeps its position and gets the new parent.
  void SetParent(const std::string& node, std::optional<std::string> parent);

  // Records that entry `name` was called from `lines` (outermost frame
  // last). Grouped: entries with the same lines share one group. Per entry:
  // `name` gets its own item (`lines` may be empty). A name already added
  // keeps its first stack.
  void AddStack(const std::string& name, const std::vector<std::string>& lines);

  void set_dump_data_dir(std::optional<std::string> dir) {
    dump_data_dir_ = std::move(dir);
  }
  Accounting& accounting() { return accounting_; }
  const Accounting& accounting() const { return accounting_; }
  // dump.json's data, in order.
  struct Entry {
    std::string name;
    EntryText text;
    // Added as a placeholder: its content goes in where it is.
    bool held_place = false;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty() && construct_.empty(); }
  // About the bytes the tree's text holds: entries, construct nodes and
  // stacks (not counting the containers' own overhead).
  size_t held_bytes() const { return held_bytes_; }

  // Level "debug" (msprobe's single-point saving): the tree is written as
  // debug.json alone, each entry's value being its one member's value (a
  // bare tensor, list, dict or null), with no stack.json or construct.json.
  bool debug_level() const { return level_ == "debug"; }

  // The bytes of dump.json (as PythonJsonDumps writes the document); of
  // debug.json for a debug-level tree, where an entry's value is the value
  // of its last member.
  std::string DumpJson() const;
  // The bytes of stack.json and construct.json (as PythonJsonDumps writes
  // them, with no JSON tree built on the way), in msprobe's key order.
  std::string StackJson() const;
  std::string ConstructJson() const;
  // tprobe.json's document.
  Json AccountingDocument() const;

  // construct.json's nodes and their parents, in order (kept even at L1,
  // whose construct.json is {}).
  const Json& construct() const { return construct_; }
  // Grouped: one per distinct stack, in first-use order. Per entry: one per
  // entry, names[0].
  struct StackGroup {
    std::vector<std::string> names;
    std::vector<std::string> lines;
  };
  const std::vector<StackGroup>& stacks() const { return stacks_; }

 private:
  std::string task_;
  std::string level_;
  std::string framework_;
  StackStyle stack_style_;
  std::optional<std::string> dump_data_dir_;
  std::vector<Entry> entries_;
  Json construct_ = Json::object();
  // Positions of the names in entries_ and construct_.
  std::unordered_map<std::string, size_t> entry_index_;
  std::unordered_map<std::string, size_t> construct_index_;
  std::vector<StackGroup> stacks_;
  std::unordered_map<std::string, size_t> stack_index_;  // joined lines
  std::string stack_key_;  // AddStack's buffer for the joined lines
  std::unordered_set<std::string> stack_names_;
  Accounting accounting_;
  size_t held_bytes_ = 0;
};

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_TREE_H_
