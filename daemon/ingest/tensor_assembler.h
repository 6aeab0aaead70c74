#ifndef TPROBE_DAEMON_INGEST_TENSOR_ASSEMBLER_H_
#define TPROBE_DAEMON_INGEST_TENSOR_ASSEMBLER_H_

// A rank's tensors between their Tensor record and the Entry that
// refers to them (drain.h, Tensor and ProducerStats): per ring, the tensor
// being assembled from its chunks and the closed tensors waiting for their
// Entry; and the tensors waiting for the statistics and bytes the rank
// sends later (ProducerStats, ProducerBytes), which may come on another
// ring. Bounded by RankLimits; a bound exceeded, or a record that does
// not fit what waits, is an error, which the drain reports as corruption.
//
// Thread safety: none; part of RankState, guarded by the rank's
// mutex.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/config/config.h"
#include "common/dump/framework.h"
#include "common/record/codec.h"
#include "common/stats/tensor_stats.h"
#include "common/status.h"
#include "daemon/ingest/rank_limits.h"
#include "daemon/output/entry_renderer.h"

namespace tprobe::daemon {

// A pending tensor's bytes are reserved up front only up to this much; a
// larger (or lying) nbytes grows the buffer as chunks really arrive.
inline constexpr size_t kMaxPendingReserve = size_t{64} << 20;

// A tensor of at least this many bytes is reduced chunk by chunk where its
// chunks lie in the ring (stats::StatsStream); a smaller one is gathered
// first, which costs less than a stream's set-up.
inline constexpr size_t kStreamStatsBytes = size_t{64} << 10;

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

// What closing a tensor takes from the rank's config and limits.
struct TensorRules {
  const RankLimits& limits;
  config::SummaryMode summary_mode;
  bool keep_bytes;  // task tensor: the bytes stay for the .npy files
  const dump::Framework* framework;  // statistics rules, dtype names
};

class TensorAssembler {
 public:
  // What a record did besides its own effect.
  enum class Outcome {
    kApplied,
    // A waiting tensor got the last of what it awaited: the entries held
    // for it may go.
    kCompleted,
    // A chunk that no pending tensor of its ring takes.
    kStrayChunk,
  };

  explicit TensorAssembler(size_t rings) : rings_(rings) {}

  // A Tensor record of ring `ring`, the `record`th of the ring. One whose
  // statistics the rank sends waits for them; any other is assembled
  // from the chunks that follow (beyond max_tensor_bytes it is never
  // buffered and stays incomplete; one without bytes closes at once).
  Result<Outcome> OnTensor(uint32_t ring, record::TensorView& v,
                           uint64_t record, const TensorRules& rules);
  // A Chunk record: the next bytes of the ring's pending tensor, which
  // closes complete with its last byte. A chunk out of order leaves it
  // incomplete.
  Result<Outcome> OnChunk(uint32_t ring, const record::ChunkView& v,
                          const TensorRules& rules);
  // A ProducerStats record (of any ring): the statistics of the waiting
  // tensor it names.
  Result<Outcome> OnProducerStats(const record::ProducerStatsView& v,
                                  const TensorRules& rules);
  // A ProducerBytes record of ring `ring`: the ring's chunks that follow
  // are the bytes of the waiting tensor it names.
  Result<Outcome> OnProducerBytes(uint32_t ring,
                                  const record::ProducerBytesView& v,
                                  uint64_t record, const TensorRules& rules);
  // Closes the ring's pending tensor, if any, incomplete: a record other
  // than a chunk came before all its bytes.
  Result<Outcome> ClosePending(uint32_t ring, const TensorRules& rules);

  // Whether the tensor a ProducerStats or ProducerBytes record completes
  // has been read (a ring out of range counts as read: applying the record
  // reports it); true for any other record.
  bool TargetRead(const record::Decoded& d) const;

  // The closed tensor `ref` of `ring`, or null.
  const TensorInfo* Find(uint32_t ring, uint32_t ref) const;
  // Whether tensor `ref` of `ring` waits for producer statistics.
  bool Awaits(uint32_t ring, uint32_t ref) const;
  // Tensors (of every ring) waiting for producer statistics.
  uint64_t awaiting() const { return awaiting_; }

  // Forgets the closed tensors of `ring` that `refs` names (those it names
  // twice or not at all are skipped); all of them when `refs` is null.
  void Forget(uint32_t ring, const std::vector<uint32_t>* refs);
  // Forgets the closed tensors of `ring` whose Tensor record came before
  // its `record`th. Returns how many.
  uint64_t ForgetBefore(uint32_t ring, uint64_t record);

  // The ring's closed tensors, and the bytes they keep.
  size_t waiting(uint32_t ring) const { return rings_[ring].tensors.size(); }
  uint64_t waiting_bytes(uint32_t ring) const {
    return rings_[ring].waiting_bytes;
  }

 private:
  // Where the bytes that a ProducerBytes record opens go: the waiting
  // tensor `ref` of ring `ring`, not this ring's own.
  struct BytesTarget {
    uint32_t ring = 0;
    uint32_t ref = 0;
  };
  // A tensor whose Tensor record (or ProducerBytes record) arrived and
  // whose chunks are still coming.
  struct PendingTensor {
    record::TensorRecord meta;  // ref and nbytes only, for ProducerBytes
    TensorInfo info;            // dtype, shape, requires_grad
    // The bytes, where they are kept (task tensor, summary_mode xor, a
    // ProducerBytes record's, a tensor under kStreamStatsBytes); else
    // reduced as they come (`stream`), so that a chunk is read once, where
    // it lies in the ring.
    std::vector<std::byte> bytes;
    std::optional<stats::StatsStream> stream;
    uint32_t crc = 0;       // of the bytes so far, with `stream` under md5
    uint64_t received = 0;  // bytes so far
    bool broken = false;    // a chunk was out of order: never completes
    uint64_t record = 0;    // its Tensor record's index on the ring
    std::optional<BytesTarget> target;  // ProducerBytes: whose bytes
  };
  struct Ring {
    std::optional<PendingTensor> pending;
    // Closed tensors by ref, until the Entry that refers to them (or their
    // step is settled), and the bytes they keep.
    std::unordered_map<uint32_t, WaitingTensor> tensors;
    uint64_t waiting_bytes = 0;
  };

  Result<Outcome> OpenPending(uint32_t ring, PendingTensor pending,
                              const TensorRules& rules);
  Result<Outcome> Close(uint32_t ring, bool complete, const TensorRules& rules);
  // Close of the bytes a ProducerBytes record opened.
  Result<Outcome> DeliverBytes(PendingTensor& p, bool complete,
                               const TensorRules& rules);
  // The waiting tensor a ProducerStats or ProducerBytes record names, or
  // the error that it names none.
  Result<WaitingTensor*> AwaitingTarget(uint32_t ring, uint32_t ref,
                                        const char* what);
  Outcome Completed(WaitingTensor& waiting);
  // The slot of tensor `ref`; a tensor that waited under the same ref (a
  // ref sent again) leaves the counts first.
  WaitingTensor& Replace(Ring& ring, uint32_t ref);
  // A complete tensor's CRC-32 (summary_mode md5, or bytes kept) and,
  // while they still have to be written as .npy, its bytes (moved from
  // `bytes`).
  static void KeepBytes(TensorInfo& info, std::vector<std::byte>& bytes,
                        const TensorRules& rules);
  // Counts `n` more bytes waiting on `ring`; beyond the bound the stream is
  // corrupt.
  static Status AddWaitingBytes(Ring& ring, uint64_t n,
                                const TensorRules& rules);

  std::vector<Ring> rings_;
  uint64_t awaiting_ = 0;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_TENSOR_ASSEMBLER_H_
