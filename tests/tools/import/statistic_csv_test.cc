#include "tools/import/statistic_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <string>

namespace tprobe::import {
namespace {

using dump::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class StatisticCsvTest : public ::testing::Test {
 protected:
  // Writes `text` to a fresh statistic.csv and returns its path.
  std::string WriteCsv(const std::string& text) {
    const std::string path = ::testing::TempDir() + "statistic_csv_test_" +
                             std::to_string(::getpid()) + "_" +
                             std::to_string(counter_++) + ".csv";
    std::ofstream(path, std::ios::binary) << text;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& path : paths_) std::remove(path.c_str());
  }

 private:
  int counter_ = 0;
  std::vector<std::string> paths_;
};

TEST(StatisticValueTest, ConvertsAsPandasAndMsprobeDo) {
  EXPECT_EQ(ConvertStatisticValue(""), Json(nullptr));
  EXPECT_EQ(ConvertStatisticValue("null"), Json(nullptr));
  EXPECT_EQ(ConvertStatisticValue("NaN"), Json(nullptr));
  EXPECT_EQ(ConvertStatisticValue("N/A"), Json(nullptr));
  EXPECT_EQ(ConvertStatisticValue("true"), Json(true));
  EXPECT_EQ(ConvertStatisticValue("False"), Json(false));
  EXPECT_EQ(ConvertStatisticValue("42"), Json(42.0));
  EXPECT_TRUE(ConvertStatisticValue("42").is_number_float());
  EXPECT_EQ(ConvertStatisticValue("-1.5e-05"), Json(-1.5e-05));
  EXPECT_EQ(ConvertStatisticValue(" +3.25 "), Json(3.25));
  EXPECT_EQ(ConvertStatisticValue("inf"), Json(INFINITY));
  EXPECT_EQ(ConvertStatisticValue("-Infinity"), Json(-INFINITY));
  EXPECT_EQ(ConvertStatisticValue("abc"), Json("abc"));
  EXPECT_EQ(ConvertStatisticValue("1.2.3"), Json("1.2.3"));
}

TEST(StatisticValueTest, ExtractsTheCellNameFromTheOpName) {
  EXPECT_EQ(CellTensorNameOfOp("Default/TensorDump-op3_dump_tensor_data_Cell-"
                               "model-layers-0-Block-forward-input-0|x|y"),
            "Cell.model.layers.0.Block.forward.input.0");
  EXPECT_EQ(CellTensorNameOfOp("dump_tensor_data_Cell-m-M-backward-output-1"),
            "Cell.m.M.backward.output.1");
  EXPECT_EQ(CellTensorNameOfOp("x/dump_tensor_data/Cell-m-M-forward-input-0"),
            "Cell.m.M.forward.input.0");
  EXPECT_EQ(CellTensorNameOfOp("Default/Add-op1"), std::nullopt);
}

TEST(StatisticValueTest, ParsesShapes) {
  EXPECT_THAT(ParseShape("(1,4096)"), ElementsAre(1, 4096));
  EXPECT_THAT(ParseShape("(2, 3, 4)"), ElementsAre(2, 3, 4));
  EXPECT_THAT(ParseShape("()"), ElementsAre());
}

TEST_F(StatisticCsvTest, ReadsRowsDroppingSlotZero) {
  const std::string path = WriteCsv(
      "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data "
      "Type,Shape,Max Value,Min Value,Avg Value,L2Norm Value\n"
      "TensorDump,TensorDump-op1_dump_tensor_data_Cell-m-M-forward-input-0,1,"
      "0,1000,input,0,40,string,\"()\",,,,,\n"
      "TensorDump,TensorDump-op1_dump_tensor_data_Cell-m-M-forward-input-0|a,"
      "1,0,1001,input,1,24,float32,\"(2,3)\",5,0,2.5,null,\n");
  Result<StatisticFile> file = ReadStatisticCsv(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_THAT(file->has_column, ElementsAre(true, true, true, true));
  ASSERT_EQ(file->rows.size(), 1u);
  const StatisticRow& row = file->rows[0];
  EXPECT_EQ(row.line, 3u);
  EXPECT_EQ(row.slot.cell, "Cell.m.M");
  EXPECT_EQ(row.timestamp, 1001);
  EXPECT_EQ(row.dtype, "Float32");
  EXPECT_THAT(row.shape, ElementsAre(2, 3));
  EXPECT_THAT(row.statistics,
              ElementsAre(Json(5.0), Json(0.0), Json(2.5), Json(nullptr)));
}

TEST_F(StatisticCsvTest, NamesEveryMissingColumn) {
  const std::string path =
      WriteCsv("Op Name,Data Type,Shape,Max Value\nx,float32,\"()\",1\n");
  Result<StatisticFile> file = ReadStatisticCsv(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            path +
                ": missing columns \"Timestamp\", \"Slot\" (a statistic.csv "
                "needs Op Name, Data Type, Shape, Timestamp and Slot)");
}

TEST_F(StatisticCsvTest, RejectsAnOpNameWithoutACellName) {
  const std::string path = WriteCsv(
      "Op Name,Data Type,Shape,Timestamp,Slot\n"
      "Default/Add-op1,float32,\"()\",5,1\n");
  Result<StatisticFile> file = ReadStatisticCsv(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            path +
                ":2: Op Name \"Default/Add-op1\" does not contain "
                "dump_tensor_data_ followed by a cell name");
}

TEST_F(StatisticCsvTest, RejectsABadTimestampAndExtraFields) {
  const std::string bad_time = WriteCsv(
      "Op Name,Data Type,Shape,Timestamp,Slot\n"
      "dump_tensor_data_Cell-m-M-forward-input-0,float32,\"()\",soon,1\n");
  Result<StatisticFile> file = ReadStatisticCsv(bad_time);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            bad_time + ":2: Timestamp \"soon\" is not a number");

  const std::string extra = WriteCsv(
      "Op Name,Data Type,Shape,Timestamp,Slot\n"
      "dump_tensor_data_Cell-m-M-forward-input-0,float32,\"()\",1,1,,oops\n");
  file = ReadStatisticCsv(extra);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            extra + ":2: 7 fields, but the header has 5");
}

TEST_F(StatisticCsvTest, OptionalStatisticColumnsMayBeAbsent) {
  const std::string path = WriteCsv(
      "Op Name,Data Type,Shape,Timestamp,Slot,Min Value\n"
      "dump_tensor_data_Cell-m-M-backward-output-2,bool,\"(4)\",7,1,false\n");
  Result<StatisticFile> file = ReadStatisticCsv(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_THAT(file->has_column, ElementsAre(false, true, false, false));
  ASSERT_EQ(file->rows.size(), 1u);
  EXPECT_EQ(file->rows[0].dtype, "Bool");
  EXPECT_EQ(file->rows[0].statistics[1], Json(false));
  EXPECT_EQ(file->rows[0].slot.direction, Direction::kBackward);
  EXPECT_EQ(file->rows[0].slot.index, 2u);
}

}  // namespace
}  // namespace tprobe::import
