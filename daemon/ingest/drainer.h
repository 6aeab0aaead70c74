#ifndef TPROBE_DAEMON_INGEST_DRAINER_H_
#define TPROBE_DAEMON_INGEST_DRAINER_H_

// The drain's dispatcher for one pass over one rank's rings (drain.h
// says what a pass does). It reads the rings in seq order and hands each
// record to the part of RankState that owns what it changes:
//   InternTables    (intern_tables.h)    Intern records
//   TensorAssembler (tensor_assembler.h) Tensor, Chunk, ProducerStats and
//                                        ProducerBytes records
//   ConstructNodes  (construct_nodes.h)  CallBegin and CallEnd records
//   HeldEntries     (held_entries.h)     Entry records that wait for
//                                        producer statistics
// and applies the Entry records itself (dump.json, stack.json, tensor
// files, task overflow_check). The ring loop, the boundaries and the bounds
// on read-ahead are in drain.cc; the records' dispatch, the entries and the
// skipped and corrupt records in drainer.cc.
//
// Thread safety: none; the caller holds the rank's state.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dump/tree.h"
#include "common/record/codec.h"
#include "daemon/ingest/rank.h"

namespace tprobe::daemon {

class Drainer {
 public:
  Drainer(const Rank& rank, RankState& state, spdlog::logger& log)
      : rank_(rank), state_(state), log_(log) {}

  // See DrainSome; `targets`, when set, holds one ring position per ring
  // beyond which nothing is consumed. The open-step bound applies to
  // records of steps after `through_step` (none: to all).
  // `targets_final`: nothing beyond the targets will come (the rank is gone
  // or the daemon stops), so a boundary waits for no more.
  size_t Run(size_t max_records, const std::vector<uint64_t>* targets,
             std::optional<uint32_t> through_step = std::nullopt,
             bool targets_final = false);

  // Checks the ring headers' counters (they may only grow) and charges the
  // new drops to the assembler; a counter that went back is corruption.
  void CheckCounters();

  // Puts the held module nodes of steps up to `up_to_step` into their
  // trees, in order; later steps' nodes stay held.
  void ReleaseHeldNodes(uint32_t up_to_step);

  // Applies the held entries, in order, from the first while each is ready
  // (no tensor it refers to awaits its producer statistics), and those of
  // steps up to `through_step` whether ready or not.
  void ReleaseHeldEntries(std::optional<uint32_t> through_step);

 private:
  // One pass over the rings: what Run's limits are, what it consumed, and
  // the Entry or Call record of the lowest seq seen so far.
  struct Pass;

  // Reads ring `i` up to its first Entry or Call record, applying the
  // records before it, and makes that record the pass's next if its seq is
  // the lowest. Returns false when the pass must end (a boundary is ready,
  // the stream is corrupt or the budget is spent).
  bool Scan(uint32_t i, Pass& pass);

  // Applies an Intern, Tensor, Chunk, ProducerStats or ProducerBytes
  // record, which need no order across rings.
  void ApplyLocal(uint32_t ring, record::Decoded& decoded);
  // Applies an Entry or Call record. Returns false on corruption.
  bool ApplyOrdered(uint32_t ring, const record::Decoded& decoded);
  // Whether an Entry or Call record of `step` must wait: it would open a
  // tree beyond the open-step bound.
  bool OverBound(uint32_t step, std::optional<uint32_t> through_step) const;

  // A Boundary record on ring `ring`: parsed and checked (a bad one is
  // corruption), and made state_.boundary when every other ring has been
  // read up to the cut the rank's ledger gives it. Returns false when it
  // must wait for that; then *step is the step it closes, and the parsed
  // record is kept in waiting_.
  bool OnBoundary(uint32_t ring, const record::BoundaryView& v,
                  const std::vector<uint64_t>* targets, bool targets_final,
                  uint32_t* step);
  // Whether ring `ring` has been read up to `cut` records, or holds nothing
  // more (the records up to the cut never came: they count unread).
  bool ReachedCut(uint32_t ring, uint64_t cut,
                  const std::vector<uint64_t>* targets, bool targets_final);

  void OnCall(uint32_t ring, const record::CallView& v);
  // OnEntry, or holds the entry (copied) while it or an entry before it
  // waits for producer statistics. Returns false on corruption.
  bool HoldOrApply(uint32_t ring, const record::EntryView& v);
  bool Ready(const HeldEntry& held) const;
  // Renders an Entry record into its step's tree and writes its tensor
  // files; an entry without a body lists only its stack. Returns false on
  // corruption.
  bool OnEntry(uint32_t ring, const record::EntryView& v);
  // Keeps the rendered entry `name` (state_.rendered) in `tree`, unless the
  // task keeps no entry or only overflowing ones.
  void KeepEntry(dump::StepTree& tree, uint32_t step, uint32_t ring,
                 const std::string& name);
  // Task overflow_check: counts a kept overflow entry, and notes (and
  // logs) when overflow_nums is reached.
  void CountOverflow(const std::string& name);
  void AddStack(dump::StepTree& tree, uint32_t step, const std::string& name,
                uint32_t stack_id);
  void WriteTensorFiles(uint32_t step, uint32_t ring,
                        const std::vector<TensorFile>& files);
  // Puts node `name` of `step` into its tree and journal.
  void PlaceNode(uint32_t step, const std::string& name,
                 std::optional<std::string> parent);

  // What the tensors' part takes from the config and limits now.
  TensorRules Rules() const;
  // Reports what applying a record to the tensors did: an error is
  // corruption of ring `ring` (returns false), a completed tensor lets the
  // held entries go.
  bool Report(uint32_t ring, const Result<TensorAssembler::Outcome>& r);

  const std::string* Name(uint32_t id, uint32_t step, const char* what);
  dump::StepTree* Tree(uint32_t step, const std::string& name);
  void Skipped(uint32_t step, const std::string& why);
  void Corrupt(uint32_t ring, const std::string& what);
  // Marks the stream corrupt once the segment faulted (Segment::faulted):
  // what was read from it since may be zeros.
  void CheckFault();

  const Rank& rank_;
  RankState& state_;
  spdlog::logger& log_;
  // The boundaries at the head of their rings that wait for other rings,
  // each parsed once: Run scans every ring again for each record it
  // applies, and a boundary waits while the other rings' records up to its
  // cuts are applied (the parse was 4.5 % of the daemon's CPU at mix).
  struct WaitingBoundary {
    uint32_t ring;
    uint64_t position;  // the ring reader's, at the record
    v1::Request request;
  };
  std::vector<WaitingBoundary> waiting_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_DRAINER_H_
