#include "common/stats/xor_checksum.h"

#include <cstdio>
#include <cstring>

#include "common/stats/tensor_stats.h"

namespace tprobe::stats {

std::string XorHex(uint64_t word) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx",
                static_cast<unsigned long long>(word));
  return text;
}

XorSum XorChecksum(DType dtype, std::span<const int64_t> shape,
                   std::span<const std::byte> data) {
  if (data.empty()) return std::monostate{};
  if (shape.empty()) {
    // The value, as ComputeStats reads a 0-d tensor.
    const Stat value =
        ComputeStats(dtype, shape, data, StatRules::kPyTorch).max;
    if (const bool* b = std::get_if<bool>(&value)) return XorHex(*b ? 1 : 0);
    if (const int64_t* i = std::get_if<int64_t>(&value)) {
      return XorHex(static_cast<uint64_t>(*i));
    }
    if (const double* d = std::get_if<double>(&value)) return *d;
    return std::monostate{};
  }
  uint64_t sum = 0;
  size_t at = 0;
  for (; at + 8 <= data.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, data.data() + at, 8);
    sum ^= word;
  }
  if (at < data.size()) {
    uint64_t word = 0;
    std::memcpy(&word, data.data() + at, data.size() - at);
    sum ^= word;
  }
  return XorHex(sum);
}

}  // namespace tprobe::stats
