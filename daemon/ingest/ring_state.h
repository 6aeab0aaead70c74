#ifndef TPROBE_DAEMON_INGEST_RING_STATE_H_
#define TPROBE_DAEMON_INGEST_RING_STATE_H_

// What the drain (drain.h) remembers about one ring of a rank between
// records, besides what its tensors (tensor_assembler.h) and calls
// (construct_nodes.h) left: the reader's place, the records read and
// settled, and the ring header's counters seen last.
//
// Thread safety: none; it is part of RankState, guarded by the
// rank's mutex.

#include <cstddef>
#include <cstdint>

#include "common/shm/ring.h"

namespace tprobe::daemon {

// Ring header counters the daemon saw last, to check they only grow.
struct SeenCounters {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t dropped[static_cast<size_t>(shm::DropReason::kCount)] = {};
};

// What the daemon remembers about one ring between records.
struct RingState {
  explicit RingState(shm::RingReader r) : reader(r) {}
  shm::RingReader reader;
  SeenCounters seen;
  // Records read from this ring (padding not counted), and how many of
  // them belonged to steps already settled (step_accounting.h).
  uint64_t records_read = 0;
  uint64_t records_settled = 0;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RING_STATE_H_
