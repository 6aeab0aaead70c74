// Where a step's records went, from the rank's count and the daemon's
// (step_accounting.h).

#include "daemon/ingest/step_accounting.h"

#include <algorithm>

#include "common/record_losses.h"

namespace tprobe::daemon {
namespace {

constexpr auto kFull = static_cast<size_t>(shm::DropReason::kRingFull);
constexpr auto kLarge = static_cast<size_t>(shm::DropReason::kTooLarge);

// The drops the ring headers show now, over every ring.
RingLosses RingDrops(const RankState& state) {
  RingLosses drops;
  for (const RingState& ring : state.rings) {
    drops.ring_full += ring.seen.dropped[kFull];
    drops.too_large += ring.seen.dropped[kLarge];
  }
  return drops;
}

// Moves the settled drop totals up to what the ring headers show now, and
// returns the increase: the drops of the steps no count will come for.
RingLosses SettleRingDrops(RankState& state) {
  const RingLosses now = RingDrops(state);
  RingLosses& settled = state.drops_settled;
  RingLosses due;
#define TPROBE_SETTLE_(name)                              \
  due.name = now.name - std::min(now.name, settled.name); \
  settled.name = std::max(now.name, settled.name);
  TPROBE_RING_LOSSES(TPROBE_SETTLE_)
#undef TPROBE_SETTLE_
  return due;
}

void Apply(dump::StepTree& tree, const dump::RecordLedger& r) {
  dump::Accounting& a = tree.accounting();
  a.dropped.ring_full = r.dropped.ring_full;
  a.dropped.too_large = r.dropped.too_large;
  a.dropped.no_daemon = r.dropped.no_daemon + r.dropped.daemon_gone;
  a.records = r;
}

}  // namespace

void SettleStep(RankState& state, uint32_t step, const v1::StepLedger& ledger) {
  uint64_t read = 0;
  uint64_t unread = 0;
  for (size_t i = 0; i < state.rings.size(); ++i) {
    RingState& ring = state.rings[i];
    // A cut never goes back; a ring without one (no connection) is as it
    // was at the last.
    const uint64_t cut = std::max(
        ring.records_settled, i < static_cast<size_t>(ledger.ring_cuts_size())
                                  ? ledger.ring_cuts(static_cast<int>(i))
                                  : ring.records_settled);
    // Only the records after the last cut are this step's: those a corrupt
    // ring left unread before it were counted with their own step.
    const uint64_t reached =
        std::clamp(ring.records_read, ring.records_settled, cut);
    read += reached - ring.records_settled;
    unread += cut - reached;
    ring.records_settled = cut;
  }
  // The rank's count is the step's own. The ring headers' totals already
  // hold the drops of the steps after it, so they do not settle a step;
  // drops into an earlier daemon's rings (an outage) are not in them.
  const RingLosses now = RingDrops(state);
  RingLosses& settled = state.drops_settled;
#define TPROBE_SETTLE_(name) \
  settled.name = std::min(now.name, settled.name + ledger.dropped_##name());
  TPROBE_RING_LOSSES(TPROBE_SETTLE_)
#undef TPROBE_SETTLE_
  const bool outage = ledger.dropped_no_daemon() > 0 ||
                      ledger.dropped_daemon_gone() > 0 ||
                      ledger.read_by_lost_daemon() > 0;
  // A step of the outage gets no tree of its own; one this daemon opened
  // (its Start came after the reconnection, its records before) is written
  // with the count, so it says what it lost.
  if (outage && ledger.committed() == 0 && !state.assembler.IsOpen(step)) {
    return;
  }
  if (!state.assembler.IsOpen(step) && ledger.produced() == 0) return;
  dump::StepTree* tree = state.assembler.Tree(step);
  if (tree == nullptr) return;  // finished already: late
  dump::RecordLedger r;
  r.from_client = true;
  r.produced = ledger.produced();
#define TPROBE_COPY_(name) r.dropped.name = ledger.dropped_##name();
  TPROBE_STEP_LOSSES(TPROBE_COPY_)
#undef TPROBE_COPY_
  r.dropped.daemon_gone += ledger.read_by_lost_daemon();
  r.skipped = std::min(read, tree->accounting().records_skipped);
  r.written = read - r.skipped;
  r.unread = unread;
  Apply(*tree, r);
  dump::Accounting& a = tree->accounting();
  a.entries_lost += ledger.entries_lost();
  for (const std::string& name : ledger.lost_entries()) {
    a.NoteIncompleteEntry(name);
  }
}

void SettleOpenStep(RankState& state) {
  const std::vector<uint32_t> open = state.assembler.OpenSteps();
  if (open.empty()) return;
  const uint32_t step = open.back();
  dump::StepTree* tree = state.assembler.Tree(step);
  if (tree == nullptr) return;
  uint64_t read = 0;
  for (RingState& ring : state.rings) {
    read +=
        ring.records_read - std::min(ring.records_read, ring.records_settled);
    ring.records_settled = std::max(ring.records_settled, ring.records_read);
  }
  dump::RecordLedger r;
  const RingLosses due = SettleRingDrops(state);
  r.dropped.ring_full = due.ring_full;
  r.dropped.too_large = due.too_large;
  r.skipped = std::min(read, tree->accounting().records_skipped);
  r.written = read - r.skipped;
  r.produced = read + due.Total();
  if (open.front() != step) r.first_step = open.front();
  Apply(*tree, r);
}

void NoteOutage(RankState& state, const v1::Outage& o) {
  dump::Outage outage;
  outage.first_step = o.first_step();
  outage.last_step = std::max(o.first_step(), o.last_step());
  outage.produced = o.produced();
#define TPROBE_COPY_(name) outage.dropped.name = o.dropped_##name();
  TPROBE_STEP_LOSSES(TPROBE_COPY_)
#undef TPROBE_COPY_
  outage.read_by_lost_daemon = o.read_by_lost_daemon();
  state.outage = outage;
  state.assembler.NoteOutage(outage);
}

}  // namespace tprobe::daemon
