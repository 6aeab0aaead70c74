#ifndef TPROBE_COMMON_STATS_TENSOR_STATS_H_
#define TPROBE_COMMON_STATS_TENSOR_STATS_H_

// Tensor summary statistics ("Max", "Min", "Mean", "Norm") computed from the
// exact bytes a client pushed, following msprobe 26.x's get_stat_info with
// precision "low" (docs/format.md, section 2.4). Its
// PyTorch and MindSpore processors differ for integer and float64 tensors
// (StatRules):
//
//   numel == 0          all four null
//   bool                Max = any, Min = all (JSON booleans); Mean, Norm null
//   complex64/128       Max/Min/Mean of |x|; Norm null (a 0-d complex tensor
//                       is treated the same way, since JSON has no complex)
//   0-d, other dtypes   all four are the value itself (not its absolute
//                       value): integer dtypes give JSON integers, floating
//                       dtypes give floats
//   float32/16, bf16    Max/Min exact; Mean and Norm accumulated in double,
//                       then rounded to the native dtype (fp16 Norm can
//                       overflow to Infinity). As torch sums in float32, a
//                       sum or sum of squares beyond the float32 range gives
//                       an infinite Mean or Norm.
//   int*, uint8, fp64   kPyTorch: Max/Min exact in the dtype (JSON integers
//                       for integer dtypes, floats for fp64), Mean and Norm
//                       null (torch.mean/norm are only taken of float32/16
//                       and bf16 tensors). kMindSpore (and msprobe 8.3.3's
//                       PyTorch processor): each element cast to float32
//                       first (as .float() does), then as float32.
//
// A NaN anywhere in a floating tensor makes all four statistics NaN, as
// torch's max/min/mean/norm do (with kPyTorch an fp64 tensor's Max and Min;
// its Mean and Norm stay null). Infinities propagate (inf + -inf gives a NaN
// Mean).
//
// Max and Min match torch exactly. Mean and Norm are accumulated in double,
// so they are within one ulp of the exact value in the native dtype; torch's
// float32 accumulation can be further off on large or cancelling tensors.
// For complex tensors, |x| is the correctly rounded hypot, while numpy's
// SIMD loops can differ from it by one ulp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "common/dtype.h"

namespace tprobe::stats {

// One statistic, in the JSON kind msprobe writes it as: null (std::monostate,
// the default), a boolean (bool tensors), an integer (exact Max/Min of
// integer tensors, and every statistic of a 0-d integer tensor) or a float
// (which may be NaN or infinite). The kind decides the JSON spelling, so an
// int64_t 999 is written "999" and a double 999.0 is written "999.0".
using Stat = std::variant<std::monostate, bool, int64_t, double>;

// The four statistics of a tensor; default-constructed, all four are null.
// dump::AppendStats (common/dump/stats_json.h) writes them to dump.json.
struct TensorStats {
  Stat max;
  Stat min;
  Stat mean;
  Stat norm;
};

// Whose get_stat_info to follow (see above): the daemon picks it from the
// framework a producer registered.
enum class StatRules { kPyTorch, kMindSpore };

// Returns the statistics of the tensor, by the rules above.
//
// `data` holds the tensor's elements contiguously, in row-major order and
// host (little-endian) byte order; it need not be aligned.
//
// REQUIRES: every dimension in `shape` is >= 0, and data.size() equals the
// product of `shape` (1 for an empty shape) times ElementSize(dtype).
// Violations are bugs and assert. The function cannot fail otherwise.
//
// Thread safety: pure; any number of threads may call it concurrently.
TensorStats ComputeStats(DType dtype, std::span<const int64_t> shape,
                         std::span<const std::byte> data, StatRules rules);

class FloatReducer;  // float_reducer.h

// The statistics of a tensor whose bytes come in pieces, in order (the
// daemon reduces a tensor's chunks where they lie in the ring instead of
// gathering them first): Finish() returns what ComputeStats returns for
// all the bytes at once, bit for bit, however they were cut. The tensors
// ComputeStats reduces in one fused pass (floating ones, and MindSpore's
// integers, of one or more dimensions) are reduced piece by piece and
// nothing is kept; the others (bool, complex, 0-d, PyTorch's integer and
// float64 Max/Min) keep their bytes until Finish.
//
// Thread safety: none; one stream per tensor.
class StatsStream {
 public:
  StatsStream(DType dtype, std::span<const int64_t> shape, StatRules rules);
  ~StatsStream();
  StatsStream(StatsStream&&) noexcept;
  StatsStream& operator=(StatsStream&&) noexcept;

  // The next bytes of the tensor.
  void Add(std::span<const std::byte> bytes);
  // REQUIRES: the bytes added are exactly the tensor's (ElementCount(shape)
  // times ElementSize(dtype)); called once.
  TensorStats Finish();

 private:
  DType dtype_;
  std::vector<int64_t> shape_;
  StatRules rules_;
  size_t elements_;
  std::unique_ptr<FloatReducer> reducer_;  // null: the bytes are kept
  std::vector<std::byte> kept_;
};

}  // namespace tprobe::stats

#endif  // TPROBE_COMMON_STATS_TENSOR_STATS_H_
