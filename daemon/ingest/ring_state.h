#ifndef TPROBE_DAEMON_INGEST_RING_STATE_H_
#define TPROBE_DAEMON_INGEST_RING_STATE_H_

// What the drain (drain.h) remembers about one ring of a producer between
// records: the tensor being assembled from its chunks, the closed tensors
// waiting for their Entry, the module calls still open and the construct
// nodes held back, and the ring header's counters seen last.
//
// Thread safety: none; it is part of ProducerState, guarded by the
// producer's mutex.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/record/record.h"
#include "common/shm/ring.h"
#include "daemon/output/entry_renderer.h"

namespace tprobe::daemon {

// Where the bytes that a ProducerBytes record opens go: the waiting tensor
// `ref` of ring `ring`, not this ring's own.
struct BytesTarget {
  uint32_t ring = 0;
  uint32_t ref = 0;
};

// A pending tensor's bytes are reserved up front only up to this much; a
// larger (or lying) nbytes grows the buffer as chunks really arrive.
inline constexpr size_t kMaxPendingReserve = size_t{64} << 20;

// A tensor whose Tensor record (or ProducerBytes record) arrived and whose
// chunks are still coming.
struct PendingTensor {
  record::TensorRecord meta;  // ref and nbytes only, for ProducerBytes
  TensorInfo info;            // dtype, shape, requires_grad
  std::vector<std::byte> bytes;
  bool broken = false;  // a chunk was out of order: never completes
  uint64_t record = 0;  // its Tensor record's index on the ring
  std::optional<BytesTarget> target;  // ProducerBytes: whose bytes these are
};

// A closed tensor waiting for the Entry that refers to it. `record` (its
// Tensor record's index on the ring, as RingState::records_read counts)
// places it against the step cuts: once its step is settled no Entry can
// refer to it any more (drain.h ReleaseSettledTensors).
struct WaitingTensor {
  uint64_t record = 0;
  TensorInfo info;
  // Its Tensor record carried record::kTensorStatsByProducer and its
  // ProducerStats records have not all arrived: info.complete is false.
  // Under summary_mode md5 two come, in either order: the statistics and
  // the CRC-32; with record::kTensorBytesByProducer the bytes come too.
  bool awaiting_stats() const { return stats_due || crc_due || bytes_due; }
  bool stats_due = false;   // the statistics (or xor checksum) record
  bool crc_due = false;     // the CRC-32 record (summary_mode md5)
  bool bytes_due = false;   // the ProducerBytes record and its chunks
  uint64_t nbytes = 0;      // the size its Tensor record stated
  bool bytes_lost = false;  // its bytes came in part: it stays incomplete
};

// A module's construct.json node whose CallBegin was seen but which is not
// in its tree yet (drain.h says when it goes in).
struct HeldNode {
  uint32_t step;
  std::string name;
  std::optional<std::string> parent;
};

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
  std::optional<PendingTensor> pending;
  // Closed tensors by ref, until the Entry that refers to them (or their
  // step is settled), and the bytes they keep.
  std::unordered_map<uint32_t, WaitingTensor> tensors;
  uint64_t waiting_bytes = 0;
  SeenCounters seen;
  // Records read from this ring (padding not counted), and how many of
  // them belonged to steps already settled (step_accounting.h).
  uint64_t records_read = 0;
  uint64_t records_settled = 0;
  // Module nodes whose CallBegin was seen and CallEnd not yet (innermost
  // last): the innermost one of its step is the parent of the next
  // construct node. Those still open when their step is finished are the
  // step's unclosed calls (drain.h CloseOpenCalls).
  struct OpenModule {
    uint32_t step;
    std::string name;
  };
  std::vector<OpenModule> open_modules;
  // Module nodes held back, in CallBegin order.
  std::vector<HeldNode> held_nodes;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RING_STATE_H_
