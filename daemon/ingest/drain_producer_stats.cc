// Statistics computed by the producer (record::ProducerStatsRecord), bytes
// it copied later (record::ProducerBytesRecord), and the entries held until
// they arrive, in call order (drain.h).

#include <cstdint>
#include <cstring>
#include <optional>

#include "common/stats/crc32.h"
#include "common/stats/xor_checksum.h"
#include "daemon/ingest/drainer.h"

namespace tprobe::daemon {

namespace {

// Collects the tensor refs of an entry body.
class RefCollector : public record::ValueVisitor {
 public:
  explicit RefCollector(std::vector<uint32_t>* refs) : refs_(refs) {}
  void Key(std::string_view) override {}
  void Null() override {}
  void Bool(bool) override {}
  void Int(int64_t) override {}
  void Float(double) override {}
  void Str(std::string_view) override {}
  void TensorRef(uint32_t ref) override { refs_->push_back(ref); }
  void BeginList() override {}
  void BeginDict() override {}
  void BeginTyped(std::string_view) override {}
  void End() override {}

 private:
  std::vector<uint32_t>* refs_;
};

// The statistic `kind` and `bits` spell (record::StatKind).
stats::Stat StatOf(uint8_t kind, uint64_t bits) {
  switch (static_cast<record::StatKind>(kind)) {
    case record::StatKind::kBool:
      return bits != 0;
    case record::StatKind::kInt:
      return static_cast<int64_t>(bits);
    case record::StatKind::kFloat: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case record::StatKind::kNull:
    case record::StatKind::kXor:
    case record::StatKind::kCrc:
      break;
  }
  return std::monostate{};
}

// Whether `kind` is one a statistic of a `dtype` tensor can have: booleans
// only for bool tensors, integers only for integer tensors (Max and Min, or
// a 0-d tensor's value), never a float for a bool tensor, and never a
// checksum.
bool KindFits(DType dtype, uint8_t kind) {
  const auto k = static_cast<record::StatKind>(kind);
  if (k == record::StatKind::kXor || k == record::StatKind::kCrc) return false;
  if (dtype == DType::kBool) {
    return k == record::StatKind::kBool || k == record::StatKind::kNull;
  }
  if (k == record::StatKind::kBool) return false;
  if (k != record::StatKind::kInt) return true;
  switch (dtype) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return true;
    default:
      return false;
  }
}

// Whether `r` sets its first value alone, as a checksum record does.
bool OnlyFirstSet(const record::ProducerStatsRecord& r) {
  constexpr auto kNull = static_cast<uint8_t>(record::StatKind::kNull);
  return r.kinds[1] == kNull && r.kinds[2] == kNull && r.kinds[3] == kNull;
}

// summary_mode xor's checksum that `r` carries (stats::XorChecksum): a word
// for any tensor, or the value of a 0-d floating one; nullopt when it
// carries anything else.
std::optional<stats::XorSum> XorSumOf(const TensorInfo& info,
                                      const record::ProducerStatsRecord& r) {
  if (!OnlyFirstSet(r)) return std::nullopt;
  switch (static_cast<record::StatKind>(r.kinds[0])) {
    case record::StatKind::kXor:
      return stats::XorHex(r.values[0]);
    case record::StatKind::kFloat:
      // Only for 0-d tensors that are neither bool nor integer.
      if (!info.shape.empty() || info.dtype == DType::kBool ||
          KindFits(info.dtype, static_cast<uint8_t>(record::StatKind::kInt))) {
        return std::nullopt;
      }
      return std::get<double>(StatOf(r.kinds[0], r.values[0]));
    default:
      return std::nullopt;
  }
}

// summary_mode md5's CRC-32 that `r` carries; nullopt when it carries
// anything else.
std::optional<uint32_t> CrcOf(const record::ProducerStatsRecord& r) {
  if (r.kinds[0] != static_cast<uint8_t>(record::StatKind::kCrc) ||
      !OnlyFirstSet(r) || r.values[0] > UINT32_MAX) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(r.values[0]);
}

}  // namespace

bool Drainer::TargetRead(const record::Decoded& d) const {
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
  if (ring >= state_.rings.size()) return true;  // corrupt: say so
  return state_.rings[ring].tensors.contains(ref);
}

WaitingTensor* Drainer::AwaitingTarget(uint32_t ring_index, uint32_t ring,
                                       uint32_t ref, const char* what) {
  if (ring >= state_.rings.size()) {
    Corrupt(ring_index, std::string(what) + " name ring " +
                            std::to_string(ring) + " of " +
                            std::to_string(state_.rings.size()));
    return nullptr;
  }
  RingState& target = state_.rings[ring];
  auto it = target.tensors.find(ref);
  if (it == target.tensors.end() || !it->second.awaiting_stats()) {
    Corrupt(ring_index, std::string(what) + " for tensor " +
                            std::to_string(ref) + " of ring " +
                            std::to_string(ring) +
                            ", which does not wait for them");
    return nullptr;
  }
  return &it->second;
}

void Drainer::Completed(WaitingTensor& waiting) {
  waiting.info.complete = !waiting.bytes_lost;
  --state_.awaiting_stats;
  ReleaseHeldEntries(/*through_step=*/std::nullopt);
}

void Drainer::OnProducerBytes(RingState& ring,
                              const record::ProducerBytesView& v) {
  const record::ProducerBytesRecord& r = v.bytes;
  const auto ring_index = static_cast<uint32_t>(&ring - state_.rings.data());
  WaitingTensor* waiting =
      AwaitingTarget(ring_index, r.ring, r.ref, "producer bytes");
  if (waiting == nullptr) return;
  if (!waiting->bytes_due || r.nbytes != waiting->nbytes) {
    Corrupt(ring_index,
            "producer bytes for tensor " + std::to_string(r.ref) +
                (waiting->bytes_due
                     ? " state " + std::to_string(r.nbytes) + " bytes of " +
                           std::to_string(waiting->nbytes)
                     : " that awaits none"));
    return;
  }
  PendingTensor pending;
  pending.meta.ref = r.ref;
  pending.meta.nbytes = r.nbytes;
  pending.record = ring.records_read;
  pending.target = BytesTarget{r.ring, r.ref};
  OpenPending(ring, std::move(pending));
}

void Drainer::DeliverBytes(uint32_t ring_index, PendingTensor& p,
                           bool complete) {
  RingState& target = state_.rings[p.target->ring];
  auto it = target.tensors.find(p.target->ref);
  // Its step was settled while the chunks came (they stopped early).
  if (it == target.tensors.end() || !it->second.bytes_due) return;
  WaitingTensor& waiting = it->second;
  waiting.bytes_due = false;
  if (!complete || p.broken) {
    waiting.bytes_lost = true;
  } else {
    KeepBytes(waiting.info, p.bytes);
    AddWaitingBytes(target, waiting.info.bytes.size(), ring_index);
    if (state_.broken) return;
  }
  if (!waiting.awaiting_stats()) Completed(waiting);
}

void Drainer::OnProducerStats(uint32_t ring_index,
                              const record::ProducerStatsView& v) {
  const record::ProducerStatsRecord& r = v.stats;
  WaitingTensor* found =
      AwaitingTarget(ring_index, r.ring, r.ref, "producer statistics");
  if (found == nullptr) return;
  WaitingTensor& waiting = *found;
  TensorInfo& info = waiting.info;
  const config::SummaryMode summary = state_.config.summary_mode;
  const auto dtype_name = state_.assembler.options().framework->dtype_name;
  if (summary == config::SummaryMode::kMd5 &&
      r.kinds[0] == static_cast<uint8_t>(record::StatKind::kCrc)) {
    std::optional<uint32_t> crc = CrcOf(r);
    if (!crc || !waiting.crc_due) {
      Corrupt(ring_index,
              "producer statistics for tensor " + std::to_string(r.ref) +
                  (crc ? " bring a second CRC-32" : " are not a CRC-32"));
      return;
    }
    info.crc = *crc;
    info.md5 = stats::Crc32Hex(*crc);
    waiting.crc_due = false;
  } else if (!waiting.stats_due) {
    Corrupt(ring_index, "producer statistics for tensor " +
                            std::to_string(r.ref) + " came twice");
    return;
  } else if (summary == config::SummaryMode::kXor) {
    std::optional<stats::XorSum> sum = XorSumOf(info, r);
    if (!sum) {
      Corrupt(ring_index, "producer statistics for tensor " +
                              std::to_string(r.ref) +
                              " are not an xor checksum of a " +
                              std::string(dtype_name(info.dtype)) + " tensor");
      return;
    }
    info.xor_sum = std::move(*sum);
    waiting.stats_due = false;
  } else {
    for (uint8_t kind : r.kinds) {
      if (!KindFits(info.dtype, kind)) {
        Corrupt(ring_index, "producer statistics of kind " +
                                std::to_string(kind) + " for a " +
                                std::string(dtype_name(info.dtype)) +
                                " tensor");
        return;
      }
    }
    info.stats.max = StatOf(r.kinds[0], r.values[0]);
    info.stats.min = StatOf(r.kinds[1], r.values[1]);
    info.stats.mean = StatOf(r.kinds[2], r.values[2]);
    info.stats.norm = StatOf(r.kinds[3], r.values[3]);
    waiting.stats_due = false;
  }
  if (!waiting.awaiting_stats()) Completed(waiting);
}

bool Drainer::HoldOrApply(uint32_t ring_index, const record::EntryView& v) {
  if (state_.awaiting_stats == 0 && state_.held_entries.empty()) {
    return OnEntry(ring_index, v);
  }
  HeldEntry held;
  held.ring = ring_index;
  held.entry = v.entry;
  RefCollector collector(&held.refs);
  if (Status s = record::ReadEntryBody(v.body, collector); !s.ok()) {
    Corrupt(ring_index, s.message());
    return false;
  }
  if (state_.held_entries.empty() && Ready(held)) {
    return OnEntry(ring_index, v);
  }
  const ProducerLimits& limits = producer_.limits();
  if (state_.held_entries.size() >= limits.max_held_entries ||
      state_.held_entry_bytes + v.body.size() > limits.max_held_entry_bytes) {
    Corrupt(ring_index, "more than " + std::to_string(limits.max_held_entries) +
                            " entries (or " +
                            std::to_string(limits.max_held_entry_bytes) +
                            " bytes) wait for producer statistics");
    return false;
  }
  held.body.assign(v.body.begin(), v.body.end());
  state_.held_entry_bytes += held.body.size();
  state_.held_entries.push_back(std::move(held));
  return true;
}

bool Drainer::Ready(const HeldEntry& held) const {
  const RingState& ring = state_.rings[held.ring];
  for (uint32_t ref : held.refs) {
    auto it = ring.tensors.find(ref);
    if (it != ring.tensors.end() && it->second.awaiting_stats()) return false;
  }
  return true;
}

void Drainer::ReleaseHeldEntries(std::optional<uint32_t> through_step) {
  while (!state_.held_entries.empty() && !state_.broken) {
    HeldEntry& front = state_.held_entries.front();
    if (!Ready(front) && (!through_step || front.entry.step > *through_step)) {
      return;
    }
    // Its missing statistics (a settled step) render as an incomplete
    // tensor, which marks the step incomplete.
    HeldEntry held = std::move(front);
    state_.held_entries.pop_front();
    state_.held_entry_bytes -= held.body.size();
    OnEntry(held.ring, record::EntryView{held.entry, held.body});
  }
}

void ReleaseHeldEntries(const Producer& producer, ProducerState& state,
                        spdlog::logger& log, uint32_t through_step) {
  Drainer drainer(producer, state, log);
  drainer.ReleaseHeldEntries(through_step);
}

}  // namespace tprobe::daemon
