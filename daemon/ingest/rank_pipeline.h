#ifndef TPROBE_DAEMON_INGEST_RANK_PIPELINE_H_
#define TPROBE_DAEMON_INGEST_RANK_PIPELINE_H_

// One rank's drain pipeline: what a worker does with a rank it holds.
// A pass runs the rank's queued control commands in arrival order, each
// right after draining what the rank had committed when the command
// arrived, then drains up to a batch of records. So a command sees exactly
// the records sent before it, and the control thread never drains.
//
//   Start    notes the step and opens its tree.
//   Stop     drains; the step stays open (API backward after stop() still
//            belongs to it). From the CLI it also writes the open steps,
//            as Flush does.
//   Step     settles the construct nodes held back for steps up to N
//            (drain.h) and writes and forgets the trees up to N.
//   Flush    writes every open tree as it is now (tprobe.json says the step
//            is still open, so it is not complete).
//   Configure  switches the rank to the config it fetched (tprobe
//            configure): trees opened from then on (the step it names
//            first) take its task and level, the drain its summary_mode
//            and overflow_nums, and the overflow count starts again.
//   Goodbye  drains everything, writes every tree and finalises: the client
//            exited cleanly.
//   HangUp   the connection closed without Goodbye. The rank is dead
//            only when its process is gone too (Rank::ProcessGone):
//            every later pass checks, and then drains what it committed,
//            marks its open trees producer_died, writes and finalises them.
//
// Finalising removes the rank from the registry and unlinks its
// segment.
//
// Thread safety: the caller holds the rank's state (Rank::Locked),
// which orders the passes of one rank.

#include <cstddef>

#include "daemon/ingest/rank.h"
#include "daemon/ingest/registry.h"
#include "daemon/process/logger.h"

namespace tprobe::daemon {

// Runs one pass: the queued commands, then up to `batch` records (0: no
// limit), then the death check of a hung-up rank; publishes the status.
// Returns the work done (records and commands), 0 when there was none.
size_t RunPipeline(Rank& producer, RankState& state, Registry& registry,
                   spdlog::logger& log, size_t batch);

// Daemon shutdown: runs every queued command, drains everything the
// rank committed and finalises it (not as dead: it is the daemon that
// stops).
void FinishPipeline(Rank& producer, RankState& state, Registry& registry,
                    spdlog::logger& log);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RANK_PIPELINE_H_
