#ifndef TPROBE_COMMON_STATS_FLOAT_REDUCER_H_
#define TPROBE_COMMON_STATS_FLOAT_REDUCER_H_

// The fused pass behind the floating statistics of tensor_stats.h: min,
// max, sum and sum of squares of a tensor's elements, each taken as a
// float32 (float16 and bfloat16 widened, float64 and integers cast as
// .float() casts them), fed in pieces of any size, even a piece that ends
// inside an element.
//
// The result does not depend on how the bytes are cut: float32 elements go
// through vector lanes whose state is kept between pieces (the elements
// short of a whole step wait in a carry of a few bytes), the other dtypes
// through blocks of kConvertBlock elements counted from the first element
// (a block cut by a piece boundary waits in the carry). One call with every
// byte is the same computation, operation for operation.
//
// Thread safety: none; one reducer per tensor.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "common/dtype.h"

namespace tprobe::stats {

// Min, max, sum and sum of squares so far. The sum of squares is NaN
// exactly when some element was NaN (x*x is never -inf).
struct Partial {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
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

// The float32 pass's vector accumulators between pieces, wide enough for
// the widest kernel (256 bits): two float vectors each of min and max
// lanes, four double vectors each of sum and sum-of-squares lanes.
struct F32Lanes {
  static constexpr size_t kMaxFloats = 8;
  static constexpr size_t kMaxDoubles = 4;
  float min[2][kMaxFloats];
  float max[2][kMaxFloats];
  double sum[4][kMaxDoubles] = {};
  double sq[4][kMaxDoubles] = {};

  F32Lanes();
};

class FloatReducer {
 public:
  // Elements converted per block for the dtypes other than float32.
  static constexpr size_t kConvertBlock = 2048;

  // REQUIRES: dtype is a floating or integer dtype (not bool or complex).
  explicit FloatReducer(DType dtype);

  // The next bytes of the tensor, in order.
  void Add(std::span<const std::byte> bytes);
  // Everything added so far, as one Partial. REQUIRES: the bytes added
  // end on an element boundary.
  Partial Finish();

 private:
  void AddF32(const std::byte* p, size_t n);
  void AddConverted(const std::byte* p, size_t n);
  // Converts `count` elements at `p` and merges them as one block.
  void ReduceBlock(const std::byte* p, size_t count);

  DType dtype_;
  size_t element_size_;
  // float32: the floats of one step of the lanes (16 with AVX2, else 8);
  // other dtypes: kConvertBlock.
  size_t unit_;
  bool avx2_ = false;
  F32Lanes lanes_;
  Partial total_;
  // The bytes short of a whole unit, at most one unit of the widest dtype.
  alignas(64) std::byte carry_[kConvertBlock * 8];
  size_t carried_ = 0;
};

}  // namespace tprobe::stats

#endif  // TPROBE_COMMON_STATS_FLOAT_REDUCER_H_
