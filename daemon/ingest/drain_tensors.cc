#include <algorithm>

#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"
#include "common/stats/xor_checksum.h"
#include "daemon/ingest/drainer.h"

namespace tprobe::daemon {

void Drainer::OnTensor(RingState& ring, record::TensorView& v) {
  if ((v.tensor.flags & record::kTensorStatsByProducer) != 0) {
    // No chunks: it waits for its ProducerStats records (and its
    // ProducerBytes), incomplete until then (drain_producer_stats.cc).
    WaitingTensor waiting;
    waiting.record = ring.records_read;
    waiting.info.dtype = v.dtype;
    waiting.info.shape = std::move(v.shape);
    waiting.info.requires_grad = v.tensor.requires_grad != 0;
    waiting.stats_due = true;
    waiting.crc_due = state_.config.summary_mode == config::SummaryMode::kMd5;
    waiting.bytes_due = (v.tensor.flags & record::kTensorBytesByProducer) != 0;
    waiting.nbytes = v.tensor.nbytes;
    Replace(ring, v.tensor.ref) = std::move(waiting);
    ++state_.awaiting_stats;
    return;
  }
  PendingTensor pending;
  pending.meta = v.tensor;
  pending.record = ring.records_read;
  pending.info.dtype = v.dtype;
  pending.info.shape = std::move(v.shape);
  pending.info.requires_grad = v.tensor.requires_grad != 0;
  OpenPending(ring, std::move(pending));
}

void Drainer::OpenPending(RingState& ring, PendingTensor pending) {
  const uint64_t nbytes = pending.meta.nbytes;
  if (nbytes > producer_.limits().max_tensor_bytes) {
    // Never buffered: its chunks are skipped and it stays incomplete.
    pending.broken = true;
  } else {
    pending.bytes.reserve(std::min<uint64_t>(nbytes, kMaxPendingReserve));
  }
  ring.pending = std::move(pending);
  if (nbytes == 0) CloseTensor(ring, /*complete=*/true);
}

WaitingTensor& Drainer::Replace(RingState& ring, uint32_t ref) {
  auto [it, added] = ring.tensors.try_emplace(ref);
  if (!added) {
    ring.waiting_bytes -= it->second.info.bytes.size();
    if (it->second.awaiting_stats()) --state_.awaiting_stats;
  }
  return it->second;
}

void Drainer::KeepBytes(TensorInfo& info, std::vector<std::byte>& bytes) {
  const bool md5 = state_.config.summary_mode == config::SummaryMode::kMd5;
  const bool keep = state_.assembler.options().tensor_data;
  if (md5 || keep) info.crc = stats::Crc32(bytes);
  if (keep) info.bytes = std::move(bytes);
}

void Drainer::AddWaitingBytes(RingState& ring, uint64_t n,
                              uint32_t ring_index) {
  ring.waiting_bytes += n;
  if (ring.waiting_bytes > producer_.limits().max_waiting_bytes) {
    Corrupt(ring_index,
            "tensors waiting for their entry hold more than " +
                std::to_string(producer_.limits().max_waiting_bytes) +
                " bytes");
  }
}

void Drainer::OnChunk(RingState& ring, const record::ChunkView& v) {
  if (!ring.pending || ring.pending->meta.ref != v.chunk.ref) {
    log_.debug("producer {}: chunk of tensor {} without its tensor record",
               producer_.client_id(), v.chunk.ref);
    return;
  }
  PendingTensor& p = *ring.pending;
  if (p.broken) return;
  const uint64_t received = p.bytes.size();
  if (v.chunk.offset != received || v.bytes.size() > p.meta.nbytes - received) {
    p.broken = true;  // a chunk went missing: the tensor cannot complete
    return;
  }
  p.bytes.insert(p.bytes.end(), v.bytes.begin(), v.bytes.end());
  if (p.bytes.size() == p.meta.nbytes) CloseTensor(ring, /*complete=*/true);
}

void Drainer::CloseTensor(RingState& ring, bool complete) {
  PendingTensor& p = *ring.pending;
  if (p.target) {
    DeliverBytes(static_cast<uint32_t>(&ring - state_.rings.data()), p,
                 complete);
    ring.pending.reset();
    return;
  }
  TensorInfo info = std::move(p.info);
  info.complete = complete;
  if (complete) {
    info.stats =
        stats::ComputeStats(info.dtype, info.shape, p.bytes,
                            state_.assembler.options().framework->stat_rules);
    if (state_.config.summary_mode == config::SummaryMode::kXor) {
      info.xor_sum = stats::XorChecksum(info.dtype, info.shape, p.bytes);
    }
    KeepBytes(info, p.bytes);
    if (state_.config.summary_mode == config::SummaryMode::kMd5) {
      info.md5 = stats::Crc32Hex(info.crc);
    }
  }
  // A ref sent again replaces the tensor that waited under it.
  const uint64_t kept = info.bytes.size();
  Replace(ring, p.meta.ref) = WaitingTensor{p.record, std::move(info)};
  ring.pending.reset();
  AddWaitingBytes(ring, kept,
                  static_cast<uint32_t>(&ring - state_.rings.data()));
}

void Drainer::Forget(RingState& ring, const std::vector<uint32_t>* refs) {
  if (refs == nullptr) {
    for (const auto& [ref, t] : ring.tensors) {
      if (t.awaiting_stats()) --state_.awaiting_stats;
    }
    ring.tensors.clear();
    ring.waiting_bytes = 0;
    return;
  }
  for (uint32_t ref : *refs) {
    auto it = ring.tensors.find(ref);
    if (it == ring.tensors.end()) continue;
    ring.waiting_bytes -= it->second.info.bytes.size();
    if (it->second.awaiting_stats()) --state_.awaiting_stats;
    ring.tensors.erase(it);
  }
}

void ReleaseSettledTensors(const Producer& producer, ProducerState& state,
                           spdlog::logger& log) {
  uint64_t released = 0;
  for (RingState& ring : state.rings) {
    for (auto it = ring.tensors.begin(); it != ring.tensors.end();) {
      if (it->second.record >= ring.records_settled) {
        ++it;
        continue;
      }
      ring.waiting_bytes -= it->second.info.bytes.size();
      if (it->second.awaiting_stats()) --state.awaiting_stats;
      it = ring.tensors.erase(it);
      ++released;
    }
  }
  if (released > 0) {
    log.debug(
        "producer {} (pid {}, rank {}): released {} tensors no entry referred "
        "to",
        producer.client_id(), producer.pid(), producer.rank(), released);
  }
}

}  // namespace tprobe::daemon
