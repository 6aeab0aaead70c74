#include "daemon/output/entry_renderer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "common/dump/json_reindent.h"
#include "tests/daemon/ring_records.h"

namespace tprobe::daemon {
namespace {

using dump::Json;
using dump::PythonJsonDumps;
using testing::Bool;
using testing::Dict;
using testing::Float;
using testing::Int;
using testing::List;
using testing::MakeEntry;
using testing::Null;
using testing::Ref;
using testing::Str;
using testing::Typed;

TensorInfo CompleteTensor() {
  TensorInfo t;
  t.dtype = DType::kFloat32;
  t.shape = {2, 3};
  t.requires_grad = true;
  t.complete = true;
  t.stats = {4.0, -2.0, 0.75, 5.0};
  t.md5 = "0a1b2c3d";
  return t;
}

// The entry as json.dumps(entry, indent=1) writes it as a document of its
// own. Checks first that the rendered bytes are laid out as dump.json holds
// the entry (2 levels deep): laying them out again changes nothing.
std::string Dumps(const RenderedEntry& r) {
  std::string in_dump;
  r.text.AppendTo(in_dump);
  std::string relaid;
  EXPECT_TRUE(dump::ReindentPythonJson(in_dump, 2, relaid)) << in_dump;
  EXPECT_EQ(relaid, in_dump) << "not in dump.json's indent=1 layout";
  std::string out;
  EXPECT_TRUE(dump::ReindentPythonJson(in_dump, 0, out));
  return out;
}

// The entry parsed (for entries without NaN or infinities).
Json Parsed(const RenderedEntry& r) { return Json::parse(Dumps(r)); }

class EntryRendererTest : public ::testing::Test {
 protected:
  RenderedEntry Render(std::string_view name, const testing::Entry& entry,
                       RenderOptions options = {}) {
    RenderedEntry r;
    Status s = renderer_.Render(
        name, std::as_bytes(std::span(entry.data(), entry.size())),
        [this](uint32_t ref) -> const TensorInfo* {
          auto it = tensors_.find(ref);
          return it == tensors_.end() ? nullptr : &it->second;
        },
        options, &r);
    EXPECT_TRUE(s.ok()) << s.message();
    return s.ok() ? std::move(r) : RenderedEntry{};
  }

  std::map<uint32_t, TensorInfo> tensors_;
  // One renderer for every entry of a test, as the drain has.
  EntryRenderer renderer_;
};

TEST_F(EntryRendererTest, ScalarsRenderAsPlainJsonValues) {
  RenderedEntry r = Render(
      "X", MakeEntry({{"none", Null()},
                      {"yes", Bool(true)},
                      {"no", Bool(false)},
                      {"int", Int(-165558)},
                      {"float", Float(1e-05)},
                      {"whole", Float(2.0)},
                      {"nan", Float(std::numeric_limits<double>::quiet_NaN())},
                      {"inf", Float(-std::numeric_limits<double>::infinity())},
                      {"str", Str("mean")}}));
  EXPECT_EQ(Dumps(r), R"({
 "none": null,
 "yes": true,
 "no": false,
 "int": -165558,
 "float": 1e-05,
 "whole": 2.0,
 "nan": NaN,
 "inf": -Infinity,
 "str": "mean"
})");
  EXPECT_EQ(r.tensors_incomplete, 0u);
  EXPECT_TRUE(r.files.empty());
}

TEST_F(EntryRendererTest, ListsAndDictsKeepTheirOrder) {
  RenderedEntry r = Render(
      "X", MakeEntry({{"input_args", List({Int(1), List({}), Null()})},
                      {"input_kwargs", Dict({{"z", Int(1)}, {"a", Dict({})}})},
                      {"output", List({})}}));
  EXPECT_EQ(Dumps(r), R"({
 "input_args": [
  1,
  [],
  null
 ],
 "input_kwargs": {
  "z": 1,
  "a": {}
 },
 "output": []
})");
}

TEST_F(EntryRendererTest, TypedValuesBecomeTypeAndValue) {
  RenderedEntry r = Render(
      "X", MakeEntry({{"input_args",
                       List({Typed("int", Int(2)),
                             Typed("slice", List({Int(1), Int(10), Null()})),
                             Typed("torch.Size", List({Int(3), Int(4)}))})},
                      {"input_kwargs",
                       Dict({{"reduction", Typed("str", Str("mean"))},
                             {"label_smoothing", Typed("float", Float(0.0))},
                             {"flag", Typed("bool", Bool(false))}})}}));
  EXPECT_EQ(Dumps(r), R"({
 "input_args": [
  {
   "type": "int",
   "value": 2
  },
  {
   "type": "slice",
   "value": [
    1,
    10,
    null
   ]
  },
  {
   "type": "torch.Size",
   "value": [
    3,
    4
   ]
  }
 ],
 "input_kwargs": {
  "reduction": {
   "type": "str",
   "value": "mean"
  },
  "label_smoothing": {
   "type": "float",
   "value": 0.0
  },
  "flag": {
   "type": "bool",
   "value": false
  }
 }
})");
}

TEST_F(EntryRendererTest, TensorKeysComeInMsprobeOrder) {
  tensors_[7] = CompleteTensor();
  RenderedEntry r = Render("Functional.relu.0.forward",
                           MakeEntry({{"output", List({Ref(7)})}}));
  EXPECT_EQ(Dumps(r), R"({
 "output": [
  {
   "type": "torch.Tensor",
   "dtype": "torch.float32",
   "shape": [
    2,
    3
   ],
   "Max": 4.0,
   "Min": -2.0,
   "Mean": 0.75,
   "Norm": 5.0,
   "requires_grad": true
  }
 ]
})");
  EXPECT_EQ(r.tensors_incomplete, 0u);
}

TEST_F(EntryRendererTest, MindSporeTensorHasMindSporeNamesAndNoRequiresGrad) {
  tensors_[7] = CompleteTensor();
  tensors_[8] = CompleteTensor();
  tensors_[8].dtype = DType::kBFloat16;
  tensors_[8].shape = {};
  RenderOptions options;
  options.framework = &dump::kMindSpore;
  RenderedEntry r =
      Render("Mint.tanh.0.forward",
             MakeEntry({{"output", List({Ref(7), Ref(8)})}}), options);
  EXPECT_EQ(Dumps(r), R"({
 "output": [
  {
   "type": "mindspore.Tensor",
   "dtype": "Float32",
   "shape": [
    2,
    3
   ],
   "Max": 4.0,
   "Min": -2.0,
   "Mean": 0.75,
   "Norm": 5.0
  },
  {
   "type": "mindspore.Tensor",
   "dtype": "BFloat16",
   "shape": [],
   "Max": 4.0,
   "Min": -2.0,
   "Mean": 0.75,
   "Norm": 5.0
  }
 ]
})");
}

TEST_F(EntryRendererTest, ZeroDimTensorHasEmptyShapeAndItsOwnStats) {
  TensorInfo t;
  t.dtype = DType::kInt64;
  t.complete = true;
  t.stats = {int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}};
  tensors_[1] = t;
  RenderedEntry r = Render("X", MakeEntry({{"input_args", List({Ref(1)})}}));
  EXPECT_EQ(PythonJsonDumps(Parsed(r)["input_args"][0]), R"({
 "type": "torch.Tensor",
 "dtype": "torch.int64",
 "shape": [],
 "Max": 0,
 "Min": 0,
 "Mean": 0,
 "Norm": 0,
 "requires_grad": false
})");
}

TEST_F(EntryRendererTest, Md5ModeAppendsTheChecksumAfterRequiresGrad) {
  tensors_[1] = CompleteTensor();
  RenderedEntry r = Render("X", MakeEntry({{"output", List({Ref(1)})}}),
                           RenderOptions{.data_name = false, .md5 = true});
  EXPECT_EQ(PythonJsonDumps(Parsed(r)["output"][0]), R"({
 "type": "torch.Tensor",
 "dtype": "torch.float32",
 "shape": [
  2,
  3
 ],
 "Max": 4.0,
 "Min": -2.0,
 "Mean": 0.75,
 "Norm": 5.0,
 "requires_grad": true,
 "md5": "0a1b2c3d"
})");
}

TEST_F(EntryRendererTest, TensorModeNamesFilesByCategoryAndPath) {
  for (uint32_t ref : {1, 2, 3, 4, 5}) tensors_[ref] = CompleteTensor();
  RenderedEntry r =
      Render("Tensor.add_.0.forward",
             MakeEntry({{"input_args", List({Ref(1), List({Ref(2)})})},
                        {"input_kwargs", Dict({{"alpha", Ref(3)}})},
                        {"output", List({Ref(4)})},
                        {"parameters", Dict({{"weight", Ref(5)}})}}),
             RenderOptions{.data_name = true, .md5 = true});
  std::vector<std::string> names;
  for (const TensorFile& f : r.files) names.push_back(f.file_name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "Tensor.add_.0.forward.input.0.npy",
                       "Tensor.add_.0.forward.input.1.0.npy",
                       "Tensor.add_.0.forward.kwargs.alpha.npy",
                       "Tensor.add_.0.forward.output.0.npy",
                       "Tensor.add_.0.forward.parameters.weight.npy"}));
  EXPECT_EQ(r.files[2].ref, 3u);
  // data_name sits between requires_grad and md5.
  const Json alpha = Parsed(r)["input_kwargs"]["alpha"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : alpha.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "type", "dtype", "shape", "Max", "Min", "Mean", "Norm",
                      "requires_grad", "data_name", "md5"}));
  EXPECT_EQ(alpha["data_name"], "Tensor.add_.0.forward.kwargs.alpha.npy");
}

TEST_F(EntryRendererTest, ParameterGradientFilesAreNamedAfterTheParameter) {
  tensors_[1] = CompleteTensor();
  RenderedEntry r = Render("Module.fc.Linear.parameters_grad.0",
                           MakeEntry({{"weight", List({Ref(1)})}}),
                           RenderOptions{.data_name = true});
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].file_name,
            "Module.fc.Linear.parameters_grad.0.weight.npy");
}

TEST_F(EntryRendererTest, IncompleteTensorHasNullStatisticsAndNoFile) {
  TensorInfo t = CompleteTensor();
  t.complete = false;
  tensors_[1] = t;
  RenderedEntry r = Render("X", MakeEntry({{"output", List({Ref(1)})}}),
                           RenderOptions{.data_name = true, .md5 = true});
  EXPECT_EQ(PythonJsonDumps(Parsed(r)["output"][0]), R"({
 "type": "torch.Tensor",
 "dtype": "torch.float32",
 "shape": [
  2,
  3
 ],
 "Max": null,
 "Min": null,
 "Mean": null,
 "Norm": null,
 "requires_grad": true,
 "md5": null
})");
  EXPECT_EQ(r.tensors_incomplete, 1u);
  EXPECT_TRUE(r.files.empty());
}

TEST_F(EntryRendererTest, UnknownRefRendersNullAndCountsAsIncomplete) {
  tensors_[1] = CompleteTensor();
  RenderedEntry r = Render(
      "X", MakeEntry({{"input_args", List({Ref(1), Ref(99), Ref(98)})}}));
  EXPECT_TRUE(Parsed(r)["input_args"][1].is_null());
  EXPECT_TRUE(Parsed(r)["input_args"][2].is_null());
  EXPECT_EQ(r.tensors_incomplete, 2u);
}

TEST_F(EntryRendererTest, InfiniteOrNaNMaxOrMinOfACompleteTensorIsAnOverflow) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    stats::TensorStats stats;
    bool complete;
    bool overflow;
  };
  const Case cases[] = {
      {"finite", {4.0, -2.0, 0.75, 5.0}, true, false},
      {"+inf max", {kInf, -2.0, kInf, kInf}, true, true},
      {"-inf min", {4.0, -kInf, -kInf, kInf}, true, true},
      {"nan max and min", {kNaN, kNaN, kNaN, kNaN}, true, true},
      {"only mean and norm infinite", {3e38, -3e38, kInf, kInf}, true, false},
      {"integers", {int64_t{9}, int64_t{-9}, {}, {}}, true, false},
      {"bools", {true, false, {}, {}}, true, false},
      {"empty", {}, true, false},
      {"incomplete", {kInf, kNaN, kNaN, kNaN}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TensorInfo t = CompleteTensor();
    t.stats = c.stats;
    t.complete = c.complete;
    tensors_[1] = t;
    tensors_[2] = CompleteTensor();
    EXPECT_EQ(Render("X", MakeEntry({{"input_args", List({Ref(2), Ref(1)})}}))
                  .overflow,
              c.overflow);
  }
}

TEST_F(EntryRendererTest, EmptyEntryRendersAnEmptyObject) {
  EXPECT_EQ(Dumps(Render("X", testing::Entry())), "{}");
}

}  // namespace
}  // namespace tprobe::daemon
