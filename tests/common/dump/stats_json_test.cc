#include "common/dump/stats_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tprobe::dump {
namespace {

using stats::Stat;
using stats::TensorStats;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The stats as AppendStats puts them in a JSON object; WriteStats must
// write the same bytes.
std::string Dumps(const TensorStats& stats) {
  Json out = Json::object();
  AppendStats(stats, &out);
  const std::string dumped = PythonJsonDumps(out);
  std::string written;
  JsonStreamWriter writer;
  writer.Reset(&written, 0);
  writer.BeginDict();
  WriteStats(stats, writer);
  writer.End();
  EXPECT_EQ(written, dumped) << "WriteStats and AppendStats differ";
  return dumped;
}

TEST(StatsJsonTest, DefaultStatsAreFourNullsInMsprobeKeyOrder) {
  EXPECT_EQ(Dumps(TensorStats{}),
            "{\n \"Max\": null,\n \"Min\": null,\n \"Mean\": null,\n "
            "\"Norm\": null\n}");
}

TEST(StatsJsonTest, IntegersStayIntegersAndFloatsKeepTheirPoint) {
  // msprobe writes torch.tensor([3, 999, -5]) as 999 / -5, and its float
  // statistics with Python's repr.
  EXPECT_EQ(Dumps({int64_t{999}, int64_t{-5}, 999.0, 0.30000000000000004}),
            "{\n \"Max\": 999,\n \"Min\": -5,\n \"Mean\": 999.0,\n "
            "\"Norm\": 0.30000000000000004\n}");
  EXPECT_EQ(
      Dumps({std::numeric_limits<int64_t>::min(), int64_t{0}, -0.0, 1e-05}),
      "{\n \"Max\": -9223372036854775808,\n \"Min\": 0,\n \"Mean\": "
      "-0.0,\n \"Norm\": 1e-05\n}");
}

TEST(StatsJsonTest, NonFiniteFloatsUsePythonSpellings) {
  EXPECT_EQ(Dumps({kInf, -kInf, kNaN, Stat{}}),
            "{\n \"Max\": Infinity,\n \"Min\": -Infinity,\n \"Mean\": NaN,\n "
            "\"Norm\": null\n}");
}

TEST(StatsJsonTest, BoolsAreJsonBooleans) {
  EXPECT_EQ(Dumps({true, false, Stat{}, Stat{}}),
            "{\n \"Max\": true,\n \"Min\": false,\n \"Mean\": null,\n "
            "\"Norm\": null\n}");
}

TEST(StatsJsonTest, AppendsAfterTheKeysAlreadyThere) {
  Json tensor = Json::object();
  tensor["type"] = "torch.Tensor";
  tensor["shape"] = Json::array({2});
  AppendStats({1.5, -1.5, 0.0, 2.0}, &tensor);
  tensor["requires_grad"] = false;
  EXPECT_EQ(
      PythonJsonDumps(tensor),
      "{\n \"type\": \"torch.Tensor\",\n \"shape\": [\n  2\n ],\n "
      "\"Max\": 1.5,\n \"Min\": -1.5,\n \"Mean\": 0.0,\n \"Norm\": 2.0,\n "
      "\"requires_grad\": false\n}");
}

}  // namespace
}  // namespace tprobe::dump
