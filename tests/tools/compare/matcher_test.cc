// tools/compare: dump.json flattening (dump_rows.cc), Python-style JSON
// (python_json.cc), name maps (name_mapping.cc) and row matching
// (matcher.cc), on dump.json text written by the test.

#include "tools/compare/matcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/input/name_mapping.h"
#include "tools/compare/input/python_json.h"
#include "tools/compare/row_compare.h"

namespace tprobe::compare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Tensor(const std::string& max, const std::string& shape = "[2]") {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": )" +
         shape + R"(, "Max": )" + max +
         R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
}

class DumpFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("compare_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes dir/name/dump.json with `data` (the text inside "data": {...}).
  std::string Write(const std::string& name, const std::string& data,
                    const std::string& task = "statistics") {
    const auto folder = dir_ / name;
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "dump.json")
        << R"({"task": ")" << task
        << R"(", "level": "mix", "framework": "pytorch", "data": {)" << data
        << "}}";
    return (folder / "dump.json").string();
  }
  Dump Load(const std::string& path) {
    Result<Dump> dump = LoadDump(path);
    EXPECT_TRUE(dump.ok()) << dump.status().message();
    return std::move(*dump);
  }

  std::filesystem::path dir_;
};

std::vector<std::string> Names(const Dump& dump) {
  std::vector<std::string> names;
  for (const Row& row : dump.rows) names.push_back(row.name);
  return names;
}

TEST_F(DumpFiles, FlattensEntriesAsMsprobeNamesRows) {
  const Dump dump = Load(
      Write("a", R"("Functional.linear.0.forward": {"input_args": [)" +
                     Tensor("1.0") + ", [" + Tensor("2.0") +
                     R"(, null]], "input_kwargs": {"bias": )" + Tensor("NaN") +
                     R"(, "dim": {"type": "int", "value": -1}},
          "output": [)" +
                     Tensor("Infinity") + R"(]},
      "Module.fc.Linear.parameters_grad.0": {"weight": [)" +
                     Tensor("-Infinity") + "]}"));
  EXPECT_THAT(Names(dump),
              ElementsAre("Functional.linear.0.forward.input.0",
                          "Functional.linear.0.forward.input.1.0",
                          "Functional.linear.0.forward.input.1.1",
                          "Functional.linear.0.forward.input.bias",
                          "Functional.linear.0.forward.input.dim",
                          "Functional.linear.0.forward.output.0",
                          "Module.fc.Linear.parameters_grad.0.weight"));
  EXPECT_EQ(dump.mode, Mode::kStatistics);
  EXPECT_TRUE(std::isnan(*dump.rows[3].stats.max));
  EXPECT_EQ(*dump.rows[5].stats.max, INFINITY);
  EXPECT_EQ(*dump.rows[6].stats.max, -INFINITY);
  EXPECT_EQ(dump.rows[4].dtype, "<class 'int'>");
  EXPECT_EQ(dump.rows[4].checksum, "-1");
  EXPECT_EQ(dump.rows[2].dtype, "None");
  EXPECT_EQ(dump.rows[6].entry, 1u);
}

TEST_F(DumpFiles, BadFilesAreClearErrors) {
  const auto folder = dir_ / "bad";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "dump.json") << R"({"task": "tensor", "data": [)";
  Result<Dump> dump = LoadDump((folder / "dump.json").string());
  ASSERT_FALSE(dump.ok());
  EXPECT_THAT(dump.status().message(), HasSubstr("not valid JSON"));
  std::ofstream(folder / "dump.json") << R"({"task": "tensor"})";
  EXPECT_THAT(LoadDump((folder / "dump.json").string()).status().message(),
              HasSubstr("no \"data\" object"));
  EXPECT_THAT(LoadDump((folder / "missing.json").string()).status().message(),
              HasSubstr("cannot open"));
}

TEST_F(DumpFiles, KeyedStackJsonKeepsEachEntrysLines) {
  const std::string path =
      Write("s", R"("Tensor.__add__.0.forward": {"output": [)" + Tensor("1.0") +
                     "]}");
  const auto folder = std::filesystem::path(path).parent_path();
  // 8.x's form: entry -> lines (a line that is not a string is skipped).
  std::ofstream(folder / "stack.json")
      << R"j({"Tensor.__add__.0.forward": ["File a.py, line 1, in f, \n g()",
      7, "File b.py, line 2, in h, \n i()"], "Other.x.0.forward": "bad"})j";
  Dump dump = Load(path);
  EXPECT_TRUE(dump.has_stack);
  EXPECT_THAT(dump.named_stacks["Tensor.__add__.0.forward"],
              ElementsAre("File a.py, line 1, in f, \n g()",
                          "File b.py, line 2, in h, \n i()"));
  EXPECT_EQ(dump.named_stacks.count("Other.x.0.forward"), 0u);
  // 26.x's indexed form: stacks for the CSV, none by name.
  std::ofstream(folder / "stack.json")
      << R"({"0": [["Tensor.__add__.0.forward"], ["File a.py, line 1"]]})";
  dump = Load(path);
  EXPECT_TRUE(dump.named_stacks.empty());
  EXPECT_EQ(dump.stacks["Tensor.__add__.0.forward"], "['File a.py, line 1']");
}

TEST_F(DumpFiles, AFrameworkIsFoundByTypesWithoutItsKey) {
  const auto folder = dir_ / "f";
  std::filesystem::create_directories(folder);
  for (const auto& [type, framework] :
       std::vector<std::pair<std::string, std::string>>{
           {"mindspore.Tensor", "mindspore"},
           {"torch.Tensor", "pytorch"},
           {"numpy.ndarray", ""}}) {
    std::ofstream(folder / "dump.json")
        << R"({"task": "statistics", "data": {"A.x.0.forward": {"input_args":
        [{"type": "int", "value": 1}, {"type": ")"
        << type << R"(", "dtype": "Float32", "shape": [1]}]}}})";
    EXPECT_EQ(Load((folder / "dump.json").string()).framework, framework)
        << type;
  }
}

TEST(PythonJsonTest, NonFiniteWordsOutsideStringsOnly) {
  Result<Json> json = ParsePythonJson(
      R"({"a": NaN, "b": [Infinity, -Infinity], "c": "NaN and Infinity"})",
      "test");
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_TRUE(std::isnan(*NumberOf((*json)["a"])));
  EXPECT_EQ(*NumberOf((*json)["b"][1]), -INFINITY);
  EXPECT_EQ((*json)["c"], "NaN and Infinity");
  EXPECT_FALSE(NumberOf((*json)["c"]));
}

TEST_F(DumpFiles, ExactMatchingReportsMissingAndExtraInOrder) {
  const Dump target = Load(Write(
      "t", R"("A.0.forward": {"output": [)" + Tensor("1.0") +
               R"(]}, "C.0.forward": {"output": [)" + Tensor("1.0") +
               R"(]}, "D.0.forward": {"output": [)" + Tensor("1.0") + "]}"));
  const Dump baseline = Load(Write(
      "b", R"("A.0.forward": {"output": [)" + Tensor("1.0") +
               R"(]}, "B.0.forward": {"output": [)" + Tensor("1.0") +
               R"(]}, "C.0.forward": {"output": [)" + Tensor("1.0") + "]}"));
  const std::vector<RowPair> pairs = MatchRows(&target, &baseline, {});
  ASSERT_EQ(pairs.size(), 4u);
  // A, then B (baseline only, after A), C, D (target only).
  EXPECT_EQ(pairs[0].target, 0u);
  EXPECT_EQ(pairs[0].baseline, 0u);
  EXPECT_FALSE(pairs[1].target);
  EXPECT_EQ(pairs[1].baseline, 1u);
  EXPECT_EQ(pairs[2].target, 1u);
  EXPECT_EQ(pairs[2].baseline, 2u);
  EXPECT_EQ(pairs[3].target, 2u);
  EXPECT_FALSE(pairs[3].baseline);
  EXPECT_EQ(CompareRow(pairs[1], &target, &baseline, Mode::kStatistics).verdict,
            Verdict::kMissing);
  EXPECT_EQ(CompareRow(pairs[3], &target, &baseline, Mode::kStatistics).verdict,
            Verdict::kExtra);
  EXPECT_EQ(CompareRow(pairs[0], &target, &baseline, Mode::kStatistics).verdict,
            Verdict::kPass);
}

TEST_F(DumpFiles, ShapeMismatchPairsAsAnError) {
  const Dump target = Load(Write(
      "t", R"("A.0.forward": {"output": [)" + Tensor("1.0", "[3]") + "]}"));
  const Dump baseline = Load(Write(
      "b", R"("A.0.forward": {"output": [)" + Tensor("1.0", "[2]") + "]}"));
  const std::vector<RowPair> pairs = MatchRows(&target, &baseline, {});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_TRUE(pairs[0].shape_differs);
  const RowResult r =
      CompareRow(pairs[0], &target, &baseline, Mode::kStatistics);
  EXPECT_EQ(r.verdict, Verdict::kError);
  EXPECT_THAT(r.message, HasSubstr("Shape [3] against [2]"));
}

TEST_F(DumpFiles, FuzzyIgnoresCallIndicesAndMappingRenames) {
  const Dump target = Load(
      Write("t", R"("Tensor.add.3.forward": {"output": [)" + Tensor("1.0") +
                     R"(]}, "Module.new.Linear.forward.0": {"output": [)" +
                     Tensor("1.0") + "]}"));
  const Dump baseline = Load(
      Write("b", R"("Tensor.add.0.forward": {"output": [)" + Tensor("1.0") +
                     R"(]}, "Module.old.Linear.forward.0": {"output": [)" +
                     Tensor("1.0") + "]}"));
  EXPECT_EQ(MatchRows(&target, &baseline, {}).size(), 4u);
  Result<NameMapping> map =
      NameMapping::Parse("# renamed\nModule.new: 'Module.old'\n", "map.yaml");
  ASSERT_TRUE(map.ok()) << map.status().message();
  const std::vector<RowPair> pairs =
      MatchRows(&target, &baseline, {true, &*map});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].baseline, 0u);
  EXPECT_EQ(pairs[1].baseline, 1u);
  EXPECT_EQ(WithoutCallIndex("Module.blocks.0.Block.forward.2.output.0"),
            "Module.blocks.0.Block.forward.output.0");
  EXPECT_EQ(WithoutCallIndex("Functional.linear.12.backward.input.1"),
            "Functional.linear.backward.input.1");
}

TEST_F(DumpFiles, ExactMatchingRenumbersBackwardCallsOnBothSides) {
  // relu's last forward call has no backward in the target (its output was
  // detached), so the target's two backward calls are relu.1 and relu.0,
  // the baseline's three relu.2, relu.1, relu.0, in dump order.
  auto entries = [](const std::vector<std::string>& names) {
    std::string data;
    for (const std::string& name : names) {
      if (!data.empty()) data += ", ";
      data += "\"" + name + R"(": {"output": [)" + Tensor("1.0") + "]}";
    }
    return data;
  };
  const Dump target = Load(Write(
      "t", entries({"Torch.relu.0.forward", "Torch.relu.1.forward",
                    "Torch.relu.2.forward", "Torch.relu.1.backward",
                    "Torch.relu.0.backward", "Module.fc.Linear.backward.0"})));
  const Dump baseline =
      Load(Write("b", entries({"Torch.relu.0.forward", "Torch.relu.1.forward",
                               "Torch.relu.2.forward", "Torch.relu.2.backward",
                               "Torch.relu.1.backward", "Torch.relu.0.backward",
                               "Module.fc.Linear.backward.0"})));
  auto paired = [&](const MatchOptions& options) {
    std::vector<std::pair<std::string, std::string>> both;
    for (const RowPair& p : MatchRows(&target, &baseline, options)) {
      if (p.target && p.baseline) {
        both.emplace_back(target.rows[*p.target].name,
                          baseline.rows[*p.baseline].name);
      }
    }
    return both;
  };
  using Both = std::pair<std::string, std::string>;
  // The n-th backward call pairs with the n-th, as in msprobe; the
  // reports keep the dumped names; forward calls and cells are unchanged.
  EXPECT_THAT(paired({}),
              ElementsAre(Both{"Torch.relu.0.forward.output.0",
                               "Torch.relu.0.forward.output.0"},
                          Both{"Torch.relu.1.forward.output.0",
                               "Torch.relu.1.forward.output.0"},
                          Both{"Torch.relu.2.forward.output.0",
                               "Torch.relu.2.forward.output.0"},
                          Both{"Torch.relu.1.backward.output.0",
                               "Torch.relu.2.backward.output.0"},
                          Both{"Torch.relu.0.backward.output.0",
                               "Torch.relu.1.backward.output.0"},
                          Both{"Module.fc.Linear.backward.0.output.0",
                               "Module.fc.Linear.backward.0.output.0"}));
  // --mapping applies to the renumbered name.
  Result<NameMapping> map = NameMapping::Parse(
      "Torch.relu.0.backward: Torch.relu.2.backward\n", "map.yaml");
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_THAT(paired({false, &*map})[3],
              (Both{"Torch.relu.1.backward.output.0",
                    "Torch.relu.0.backward.output.0"}));
  // --fuzzy drops the indices instead: the n-th call with the n-th.
  EXPECT_THAT(paired({true})[3], (Both{"Torch.relu.1.backward.output.0",
                                       "Torch.relu.2.backward.output.0"}));
}

TEST_F(DumpFiles, MsprobeMappingKeysTargetRowsAndDataMappingIsNeverFuzzy) {
  const Dump target = Load(
      Write("t", R"("Cell.fc.Dense.forward.0": {"output": [)" + Tensor("1.0") +
                     R"(]}, "Mint.tanh.1.forward": {"output": [)" +
                     Tensor("1.0") + "]}"));
  const Dump baseline = Load(Write(
      "b", R"("Module.fc.Linear.forward.0": {"output": [)" + Tensor("1.0") +
               R"(]}, "Torch.tanh.0.forward": {"output": [)" + Tensor("1.0") +
               "]}"));
  // (target, baseline) of the rows both sides fill.
  auto paired = [&](const MatchOptions& options) {
    std::vector<std::pair<size_t, size_t>> both;
    for (const RowPair& p : MatchRows(&target, &baseline, options)) {
      if (p.target && p.baseline) both.emplace_back(*p.target, *p.baseline);
    }
    return both;
  };
  using Both = std::pair<size_t, size_t>;
  Result<NameMapping> cells = NameMapping::Parse("Dense: Linear\n", "c.yaml");
  ASSERT_TRUE(cells.ok()) << cells.status().message();
  const MsprobeMapping cell =
      MsprobeMapping::Of(MsprobeMapping::Kind::kCell, *cells);
  // The cell pairs; Mint.tanh is not Torch.tanh under a cell mapping.
  EXPECT_THAT(paired({false, nullptr, &cell}), ElementsAre(Both{0, 0}));
  // The API mapping with --fuzzy pairs Mint.tanh's 2nd call with the 1st.
  const MsprobeMapping api = MsprobeMapping::Api();
  EXPECT_THAT(paired({true, nullptr, &api}), ElementsAre(Both{1, 1}));
  EXPECT_THAT(paired({false, nullptr, &api}), ElementsAre());
  // A data mapping names whole rows: the call index counts, fuzzy or not.
  Result<NameMapping> rows = NameMapping::Parse(
      "Mint.tanh.1.forward.output.0: Torch.tanh.1.forward.output.0\n",
      "d.yaml");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  const MsprobeMapping data =
      MsprobeMapping::Of(MsprobeMapping::Kind::kData, *rows);
  EXPECT_THAT(paired({true, nullptr, &data}), ElementsAre());
}

TEST(NameMappingTest, JsonAndErrors) {
  Result<NameMapping> json = NameMapping::Parse(
      R"({"Torch.mm.0.forward": "Torch.matmul.0.forward"})", "map.json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->Map("Torch.mm.0.forward.output.0"),
            "Torch.matmul.0.forward.output.0");
  EXPECT_EQ(json->Map("Torch.mm.1.forward.output.0"),
            "Torch.mm.1.forward.output.0");
  Result<NameMapping> bad = NameMapping::Parse("just a line\n", "map.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("map.yaml:1"));
}

}  // namespace
}  // namespace tprobe::compare
