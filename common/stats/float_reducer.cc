// The fused min/max/sum/sum-of-squares pass, in pieces (float_reducer.h).

#include "common/stats/float_reducer.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "common/stats/cpu_features.h"
#include "common/stats/half.h"

namespace tprobe::stats {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The fused fp32 pass is written with GCC/Clang vector types instead of being
// left to the auto-vectoriser: at -O2, GCC 12's "very cheap" cost model
// either leaves such a loop scalar or keeps its accumulators in memory.
template <size_t kBytes>
struct Vec {
  typedef float F __attribute__((vector_size(kBytes)));
  typedef double D __attribute__((vector_size(kBytes)));
};

// A float that may sit at any address and alias any bytes: GCC/Clang's
// sanctioned way to load floats from a std::byte buffer (a chunk's bytes in
// the ring may start anywhere). A typedef, and never deduced with auto,
// which would drop the attributes (and UBSan then reports the loads).
typedef float UnalignedFloat __attribute__((may_alias, aligned(1)));

// Steps of the fused pass over `n` floats at `p` (any alignment; n a
// multiple of 2 * kBytes / 4), continuing from the accumulators in `s`.
// d*d is exact in double for a float d, so whether the compiler fuses the
// multiply-add does not matter. Always inlined, so that it is compiled for
// the caller's target.
template <size_t kBytes>
[[gnu::always_inline]] inline void F32Steps(const std::byte* p, size_t n,
                                            F32Lanes& s) {
  using F = typename Vec<kBytes>::F;
  using D = typename Vec<kBytes>::D;
  constexpr size_t kFloats = kBytes / sizeof(float);
  constexpr size_t kDoubles = kBytes / sizeof(double);
  F min0, max0, min1, max1;
  D sum0, sum1, sum2, sum3, sq0, sq1, sq2, sq3;
  std::memcpy(&min0, s.min[0], kBytes);
  std::memcpy(&min1, s.min[1], kBytes);
  std::memcpy(&max0, s.max[0], kBytes);
  std::memcpy(&max1, s.max[1], kBytes);
  std::memcpy(&sum0, s.sum[0], kBytes);
  std::memcpy(&sum1, s.sum[1], kBytes);
  std::memcpy(&sum2, s.sum[2], kBytes);
  std::memcpy(&sum3, s.sum[3], kBytes);
  std::memcpy(&sq0, s.sq[0], kBytes);
  std::memcpy(&sq1, s.sq[1], kBytes);
  std::memcpy(&sq2, s.sq[2], kBytes);
  std::memcpy(&sq3, s.sq[3], kBytes);
  for (size_t i = 0; i + 2 * kFloats <= n; i += 2 * kFloats) {
    const UnalignedFloat* x =
        reinterpret_cast<const UnalignedFloat*>(p + i * 4);
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
  std::memcpy(s.min[0], &min0, kBytes);
  std::memcpy(s.min[1], &min1, kBytes);
  std::memcpy(s.max[0], &max0, kBytes);
  std::memcpy(s.max[1], &max1, kBytes);
  std::memcpy(s.sum[0], &sum0, kBytes);
  std::memcpy(s.sum[1], &sum1, kBytes);
  std::memcpy(s.sum[2], &sum2, kBytes);
  std::memcpy(s.sum[3], &sum3, kBytes);
  std::memcpy(s.sq[0], &sq0, kBytes);
  std::memcpy(s.sq[1], &sq1, kBytes);
  std::memcpy(s.sq[2], &sq2, kBytes);
  std::memcpy(s.sq[3], &sq3, kBytes);
}

#if defined(__x86_64__)
// 256-bit AVX2 + FMA version, used when the CPU has them (every x86-64 CPU
// since about 2013); the baseline build only assumes SSE2.
[[gnu::target("avx2,fma")]] void F32StepsAvx2(const std::byte* p, size_t n,
                                              F32Lanes& s) {
  F32Steps<32>(p, n, s);
}
#endif

void F32StepsBaseline(const std::byte* p, size_t n, F32Lanes& s) {
  F32Steps<16>(p, n, s);
}

// The lanes of `s` (kFloats floats, kDoubles doubles wide) merged, then the
// `tail` floats at `p` added one by one.
Partial F32Finish(const F32Lanes& s, size_t floats, size_t doubles,
                  const std::byte* p, size_t tail) {
  Partial r;
  for (size_t k = 0; k < floats; ++k) {
    r.Merge({s.min[0][k], s.max[0][k], 0.0, 0.0});
    r.Merge({s.min[1][k], s.max[1][k], 0.0, 0.0});
  }
  for (size_t k = 0; k < doubles; ++k) {
    const double sum =
        (s.sum[0][k] + s.sum[1][k]) + (s.sum[2][k] + s.sum[3][k]);
    const double sq = (s.sq[0][k] + s.sq[1][k]) + (s.sq[2][k] + s.sq[3][k]);
    r.Merge({kInf, -kInf, sum, sq});
  }
  for (size_t i = 0; i < tail; ++i) {
    r.Add(reinterpret_cast<const UnalignedFloat*>(p)[i]);
  }
  return r;
}

// The whole fused pass over `n` floats at `p`.
Partial F32Pass(const std::byte* p, size_t n, bool avx2) {
  F32Lanes lanes;
  const size_t unit = avx2 ? 16 : 8;
  const size_t steps = n / unit * unit;
#if defined(__x86_64__)
  if (avx2) {
    F32StepsAvx2(p, steps, lanes);
    return F32Finish(lanes, 8, 4, p + steps * 4, n - steps);
  }
#endif
  F32StepsBaseline(p, steps, lanes);
  return F32Finish(lanes, 4, 2, p + steps * 4, n - steps);
}

template <typename T, typename ToFloat>
void Convert(const std::byte* p, size_t count, float* out, ToFloat to_float) {
  for (size_t k = 0; k < count; ++k) {
    T v;
    std::memcpy(&v, p + k * sizeof(T), sizeof(T));
    out[k] = to_float(v);
  }
}

template <typename T>
void Cast(const std::byte* p, size_t count, float* out) {
  Convert<T>(p, count, out, [](T v) { return static_cast<float>(v); });
}

}  // namespace

F32Lanes::F32Lanes() {
  for (size_t v = 0; v < 2; ++v) {
    std::fill(std::begin(min[v]), std::end(min[v]), kInf);
    std::fill(std::begin(max[v]), std::end(max[v]), -kInf);
  }
}

FloatReducer::FloatReducer(DType dtype)
    : dtype_(dtype), element_size_(ElementSize(dtype)) {
  assert(dtype != DType::kBool && dtype != DType::kComplex64 &&
         dtype != DType::kComplex128);
#if defined(__x86_64__)
  avx2_ = CpuHasAvx2Fma();
#endif
  unit_ = dtype == DType::kFloat32 ? (avx2_ ? 16 : 8) : kConvertBlock;
}

void FloatReducer::Add(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;  // its data() may be null, which memcpy refuses
  const std::byte* p = bytes.data();
  size_t n = bytes.size();
  const size_t unit_bytes = unit_ * element_size_;
  if (carried_ != 0) {
    const size_t take = std::min(unit_bytes - carried_, n);
    std::memcpy(carry_ + carried_, p, take);
    carried_ += take;
    p += take;
    n -= take;
    if (carried_ < unit_bytes) return;
    carried_ = 0;
    if (dtype_ == DType::kFloat32) {
      AddF32(carry_, unit_);
    } else {
      ReduceBlock(carry_, unit_);
    }
  }
  const size_t whole = n / unit_bytes * unit_bytes;
  if (dtype_ == DType::kFloat32) {
    AddF32(p, whole / element_size_);
  } else {
    AddConverted(p, whole / element_size_);
  }
  std::memcpy(carry_, p + whole, n - whole);
  carried_ = n - whole;
}

void FloatReducer::AddF32(const std::byte* p, size_t n) {
#if defined(__x86_64__)
  if (avx2_) {
    F32StepsAvx2(p, n, lanes_);
    return;
  }
#endif
  F32StepsBaseline(p, n, lanes_);
}

void FloatReducer::AddConverted(const std::byte* p, size_t n) {
  for (size_t done = 0; done < n; done += unit_) {
    ReduceBlock(p + done * element_size_, std::min(unit_, n - done));
  }
}

void FloatReducer::ReduceBlock(const std::byte* p, size_t count) {
  alignas(64) float buf[kConvertBlock];
  switch (dtype_) {
    case DType::kFloat16:
      Convert<uint16_t>(p, count, buf, HalfToFloat);
      break;
    case DType::kBFloat16:
      Convert<uint16_t>(p, count, buf, BFloat16ToFloat);
      break;
    case DType::kFloat64:
      Cast<double>(p, count, buf);
      break;
    case DType::kInt8:
      Cast<int8_t>(p, count, buf);
      break;
    case DType::kUInt8:
      Cast<uint8_t>(p, count, buf);
      break;
    case DType::kInt16:
      Cast<int16_t>(p, count, buf);
      break;
    case DType::kInt32:
      Cast<int32_t>(p, count, buf);
      break;
    case DType::kInt64:
      Cast<int64_t>(p, count, buf);
      break;
    case DType::kFloat32:
    case DType::kBool:
    case DType::kComplex64:
    case DType::kComplex128:
      assert(false && "FloatReducer: not a converted dtype");
      return;
  }
  total_.Merge(F32Pass(reinterpret_cast<const std::byte*>(buf), count, avx2_));
}

Partial FloatReducer::Finish() {
  assert(carried_ % element_size_ == 0 &&
         "FloatReducer: the bytes end inside an element");
  if (dtype_ == DType::kFloat32) {
    return F32Finish(lanes_, avx2_ ? 8 : 4, avx2_ ? 4 : 2, carry_,
                     carried_ / element_size_);
  }
  if (carried_ != 0) ReduceBlock(carry_, carried_ / element_size_);
  carried_ = 0;
  return total_;
}

}  // namespace tprobe::stats
