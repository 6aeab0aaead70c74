#include "common/dump/tree.h"

#include <gtest/gtest.h>

namespace tprobe::dump {
namespace {

std::vector<std::string> Keys(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

TEST(StepTreeTest, AddEntryTellsNewMergedAndDuplicateApart) {
  StepTree tree("statistics", "mix", "pytorch");
  EXPECT_EQ(tree.AddEntry("A", Json{{"input_args", Json::array()}}),
            AddResult::kNew);
  EXPECT_EQ(tree.AddEntry("B", Json{{"output", 1}}), AddResult::kNew);
  // API backward data merged into an existing key keeps its position.
  EXPECT_EQ(tree.AddEntry("A", Json{{"output", 2}}), AddResult::kMerged);
  EXPECT_EQ(tree.AddEntry("B", Json{{"output", 1}}), AddResult::kDuplicate);
  EXPECT_EQ(Keys(tree.data()), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(Keys(tree.data()["A"]),
            (std::vector<std::string>{"input_args", "output"}));
  EXPECT_EQ(tree.accounting().entries, 2u);
  EXPECT_EQ(tree.accounting().duplicates_dropped, 1u);
  EXPECT_TRUE(tree.accounting().complete())
      << "a dropped re-dump loses nothing";
}

TEST(StepTreeTest, AnUpdatedModuleEntryMovesToTheEnd) {
  // msprobe 26.x: a module's inputs go in when it begins, its outputs when
  // it ends, and the update moves the entry after its children's.
  StepTree tree("statistics", "mix", "pytorch");
  const std::string module = "Module.fc.Linear.forward.0";
  const std::string cell = "Cell.fc.Dense.forward.0";
  EXPECT_EQ(tree.AddEntry(module, Json{{"input_args", 1}}), AddResult::kNew);
  EXPECT_EQ(tree.AddEntry(cell, Json{{"input_args", 1}}), AddResult::kNew);
  EXPECT_EQ(tree.AddEntry("Functional.linear.0.forward", Json{{"output", 1}}),
            AddResult::kNew);
  EXPECT_EQ(tree.AddEntry(module, Json{{"output", 2}, {"parameters", 3}}),
            AddResult::kMerged);
  EXPECT_EQ(tree.AddEntry(cell, Json{{"output", 2}}), AddResult::kMerged);
  EXPECT_EQ(
      Keys(tree.data()),
      (std::vector<std::string>{"Functional.linear.0.forward", module, cell}));
  EXPECT_EQ(Keys(tree.data()[module]),
            (std::vector<std::string>{"input_args", "output", "parameters"}));
  EXPECT_EQ(tree.accounting().entries, 3u);
}

TEST(StepTreeTest, MergedModuleEntriesMoveToTheEndEvenForGradients) {
  StepTree tree("statistics", "mix", "mindspore");
  tree.AddEntry("Cell.fc.Dense.parameters_grad.0", Json{{"bias", 1}});
  tree.AddEntry("Primitive.matmul.MatMul.0.backward", Json{{"input", 2}});
  tree.AddEntry("Primitive.matmul.MatMul.0.backward", Json{{"output", 3}});
  EXPECT_EQ(
      tree.AddEntry("Cell.fc.Dense.parameters_grad.0", Json{{"weight", 4}}),
      AddResult::kMerged);
  // msprobe 26.x: a Cell./Module. entry moves; any other stays in place.
  EXPECT_EQ(Keys(tree.data()),
            (std::vector<std::string>{"Primitive.matmul.MatMul.0.backward",
                                      "Cell.fc.Dense.parameters_grad.0"}));
  EXPECT_EQ(Keys(tree.data()["Cell.fc.Dense.parameters_grad.0"]),
            (std::vector<std::string>{"bias", "weight"}));
}

TEST(StepTreeTest, GroupedStacksListEachNameOnceInFirstUseOrder) {
  StepTree tree("statistics", "mix", "pytorch");
  tree.AddStack("A", {"File a.py, line 1"});
  tree.AddStack("B", {"File b.py, line 2"});
  tree.AddStack("C", {"File a.py, line 1"});
  tree.AddStack("A", {"File c.py, line 3"});  // a re-dump: ignored
  EXPECT_EQ(PythonJsonDumps(tree.StackDocument()), R"({
 "0": [
  [
   "A",
   "C"
  ],
  [
   "File a.py, line 1"
  ]
 ],
 "1": [
  [
   "B"
  ],
  [
   "File b.py, line 2"
  ]
 ]
})");
}

TEST(StepTreeTest, PerEntryStacksKeepEveryEntryInOrderEvenWithoutLines) {
  StepTree tree("tensor", "L0", "mindspore", StackStyle::kPerEntry);
  tree.AddStack("Cell.b.B.forward.0", {});
  tree.AddStack("Cell.a.A.forward.0", {"File a.py, line 1"});
  tree.AddStack("Cell.b.B.forward.0", {"File ignored.py"});
  EXPECT_EQ(PythonJsonDumps(tree.StackDocument()), R"({
 "Cell.b.B.forward.0": [],
 "Cell.a.A.forward.0": [
  "File a.py, line 1"
 ]
})");
}

TEST(StepTreeTest, SkippedRecordsAndACorruptStreamMakeAStepIncomplete) {
  StepTree tree("statistics", "L1", "pytorch");
  EXPECT_TRUE(tree.accounting().complete());
  tree.accounting().records_skipped = 1;
  EXPECT_FALSE(tree.accounting().complete());
  tree.accounting().records_skipped = 0;
  tree.accounting().calls_unclosed = 2;
  EXPECT_FALSE(tree.accounting().complete());
  tree.accounting().calls_unclosed = 0;
  tree.accounting().stream_corrupt = true;
  EXPECT_FALSE(tree.accounting().complete());
  EXPECT_EQ(PythonJsonDumps(tree.AccountingDocument()), R"({
 "complete": false,
 "entries": 0,
 "duplicates_dropped": 0,
 "tensors_incomplete": 0,
 "records_skipped": 0,
 "calls_unclosed": 0,
 "dropped": {
  "ring_full": 0,
  "too_large": 0,
  "no_daemon": 0
 },
 "stream_corrupt": true,
 "producer_died": false,
 "step_open": false,
 "recovered": false
})");
}

}  // namespace
}  // namespace tprobe::dump
