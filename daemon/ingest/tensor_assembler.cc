// A rank's tensors from their records to their Entry
// (tensor_assembler.h).

#include "daemon/ingest/tensor_assembler.h"

#include <algorithm>
#include <string>

#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"
#include "common/stats/xor_checksum.h"
#include "daemon/ingest/producer_stats.h"

namespace tprobe::daemon {

using Outcome = TensorAssembler::Outcome;

Result<Outcome> TensorAssembler::OnTensor(uint32_t ring_index,
                                          record::TensorView& v,
                                          uint64_t record,
                                          const TensorRules& rules) {
  Ring& ring = rings_[ring_index];
  if (ring.tensors.size() >= rules.limits.max_waiting_tensors) {
    return Status::Error("more than " +
                         std::to_string(rules.limits.max_waiting_tensors) +
                         " tensors without an entry");
  }
  if ((v.tensor.flags & record::kTensorStatsByProducer) != 0) {
    // No chunks: it waits for its ProducerStats records (and its
    // ProducerBytes), incomplete until then.
    WaitingTensor waiting;
    waiting.record = record;
    waiting.info.dtype = v.dtype;
    waiting.info.shape = std::move(v.shape);
    waiting.info.requires_grad = v.tensor.requires_grad != 0;
    waiting.stats_due = true;
    waiting.crc_due = rules.summary_mode == config::SummaryMode::kMd5;
    waiting.bytes_due = (v.tensor.flags & record::kTensorBytesByProducer) != 0;
    waiting.nbytes = v.tensor.nbytes;
    Replace(ring, v.tensor.ref) = std::move(waiting);
    ++awaiting_;
    return Outcome::kApplied;
  }
  PendingTensor pending;
  pending.meta = v.tensor;
  pending.record = record;
  pending.info.dtype = v.dtype;
  pending.info.shape = std::move(v.shape);
  pending.info.requires_grad = v.tensor.requires_grad != 0;
  if (!rules.keep_bytes && rules.summary_mode != config::SummaryMode::kXor &&
      v.tensor.nbytes >= kStreamStatsBytes &&
      v.tensor.nbytes <= rules.limits.max_tensor_bytes) {
    pending.stream.emplace(pending.info.dtype, pending.info.shape,
                           rules.framework->stat_rules);
  }
  return OpenPending(ring_index, std::move(pending), rules);
}

Result<Outcome> TensorAssembler::OpenPending(uint32_t ring_index,
                                             PendingTensor pending,
                                             const TensorRules& rules) {
  const uint64_t nbytes = pending.meta.nbytes;
  if (nbytes > rules.limits.max_tensor_bytes) {
    // Never buffered: its chunks are skipped and it stays incomplete.
    pending.broken = true;
  } else if (!pending.stream) {
    pending.bytes.reserve(std::min<uint64_t>(nbytes, kMaxPendingReserve));
  }
  rings_[ring_index].pending = std::move(pending);
  if (nbytes == 0) return Close(ring_index, /*complete=*/true, rules);
  return Outcome::kApplied;
}

WaitingTensor& TensorAssembler::Replace(Ring& ring, uint32_t ref) {
  auto [it, added] = ring.tensors.try_emplace(ref);
  if (!added) {
    ring.waiting_bytes -= it->second.info.bytes.size();
    if (it->second.awaiting_stats()) --awaiting_;
  }
  return it->second;
}

void TensorAssembler::KeepBytes(TensorInfo& info, std::vector<std::byte>& bytes,
                                const TensorRules& rules) {
  const bool md5 = rules.summary_mode == config::SummaryMode::kMd5;
  if (md5 || rules.keep_bytes) info.crc = stats::Crc32(bytes);
  if (rules.keep_bytes) info.bytes = std::move(bytes);
}

Status TensorAssembler::AddWaitingBytes(Ring& ring, uint64_t n,
                                        const TensorRules& rules) {
  ring.waiting_bytes += n;
  if (ring.waiting_bytes > rules.limits.max_waiting_bytes) {
    return Status::Error("tensors waiting for their entry hold more than " +
                         std::to_string(rules.limits.max_waiting_bytes) +
                         " bytes");
  }
  return Status::Ok();
}

Result<Outcome> TensorAssembler::OnChunk(uint32_t ring_index,
                                         const record::ChunkView& v,
                                         const TensorRules& rules) {
  Ring& ring = rings_[ring_index];
  if (!ring.pending || ring.pending->meta.ref != v.chunk.ref) {
    return Outcome::kStrayChunk;
  }
  PendingTensor& p = *ring.pending;
  if (p.broken) return Outcome::kApplied;
  if (v.chunk.offset != p.received ||
      v.bytes.size() > p.meta.nbytes - p.received) {
    p.broken = true;  // a chunk went missing: the tensor cannot complete
    return Outcome::kApplied;
  }
  if (p.stream) {
    p.stream->Add(v.bytes);
    if (rules.summary_mode == config::SummaryMode::kMd5) {
      p.crc = stats::Crc32(v.bytes, p.crc);
    }
  } else {
    p.bytes.insert(p.bytes.end(), v.bytes.begin(), v.bytes.end());
  }
  p.received += v.bytes.size();
  if (p.received == p.meta.nbytes) {
    return Close(ring_index, /*complete=*/true, rules);
  }
  return Outcome::kApplied;
}

Result<Outcome> TensorAssembler::ClosePending(uint32_t ring_index,
                                              const TensorRules& rules) {
  if (!rings_[ring_index].pending) return Outcome::kApplied;
  return Close(ring_index, /*complete=*/false, rules);
}

Result<Outcome> TensorAssembler::Close(uint32_t ring_index, bool complete,
                                       const TensorRules& rules) {
  Ring& ring = rings_[ring_index];
  PendingTensor p = std::move(*ring.pending);
  ring.pending.reset();
  if (p.target) return DeliverBytes(p, complete, rules);
  TensorInfo info = std::move(p.info);
  info.complete = complete;
  if (complete && p.stream) {
    info.stats = p.stream->Finish();
    if (rules.summary_mode == config::SummaryMode::kMd5) {
      info.crc = p.crc;
      info.md5 = stats::Crc32Hex(info.crc);
    }
  } else if (complete) {
    info.stats = stats::ComputeStats(info.dtype, info.shape, p.bytes,
                                     rules.framework->stat_rules);
    if (rules.summary_mode == config::SummaryMode::kXor) {
      info.xor_sum = stats::XorChecksum(info.dtype, info.shape, p.bytes);
    }
    KeepBytes(info, p.bytes, rules);
    if (rules.summary_mode == config::SummaryMode::kMd5) {
      info.md5 = stats::Crc32Hex(info.crc);
    }
  }
  // A ref sent again replaces the tensor that waited under it.
  const uint64_t kept = info.bytes.size();
  Replace(ring, p.meta.ref) = WaitingTensor{p.record, std::move(info)};
  if (Status s = AddWaitingBytes(ring, kept, rules); !s.ok()) return s;
  return Outcome::kApplied;
}

void TensorAssembler::Forget(uint32_t ring_index,
                             const std::vector<uint32_t>* refs) {
  Ring& ring = rings_[ring_index];
  if (refs == nullptr) {
    for (const auto& [ref, t] : ring.tensors) {
      if (t.awaiting_stats()) --awaiting_;
    }
    ring.tensors.clear();
    ring.waiting_bytes = 0;
    return;
  }
  for (uint32_t ref : *refs) {
    auto it = ring.tensors.find(ref);
    if (it == ring.tensors.end()) continue;
    ring.waiting_bytes -= it->second.info.bytes.size();
    if (it->second.awaiting_stats()) --awaiting_;
    ring.tensors.erase(it);
  }
}

uint64_t TensorAssembler::ForgetBefore(uint32_t ring_index, uint64_t record) {
  Ring& ring = rings_[ring_index];
  uint64_t forgotten = 0;
  for (auto it = ring.tensors.begin(); it != ring.tensors.end();) {
    if (it->second.record >= record) {
      ++it;
      continue;
    }
    ring.waiting_bytes -= it->second.info.bytes.size();
    if (it->second.awaiting_stats()) --awaiting_;
    it = ring.tensors.erase(it);
    ++forgotten;
  }
  return forgotten;
}

const TensorInfo* TensorAssembler::Find(uint32_t ring, uint32_t ref) const {
  const auto& tensors = rings_[ring].tensors;
  auto it = tensors.find(ref);
  return it == tensors.end() ? nullptr : &it->second.info;
}

bool TensorAssembler::Awaits(uint32_t ring, uint32_t ref) const {
  const auto& tensors = rings_[ring].tensors;
  auto it = tensors.find(ref);
  return it != tensors.end() && it->second.awaiting_stats();
}

bool TensorAssembler::TargetRead(const record::Decoded& d) const {
  uint32_t ring, ref;
  if (const auto* stats = std::get_if<record::ProducerStatsView>(&d)) {
    ring = stats->stats.ring;
    ref = stats->stats.ref;
  } else if (const auto* bytes = std::get_if<record::ProducerBytesView>(&d)) {
    ring = bytes->bytes.ring;
    ref = bytes->bytes.ref;
  } else {
    return true;
  }
  if (ring >= rings_.size()) return true;  // corrupt: say so
  return rings_[ring].tensors.contains(ref);
}

Result<WaitingTensor*> TensorAssembler::AwaitingTarget(uint32_t ring,
                                                       uint32_t ref,
                                                       const char* what) {
  if (ring >= rings_.size()) {
    return Status::Error(std::string(what) + " name ring " +
                         std::to_string(ring) + " of " +
                         std::to_string(rings_.size()));
  }
  auto& tensors = rings_[ring].tensors;
  auto it = tensors.find(ref);
  if (it == tensors.end() || !it->second.awaiting_stats()) {
    return Status::Error(
        std::string(what) + " for tensor " + std::to_string(ref) + " of ring " +
        std::to_string(ring) + ", which does not wait for them");
  }
  return &it->second;
}

Outcome TensorAssembler::Completed(WaitingTensor& waiting) {
  waiting.info.complete = !waiting.bytes_lost;
  --awaiting_;
  return Outcome::kCompleted;
}

Result<Outcome> TensorAssembler::OnProducerStats(
    const record::ProducerStatsView& v, const TensorRules& rules) {
  const record::ProducerStatsRecord& r = v.stats;
  Result<WaitingTensor*> waiting =
      AwaitingTarget(r.ring, r.ref, "producer statistics");
  if (!waiting.ok()) return waiting.status();
  if (Status s = ApplyProducerStats(**waiting, r, rules.summary_mode,
                                    *rules.framework);
      !s.ok()) {
    return s;
  }
  if (!(*waiting)->awaiting_stats()) return Completed(**waiting);
  return Outcome::kApplied;
}

Result<Outcome> TensorAssembler::OnProducerBytes(
    uint32_t ring_index, const record::ProducerBytesView& v, uint64_t record,
    const TensorRules& rules) {
  const record::ProducerBytesRecord& r = v.bytes;
  Result<WaitingTensor*> found =
      AwaitingTarget(r.ring, r.ref, "producer bytes");
  if (!found.ok()) return found.status();
  const WaitingTensor& waiting = **found;
  if (!waiting.bytes_due || r.nbytes != waiting.nbytes) {
    return Status::Error(
        "producer bytes for tensor " + std::to_string(r.ref) +
        (waiting.bytes_due ? " state " + std::to_string(r.nbytes) +
                                 " bytes of " + std::to_string(waiting.nbytes)
                           : " that awaits none"));
  }
  PendingTensor pending;
  pending.meta.ref = r.ref;
  pending.meta.nbytes = r.nbytes;
  pending.record = record;
  pending.target = BytesTarget{r.ring, r.ref};
  return OpenPending(ring_index, std::move(pending), rules);
}

Result<Outcome> TensorAssembler::DeliverBytes(PendingTensor& p, bool complete,
                                              const TensorRules& rules) {
  Ring& target = rings_[p.target->ring];
  auto it = target.tensors.find(p.target->ref);
  // Its step was settled while the chunks came (they stopped early).
  if (it == target.tensors.end() || !it->second.bytes_due) {
    return Outcome::kApplied;
  }
  WaitingTensor& waiting = it->second;
  waiting.bytes_due = false;
  if (!complete || p.broken) {
    waiting.bytes_lost = true;
  } else {
    KeepBytes(waiting.info, p.bytes, rules);
    Status s = AddWaitingBytes(target, waiting.info.bytes.size(), rules);
    if (!s.ok()) return s;
  }
  if (!waiting.awaiting_stats()) return Completed(waiting);
  return Outcome::kApplied;
}

}  // namespace tprobe::daemon
