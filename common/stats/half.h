#ifndef TPROBE_COMMON_STATS_HALF_H_
#define TPROBE_COMMON_STATS_HALF_H_

// Conversions between IEEE binary16 (float16), bfloat16 and the wider binary
// floating-point types. Both 16-bit formats are handled as raw uint16_t bits,
// exactly as they lie in a tensor's bytes.
//
// Widening (HalfToFloat, BFloat16ToFloat) is always exact. Narrowing rounds
// to nearest, ties to even, the way torch's .half() / .bfloat16() do: values
// beyond the largest finite value become infinity, NaN stays NaN (quiet) and
// keeps its sign.
//
// Thread safety: every function here is pure and may be called from any
// thread. Narrowing from double assumes the default floating-point rounding
// mode (round to nearest), which tprobe never changes.

#include <bit>
#include <cmath>
#include <cstdint>

namespace tprobe::stats {

// Exact float value of the float16 bits `h` (subnormals, infinities and NaN
// included).
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) {  // Inf or NaN: keep the payload.
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  }
  if (exp == 0) {  // Zero or subnormal: mant * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mant) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  // Normal: rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Exact float value of the bfloat16 bits `b` (the upper half of a float).
inline float BFloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Rounds `v` to the nearest value of a binary format with `fraction_bits`
// stored fraction bits and normal exponents in [min_exp, max_exp] (gradual
// underflow below), ties to even. Returns that value as a double, +-inf on
// overflow, and NaN/inf/zero unchanged. Used for formats narrower than double.
inline double RoundToBinaryFormat(double v, int fraction_bits, int min_exp,
                                  int max_exp) {
  if (!std::isfinite(v) || v == 0.0) return v;
  int e = 0;
  std::frexp(v, &e);       // |v| = m * 2^e with m in [0.5, 1).
  const int lead = e - 1;  // Exponent of the leading bit.
  const int quantum = (lead < min_exp ? min_exp : lead) - fraction_bits;
  const double rounded =
      std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  const double max_finite =
      std::ldexp(2.0 - std::ldexp(1.0, -fraction_bits), max_exp);
  if (std::fabs(rounded) > max_finite) return std::copysign(HUGE_VAL, v);
  return rounded;
}

// `v` rounded to float16 precision and range, returned as a double.
inline double RoundToHalf(double v) {
  return RoundToBinaryFormat(v, 10, -14, 15);
}

// `v` rounded to bfloat16 precision and range, returned as a double.
inline double RoundToBFloat16(double v) {
  return RoundToBinaryFormat(v, 7, -126, 127);
}

// The float16 bits nearest to `v` (ties to even). NaN becomes a quiet NaN.
inline uint16_t DoubleToHalf(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
  if (std::isnan(v)) return sign | 0x7e00u;
  const double r = std::fabs(RoundToHalf(v));
  if (std::isinf(r)) return sign | 0x7c00u;
  if (r < 0x1p-14) {  // Subnormal or zero: a multiple of 2^-24.
    return sign | static_cast<uint16_t>(std::ldexp(r, 24));
  }
  int e = 0;
  const double m = std::frexp(r, &e);  // r = m * 2^e, m in [0.5, 1).
  const auto fraction = static_cast<uint16_t>(std::ldexp(m, 11) - 1024.0);
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | fraction;
}

// The float16 bits nearest to `f` (ties to even).
inline uint16_t FloatToHalf(float f) { return DoubleToHalf(f); }

// The bfloat16 bits nearest to `f` (ties to even). NaN becomes a quiet NaN.
inline uint16_t FloatToBFloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry into the exponent is the correct result (up to infinity).
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace tprobe::stats

#endif  // TPROBE_COMMON_STATS_HALF_H_
