#include "common/stats/tensor_stats.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/stats/float_reducer.h"
#include "common/stats/half.h"

namespace tprobe::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Max/Min/Mean/Norm of a floating tensor from its partial sums; `round`
// narrows a double to the native dtype (float32, float16 or bfloat16).
//
// torch accumulates sum and sum of squares in float32 for all three dtypes
// (CPU and CUDA), so a sum beyond the float32 range makes its Mean or Norm
// infinite even when the final value would fit; the same happens here.
TensorStats FloatStats(const Partial& p, size_t n, double (*round)(double)) {
  if (std::isnan(p.sum_sq)) return {kNaN, kNaN, kNaN, kNaN};
  const bool sum_overflows = std::isinf(static_cast<float>(p.sum));
  const bool sum_sq_overflows = std::isinf(static_cast<float>(p.sum_sq));
  const double mean = sum_overflows ? std::copysign(HUGE_VAL, p.sum)
                                    : round(p.sum / static_cast<double>(n));
  const double norm = sum_sq_overflows ? HUGE_VAL : round(std::sqrt(p.sum_sq));
  return {static_cast<double>(p.max), static_cast<double>(p.min), mean, norm};
}

double RoundToFloat(double v) { return static_cast<float>(v); }

// How FloatStats narrows a Mean or Norm of a `dtype` tensor.
auto RoundFor(DType dtype) -> double (*)(double) {
  if (dtype == DType::kFloat16) return RoundToHalf;
  if (dtype == DType::kBFloat16) return RoundToBFloat16;
  return RoundToFloat;
}

// Whether ComputeStats (and StatsStream) reduces a `dtype` tensor of
// `shape` with a FloatReducer: of one or more dimensions, neither bool nor
// complex, and float32, float16 or bfloat16 under kPyTorch (whose float64
// and integer statistics are PyTorchMaxMinStats's).
bool Reduced(DType dtype, std::span<const int64_t> shape, StatRules rules) {
  if (shape.empty() || dtype == DType::kBool || dtype == DType::kComplex64 ||
      dtype == DType::kComplex128) {
    return false;
  }
  return rules == StatRules::kMindSpore || dtype == DType::kFloat32 ||
         dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

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

// The PyTorch statistics of an integer or float64 tensor that is neither
// empty nor 0-d.
TensorStats PyTorchMaxMinStats(DType dtype, const std::byte* p, size_t n) {
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
      assert(false && "PyTorchMaxMinStats: a dtype FloatReducer reduces");
      return {};
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
  if (Reduced(dtype, shape, rules)) {
    FloatReducer reducer(dtype);
    reducer.Add(data);
    return FloatStats(reducer.Finish(), n, RoundFor(dtype));
  }
  if (dtype == DType::kBool) return BoolStats(data);
  if (dtype == DType::kComplex64) return ComplexStats<float>(p, n);
  if (dtype == DType::kComplex128) return ComplexStats<double>(p, n);
  if (shape.empty()) {
    const Stat v = ScalarValue(dtype, p);
    return {v, v, v, v};
  }
  return PyTorchMaxMinStats(dtype, p, n);
}

StatsStream::StatsStream(DType dtype, std::span<const int64_t> shape,
                         StatRules rules)
    : dtype_(dtype),
      shape_(shape.begin(), shape.end()),
      rules_(rules),
      elements_(ElementCount(shape)) {
  if (elements_ != 0 && Reduced(dtype, shape, rules)) {
    reducer_ = std::make_unique<FloatReducer>(dtype);
  }
}

StatsStream::~StatsStream() = default;
StatsStream::StatsStream(StatsStream&&) noexcept = default;
StatsStream& StatsStream::operator=(StatsStream&&) noexcept = default;

void StatsStream::Add(std::span<const std::byte> bytes) {
  if (reducer_) {
    reducer_->Add(bytes);
  } else {
    kept_.insert(kept_.end(), bytes.begin(), bytes.end());
  }
}

TensorStats StatsStream::Finish() {
  if (!reducer_) return ComputeStats(dtype_, shape_, kept_, rules_);
  return FloatStats(reducer_->Finish(), elements_, RoundFor(dtype_));
}

}  // namespace tprobe::stats
