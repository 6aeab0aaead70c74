// msprobe compare's metrics (metrics.h).

#include "tools/compare/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tprobe::compare {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

void TensorMetrics::Add(std::span<const double> n, std::span<const double> b) {
  for (size_t i = 0; i < n.size(); ++i) {
    double x = n[i], y = b[i];
    const bool bad_x = !std::isfinite(x), bad_y = !std::isfinite(y);
    if (bad_x || bad_y) {
      if (bad_x != bad_y) nan_positions_differ_ = true;
      x = 0;
      y = 0;
    }
    dot_ += x * y;
    nn_ += x * x;
    bb_ += y * y;
    const double d = std::fabs(x - y);
    sq_diff_ += d * d;
    max_abs_ = std::max(max_abs_, d);
    const double rel =
        y == 0 ? std::fabs((x + kEps) - (y + kEps)) / kEps : d / std::fabs(y);
    max_rel_ = std::max(max_rel_, rel);
    below_one_ += rel < 0.001;
    below_five_ += rel < 0.005;
  }
  count_ += n.size();
}

TensorMetricValues TensorMetrics::Finish() const {
  TensorMetricValues v;
  if (nan_positions_differ_) {
    v.cosine = v.euclidean = v.max_abs = v.max_relative = kNaN;
    v.one_thousandth = v.five_thousandths = kNaN;
    v.accurate = false;
    v.message = kNanPositionsDiffer;
    return v;
  }
  const double norm_n = std::sqrt(nn_), norm_b = std::sqrt(bb_);
  if (count_ == 1) {
    v.cosine_unsupported = true;
    v.cosine = kNaN;
    v.message = "This is a 1-d tensor of length 1. ";
  } else if (norm_n <= kEps && norm_b <= kEps) {
    v.cosine = 1.0;
  } else if (norm_n <= kEps || norm_b <= kEps) {
    v.cosine = kNaN;
    v.message = norm_n <= kEps
                    ? "Cannot compare by Cosine Similarity, All the data is "
                      "Zero in npu dump data. "
                    : "Cannot compare by Cosine Similarity, All the data is "
                      "Zero in Bench dump data. ";
  } else {
    v.cosine = dot_ / (norm_n * norm_b);
    if (v.cosine > 0.9999) v.cosine = std::round(v.cosine * 1e6) / 1e6;
  }
  v.euclidean = std::sqrt(sq_diff_);
  v.max_abs = max_abs_;
  v.max_relative = max_rel_;
  const double n = count_ == 0 ? 1 : static_cast<double>(count_);
  v.one_thousandth = static_cast<double>(below_one_) / n;
  v.five_thousandths = static_cast<double>(below_five_) / n;
  const bool cos_known = !std::isnan(v.cosine);
  v.accurate = !((cos_known && v.cosine < 0.99 && v.max_abs > 0.001) ||
                 (cos_known && v.cosine < 0.9) || v.max_abs > 1 ||
                 (!cos_known && !v.cosine_unsupported));
  return v;
}

StatisticsMetricValues CompareStatistics(const Stats& target,
                                         const Stats& baseline) {
  StatisticsMetricValues v;
  const std::array<std::optional<double>, 4> n{target.max, target.min,
                                               target.mean, target.norm};
  const std::array<std::optional<double>, 4> b{baseline.max, baseline.min,
                                               baseline.mean, baseline.norm};
  for (size_t i = 0; i < 4; ++i) {
    if (!n[i] || !b[i]) continue;
    const double x = *n[i], y = *b[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      // Equal non-finite values (both NaN, the same infinity) agree.
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      v.diff[i] = same ? 0.0 : kNaN;
      if (!same) {
        v.nonfinite_mismatch = true;
        v.warning = true;
        v.score = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const double d = x - y;
    v.diff[i] = d;
    if (y != 0) v.relative[i] = std::fabs(d / y);
    const double ratio =
        std::fabs(d) / (std::max(std::fabs(x), std::fabs(y)) + 1e-10);
    v.score = std::max(v.score, ratio);
    if (ratio > 0.5) v.warning = true;
  }
  return v;
}

}  // namespace tprobe::compare
