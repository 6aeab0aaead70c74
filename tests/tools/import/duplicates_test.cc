#include "tools/import/duplicates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/import/record_builders.h"

namespace tprobe::import {
namespace {

using ::testing::ElementsAre;
using testing::Rec;

Result<bool> SameValue(const TensorRecord& a, const TensorRecord& b) {
  return a.tensor == b.tensor;
}

std::vector<std::string> Origins(const std::vector<TensorRecord>& records) {
  std::vector<std::string> origins;
  for (const TensorRecord& r : records) origins.push_back(r.origin);
  return origins;
}

TEST(DuplicatesTest, DropsARepeatWithIdenticalDataAndLogsIt) {
  std::vector<TensorRecord> records = {
      Rec("Cell.m.A", "forward", "input", 0, 1, 5.0),
      Rec("Cell.m.A", "forward", "input", 0, 2, 5.0),   // repeat: dropped
      Rec("Cell.m.A", "forward", "output", 0, 3, 5.0),  // other slot: kept
      Rec("Cell.m.A", "forward", "input", 0, 4, 6.0),   // new data: kept
  };
  std::vector<std::string> log;
  Result<size_t> dropped = DropDuplicates(
      records, SameValue, [&log](const std::string& l) { log.push_back(l); });
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1u);
  EXPECT_THAT(Origins(records), ElementsAre("#1", "#3", "#4"));
  EXPECT_THAT(log, ElementsAre("dropped duplicate #2 (same name and data as "
                               "#1)"));
}

TEST(DuplicatesTest, ComparesWithTheFirstRecordOfTheName) {
  // As msprobe's del_same_file: #3 equals #2 but not #1, so it stays.
  std::vector<TensorRecord> records = {
      Rec("Cell.m.A", "forward", "input", 0, 1, 1.0),
      Rec("Cell.m.A", "forward", "input", 0, 2, 2.0),
      Rec("Cell.m.A", "forward", "input", 0, 3, 2.0),
      Rec("Cell.m.A", "forward", "input", 0, 4, 1.0),
  };
  Result<size_t> dropped =
      DropDuplicates(records, SameValue, [](const std::string&) {});
  ASSERT_TRUE(dropped.ok());
  EXPECT_THAT(Origins(records), ElementsAre("#1", "#2", "#3"));
}

TEST(DuplicatesTest, AFailedComparisonChangesNothing) {
  std::vector<TensorRecord> records = {
      Rec("Cell.m.A", "forward", "input", 0, 1, 1.0),
      Rec("Cell.m.A", "forward", "input", 0, 2, 1.0),
      Rec("Cell.m.A", "forward", "input", 0, 3, 1.0),
  };
  int calls = 0;
  auto flaky = [&calls](const TensorRecord&,
                        const TensorRecord&) -> Result<bool> {
    if (++calls == 2) return Status::Error("x.npy: truncated");
    return true;
  };
  std::vector<std::string> log;
  Result<size_t> dropped = DropDuplicates(
      records, flaky, [&log](const std::string& l) { log.push_back(l); });
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(dropped.status().message(), "x.npy: truncated");
  EXPECT_EQ(records.size(), 3u);
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace tprobe::import
