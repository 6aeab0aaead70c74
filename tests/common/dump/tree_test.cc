#include "common/dump/tree.h"

#include <gtest/gtest.h>

#include "tests/support/expected_accounting.h"

namespace tprobe::dump {
namespace {

// The names of the tree's entries, in order.
std::vector<std::string> Names(const StepTree& tree) {
  std::vector<std::string> names;
  for (const StepTree::Entry& entry : tree.entries()) {
    names.push_back(entry.name);
  }
  return names;
}

// The member keys of entry `name`.
std::vector<std::string> Keys(const StepTree& tree, const std::string& name) {
  std::vector<std::string> keys;
  for (const StepTree::Entry& entry : tree.entries()) {
    if (entry.name != name) continue;
    for (size_t i = 0; i < entry.text.size(); ++i) {
      keys.emplace_back(entry.text.key(i));
    }
  }
  return keys;
}

TEST(StepTreeTest, DebugLevelWritesBareValuesAndMergesInPlace) {
  StepTree tree("statistics", "debug", "pytorch");
  EXPECT_TRUE(tree.debug_level());
  tree.AddEntry("y.0.debug", Json{{"", Json::array({1, Json(nullptr)})}});
  tree.AddEntry("y_grad.0.debug", Json{{"", nullptr}});
  tree.AddEntry("s.0.debug", Json{{"", {{"type", "int"}, {"value", 5}}}});
  // The gradient, filled at the backward, keeps its place.
  EXPECT_EQ(tree.AddEntry("y_grad.0.debug", Json{{"", 2}}), AddResult::kMerged);
  EXPECT_EQ(tree.DumpJson(),
            "{\n \"task\": \"statistics\",\n \"level\": \"debug\",\n"
            " \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n"
            " \"data\": {\n  \"y.0.debug\": [\n   1,\n   null\n  ],\n"
            "  \"y_grad.0.debug\": 2,\n  \"s.0.debug\": {\n"
            "   \"type\": \"int\",\n   \"value\": 5\n  }\n }\n}");
}

TEST(StepTreeTest, AddEntryTellsNewMergedAndDuplicateApart) {
  StepTree tree("statistics", "mix", "pytorch");
  EXPECT_EQ(tree.AddEntry("A", Json{{"input_args", Json::array()}}),
            AddResult::kNew);
  EXPECT_EQ(tree.AddEntry("B", Json{{"output", 1}}), AddResult::kNew);
  // API backward data merged into an existing key keeps its position.
  EXPECT_EQ(tree.AddEntry("A", Json{{"output", 2}}), AddResult::kMerged);
  EXPECT_EQ(tree.AddEntry("B", Json{{"output", 1}}), AddResult::kDuplicate);
  EXPECT_EQ(Names(tree), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(Keys(tree, "A"),
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
  EXPECT_EQ(Names(tree), (std::vector<std::string>{
                             "Functional.linear.0.forward", module, cell}));
  EXPECT_EQ(Keys(tree, module),
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
  EXPECT_EQ(Names(tree),
            (std::vector<std::string>{"Primitive.matmul.MatMul.0.backward",
                                      "Cell.fc.Dense.parameters_grad.0"}));
  EXPECT_EQ(Keys(tree, "Cell.fc.Dense.parameters_grad.0"),
            (std::vector<std::string>{"bias", "weight"}));
}

// Under torch.compile the client holds the place of parameter gradients
// that come after the compiled backward: an empty parameters_grad entry.
TEST(StepTreeTest, APlaceholderIsFilledWhereItIsOrLeftOut) {
  StepTree tree("statistics", "L0", "pytorch");
  const std::string fc = "Module.fc.Linear.parameters_grad.0";
  const std::string ln = "Module.ln.LayerNorm.parameters_grad.0";
  EXPECT_EQ(tree.AddEntry(fc, EntryText()), AddResult::kNew);
  tree.AddEntry("Module.fc.Linear.backward.0", Json{{"input", 1}});
  EXPECT_EQ(tree.AddEntry(ln, EntryText()), AddResult::kNew);
  tree.AddEntry("Module.ln.LayerNorm.backward.0", Json{{"input", 2}});
  EXPECT_EQ(tree.accounting().entries, 2u) << "a placeholder is no entry";
  // The gradients, one piece a parameter, fill it without moving it; a
  // second placeholder for the same entry changes nothing.
  EXPECT_EQ(tree.AddEntry(fc, Json{{"weight", 3}}), AddResult::kMerged);
  EXPECT_EQ(tree.AddEntry(fc, Json{{"bias", 4}}), AddResult::kMerged);
  EXPECT_EQ(tree.AddEntry(fc, EntryText()), AddResult::kMerged);
  EXPECT_EQ(Names(tree),
            (std::vector<std::string>{fc, "Module.fc.Linear.backward.0", ln,
                                      "Module.ln.LayerNorm.backward.0"}));
  EXPECT_EQ(Keys(tree, fc), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(tree.accounting().entries, 3u);
  EXPECT_EQ(tree.accounting().duplicates_dropped, 0u);
  // ln's gradients never came: dump.json leaves it out.
  Json doc = {{"task", "statistics"},
              {"level", "L0"},
              {"framework", "pytorch"},
              {"dump_data_dir", nullptr},
              {"data", Json::object()}};
  doc["data"][fc] = {{"weight", 3}, {"bias", 4}};
  doc["data"]["Module.fc.Linear.backward.0"] = {{"input", 1}};
  doc["data"]["Module.ln.LayerNorm.backward.0"] = {{"input", 2}};
  EXPECT_EQ(tree.DumpJson(), PythonJsonDumps(doc));
  // A tree of placeholders alone has no data.
  StepTree only("statistics", "L0", "pytorch");
  only.AddEntry(ln, EntryText());
  doc["data"] = Json::object();
  EXPECT_EQ(only.DumpJson(), PythonJsonDumps(doc));
}

TEST(StepTreeTest, DumpJsonIsPythonJsonDumpsOfTheDocument) {
  StepTree tree("statistics", "mix", "pytorch");
  Json doc = {{"task", "statistics"},
              {"level", "mix"},
              {"framework", "pytorch"},
              {"dump_data_dir", nullptr},
              {"data", Json::object()}};
  EXPECT_EQ(tree.DumpJson(), PythonJsonDumps(doc));
  const Json a = {{"input_args", Json::array({Json{{"type", "int"}}, 1.5})}};
  const Json module = {{"input_args", Json::array()}};
  tree.AddEntry("A.Ã©", a);
  tree.AddEntry("Module.m.M.forward.0", module);
  tree.AddEntry("Empty", Json::object());
  tree.AddEntry("Module.m.M.forward.0", Json{{"output", Json::array({2})}});
  tree.set_dump_data_dir("/dump/step0/rank0/dump_tensor_data");
  doc["dump_data_dir"] = "/dump/step0/rank0/dump_tensor_data";
  doc["data"]["A.Ã©"] = a;
  doc["data"]["Empty"] = Json::object();
  doc["data"]["Module.m.M.forward.0"] = {{"input_args", Json::array()},
                                         {"output", Json::array({2})}};
  EXPECT_EQ(tree.DumpJson(), PythonJsonDumps(doc));
}

TEST(StepTreeTest, GroupedStacksListEachNameOnceInFirstUseOrder) {
  StepTree tree("statistics", "mix", "pytorch");
  tree.AddStack("A", {"File a.py, line 1"});
  tree.AddStack("B", {"File b.py, line 2"});
  tree.AddStack("C", {"File a.py, line 1"});
  tree.AddStack("A", {"File c.py, line 3"});  // a re-dump: ignored
  EXPECT_EQ(tree.StackJson(), R"({
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
  EXPECT_EQ(tree.StackJson(), R"({
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
  EXPECT_EQ(
      PythonJsonDumps(tree.AccountingDocument()),
      (testing::ExpectedAccounting{.complete = false, .stream_corrupt = true}
           .Text()));
}

}  // namespace
}  // namespace tprobe::dump
