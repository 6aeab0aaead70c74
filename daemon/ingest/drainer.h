#ifndef TPROBE_DAEMON_INGEST_DRAINER_H_
#define TPROBE_DAEMON_INGEST_DRAINER_H_

// The drain's worker for one pass over one producer's rings (drain.h says
// what a pass does). Private to the drain; its parts are in:
//   drain.cc          the ring loop, the seq order across rings and the
//                     dispatch of each record, and the bounds on read-ahead
//   drain_tensors.cc  tensors assembled from their chunks, and released
//   drain_calls.cc    Call records: construct.json's nodes, held or not
//   drain_entries.cc  Entry records: dump.json, stack.json, tensor files
//                     and task overflow_check
//   drain_producer_stats.cc  statistics and bytes the producer sent
//                     later, and the entries held in call order until
//                     they arrive
//   drain_checks.cc   intern tables, skipped and corrupt records, and the
//                     ring headers' counters
//
// Thread safety: none; the caller holds the producer's state.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dump/tree.h"
#include "common/record/codec.h"
#include "daemon/ingest/producer.h"

namespace tprobe::daemon {

class Drainer {
 public:
  Drainer(const Producer& producer, ProducerState& state, spdlog::logger& log)
      : producer_(producer), state_(state), log_(log) {}

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

  // Puts the ring's held module nodes of steps up to `up_to_step` into
  // their trees, in order; later steps' nodes stay held.
  void ReleaseHeld(RingState& ring, uint32_t up_to_step = UINT32_MAX);

  // Applies the held entries, in order, from the first while each is ready
  // (no tensor it refers to awaits its producer statistics), and those of
  // steps up to `through_step` whether ready or not.
  void ReleaseHeldEntries(std::optional<uint32_t> through_step);

 private:
  // Applies an Intern, Tensor or Chunk record, which only concern their
  // ring. Returns false for anything else.
  bool ApplyLocal(RingState& ring, record::Decoded& decoded);
  // Applies an Entry or Call record. Returns false on corruption.
  bool ApplyOrdered(uint32_t ring_index, const record::Decoded& decoded);
  // Whether an Entry or Call record of `step` must wait: it would open a
  // tree beyond the open-step bound.
  bool OverBound(uint32_t step, std::optional<uint32_t> through_step) const;

  // A Boundary record on ring `ring_index`: parsed and checked (a bad one
  // is corruption), and made state_.boundary when every other ring has been
  // read up to the cut the rank's ledger gives it. Returns false when it
  // must wait for that; then *step is the step it closes.
  bool OnBoundary(uint32_t ring_index, const record::BoundaryView& v,
                  const std::vector<uint64_t>* targets, bool targets_final,
                  uint32_t* step);
  // Whether ring `ring` has been read up to `cut` records, or holds nothing
  // more (the records up to the cut never came: they count unread).
  bool ReachedCut(uint32_t ring, uint64_t cut,
                  const std::vector<uint64_t>* targets, bool targets_final);

  void OnIntern(const record::InternView& v);
  void OnTensor(RingState& ring, record::TensorView& v);
  void OnChunk(RingState& ring, const record::ChunkView& v);
  void OnCall(RingState& ring, const record::CallView& v);
  bool OnEntry(uint32_t ring_index, const record::EntryView& v);
  // OnEntry, or holds the entry (copied) while it or an entry before it
  // waits for producer statistics. Returns false on corruption.
  bool HoldOrApply(uint32_t ring_index, const record::EntryView& v);
  bool Ready(const HeldEntry& held) const;
  // Whether the tensor a ProducerStats or ProducerBytes record completes
  // has been read (a ring out of range counts as read: the record's handler
  // reports it); true for any other record.
  bool TargetRead(const record::Decoded& d) const;
  void OnProducerStats(uint32_t ring_index, const record::ProducerStatsView& v);
  // Opens the ring's pending tensor for the bytes of the tensor it names.
  void OnProducerBytes(RingState& ring, const record::ProducerBytesView& v);
  // The waiting tensor a ProducerStats or ProducerBytes record of ring
  // `ring_index` completes, or null after reporting corruption.
  WaitingTensor* AwaitingTarget(uint32_t ring_index, uint32_t ring,
                                uint32_t ref, const char* what);
  // A waiting tensor got the last of what it awaited: it is complete unless
  // its bytes were lost, and the held entries may go.
  void Completed(WaitingTensor& waiting);
  // Makes `pending` the ring's pending tensor for its meta.nbytes bytes:
  // beyond max_tensor_bytes it is never buffered (its chunks are skipped,
  // it stays incomplete); one without bytes closes at once.
  void OpenPending(RingState& ring, PendingTensor pending);
  void CloseTensor(RingState& ring, bool complete);
  // The slot of tensor `ref` on `ring`; a tensor that waited under the same
  // ref (a ref sent again) leaves the counts first.
  WaitingTensor& Replace(RingState& ring, uint32_t ref);
  // A complete tensor's CRC-32 (summary_mode md5, or bytes kept) and, while
  // they still have to be written as .npy, its bytes (moved from `bytes`).
  void KeepBytes(TensorInfo& info, std::vector<std::byte>& bytes);
  // Counts `n` more bytes waiting on `ring`; beyond the producer's bound the
  // stream is corrupt, reported against ring `ring_index`.
  void AddWaitingBytes(RingState& ring, uint64_t n, uint32_t ring_index);
  // CloseTensor of the bytes a ProducerBytes record opened.
  void DeliverBytes(uint32_t ring_index, PendingTensor& p, bool complete);
  // Forgets the waiting tensors `refs` names (those it names twice or not
  // at all are skipped); all of them when `refs` is null.
  void Forget(RingState& ring, const std::vector<uint32_t>* refs);
  // Task overflow_check: counts a kept overflow entry, and notes (and
  // logs) when overflow_nums is reached.
  void CountOverflow(const std::string& name);
  void AddStack(dump::StepTree& tree, uint32_t step, const std::string& name,
                uint32_t stack_id);
  void WriteTensorFiles(uint32_t step, const RingState& ring,
                        const std::vector<TensorFile>& files);

  const std::string* Name(uint32_t id, uint32_t step, const char* what);
  dump::StepTree* Tree(uint32_t step, const std::string& name);
  void Skipped(uint32_t step, const std::string& why);
  void Corrupt(uint32_t ring_index, const std::string& what);
  // Marks the stream corrupt once the segment faulted (Segment::faulted):
  // what was read from it since may be zeros.
  void CheckFault();

  const Producer& producer_;
  ProducerState& state_;
  spdlog::logger& log_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_DRAINER_H_
