// tools/compare/msprobe/msprobe_mapping.cc: the compare keys msprobe 26.2's
// -cm/-am/-dm give MindSpore row names, its -am api_mapping.yaml reader,
// and its cross-framework dtypes;
// tools/compare/msprobe/layer_mapping.cc: the scopes its -lm gives dump
// entries, its layer_mapping.yaml reader and the data mapping it makes;
// tools/compare/msprobe/ms_to_pt_api.cc: msprobe's built-in -am table.

#include "tools/compare/msprobe/msprobe_mapping.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/msprobe/layer_mapping.h"
#include "tools/compare/msprobe/ms_to_pt_api.h"

namespace tprobe::compare {
namespace {

using Kind = MsprobeMapping::Kind;

MsprobeMapping Of(Kind kind, const std::string& yaml) {
  Result<NameMapping> map = NameMapping::Parse(yaml, "test.yaml");
  EXPECT_TRUE(map.ok()) << map.status().message();
  return MsprobeMapping::Of(kind, std::move(*map));
}

TEST(MsprobeMappingTest, CellMappingRenamesCellsOfCallsOnly) {
  const MsprobeMapping plain = MsprobeMapping::Of(Kind::kCell, {});
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Module.fc1.Dense.forward.0.input.0");
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.parameters_grad.0.weight"),
            "Module.fc1.Dense.parameters_grad.0.weight");
  // A row of no call, and an empty name, stay unpaired.
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.weight"), std::nullopt);
  EXPECT_EQ(plain.Key(""), std::nullopt);
  // Only the first "Cell" becomes "Module", wherever it is.
  EXPECT_EQ(plain.Key("Mint.tanh.0.forward.output.0"),
            "Mint.tanh.0.forward.output.0");
}

TEST(MsprobeMappingTest, CellMappingWholePathFirstThenKeysInFileOrder) {
  const MsprobeMapping m = Of(Kind::kCell,
                              "fc1.Dense: layer1.Linear\n"
                              "Dense: Linear\n"
                              "fc: proj\n");
  // The whole cell path is a key: its value alone.
  EXPECT_EQ(m.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Module.layer1.Linear.forward.0.input.0");
  // Otherwise every key found, in file order, replaces its first
  // occurrence: "fc2.Dense" -> "fc2.Linear" -> "proj2.Linear".
  EXPECT_EQ(m.Key("Cell.fc2.Dense.backward.0.output.0"),
            "Module.proj2.Linear.backward.0.output.0");
  EXPECT_EQ(m.Key("Cell.fc2.Dense.parameters_grad.0.bias"),
            "Module.proj2.Linear.parameters_grad.0.bias");
}

TEST(MsprobeMappingTest, ApiMappingRenamesMintClassesOnly) {
  const MsprobeMapping m = MsprobeMapping::Api();
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.input.0"),
            "Torch.tanh.0.forward.input.0");
  EXPECT_EQ(m.Key("MintFunctional.relu.0.backward.output.0"),
            "Functional.relu.0.backward.output.0");
  // Cells are not renamed under API mapping, as in msprobe.
  EXPECT_EQ(m.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Cell.fc1.Dense.forward.0.input.0");
  EXPECT_EQ(m.Key("Tensor.Mint.0.forward.input.0"),
            "Tensor.Mint.0.forward.input.0");
}

TEST(MsprobeMappingTest, ApiMappingAppliesMsprobesTableAfterMint) {
  const MsprobeMapping m = MsprobeMapping::Api();
  // A table hit replaces the API's name, every occurrence of it.
  EXPECT_EQ(m.Key("Functional.add.0.forward.input.0"),
            "Torch.add.0.forward.input.0");
  EXPECT_EQ(m.Key("Functional.add.0.forward.Functional.add"),
            "Torch.add.0.forward.Torch.add");
  // A miss keeps the name: an API the table lacks, or a name that only
  // starts like a listed one.
  EXPECT_EQ(m.Key("Tensor.__sub__.0.forward.input.0"),
            "Tensor.__sub__.0.forward.input.0");
  EXPECT_EQ(m.Key("Functional.addmm2.0.forward.input.0"),
            "Functional.addmm2.0.forward.input.0");
  // Mint and MintFunctional win over the table, whatever their API.
  EXPECT_EQ(m.Key("MintFunctional.add.0.forward.input.0"),
            "Functional.add.0.forward.input.0");
  EXPECT_EQ(m.Key("Mint.add.0.forward.input.0"), "Torch.add.0.forward.input.0");
  EXPECT_EQ(MsToPtApi("Functional.add"), "Torch.add");
  EXPECT_EQ(MsToPtApi("Functional"), std::nullopt);
}

TEST(MsprobeMappingTest, DataMappingMapsWholeNamesAndIgnoresDtypes) {
  const MsprobeMapping m =
      Of(Kind::kData,
         "Mint.tanh.0.forward.output.0: Torch.tanh.0.forward."
         "output.0\n");
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.output.0"),
            "Torch.tanh.0.forward.output.0");
  // A prefix is not a whole name.
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.output.0.x"),
            "Mint.tanh.0.forward.output.0.x");
  EXPECT_TRUE(m.ignores_dtypes());
  EXPECT_FALSE(MsprobeMapping::Api().ignores_dtypes());
}

std::vector<ApiArgMapping> Items(const std::string& text) {
  Result<std::vector<ApiArgMapping>> items =
      ParseApiArgMappings(text, "api.yaml");
  EXPECT_TRUE(items.ok()) << items.status().message();
  return items.ok() ? std::move(*items) : std::vector<ApiArgMapping>();
}

using Places = std::vector<std::pair<std::string, std::string>>;

TEST(ApiArgMappingsTest, ReadsFlowAndBlockListsInFileOrder) {
  const std::vector<ApiArgMapping> items = Items(
      "# msprobe's api_mapping.yaml\n"
      "- ms_api: Mint.sub\n"
      "  pt_api: 'Torch.sub'\n"
      "  ms_args: [0, 1]\n"
      "  pt_args:\n"
      "    - 1\n"
      "    - \"0\"\n"
      "  ms_output: [0]  # the result\n"
      "  pt_output: [0]\n"
      "-\n"
      "  pt_api: Torch.mul\n"
      "  ms_api: Mint.mul\n"
      "  ms_parameters_grad: [weight]\n"
      "  pt_parameters_grad: [weight]\n");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].ms_api, "Mint.sub");
  EXPECT_EQ(items[0].pt_api, "Torch.sub");
  EXPECT_EQ(items[0].line, 2);
  EXPECT_EQ(items[0].Places("args"), (Places{{"0", "1"}, {"1", "0"}}));
  EXPECT_EQ(items[0].Places("output"), (Places{{"0", "0"}}));
  EXPECT_TRUE(items[0].Places("parameters").empty());
  EXPECT_EQ(items[1].ms_api, "Mint.mul");
  // Where its map starts: the line after the '-' alone.
  EXPECT_EQ(items[1].line, 11);
  EXPECT_EQ(items[1].Places("parameters_grad"), (Places{{"weight", "weight"}}));
  // The same as JSON; numbers as Python's str() writes them.
  const std::vector<ApiArgMapping> json = Items(
      R"([{"ms_api": "Mint.sub", "pt_api": "Torch.sub",
           "ms_args": [0, 1], "pt_args": [1, "0"]}])");
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0].Places("args"), (Places{{"0", "1"}, {"1", "0"}}));
}

TEST(ApiArgMappingsTest, BadFilesNameTheLine) {
  auto error = [](const std::string& text) {
    Result<std::vector<ApiArgMapping>> items =
        ParseApiArgMappings(text, "api.yaml");
    EXPECT_FALSE(items.ok()) << text;
    return items.ok() ? std::string() : items.status().message();
  };
  EXPECT_EQ(error("- ms_api: Mint.sub\n  pt_api: Torch.sub\n"
                  "  ms_args: [0, 1]\n  pt_args: [1]\n"),
            "api.yaml:1: ms_args and pt_args must list as many places "
            "(2 and 1)");
  EXPECT_EQ(error("- ms_api: Mint.sub\n  pt_api: Torch.sub\n"
                  "  ms_outputs: [0]\n"),
            "api.yaml:3: unknown key 'ms_outputs' (expected ms_api, pt_api, "
            "ms_args, pt_args, ms_output, pt_output, ms_parameters, "
            "pt_parameters, ms_parameters_grad, pt_parameters_grad)");
  EXPECT_EQ(error("- ms_api: Mint.sub\n  ms_args: [0]\n  pt_args: [0]\n"),
            "api.yaml:1: an item needs both ms_api and pt_api");
  EXPECT_EQ(error("ms_api: Mint.sub\n"),
            "api.yaml:1: expected a list of '- ms_api: ...' items");
  EXPECT_EQ(error("- ms_api: Mint.sub\n  pt_api: Torch.sub\n"
                  "  ms_args: 0\n"),
            "api.yaml:3: ms_args must be a list of places ([0, 1])");
  // yaml-cpp's words, at the line and column where it gave up.
  EXPECT_EQ(error("- ms_api: Mint.sub\n  pt_api: Torch.sub\n"
                  "  ms_args: [0, 1\n"),
            "api.yaml:4:1: end of sequence flow not found");
  EXPECT_EQ(error("- ms_api: [Mint.sub]\n"),
            "api.yaml:1: ms_api must be an API name (\"Mint.add\")");
  EXPECT_NE(error("[{\"ms_api\": 1,}]").find("api.yaml"), std::string::npos);
  Result<std::vector<ApiArgMapping>> missing =
      LoadApiArgMappings("/nonexistent/api.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/api.yaml: cannot open: No such file or directory");
}

TEST(MsprobeMappingTest, ApiMappingFileSwapsPlacesAndAbandonsTheRest) {
  const MsprobeMapping m = MsprobeMapping::Api(
      Items("- ms_api: Tensor.__sub__\n  pt_api: Functional.mse_loss\n"
            "  ms_args: [0, 1]\n  pt_args: [1, 0]\n"
            "  ms_output: [0]\n  pt_output: [0]\n"));
  const std::string fwd = "Tensor.__sub__.0.forward";
  EXPECT_EQ(m.Key(fwd + ".input.0", fwd),
            "Functional.mse_loss.0.forward.input.1");
  EXPECT_EQ(m.Key(fwd + ".input.1", fwd),
            "Functional.mse_loss.0.forward.input.0");
  EXPECT_EQ(m.Key(fwd + ".output.0", fwd),
            "Functional.mse_loss.0.forward.output.0");
  // A place not listed (a keyword argument, a nested place, an output)
  // pairs with nothing.
  EXPECT_EQ(m.Key(fwd + ".input.alpha", fwd),
            "Functional.mse_loss.0.forward.input.alphaabandoned");
  EXPECT_EQ(m.Key(fwd + ".input.0.1", fwd),
            "Functional.mse_loss.0.forward.input.0.1abandoned");
  const std::string bwd = "Tensor.__sub__.0.backward";
  EXPECT_EQ(m.Key(bwd + ".output.1", bwd),
            "Functional.mse_loss.0.backward.output.1abandoned");
  EXPECT_EQ(m.Key(bwd + ".output.0", bwd),
            "Functional.mse_loss.0.backward.output.0");
  // Other APIs keep the built-in mapping.
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.input.0", "Mint.tanh.0.forward"),
            "Torch.tanh.0.forward.input.0");
  EXPECT_EQ(m.Key("Tensor.add.0.forward.input.0", "Tensor.add.0.forward"),
            "Tensor.add.0.forward.input.0");
}

TEST(MsprobeMappingTest, ApiMappingFileAppliesToApisBothDumpsCall) {
  const MsprobeMapping m =
      MsprobeMapping::Api(Items("- ms_api: Mint.sub\n  pt_api: Torch.sub\n"
                                "  ms_args: [0, 1]\n  pt_args: [1, 0]\n"
                                "- ms_api: Mint.mul\n  pt_api: Torch.mul\n"
                                "  ms_args: [0]\n  pt_args: [0]\n"));
  Dump target;
  target.entries = {"Mint.sub.0.forward", "Mint.mul.0.forward"};
  target.rows.push_back({.name = "Mint.sub.0.forward.input.0", .entry = 0});
  target.rows.push_back({.name = "Mint.mul.0.forward.input.1", .entry = 1});
  Dump baseline;
  baseline.entries = {"Torch.sub.0.forward"};
  baseline.rows.push_back({.name = "Torch.sub.0.forward.input.1"});
  const MsprobeMapping pair = m.ForPair(target, baseline);
  EXPECT_EQ(pair.Key("Mint.sub.0.forward.input.0", "Mint.sub.0.forward"),
            "Torch.sub.0.forward.input.1");
  // The baseline calls no Torch.mul: the built-in mapping alone.
  EXPECT_EQ(pair.Key("Mint.mul.0.forward.input.1", "Mint.mul.0.forward"),
            "Torch.mul.0.forward.input.1");
  EXPECT_EQ(m.Key("Mint.mul.0.forward.input.1", "Mint.mul.0.forward"),
            "Torch.mul.0.forward.input.1abandoned");
}

TEST(MsprobeMappingTest, DtypesOfOneFamilyPairAcrossFrameworksOnly) {
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Float32", "torch.float32"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("torch.bfloat16", "Float16"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Int64", "torch.int32"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("UInt8", "torch.int8"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Bool", "torch.bool"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Complex64", "torch.complex128"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Float32", "torch.int32"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Bool", "torch.uint8"));
  // One framework: not this rule's to decide.
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Int32", "Int64"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("torch.int32", "torch.int64"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("<class 'int'>", "torch.int64"));
}

// A dump of `entries`, each with the rows named by `suffixes`, whose
// construct.json gives `parents`; with a stack.json.
Dump DumpOf(const std::vector<std::string>& entries,
            const std::vector<std::pair<std::string, std::string>>& parents,
            const std::vector<std::string>& suffixes = {".input.0"}) {
  Dump dump;
  dump.dir = "/d";
  dump.entries = entries;
  for (size_t e = 0; e < entries.size(); ++e) {
    for (const std::string& s : suffixes) {
      Row row;
      row.name = entries[e] + s;
      row.entry = e;
      dump.rows.push_back(row);
    }
    dump.parents[entries[e]] = "";
  }
  for (const auto& [entry, parent] : parents) dump.parents[entry] = parent;
  dump.has_stack = true;
  dump.stacks[entries.front()] = "['File x.py, line 1, in f, \\n f()']";
  return dump;
}

LayerMapping Parsed(const std::string& yaml) {
  Result<LayerMapping> m = LayerMapping::Parse(yaml, "lm.yaml");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : LayerMapping();
}

TEST(LayerMappingTest, ScopesFollowMsprobesRules) {
  const Dump dump = DumpOf(
      {"Cell.net.fc1.Dense.forward.0", "Primitive.matmul.MatMul.0.forward",
       "Mint.tanh.0.forward", "Cell.net.fc1.Dense.parameters_grad.0",
       "Functional.linear.0.backward", "Functional.linear.0.forward"},
      {{"Primitive.matmul.MatMul.0.forward", "Cell.net.fc1.Dense.forward.0"},
       {"Functional.linear.0.forward", "Cell.net.fc1.Dense.forward.0"}});
  Result<std::vector<LayerItem>> items = LayerItems(dump);
  ASSERT_TRUE(items.ok()) << items.status().message();
  std::vector<std::string> scopes, types, states;
  for (const LayerItem& i : *items) {
    scopes.push_back(i.full_scope);
    types.push_back(i.type_name);
    states.push_back(i.state);
  }
  // A cell: its name less 4 parts, then its attribute; an API: its parent
  // less 3, or TopLayer; parameters_grad: less 3; a backward entry: its
  // forward twin's, wherever construct.json puts it.
  EXPECT_EQ(scopes, (std::vector<std::string>{
                        "Cell.net.fc1", "Cell.net.fc1.MatMul", "TopLayer.tanh",
                        "Cell.net.fc1.fc1", "Cell.net.fc1.linear",
                        "Cell.net.fc1.linear"}));
  EXPECT_EQ(types, (std::vector<std::string>{"Dense", "MatMul", "tanh", "Dense",
                                             "linear", "linear"}));
  EXPECT_EQ(states, (std::vector<std::string>{"forward", "forward", "forward",
                                              "parameters_grad", "backward",
                                              "forward"}));
}

TEST(LayerMappingTest, AnEntryOfFewerThanFourPartsIsAnError) {
  Result<std::vector<LayerItem>> items =
      LayerItems(DumpOf({"Mint.tanh.forward"}, {}));
  ASSERT_FALSE(items.ok());
  EXPECT_NE(items.status().message().find("'Mint.tanh.forward'"),
            std::string::npos);
}

TEST(LayerMappingTest, RenamedChildrenPairRowsBySuffix) {
  const Dump target =
      DumpOf({"Cell.body.Block.forward.0", "Primitive.matmul.MatMul.0.forward",
              "Cell.body.dense.Dense.forward.0"},
             {{"Primitive.matmul.MatMul.0.forward",
               "Cell.body.dense.Dense.forward.0"}},
             {".input.0", ".input.1"});
  const Dump baseline = DumpOf(
      {"Module.trunk.Block.forward.0", "Functional.linear.0.forward",
       "Module.trunk.proj.Linear.forward.0"},
      {{"Functional.linear.0.forward", "Module.trunk.proj.Linear.forward.0"}},
      {".input.0"});
  // "Cell" is the top layer; "(" drops the rest; the longer rule first.
  const LayerMapping m = Parsed(
      "Cell:\n"
      "  body: trunk(Block)\n"
      "Block:\n"
      "  dense: wrong\n"
      "  dense.MatMul: proj.linear\n"
      "  'dense': proj   # a key given twice: the last value\n");
  Result<MsprobeMapping> data = m.DataMapping(target, baseline);
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->kind(), MsprobeMapping::Kind::kData);
  EXPECT_EQ(data->Key("Cell.body.Block.forward.0.input.0"),
            "Module.trunk.Block.forward.0.input.0");
  EXPECT_EQ(data->Key("Cell.body.dense.Dense.forward.0.input.0"),
            "Module.trunk.proj.Linear.forward.0.input.0");
  // The MatMul under dense is found through the two-part rule.
  EXPECT_EQ(data->Key("Primitive.matmul.MatMul.0.forward.input.0"),
            "Functional.linear.0.forward.input.0");
  // A suffix the twin lacks, and no mapping: N/A.
  EXPECT_EQ(data->Key("Primitive.matmul.MatMul.0.forward.input.1"), "N/A");
  Result<MsprobeMapping> none = Parsed("").DataMapping(target, baseline);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->Key("Cell.body.Block.forward.0.input.0"), "N/A");
}

TEST(LayerMappingTest, KeyedStackLinesPutAnApiUnderItsFrameworkCaller) {
  // msprobe's own fixture: MindSpore's Tensor.__getitem__ calls __add__.0
  // for the user; __add__.1 and PyTorch's two __add__ come from user code.
  const std::string wrapper =
      "File /p/msprobe/wrap_api.py, line 98, in api_function, \n return "
      "ApiTemplate(api_name, api_dict, prefix, hook)(*args, **kwargs)";
  const std::string getitem =
      "File /p/site-packages/mindspore/common/tensor.py, line 483, in "
      "__getitem__, \n out = f(self, index)";
  const std::string user =
      "File /net/utils.py, line 78, in get_masks, \n mask[b] = 0";
  Dump target =
      DumpOf({"Tensor.__add__.0.forward", "Tensor.__add__.1.forward",
              "Tensor.__add__.1.backward", "Primitive.add.Add.0.forward"},
             {});
  target.framework = "mindspore";
  target.named_stacks = {{"Tensor.__add__.0.forward", {wrapper, getitem, user}},
                         {"Tensor.__add__.1.forward", {wrapper, user}},
                         {"Primitive.add.Add.0.forward", {getitem}}};
  Dump baseline =
      DumpOf({"Tensor.__add__.0.forward", "Tensor.__add__.1.forward",
              "Tensor.__add__.0.backward"},
             {});
  baseline.framework = "pytorch";
  Result<std::vector<LayerItem>> items = LayerItems(target);
  ASSERT_TRUE(items.ok()) << items.status().message();
  std::vector<std::string> scopes;
  for (const LayerItem& i : *items) scopes.push_back(i.full_scope);
  // A primitive reads no stack; the backward entry takes its forward's.
  EXPECT_EQ(scopes, (std::vector<std::string>{
                        "TopLayer.__getitem__.__add__", "TopLayer.__add__",
                        "TopLayer.__add__", "TopLayer.Add"}));
  Result<MsprobeMapping> data = Parsed("").DataMapping(target, baseline);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->Key("Tensor.__add__.0.forward.input.0"), "N/A");
  EXPECT_EQ(data->Key("Tensor.__add__.1.forward.input.0"),
            "Tensor.__add__.0.forward.input.0");
  EXPECT_EQ(data->Key("Tensor.__add__.1.backward.input.0"),
            "Tensor.__add__.0.backward.input.0");
  // The same lines in 26.x's indexed stack.json: no frame part, and the
  // calls pair by place.
  target.named_stacks.clear();
  data = Parsed("").DataMapping(target, baseline);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->Key("Tensor.__add__.0.forward.input.0"),
            "Tensor.__add__.0.forward.input.0");
  EXPECT_EQ(data->Key("Tensor.__add__.1.forward.input.0"),
            "Tensor.__add__.1.forward.input.0");
}

TEST(LayerMappingTest, ATargetWithoutLayersIsComparedPlainly) {
  Dump target = DumpOf({"Cell.fc1.Dense.forward.0"}, {});
  target.has_stack = false;
  target.stacks.clear();
  Result<MsprobeMapping> data =
      Parsed("Cell:\n  fc1: fc2\n").DataMapping(target, target);
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE(data->empty());
}

TEST(LayerMappingTest, BadFilesNameTheLine) {
  for (const auto& [yaml, line] :
       std::vector<std::pair<std::string, std::string>>{
           {"Dense:\n  fc1 fc2\n", "lm.yaml:2: "},
           {"  fc1: fc2\n", "lm.yaml:1: "},
           {"# c\nDense: Linear\n", "lm.yaml:2: "},
           {"Dense:\n\tfc1: fc2\n", "lm.yaml:2:5: "}}) {
    Result<LayerMapping> m = LayerMapping::Parse(yaml, "lm.yaml");
    ASSERT_FALSE(m.ok()) << yaml;
    EXPECT_EQ(m.status().message().rfind(line, 0), 0u) << m.status().message();
  }
  Result<LayerMapping> missing = LayerMapping::Load("/nonexistent/lm.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/lm.yaml"),
            std::string::npos);
}

}  // namespace
}  // namespace tprobe::compare
