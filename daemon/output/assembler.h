#ifndef TPROBE_DAEMON_OUTPUT_ASSEMBLER_H_
#define TPROBE_DAEMON_OUTPUT_ASSEMBLER_H_

// The open dump trees of one producer: one dump::StepTree per step, all for
// the producer's rank. The drain adds entries, construct nodes and stacks to
// them; the control requests and the periodic flush write them to
// dump_path/step{N}/rank{R}/ with dump::WriteStepTree.
//
// A tree is dirty from the moment it is handed out for a change until it is
// written. Finish(step) writes the trees up to that step and forgets them;
// data that still arrives for such a step is late and gets no tree.
//
// Each open tree has a TensorStore for its dump_tensor_data/ files, and a
// Journal (common/dump/journal.h), which SyncJournals appends to disk, so a
// daemon killed mid-step leaves a journal that RecoverStep turns into the
// step's files. A young tree has no journal yet: most steps close within
// kJournalPeriod, and journalling each of their changes (the entry's text
// copied, its stack encoded) was a sixth of the daemon's CPU at level mix.
// Once a tree is kJournalPeriod old (or holds kJournalBytes), SyncJournals
// puts its whole content into its journal, dated from its opening, and from
// then on every change to the tree is also made to its journal (JournalOf).
// A tree's files are written once, when its step closes (Finish); WriteDirty
// (an explicit flush) writes open trees marked step_open.
//
// Loss accounting: ring drops (from the ring headers) are charged to the
// step being captured until the rank's own count of the step settles them
// (step_accounting.h); an outage the rank reports goes to the next tree
// written. Skipped
// records go to their step's tree, or to the step being captured when
// theirs was finished. A corrupt stream marks every open tree and every
// tree opened later.
//
// Thread safety: none. The owning Rank's mutex guards it.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/dump/framework.h"
#include "common/dump/journal.h"
#include "common/dump/tree.h"
#include "common/record_losses.h"
#include "common/status.h"
#include "daemon/output/tensor_store.h"

namespace tprobe::daemon {

struct AssemblerOptions {
  std::string task;   // "statistics", "tensor", "overflow_check"
  std::string level;  // "L0", "L1", "mix"
  // The producer's framework (never null).
  const dump::Framework* framework = &dump::kPyTorch;
  // dump_path as configured: dump.json's dump_data_dir is derived from it,
  // as msprobe does, so it may be relative.
  std::string dump_path;
  // Where the files go: dump_path made absolute.
  std::string write_path;
  int rank = -1;  // -1: no distributed rank, directory "rank"
  // Tasks tensor and overflow_check: trees name dump_tensor_data/ as their
  // dump_data_dir and their entries' tensors get files there.
  bool tensor_data = false;
};

class Assembler {
 public:
  explicit Assembler(AssemblerOptions options);

  const AssemblerOptions& options() const { return options_; }
  // A live config (`tprobe configure`): trees opened from now on take this
  // task, level and tensor_data, and go under its dump_path and write_path;
  // open trees keep theirs.
  void SetCapture(const AssemblerOptions& capture) {
    options_.task = capture.task;
    options_.level = capture.level;
    options_.tensor_data = capture.tensor_data;
    options_.dump_path = capture.dump_path;
    options_.write_path = capture.write_path;
  }

  // The tree of `step`, opened on first use and marked dirty. Returns nullptr
  // for a step that Finish() already closed (late data).
  dump::StepTree* Tree(uint32_t step);

  // Notes the step being captured (Start, or a record's step); drops are
  // charged to it.
  void NoteStep(uint32_t step);
  uint32_t current_step() const { return current_step_; }

  // Charges ring drops (the increase of the ring headers' counters, already
  // checked to be monotonic) to the current step's tree.
  void AddRingDrops(const RingLosses& drops);

  // An outage the rank reported: the next tree written carries it.
  void NoteOutage(const dump::Outage& outage) { outage_due_ = outage; }

  // Whether `step` has an open tree, and the open steps in order.
  bool IsOpen(uint32_t step) const { return trees_.contains(step); }
  // Whether data of `step` would open a tree: it has none and is not
  // finished.
  bool WouldOpen(uint32_t step) const {
    return !IsOpen(step) && !(finished_through_ && step <= *finished_through_);
  }
  std::vector<uint32_t> OpenSteps() const;

  // Charges one record that could not be applied to the tree of `step`,
  // or to the current step's when `step` was finished.
  void AddSkipped(uint32_t step);

  // Notes that `count` calls of `step` began and never ended (seen by the
  // daemon or reported by the client; the larger count is kept, as both
  // may see the same calls). Such a step is not complete.
  void NoteUnclosedCalls(uint32_t step, uint64_t count);

  // Notes why the rank wrote no entry in `step` (tprobe.json why_empty,
  // shown while the tree has no entry); nothing when `step` has no open
  // tree or `why` is empty.
  void NoteWhyEmpty(uint32_t step, const std::string& why);

  // Marks every open tree, and every tree opened from now on, as cut short
  // by a corrupt stream; opens the current step's tree if need be.
  void MarkStreamCorrupt();

  // Marks every open tree as cut short by the producer's death.
  void MarkProducerDied();

  // The tensor files of `step`'s open tree, or nullptr when Finish() closed
  // the step. Storing files does not make the tree dirty.
  TensorStore* Tensors(uint32_t step);

  // Writes every dirty tree, marked step_open (the step has not closed, so
  // it is not complete). Returns the first error; the other trees are still
  // written. A tree whose write fails stays dirty (its tprobe.json counts
  // the failure) and is written again by the next call, so a full disk
  // delays a step and never loses it.
  Status WriteDirty();

  // Writes the trees of steps <= `step` as closed (unless already written
  // closed and unchanged), then forgets every one that was written; one
  // whose write failed is kept for WriteDirty. Returns the first write
  // error.
  Status Finish(uint32_t step);

  // The journal of `step`'s open tree, or nullptr when the tree has none
  // yet (SyncJournals) or Finish() closed it. The caller makes the same
  // change to the journal as to the tree.
  dump::Journal* JournalOf(uint32_t step);

  // Begins the journal of every open tree that is due (kJournalPeriod old,
  // or holding kJournalBytes) and has none, then appends every open tree's
  // journalled changes that are due to disk (Journal::Sync). Returns the
  // first error.
  Status SyncJournals();

  // Absolute directory of step's tensor files (dump_tensor_data/), for a
  // tree opened now.
  std::string TensorDataDir(uint32_t step) const;

  size_t open_trees() const { return trees_.size(); }
  // About the bytes the open trees hold: their text (StepTree::held_bytes)
  // and their journals' unsynced changes. Linear in the open trees.
  size_t open_bytes() const;

 private:
  struct Open {
    std::string dir;  // write_path/step{N}/rank{R}, as the tree was opened
    dump::StepTree tree;
    TensorStore tensors;
    dump::Journal journal;
    std::chrono::steady_clock::time_point opened;
    // The journal holds the tree's content and takes its changes.
    bool journalled = false;
    bool dirty = true;
  };

  // Buffers the whole of the tree in its journal, dated from its opening.
  static void BeginJournal(Open& open);

  // Writes the tree if it changed since it was last written, or if it was
  // last written open and now closes.
  Status Write(Open& open, bool closing);

  AssemblerOptions options_;
  std::map<uint32_t, Open> trees_;
  std::optional<uint32_t> finished_through_;
  uint32_t current_step_ = 0;
  // Drops not charged yet: the current step was already finished.
  RingLosses drops_due_;
  std::optional<dump::Outage> outage_due_;
  uint64_t deferred_skipped_ = 0;
  bool stream_corrupt_ = false;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_OUTPUT_ASSEMBLER_H_
