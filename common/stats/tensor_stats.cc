#include "common/stats/tensor_stats.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "common/stats/cpu_features.h"
#include "common/stats/half.h"

namespace tprobe::stats {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Partial result of the fused pass. The sum of squares is NaN exactly when
// some element was NaN (x*x is never -inf), so no separate NaN flag is kept.
struct Partial {
  float min = kInf;
  float max = -kInf;
  double sum = 0.0;
  double sum_sq = 0.0;

  void Add(float x) {
    min = x < min ? x : min;
    max = x > max ? x : max;
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  void Merge(const Partial& o) {
    min = o.min < min ? o.min : min;
    max = o.max > max ? o.max : max;
    sum += o.sum;
    sum_sq += o.sum_sq;
  }
};

// The fused fp32 pass is written with GCC/Clang vector types instead of being
// left to the auto-vectoriser: at -O2, GCC 12's "very cheap" cost model
// either leaves such a loop scalar or keeps its accumulators in memory.
template <size_t kBytes>
struct Vec {
  typedef float F __attribute__((vector_size(kBytes)));
  typedef double D __attribute__((vector_size(kBytes)));
};

// A float that may sit at any address and alias any bytes: GCC/Clang's
// sanctioned way to load floats from a std::byte buffer.
using UnalignedFloat [[gnu::may_alias, gnu::aligned(1)]] = float;

// One fused pass over `n` floats at `p` (any alignment): min, max, sum and
// sum of squares, with two float vectors of min/max lanes and four double
// vectors each of sum and sum-of-squares lanes. d*d is exact in double for a
// float d, so whether the compiler fuses the multiply-add does not matter.
// Always inlined, so that it is compiled for the caller's target.
template <size_t kBytes>
[[gnu::always_inline]] inline Partial AccumulateF32Lanes(const std::byte* p,
                                                         size_t n) {
  using F = typename Vec<kBytes>::F;
  using D = typename Vec<kBytes>::D;
  constexpr size_t kFloats = kBytes / sizeof(float);
  constexpr size_t kDoubles = kBytes / sizeof(double);
  F min0, max0;
  for (size_t k = 0; k < kFloats; ++k) {
    min0[k] = kInf;
    max0[k] = -kInf;
  }
  F min1 = min0, max1 = max0;
  D sum0 = {}, sum1 = {}, sum2 = {}, sum3 = {};
  D sq0 = {}, sq1 = {}, sq2 = {}, sq3 = {};
  size_t i = 0;
  for (; i + 2 * kFloats <= n; i += 2 * kFloats) {
    const auto* x = reinterpret_cast<const UnalignedFloat*>(p + i * 4);
    F a, b;
    std::memcpy(&a, x, sizeof(a));
    std::memcpy(&b, x + kFloats, sizeof(b));
    min0 = a < min0 ? a : min0;
    max0 = a > max0 ? a : max0;
    min1 = b < min1 ? b : min1;
    max1 = b > max1 ? b : max1;
    // Widened element by element, which GCC turns into cvtps2pd from memory
    // (__builtin_convertvector goes through 128-bit halves in GCC 12).
    D a0, a1, b0, b1;
#pragma GCC unroll 8
    for (size_t k = 0; k < kDoubles; ++k) {
      a0[k] = x[k];
      a1[k] = x[kDoubles + k];
      b0[k] = x[2 * kDoubles + k];
      b1[k] = x[3 * kDoubles + k];
    }
    sum0 += a0;
    sum1 += a1;
    sum2 += b0;
    sum3 += b1;
    sq0 += a0 * a0;
    sq1 += a1 * a1;
    sq2 += b0 * b0;
    sq3 += b1 * b1;
  }
  Partial r;
  const D sums = (sum0 + sum1) + (sum2 + sum3);
  const D sqs = (sq0 + sq1) + (sq2 + sq3);
  for (size_t k = 0; k < kFloats; ++k) {
    r.Merge({min0[k], max0[k], 0.0, 0.0});
    r.Merge({min1[k], max1[k], 0.0, 0.0});
  }
  for (size_t k = 0; k < kDoubles; ++k) r.Merge({kInf, -kInf, sums[k], sqs[k]});
  for (; i < n; ++i) {
    r.Add(reinterpret_cast<const UnalignedFloat*>(p)[i]);
  }
  return r;
}

#if defined(__x86_64__)
// 256-bit AVX2 + FMA version, used when the CPU has them (every x86-64 CPU
// since about 2013); the baseline build only assumes SSE2.
[[gnu::target("avx2,fma")]] Partial AccumulateF32Avx2(const std::byte* p,
                                                      size_t n) {
  return AccumulateF32Lanes<32>(p, n);
}
#endif

Partial AccumulateF32(const std::byte* p, size_t n) {
#if defined(__x86_64__)
  if (CpuHasAvx2Fma()) {
    return AccumulateF32Avx2(p, n);
  }
#endif
  return AccumulateF32Lanes<16>(p, n);
}

// Converts each element to float with `to_float` (reading ElementSize bytes
// at a time) in cache-sized chunks, and runs the fused pass on every chunk.
template <typename T, typename ToFloat>
Partial AccumulateConverted(const std::byte* p, size_t n, ToFloat to_float) {
  constexpr size_t kChunk = 2048;
  alignas(64) float buf[kChunk];
  Partial total;
  for (size_t base = 0; base < n; base += kChunk) {
    const size_t m = n - base < kChunk ? n - base : kChunk;
    for (size_t k = 0; k < m; ++k) {
      T v;
      std::memcpy(&v, p + (base + k) * sizeof(T), sizeof(T));
      buf[k] = to_float(v);
    }
    total.Merge(AccumulateF32(reinterpret_cast<const std::byte*>(buf), m));
  }
  return total;
}

template <typename T>
Partial AccumulateCastToFloat(const std::byte* p, size_t n) {
  return AccumulateConverted<T>(p, n,
                                [](T v) { return static_cast<float>(v); });
}

// Max/Min/Mean/Norm of a floating tensor from its partial sums; `round`
// narrows a double to the native dtype (float32, float16 or bfloat16).
//
// torch accumulates sum and sum of squares in float32 for all three dtypes
// (CPU and CUDA), so a sum beyond the float32 range makes its Mean or Norm
// infinite even when the final value would fit; the same happens here.
template <typename Round>
TensorStats FloatStats(const Partial& p, size_t n, Round round) {
  if (std::isnan(p.sum_sq)) return {kNaN, kNaN, kNaN, kNaN};
  const bool sum_overflows = std::isinf(static_cast<float>(p.sum));
  const bool sum_sq_overflows = std::isinf(static_cast<float>(p.sum_sq));
  const double mean = sum_overflows ? std::copysign(HUGE_VAL, p.sum)
                                    : round(p.sum / static_cast<double>(n));
  const double norm = sum_sq_overflows ? HUGE_VAL : round(std::sqrt(p.sum_sq));
  return {static_cast<double>(p.max), static_cast<double>(p.min), mean, norm};
}

double RoundToFloat(double v) { return static_cast<float>(v); }

// The value of a single element, as msprobe's .item() would give it.
template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

Stat ScalarValue(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<double>(Load<float>(p));
    case DType::kFloat16:
      return static_cast<double>(HalfToFloat(Load<uint16_t>(p)));
    case DType::kBFloat16:
      return static_cast<double>(BFloat16ToFloat(Load<uint16_t>(p)));
    case DType::kFloat64:
      return Load<double>(p);
    case DType::kInt8:
      return static_cast<int64_t>(Load<int8_t>(p));
    case DType::kUInt8:
      return static_cast<int64_t>(Load<uint8_t>(p));
    case DType::kInt16:
      return static_cast<int64_t>(Load<int16_t>(p));
    case DType::kInt32:
      return static_cast<int64_t>(Load<int32_t>(p));
    case DType::kInt64:
      return Load<int64_t>(p);
    case DType::kBool:
    case DType::kComplex64:
    case DType::kComplex128:
      break;
  }
  assert(false && "ScalarValue: dtype has no scalar value");
  return {};
}

TensorStats BoolStats(std::span<const std::byte> data) {
  bool any = false;
  bool all = true;
  for (std::byte b : data) {
    const bool set = b != std::byte{0};
    any |= set;
    all &= set;
  }
  return {any, all, {}, {}};
}

// max/min/mean of |x| as numpy computes them on x.numpy(): |x| in the
// component type (hypot), and the mean returned in that type too.
template <typename T>
TensorStats ComplexStats(const std::byte* p, size_t n) {
  T min = std::numeric_limits<T>::infinity();
  T max = -min;
  double sum = 0.0;
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    T re, im;
    std::memcpy(&re, p + i * 2 * sizeof(T), sizeof(T));
    std::memcpy(&im, p + i * 2 * sizeof(T) + sizeof(T), sizeof(T));
    const T abs = std::hypot(re, im);
    nan |= std::isnan(abs);
    min = abs < min ? abs : min;
    max = abs > max ? abs : max;
    sum += abs;
  }
  if (nan) return {kNaN, kNaN, kNaN, {}};
  const auto mean = static_cast<T>(sum / static_cast<double>(n));
  return {static_cast<double>(max),
          static_cast<double>(min),
          static_cast<double>(mean),
          {}};
}

// msprobe 26.x's PyTorch statistics of an integer or float64 tensor: Max
// and Min as torch.max/min give them (exact, in the dtype; a NaN makes both
// NaN), no Mean or Norm. `Out` is the Stat kind: int64_t or double.
template <typename T, typename Out>
TensorStats MaxMinStats(const std::byte* p, size_t n) {
  T min = Load<T>(p);
  T max = min;
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    const T v = Load<T>(p + i * sizeof(T));
    if constexpr (std::is_floating_point_v<T>) nan |= std::isnan(v);
    min = v < min ? v : min;
    max = v > max ? v : max;
  }
  if (nan) return {kNaN, kNaN, {}, {}};
  return {static_cast<Out>(max), static_cast<Out>(min), {}, {}};
}

// The PyTorch statistics of a tensor that is neither empty, 0-d, bool nor
// complex, or nullopt for a float32/16 or bf16 one (the same for both
// rules).
std::optional<TensorStats> PyTorchMaxMinStats(DType dtype, const std::byte* p,
                                              size_t n) {
  switch (dtype) {
    case DType::kFloat64:
      return MaxMinStats<double, double>(p, n);
    case DType::kInt8:
      return MaxMinStats<int8_t, int64_t>(p, n);
    case DType::kUInt8:
      return MaxMinStats<uint8_t, int64_t>(p, n);
    case DType::kInt16:
      return MaxMinStats<int16_t, int64_t>(p, n);
    case DType::kInt32:
      return MaxMinStats<int32_t, int64_t>(p, n);
    case DType::kInt64:
      return MaxMinStats<int64_t, int64_t>(p, n);
    default:
      return std::nullopt;
  }
}

}  // namespace

TensorStats ComputeStats(DType dtype, std::span<const int64_t> shape,
                         std::span<const std::byte> data, StatRules rules) {
  const size_t n = ElementCount(shape);
  assert(data.size() == n * ElementSize(dtype) &&
         "ComputeStats: data size does not match shape and dtype");
  const std::byte* p = data.data();

  if (n == 0) return {};
  if (dtype == DType::kBool) return BoolStats(data);
  if (dtype == DType::kComplex64) return ComplexStats<float>(p, n);
  if (dtype == DType::kComplex128) return ComplexStats<double>(p, n);
  if (shape.empty()) {
    const Stat v = ScalarValue(dtype, p);
    return {v, v, v, v};
  }
  if (rules == StatRules::kPyTorch) {
    if (std::optional<TensorStats> stats = PyTorchMaxMinStats(dtype, p, n)) {
      return *stats;
    }
  }

  switch (dtype) {
    case DType::kFloat32:
      return FloatStats(AccumulateF32(p, n), n, RoundToFloat);
    case DType::kFloat16:
      return FloatStats(AccumulateConverted<uint16_t>(p, n, HalfToFloat), n,
                        RoundToHalf);
    case DType::kBFloat16:
      return FloatStats(AccumulateConverted<uint16_t>(p, n, BFloat16ToFloat), n,
                        RoundToBFloat16);
    case DType::kFloat64:
      return FloatStats(AccumulateCastToFloat<double>(p, n), n, RoundToFloat);
    case DType::kInt8:
      return FloatStats(AccumulateCastToFloat<int8_t>(p, n), n, RoundToFloat);
    case DType::kUInt8:
      return FloatStats(AccumulateCastToFloat<uint8_t>(p, n), n, RoundToFloat);
    case DType::kInt16:
      return FloatStats(AccumulateCastToFloat<int16_t>(p, n), n, RoundToFloat);
    case DType::kInt32:
      return FloatStats(AccumulateCastToFloat<int32_t>(p, n), n, RoundToFloat);
    case DType::kInt64:
      return FloatStats(AccumulateCastToFloat<int64_t>(p, n), n, RoundToFloat);
    case DType::kBool:
    case DType::kComplex64:
    case DType::kComplex128:
      break;  // Handled above.
  }
  assert(false && "ComputeStats: unknown dtype");
  return {};
}

}  // namespace tprobe::stats
