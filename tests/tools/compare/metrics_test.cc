// tools/compare/metrics.cc: msprobe's tensor and statistics metrics,
// against the definitions computed directly in the test.

#include "tools/compare/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tprobe::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TensorMetricValues Metrics(const std::vector<double>& n,
                           const std::vector<double>& b, size_t chunk = 2) {
  TensorMetrics m;
  for (size_t at = 0; at < n.size(); at += chunk) {
    const size_t len = std::min(chunk, n.size() - at);
    m.Add(std::span(n).subspan(at, len), std::span(b).subspan(at, len));
  }
  return m.Finish();
}

TEST(TensorMetricsTest, MatchesTheDefinitions) {
  const std::vector<double> n{1.0, 2.0, 3.0, -4.0, 0.5};
  const std::vector<double> b{1.0, 2.002, 2.5, -4.0, 0.0};
  const TensorMetricValues v = Metrics(n, b);
  double dot = 0, nn = 0, bb = 0, sq = 0, max_abs = 0, max_rel = 0;
  int one = 0, five = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    dot += n[i] * b[i];
    nn += n[i] * n[i];
    bb += b[i] * b[i];
    const double d = std::fabs(n[i] - b[i]);
    sq += d * d;
    max_abs = std::max(max_abs, d);
    const double eps = std::numeric_limits<double>::epsilon();
    const double rel =
        b[i] == 0 ? std::fabs(n[i] + eps - eps) / eps : d / std::fabs(b[i]);
    max_rel = std::max(max_rel, rel);
    one += rel < 0.001;
    five += rel < 0.005;
  }
  EXPECT_DOUBLE_EQ(v.cosine, dot / std::sqrt(nn) / std::sqrt(bb));
  EXPECT_DOUBLE_EQ(v.euclidean, std::sqrt(sq));
  EXPECT_DOUBLE_EQ(v.max_abs, max_abs);
  EXPECT_DOUBLE_EQ(v.max_relative, max_rel);
  EXPECT_DOUBLE_EQ(v.one_thousandth, one / 5.0);
  EXPECT_DOUBLE_EQ(v.five_thousandths, five / 5.0);
  const double cos = dot / std::sqrt(nn) / std::sqrt(bb);
  EXPECT_EQ(v.accurate,
            !((cos < 0.99 && max_abs > 0.001) || cos < 0.9 || max_abs > 1));
  // Cosine < 0.99 and MaxAbsErr > 0.001.
  EXPECT_FALSE(Metrics({1.0, 2.0, 3.0}, {1.0, 2.0, 1.5}).accurate);
}

TEST(TensorMetricsTest, EqualTensorsAreAccurateWithCosineOne) {
  const std::vector<double> n{0.25, -1.5, 3.0};
  const TensorMetricValues v = Metrics(n, n);
  EXPECT_EQ(v.cosine, 1.0);
  EXPECT_EQ(v.max_abs, 0.0);
  EXPECT_EQ(v.one_thousandth, 1.0);
  EXPECT_TRUE(v.accurate);
}

TEST(TensorMetricsTest, NanAtTheSamePlacesIsZeroedAtOthersIsNan) {
  const TensorMetricValues same =
      Metrics({1.0, kNaN, 2.0, kInf}, {1.0, kNaN, 2.0, kInf});
  EXPECT_EQ(same.cosine, 1.0);
  EXPECT_TRUE(same.accurate);
  const TensorMetricValues differ = Metrics({1.0, kNaN, 2.0}, {1.0, 3.0, 2.0});
  EXPECT_TRUE(std::isnan(differ.cosine));
  EXPECT_TRUE(std::isnan(differ.max_abs));
  EXPECT_FALSE(differ.accurate);
  EXPECT_EQ(differ.message, kNanPositionsDiffer);
}

TEST(TensorMetricsTest, ZeroNormsAndSingleElements) {
  EXPECT_EQ(Metrics({0.0, 0.0}, {0.0, 0.0}).cosine, 1.0);
  const TensorMetricValues one_zero = Metrics({0.0, 0.0}, {1.0, 0.0});
  EXPECT_TRUE(std::isnan(one_zero.cosine));
  EXPECT_FALSE(one_zero.accurate);
  const TensorMetricValues single = Metrics({2.0}, {2.0});
  EXPECT_TRUE(single.cosine_unsupported);
  EXPECT_TRUE(single.accurate);
}

TEST(TensorMetricsTest, LargeAbsoluteErrorFailsEvenWithGoodCosine) {
  const TensorMetricValues v = Metrics({1000.0, 2000.0}, {1001.5, 2003.0});
  EXPECT_GT(v.cosine, 0.99);
  EXPECT_FALSE(v.accurate);  // MaxAbsErr > 1
}

TEST(StatisticsMetricsTest, DiffsRelativeErrorsAndTheWarningRule) {
  const Stats n{4.0, -1.0, 0.5, 10.0};
  const Stats b{2.0, -1.0, 0.0, 9.0};
  const StatisticsMetricValues v = CompareStatistics(n, b);
  EXPECT_EQ(*v.diff[0], 2.0);
  EXPECT_EQ(*v.relative[0], 1.0);
  EXPECT_EQ(*v.diff[1], 0.0);
  EXPECT_FALSE(v.relative[2]);  // the baseline's Mean is 0
  EXPECT_TRUE(v.warning);       // Max: 2 / 4 = 0.5 is not over; Mean is
  const StatisticsMetricValues close =
      CompareStatistics({4.0, 1.0, 2.0, 3.0}, {3.0, 1.0, 2.0, 3.0});
  EXPECT_FALSE(close.warning);           // 1 / 4
  EXPECT_NEAR(close.score, 0.25, 1e-9);  // 1 / (4 + 1e-10)
}

TEST(StatisticsMetricsTest, NonFiniteOnOneSideOnly) {
  EXPECT_FALSE(
      CompareStatistics({kNaN, kNaN, kNaN, kNaN}, {kNaN, kNaN, kNaN, kNaN})
          .nonfinite_mismatch);
  const auto v =
      CompareStatistics({kNaN, kNaN, kNaN, kNaN}, {1.0, 0.0, 0.5, 2.0});
  EXPECT_TRUE(v.nonfinite_mismatch);
  EXPECT_TRUE(v.warning);
}

}  // namespace
}  // namespace tprobe::compare
