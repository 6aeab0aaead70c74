#include "tools/import/statistics_task.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tprobe::import {
namespace {

namespace fs = std::filesystem;
using dump::Json;
using ::testing::ElementsAre;

class StatisticsTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("statistics_task_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  fs::path dir_;
};

TEST_F(StatisticsTaskTest, MergesGraphsByTimestampAndUnitesColumns) {
  // Graph 0 has an L2Norm column and graph 1 does not; their rows
  // interleave in time, and the timestamps differ by less than a double
  // can tell apart at this size.
  const std::string graph0 =
      Write("g0.csv",
            "Op Name,Data Type,Shape,Timestamp,Slot,Max Value,L2Norm Value\n"
            "dump_tensor_data_Cell-m-A-forward-input-0,float32,\"(1)\","
            "1700000000000000003,1,1,1,\n"
            "dump_tensor_data_Cell-m-A-forward-input-0,float32,\"(1)\","
            "1700000000000000001,1,3,3,\n");
  const std::string graph1 =
      Write("g1.csv",
            "Op Name,Data Type,Shape,Timestamp,Slot,Max Value\n"
            "dump_tensor_data_Cell-m-A-forward-input-0,float32,\"(1)\","
            "1700000000000000002,1,2,\n");
  StatisticsStepSource source{4, 1, {graph0, graph1}};
  tools::Reporter quiet(nullptr, false);
  Result<std::vector<StepRecords>> steps =
      LoadStatisticsSteps({source}, 2, quiet);
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 1u);
  const StepRecords& step = (*steps)[0];
  EXPECT_EQ(step.step, 4u);
  EXPECT_EQ(step.rank, 1);
  std::vector<std::string> tensors;
  std::vector<std::string> origins;
  for (const TensorRecord& r : step.records) {
    tensors.push_back(dump::PythonJsonDumps(r.tensor));
    origins.push_back(r.origin);
  }
  auto tensor = [](const char* max, const char* norm) {
    return std::string(
               "{\n \"type\": \"mindspore.Tensor\",\n \"dtype\": "
               "\"Float32\",\n \"shape\": [\n  1\n ],\n \"Max\": ") +
           max + ",\n \"Norm\": " + norm + "\n}";
  };
  EXPECT_THAT(tensors, ElementsAre(tensor("3.0", "3.0"), tensor("2.0", "null"),
                                   tensor("1.0", "1.0")));
  EXPECT_THAT(origins,
              ElementsAre(graph0 + ":3", graph1 + ":2", graph0 + ":2"));
}

TEST_F(StatisticsTaskTest, ReportsTheFirstBadFile) {
  const std::string good =
      Write("good.csv",
            "Op Name,Data Type,Shape,Timestamp,Slot\n"
            "dump_tensor_data_Cell-m-A-forward-input-0,float32,\"(1)\",1,1\n");
  const std::string bad = Write("bad.csv", "Op Name,Shape\n");
  tools::Reporter quiet(nullptr, false);
  Result<std::vector<StepRecords>> steps = LoadStatisticsSteps(
      {StatisticsStepSource{0, 0, {good}}, StatisticsStepSource{1, 0, {bad}}},
      2, quiet);
  ASSERT_FALSE(steps.ok());
  EXPECT_THAT(steps.status().message(),
              ::testing::StartsWith(bad + ": missing columns \"Data Type\", "
                                          "\"Timestamp\", \"Slot\""));
}

}  // namespace
}  // namespace tprobe::import
