#include "daemon/assembler.h"

#include <algorithm>

#include "common/dump/tree_writer.h"

namespace tprobe::daemon {

Assembler::Assembler(AssemblerOptions options) : options_(std::move(options)) {}

dump::StepTree* Assembler::Tree(uint32_t step) {
  if (finished_through_ && step <= *finished_through_) return nullptr;
  auto it = trees_.find(step);
  if (it == trees_.end()) {
    dump::StepTree tree(options_.task, options_.level, options_.framework);
    if (options_.tensor_data) {
      tree.set_dump_data_dir(
          dump::StepRankDir(options_.dump_path, step, options_.rank) +
          "/dump_tensor_data");
    }
    tree.accounting().dropped_no_daemon += deferred_no_daemon_;
    tree.accounting().records_skipped += deferred_skipped_;
    tree.accounting().stream_corrupt = stream_corrupt_;
    deferred_no_daemon_ = 0;
    deferred_skipped_ = 0;
    it = trees_
             .emplace(step,
                      Open{std::move(tree), TensorStore(TensorDataDir(step))})
             .first;
  }
  it->second.dirty = true;
  return &it->second.tree;
}

void Assembler::NoteStep(uint32_t step) { current_step_ = step; }

void Assembler::UpdateRingDrops(uint64_t ring_full_total,
                                uint64_t too_large_total) {
  const uint64_t ring_full = ring_full_total - ring_full_seen_;
  const uint64_t too_large = too_large_total - too_large_seen_;
  if (ring_full == 0 && too_large == 0) return;
  dump::StepTree* tree = Tree(current_step_);
  if (tree == nullptr) return;  // charged again on the next call
  tree->accounting().dropped_ring_full += ring_full;
  tree->accounting().dropped_too_large += too_large;
  ring_full_seen_ = ring_full_total;
  too_large_seen_ = too_large_total;
}

void Assembler::AddNoDaemonDrops(uint64_t count, bool defer) {
  if (count == 0) return;
  dump::StepTree* tree = defer ? nullptr : Tree(current_step_);
  if (tree == nullptr) {
    deferred_no_daemon_ += count;
    return;
  }
  tree->accounting().dropped_no_daemon += count;
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

Status Assembler::Write(uint32_t step, Open& open) {
  if (!open.dirty) return Status::Ok();
  Status s = dump::WriteStepTree(
      dump::StepRankDir(options_.write_path, step, options_.rank), open.tree);
  if (s.ok()) {
    open.dirty = false;
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
    Status s = Write(it->first, it->second);
    if (first.ok() && !s.ok()) first = s;
    // A finished step kept only for a failed write is done once written.
    const bool finished = finished_through_ && it->first <= *finished_through_;
    it = s.ok() && finished ? trees_.erase(it) : std::next(it);
  }
  return first;
}

Status Assembler::Finish(uint32_t step) {
  Status first;
  for (auto it = trees_.begin(); it != trees_.end() && it->first <= step;) {
    Status s = Write(it->first, it->second);
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

std::string Assembler::TensorDataDir(uint32_t step) const {
  return dump::StepRankDir(options_.write_path, step, options_.rank) +
         "/dump_tensor_data";
}

}  // namespace tprobe::daemon
