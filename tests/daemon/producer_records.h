#ifndef TPROBE_TESTS_DAEMON_PRODUCER_RECORDS_H_
#define TPROBE_TESTS_DAEMON_PRODUCER_RECORDS_H_

// Test helpers that play a producer's statistics thread
// (tprobe.statistics_on): Tensor records that await their statistics and
// bytes, and the ProducerStats and ProducerBytes records that complete
// them (common/record/record.h).

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tests/daemon/ring_records.h"

namespace tprobe::testing {

inline uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// Four float statistics of tensor `ref` of ring `ring`.
inline record::ProducerStatsRecord Stats(uint32_t ring, uint32_t ref,
                                         std::array<double, 4> v) {
  record::ProducerStatsRecord r{};
  r.ring = ring;
  r.ref = ref;
  for (int i = 0; i < 4; ++i) {
    r.kinds[i] = static_cast<uint8_t>(record::StatKind::kFloat);
    r.values[i] = Bits(v[i]);
  }
  return r;
}

inline bool PutStats(RecordWriter& w, const record::ProducerStatsRecord& r) {
  return w.Raw(record::RecordType::kProducerStats,
               std::as_bytes(std::span(&r, 1)));
}

// A Tensor record whose statistics the producer computes (and, with
// record::kTensorBytesByProducer in `flags`, whose bytes it sends).
inline bool AwaitingTensor(RecordWriter& w, uint32_t ref, DType dtype,
                           const std::vector<int64_t>& shape, uint64_t nbytes,
                           uint8_t flags = record::kTensorStatsByProducer) {
  std::vector<std::byte> bytes(record::TensorSize(shape.size()));
  record::PutTensor(bytes.data(), ref, dtype, shape, false, nbytes, flags);
  return w.Raw(record::RecordType::kTensor, bytes);
}

// A ProducerBytes record stating `nbytes`, then `values` in chunks of one
// float each (fewer than stated: the producer dropped the rest).
inline bool PutBytes(RecordWriter& w, uint32_t ring, uint32_t ref,
                     uint64_t nbytes, const std::vector<float>& values) {
  record::ProducerBytesRecord r{};
  r.ring = ring;
  r.ref = ref;
  r.nbytes = nbytes;
  if (!w.Raw(record::RecordType::kProducerBytes,
             std::as_bytes(std::span(&r, 1)))) {
    return false;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!w.Chunk(ref, i * sizeof(float), &values[i], sizeof(float))) {
      return false;
    }
  }
  return true;
}

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_PRODUCER_RECORDS_H_
