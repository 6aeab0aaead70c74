// Throughput of the daemon's per-tensor kernels next to the machine's own
// single-thread baselines, in one run so the GB/s can be compared directly:
//   BM_Memcpy        memcpy of 64 MiB (read + write; bytes = 64 MiB)
//   BM_ReadSum       a plain read-and-add loop over 64 MiB of uint64, the
//                    single-core read bandwidth
//   BM_StatsFloat32  ComputeStats on 64 MiB of float32
//   BM_Crc32         Crc32 over 64 MiB
// The targets (docs/architecture.md, section 4) are ratios to these
// baselines.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"

namespace tprobe {
namespace {

constexpr size_t kBytes = size_t{64} << 20;

// 64 MiB of normally distributed float32 values, made once.
const std::vector<float>& Floats() {
  static const std::vector<float> data = [] {
    std::vector<float> v(kBytes / sizeof(float));
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : v) x = dist(rng);
    return v;
  }();
  return data;
}

std::span<const std::byte> FloatBytes() {
  return std::as_bytes(std::span(Floats()));
}

void BM_Memcpy(benchmark::State& state) {
  const std::span<const std::byte> src = FloatBytes();
  std::vector<std::byte> dst(kBytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

void BM_ReadSum(benchmark::State& state) {
  const std::span<const std::byte> src = FloatBytes();
  for (auto _ : state) {
    // Eight independent sums, so the loop is bound by loads, not by the
    // latency of one add chain.
    uint64_t sum[8] = {};
    for (size_t i = 0; i < kBytes; i += sizeof(sum)) {
      uint64_t v[8];
      std::memcpy(v, src.data() + i, sizeof(v));
      for (int k = 0; k < 8; ++k) sum[k] += v[k];
    }
    uint64_t total = 0;
    for (uint64_t s : sum) total += s;
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_ReadSum)->Unit(benchmark::kMillisecond);

void BM_StatsFloat32(benchmark::State& state) {
  const std::span<const std::byte> src = FloatBytes();
  const std::vector<int64_t> shape = {
      static_cast<int64_t>(kBytes / sizeof(float))};
  for (auto _ : state) {
    benchmark::DoNotOptimize(stats::ComputeStats(DType::kFloat32, shape, src,
                                                 stats::StatRules::kPyTorch));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_StatsFloat32)->Unit(benchmark::kMillisecond);

void BM_Crc32(benchmark::State& state) {
  const std::span<const std::byte> src = FloatBytes();
  for (auto _ : state) {
    benchmark::DoNotOptimize(stats::Crc32(src));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_Crc32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tprobe
