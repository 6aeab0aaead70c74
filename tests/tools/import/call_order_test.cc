#include "tools/import/call_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/import/record_builders.h"

namespace tprobe::import {
namespace {

using testing::DataNames;
using ::testing::ElementsAre;
using testing::Rec;

TEST(CallOrderTest, SortsByIdNumericallyAndStably) {
  std::vector<TensorRecord> records = {
      Rec("Cell.m.A", "forward", "input", 0, 10),
      Rec("Cell.m.B", "forward", "input", 0, 9),
      Rec("Cell.m.C", "forward", "input", 0, 100),
      Rec("Cell.m.D", "forward", "input", 0, 9),
  };
  SortByExecution(records);
  std::vector<std::string> cells;
  for (const TensorRecord& r : records) cells.push_back(r.slot.cell);
  EXPECT_THAT(cells,
              ElementsAre("Cell.m.B", "Cell.m.D", "Cell.m.A", "Cell.m.C"));
}

TEST(CallOrderTest, NumbersEachCellsCallsInExecutionOrder) {
  std::vector<TensorRecord> records = {
      Rec("Cell.m.act.GELU", "forward", "input", 0, 1),
      Rec("Cell.m.act.GELU", "forward", "output", 0, 2),
      Rec("Cell.m.act.GELU", "forward", "input", 0, 3),
      Rec("Cell.m.act.GELU", "forward", "output", 0, 4),
      Rec("Cell.m.act.GELU", "backward", "input", 0, 5),
      Rec("Cell.m.act.GELU", "forward", "input", 1, 6),
  };
  AssignCallIndices(records);
  EXPECT_THAT(DataNames(records),
              ElementsAre("Cell.m.act.GELU.forward.0.input.0.npy",
                          "Cell.m.act.GELU.forward.0.output.0.npy",
                          "Cell.m.act.GELU.forward.1.input.0.npy",
                          "Cell.m.act.GELU.forward.1.output.0.npy",
                          "Cell.m.act.GELU.backward.0.input.0.npy",
                          "Cell.m.act.GELU.forward.0.input.1.npy"));
}

}  // namespace
}  // namespace tprobe::import
