#ifndef TPROBE_DAEMON_INGEST_STEP_ACCOUNTING_H_
#define TPROBE_DAEMON_INGEST_STEP_ACCOUNTING_H_

// Settles where every record of a step went (tprobe.json "records",
// dump::RecordLedger), from the rank's own count and the daemon's.
//
// The rank ends each step with its count (v1::StepLedger): what it produced,
// dropped by reason, and each ring's cut, the number of records committed
// to the ring before the step ended. The daemon counts the records it reads
// from each ring (RingState::records_read); the records between the last
// settled cut and this one are the step's. What the rank committed and the
// daemon never found is `unread`: only a corrupt stream leaves any. A step
// that lost records to the daemon's absence (records committed into an
// earlier daemon's rings, or dropped without one) has no tree here: its
// records are the outage's, which the rank reports with a later step.
//
// When no count will come (the rank died, or this daemon stops first), the
// steps still open are settled together from the daemon's count alone: what
// it read since the last cut plus the drops the ring headers show beyond
// those the rank's counts already gave their steps, written
// in the last open step's tree with the first one as "since_step" (records
// other than entries and calls carry no step, so the daemon cannot split
// them).
//
// Thread safety: the caller holds the rank's state.

#include <cstdint>

#include "daemon/ingest/rank.h"

namespace tprobe::daemon {

// Settles `step` with the rank's count. REQUIRES: the records committed
// before the cut were drained (the command's targets).
void SettleStep(RankState& state, uint32_t step, const v1::StepLedger& ledger);

// Settles the open steps from the daemon's count alone (above).
void SettleOpenStep(RankState& state);

// Records an outage the rank reported: status shows it, and the next tree
// written carries it.
void NoteOutage(RankState& state, const v1::Outage& outage);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_STEP_ACCOUNTING_H_
