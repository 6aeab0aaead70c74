#include "daemon/output/assembler.h"

#include <algorithm>

#include "common/config/dump_dir.h"
#include "common/dump/tree_writer.h"

namespace tprobe::daemon {

Assembler::Assembler(AssemblerOptions options) : options_(std::move(options)) {}

dump::StepTree* Assembler::Tree(uint32_t step) {
  if (finished_through_ && step <= *finished_through_) return nullptr;
  auto it = trees_.find(step);
  if (it == trees_.end()) {
    dump::StepTree tree(options_.task, options_.level,
                        std::string(options_.framework->name));
    std::optional<std::string> data_dir;
    if (options_.tensor_data) {
      data_dir = config::StepRankDir(options_.dump_path, step, options_.rank) +
                 "/dump_tensor_data";
      tree.set_dump_data_dir(data_dir);
    }
    tree.accounting().records_skipped += deferred_skipped_;
    tree.accounting().stream_corrupt = stream_corrupt_;
    deferred_skipped_ = 0;
    std::string dir =
        config::StepRankDir(options_.write_path, step, options_.rank);
    dump::Journal journal(dir, options_.task, options_.level,
                          std::string(options_.framework->name), data_dir);
    it = trees_
             .emplace(step,
                      Open{std::move(dir), std::move(tree),
                           TensorStore(TensorDataDir(step)), std::move(journal),
                           std::chrono::steady_clock::now()})
             .first;
  }
  it->second.dirty = true;
  return &it->second.tree;
}

std::vector<uint32_t> Assembler::OpenSteps() const {
  std::vector<uint32_t> steps;
  for (const auto& [step, open] : trees_) steps.push_back(step);
  return steps;
}

void Assembler::NoteStep(uint32_t step) { current_step_ = step; }

void Assembler::AddRingDrops(const RingLosses& drops) {
  drops_due_ += drops;
  if (drops_due_.Total() == 0) return;
  dump::StepTree* tree = Tree(current_step_);
  if (tree == nullptr) return;  // charged on a later call
  RankLosses& charged = tree->accounting().dropped;
#define TPROBE_CHARGE_(name) charged.name += drops_due_.name;
  TPROBE_RING_LOSSES(TPROBE_CHARGE_)
#undef TPROBE_CHARGE_
  drops_due_ = {};
}

void Assembler::AddSkipped(uint32_t step) {
  dump::StepTree* tree = Tree(step);
  if (tree == nullptr) tree = Tree(current_step_);
  if (tree == nullptr) {
    ++deferred_skipped_;
    return;
  }
  ++tree->accounting().records_skipped;
}

void Assembler::NoteUnclosedCalls(uint32_t step, uint64_t count) {
  if (count == 0) return;
  dump::StepTree* tree = Tree(step);
  if (tree == nullptr) return;  // finished: its calls were counted then
  uint64_t& unclosed = tree->accounting().calls_unclosed;
  unclosed = std::max(unclosed, count);
}

void Assembler::NoteWhyEmpty(uint32_t step, const std::string& why) {
  if (why.empty() || !IsOpen(step)) return;
  Tree(step)->accounting().why_empty = why;
}

void Assembler::MarkStreamCorrupt() {
  stream_corrupt_ = true;
  Tree(current_step_);  // the step being captured is cut short too
  for (auto& [step, open] : trees_) {
    open.tree.accounting().stream_corrupt = true;
    open.dirty = true;
  }
}

TensorStore* Assembler::Tensors(uint32_t step) {
  if (finished_through_ && step <= *finished_through_) return nullptr;
  auto it = trees_.find(step);
  return it == trees_.end() ? nullptr : &it->second.tensors;
}

void Assembler::MarkProducerDied() {
  for (auto& [step, open] : trees_) {
    open.tree.accounting().producer_died = true;
    open.dirty = true;
  }
}

Status Assembler::Write(Open& open, bool closing) {
  if (!open.dirty && open.tree.accounting().step_open != closing) {
    if (closing) open.journal.Remove();
    return Status::Ok();
  }
  open.tree.accounting().step_open = !closing;
  if (outage_due_ && !open.tree.accounting().outage) {
    open.tree.accounting().outage = std::move(outage_due_);
    outage_due_.reset();
  }
  Status s = dump::WriteStepTree(open.dir, open.tree);
  if (s.ok()) {
    open.dirty = false;
    if (closing) open.journal.Remove();
  } else {
    // Kept dirty: the next write tries again, and tprobe.json tells.
    ++open.tree.accounting().write_failures;
    open.tree.accounting().last_write_error = s.message();
  }
  return s;
}

Status Assembler::WriteDirty() {
  Status first;
  for (auto it = trees_.begin(); it != trees_.end();) {
    // A finished step kept only for a failed write is written closed.
    const bool finished = finished_through_ && it->first <= *finished_through_;
    Status s = Write(it->second, /*closing=*/finished);
    if (first.ok() && !s.ok()) first = s;
    it = s.ok() && finished ? trees_.erase(it) : std::next(it);
  }
  return first;
}

Status Assembler::Finish(uint32_t step) {
  Status first;
  for (auto it = trees_.begin(); it != trees_.end() && it->first <= step;) {
    Status s = Write(it->second, /*closing=*/true);
    if (first.ok() && !s.ok()) first = s;
    // A step that could not be written stays until WriteDirty succeeds.
    it = s.ok() ? trees_.erase(it) : std::next(it);
  }
  if (!finished_through_ || step > *finished_through_) {
    finished_through_ = step;
  }
  if (current_step_ <= step) current_step_ = step + 1;
  return first;
}

size_t Assembler::open_bytes() const {
  size_t bytes = 0;
  for (const auto& [step, open] : trees_) {
    bytes += open.tree.held_bytes() + open.journal.pending_bytes();
  }
  return bytes;
}

dump::Journal* Assembler::JournalOf(uint32_t step) {
  auto it = trees_.find(step);
  return it == trees_.end() || !it->second.journalled ? nullptr
                                                      : &it->second.journal;
}

void Assembler::BeginJournal(Open& open) {
  const dump::StepTree& tree = open.tree;
  dump::Journal& journal = open.journal;
  // The three parts are independent: replayed in this order, they rebuild
  // the tree as the changes one by one would have.
  for (const dump::StepTree::Entry& entry : tree.entries()) {
    // A filled placeholder first as the placeholder: the gradients still
    // to come merge into it where it is.
    if (entry.held_place && !entry.text.empty()) {
      journal.Entry(entry.name, dump::EntryText());
    }
    journal.Entry(entry.name, entry.text);
  }
  for (const auto& [node, parent] : tree.construct().items()) {
    journal.Parent(node, parent.is_null()
                             ? std::nullopt
                             : std::optional(parent.get<std::string>()));
  }
  for (const dump::StepTree::StackGroup& group : tree.stacks()) {
    for (const std::string& name : group.names) {
      journal.Stack(name, group.lines);
    }
  }
  journal.Backdate(open.opened);
  open.journalled = true;
}

Status Assembler::SyncJournals() {
  Status first;
  const auto now = std::chrono::steady_clock::now();
  for (auto& [step, open] : trees_) {
    if (!open.journalled) {
      if (now - open.opened < dump::kJournalPeriod &&
          open.tree.held_bytes() < dump::kJournalBytes) {
        continue;
      }
      BeginJournal(open);
    }
    Status s = open.journal.Sync(open.tree.accounting(), now);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

std::string Assembler::TensorDataDir(uint32_t step) const {
  return config::StepRankDir(options_.write_path, step, options_.rank) +
         "/dump_tensor_data";
}

}  // namespace tprobe::daemon
