#ifndef TPROBE_TOOLS_COMPARE_METRICS_H_
#define TPROBE_TOOLS_COMPARE_METRICS_H_

// msprobe compare's metrics, computed here in C++ (the definitions of
// msprobe/core/compare/npy_compare.py; no code of it).
//
// Tensor mode, on both tensors as float64 (N the target, B the baseline):
//   - NaN and Inf: at the same positions in both they are set to 0 first;
//     at different positions every metric is NaN ("Nan"), with the message
//     kNanPositionsDiffer.
//   - Cosine = N.B / (|N| |B|); 1 when both norms are <= eps (float64
//     epsilon); NaN with a message when only one is; "unsupported" for a
//     single element.
//   - EucDist = |N - B|, MaxAbsErr = max |N - B|.
//   - relative error = |N - B| / |B|, with eps added to N and B where B is
//     0; MaxRelativeErr is its maximum; One Thousandth and Five Thousandths
//     Err Ratio are the fractions of elements whose relative error is below
//     0.001 and 0.005.
//   - accurate (8.3.3's "Accuracy Reached or Not"): not when (Cosine < 0.99 and
//   MaxAbsErr >
//     0.001) or Cosine < 0.9 or MaxAbsErr > 1 or a metric is NaN.
// Statistics mode, for each of Max, Min, Mean, Norm: diff = N - B and
// relative error |diff / B| (none when B is 0); the row is a Warning when
// |diff| / (max(|N|, |B|) + 1e-10) > 0.5 for any of them.
//
// Thread safety: pure functions; a TensorMetrics accumulator belongs to one
// thread.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "tools/compare/input/dump_rows.h"

namespace tprobe::compare {

inline constexpr char kNanPositionsDiffer[] =
    "The position of inf or nan in NPU and bench Tensor do not match. ";

struct TensorMetricValues {
  // NaN where msprobe writes "Nan".
  double cosine = 0, euclidean = 0, max_abs = 0, max_relative = 0;
  double one_thousandth = 0, five_thousandths = 0;
  bool cosine_unsupported = false;  // a single element
  bool accurate = true;             // 8.3.3's "Accuracy Reached or Not"
  std::string message;              // Err_message
};

// Accumulates the tensor metrics over chunks of both tensors.
class TensorMetrics {
 public:
  // N and B hold the same number of elements, the next ones of each tensor.
  void Add(std::span<const double> n, std::span<const double> b);
  TensorMetricValues Finish() const;

 private:
  size_t count_ = 0;
  bool nan_positions_differ_ = false;
  double dot_ = 0, nn_ = 0, bb_ = 0, sq_diff_ = 0;
  double max_abs_ = 0, max_rel_ = 0;
  size_t below_one_ = 0, below_five_ = 0;
};

struct StatisticsMetricValues {
  // Max, Min, Mean, Norm; nullopt when either side has none.
  std::array<std::optional<double>, 4> diff;
  std::array<std::optional<double>, 4> relative;  // as a fraction
  bool warning = false;
  bool nonfinite_mismatch = false;  // NaN or Inf on one side only
  double score = 0;                 // the largest |diff| / max(|N|, |B|)
};

StatisticsMetricValues CompareStatistics(const Stats& target,
                                         const Stats& baseline);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_METRICS_H_
