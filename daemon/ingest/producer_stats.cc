// A ProducerStats record's statistics on its waiting tensor
// (producer_stats.h).

#include "daemon/ingest/producer_stats.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "common/stats/crc32.h"
#include "common/stats/xor_checksum.h"

namespace tprobe::daemon {

namespace {
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

Status ApplyProducerStats(WaitingTensor& waiting,
                          const record::ProducerStatsRecord& r,
                          config::SummaryMode summary,
                          const dump::Framework& framework) {
  TensorInfo& info = waiting.info;
  if (summary == config::SummaryMode::kMd5 &&
      r.kinds[0] == static_cast<uint8_t>(record::StatKind::kCrc)) {
    std::optional<uint32_t> crc = CrcOf(r);
    if (!crc || !waiting.crc_due) {
      return Status::Error(
          "producer statistics for tensor " + std::to_string(r.ref) +
          (crc ? " bring a second CRC-32" : " are not a CRC-32"));
    }
    info.crc = *crc;
    info.md5 = stats::Crc32Hex(*crc);
    waiting.crc_due = false;
    return Status::Ok();
  }
  if (!waiting.stats_due) {
    return Status::Error("producer statistics for tensor " +
                         std::to_string(r.ref) + " came twice");
  }
  if (summary == config::SummaryMode::kXor) {
    std::optional<stats::XorSum> sum = XorSumOf(info, r);
    if (!sum) {
      return Status::Error(
          "producer statistics for tensor " + std::to_string(r.ref) +
          " are not an xor checksum of a " +
          std::string(framework.dtype_name(info.dtype)) + " tensor");
    }
    info.xor_sum = std::move(*sum);
    waiting.stats_due = false;
    return Status::Ok();
  }
  for (uint8_t kind : r.kinds) {
    if (!KindFits(info.dtype, kind)) {
      return Status::Error(
          "producer statistics of kind " + std::to_string(kind) + " for a " +
          std::string(framework.dtype_name(info.dtype)) + " tensor");
    }
  }
  info.stats.max = StatOf(r.kinds[0], r.values[0]);
  info.stats.min = StatOf(r.kinds[1], r.values[1]);
  info.stats.mean = StatOf(r.kinds[2], r.values[2]);
  info.stats.norm = StatOf(r.kinds[3], r.values[3]);
  waiting.stats_due = false;
  return Status::Ok();
}

}  // namespace tprobe::daemon
