#ifndef TPROBE_DAEMON_INGEST_DRAIN_H_
#define TPROBE_DAEMON_INGEST_DRAIN_H_

// Draining a rank: reading the records it committed to its rings,
// decoding them (record::Decode) and applying them to its state.
//
// Per ring (the stream of one producing thread):
//   Intern   stores a name or a stack ('\0'-separated lines) by id.
//   Tensor   opens a pending tensor; its Chunk records append its bytes in
//            order. When all nbytes have arrived the statistics are computed
//            (and the CRC-32 in md5 mode). A tensor whose chunks stop before
//            nbytes, when the next non-chunk record arrives, is incomplete.
//   Entry    renders the value tree (entry_renderer.h) with the tensors it
//            refers to, which were sent before it on its ring (not
//            necessarily right before: a module's input tensors wait while
//            its children's entries go by), adds it to the tree of (entry
//            step, rank)
//            with its stack, and stores its tensors as .npy files
//            (tensor_store.h) in tasks tensor and overflow_check. An Entry
//            uses each tensor once: the tensors it refers to are forgotten,
//            so a second reference renders null (an incomplete tensor).
//            Tensors no applied Entry refers to wait until their step is
//            settled (ReleaseSettledTensors). A re-dump
//            of a name with identical content is dropped (and its files are
//            not written again). An Entry with an empty body only lists
//            its stack. Task overflow_check keeps only entries with an
//            infinite or NaN Max or Min, but every entry's stack; after
//            overflow_nums of them (-1: no limit) the dump ends, as in
//            msprobe: it is logged, and every later Entry and Call record
//            is dropped.
//   CallBegin / CallEnd
//            build construct.json (not at level L1): a node's parent is the
//            innermost module of its step open on the same ring (a call
//            left open in an earlier step is never a parent); module nodes are
//            pushed, API nodes are not; CallEnd pops up to and including
//            its name. msprobe inserts a module's node only when the next
//            node or data of its thread arrives, after an API node that
//            follows it, so a module's node is held back at its CallBegin
//            and goes in, with the other held nodes in CallBegin order,
//            right after the next API node of the ring, or at the ring's
//            next CallEnd (ReleaseHeldNodes settles the rest); an Entry
//            releases nothing (msprobe 26.x writes a module's inputs, and a
//            stack, before touching construct.json).
//            Without API nodes (L0) the order is the CallBegin order.
//            A group node (CallKind::kGroup, msprobe's "optimizer") goes in
//            at once with a null parent, and is the parent of the calls
//            that begin before its CallEnd, as a module is.
// Across rings, Entry and Call records are applied in the order of their
// `seq` among the records visible.
//   Boundary (a serialized v1::Request: the rank's Start, Step or Goodbye,
//            in its boundary ring)
//            is checked (a Request of this protocol version with one of
//            those bodies, else the stream is corrupt) and waits until
//            every other ring has been read up to the cut its ledger gives
//            that ring, or holds nothing more (the records the rank
//            committed before it never came: they count unread); while it
//            waits the records of the step it closes are read whatever the
//            open-step bound. Once ready the drain stops and leaves it in
//            RankState::boundary for the pipeline to run
//            (rank_pipeline.h); nothing more is read until ReleaseBoundary.
//            A drain whose targets are final (a gone rank, a stopping
//            daemon) waits for nothing beyond them.
//   ProducerStats
//            completes a tensor whose Tensor record carried
//            kTensorStatsByProducer (its statistics computed by the
//            rank, written by the rank's statistics thread on that
//            thread's ring). One that arrives before its Tensor record stays
//            in its ring, which is read on once the tensor has been read. An
//            Entry that refers to a tensor still waiting for them is held,
//            and so is every Entry after it (Calls are not), and they are
//            applied in their order as the statistics arrive: dump.json
//            keeps the call order. When a step is settled its held entries
//            are applied whatever is missing: a missing statistic makes an
//            incomplete tensor, and the step incomplete.
//
// A record that cannot be applied (it names an id never interned, or a step
// already finished) is skipped: counted in the tree's accounting, so the
// step is not complete, and logged at a decreasing rate.
//
// Read-ahead is bounded: an Entry or Call record that would open a tree
// while the rank already holds RankLimits::max_open_steps open
// trees, or open trees holding max_open_bytes, is left in its ring, and so
// is everything after it in seq order, until a Step closes a tree. The rings
// then fill and the client's full-ring policy applies (counted by the rank). A
// command's drain reads the records of the steps it is about (DrainTo's
// `through_step`) whatever the bound; the final drain of a rank
// (DrainCommitted) reads everything.
//
// Nothing read from shared memory is trusted (RankLimits): a tensor
// larger than max_tensor_bytes is never buffered (it stays incomplete), the
// intern tables and the tensors waiting for their Entry are bounded, ids are
// interned once, and the ring headers' counters must only grow.
//
// A corrupt record (a ring or decode error, a malformed Entry body), or a
// bus error on the rank's segment (Segment::faulted), is
// logged once, naming the rank; the rank is then
// marked broken, its trees are marked stream_corrupt (incomplete) and its
// rings are no longer read. Other ranks are not affected.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/ingest/rank.h"
#include "daemon/process/logger.h"

namespace tprobe::daemon {

// Consumes up to `max_records` records (0: no limit) until the rings are
// empty, then charges new ring drops to the assembler. Returns the number of
// records consumed.
// REQUIRES: `state` is `rank`'s state, locked by the caller.
size_t DrainSome(const Rank& rank, RankState& state, size_t max_records,
                 spdlog::logger& log);

// Consumes every record committed before the call (records committed during
// it may be left for later), then charges new ring drops. This is the
// "drain completely" of Stop, Step, Flush, Goodbye and hang-up.
// REQUIRES: as DrainSome.
void DrainCommitted(const Rank& rank, RankState& state, spdlog::logger& log);

// Consumes each ring up to its position in `targets` (the heads noted when a
// command arrived: Rank::Enqueue) or until it is empty, then charges new
// ring drops. The open-step bound applies to records of steps after
// `through_step` (none: to every record; see above). `targets_final`: no
// record beyond the targets will come (see Boundaries above). Returns the
// number of records consumed.
// REQUIRES: as DrainSome.
size_t DrainTo(const Rank& rank, RankState& state,
               const std::vector<uint64_t>& targets, spdlog::logger& log,
               std::optional<uint32_t> through_step,
               bool targets_final = false);

// Each ring's head now: what the rank has committed and published.
std::vector<uint64_t> CommittedHeads(const Rank& rank);

// Frees the boundary record that has run (state.boundary) in its ring, so
// that the rank sees it read, and lets the drain go on.
void ReleaseBoundary(RankState& state);

// Puts the module nodes still held back for steps up to `up_to_step` (all,
// by default) into their trees. Called before a step's trees are finished
// and when the rank is finalised, when no further record can release
// them. Nodes of later steps (the drain may already have read the next
// step's first records) stay held for their own API node or CallEnd.
// REQUIRES: as DrainSome.
void ReleaseHeldNodes(const Rank& rank, RankState& state, spdlog::logger& log,
                      uint32_t up_to_step = UINT32_MAX);

// Applies the held entries of steps up to `through_step` (drainer.h,
// ReleaseHeldEntries), before that step is settled or the rank
// finalised.
// REQUIRES: as DrainSome.
void ReleaseHeldEntries(const Rank& rank, RankState& state, spdlog::logger& log,
                        uint32_t through_step);

// Forgets each ring's waiting tensors whose Tensor record came before the
// ring's settled cut (RingState::records_settled, step_accounting.h): an
// Entry refers only to tensors of its own step, so none can refer to them
// any more. Tensors of a call that never wrote its entry (abandoned at a
// step's end, an API that raised, an entry the ring had no room for) end
// here; that loss is counted where it happened (calls_unclosed, the rank's
// drops), not again. Called after each step is settled and at the end.
// REQUIRES: as DrainSome.
void ReleaseSettledTensors(const Rank& rank, RankState& state,
                           spdlog::logger& log);

// Closes the module calls of steps up to `up_to_step` (all, by default)
// still open on the rank's rings: they are forgotten, and each such
// step's tree counts them as unclosed (Assembler::NoteUnclosedCalls), so it
// is not complete. Called with ReleaseHeldNodes, when no CallEnd can come.
// REQUIRES: as DrainSome.
void CloseOpenCalls(RankState& state, uint32_t up_to_step = UINT32_MAX);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_DRAIN_H_
