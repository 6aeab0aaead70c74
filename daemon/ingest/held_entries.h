#ifndef TPROBE_DAEMON_INGEST_HELD_ENTRIES_H_
#define TPROBE_DAEMON_INGEST_HELD_ENTRIES_H_

// The Entry records a rank's drain holds back, in call order, behind
// the first that refers to a tensor still waiting for its producer
// statistics (drain.h, ProducerStats), copied out of the ring and bounded
// by RankLimits.
//
// Thread safety: none; part of RankState, guarded by the rank's
// mutex.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "common/record/codec.h"
#include "common/status.h"
#include "daemon/ingest/rank_limits.h"

namespace tprobe::daemon {

// An Entry record held back, copied out of its ring.
struct HeldEntry {
  uint32_t ring = 0;
  record::EntryRecord entry{};
  std::vector<std::byte> body;
  std::vector<uint32_t> refs;  // the tensors of `ring` it refers to
};

class HeldEntries {
 public:
  // The tensor refs an entry body names, or the body's defect.
  static Result<std::vector<uint32_t>> Refs(std::span<const std::byte> body);

  // Holds `held` with a copy of `body` behind the entries held before it.
  // Returns an error, holding nothing, beyond the limits' count or bytes.
  Status Hold(HeldEntry held, std::span<const std::byte> body,
              const RankLimits& limits);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const HeldEntry& front() const { return entries_.front(); }
  // Takes the first held entry. REQUIRES: !empty().
  HeldEntry PopFront();

 private:
  std::deque<HeldEntry> entries_;
  uint64_t bytes_ = 0;  // of their bodies
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_HELD_ENTRIES_H_
