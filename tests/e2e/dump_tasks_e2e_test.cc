// The tasks of a dump (tensor, md5 summaries, overflow_check) and the loss
// accounting, end to end: records written into the real tprobed's rings,
// the files it writes checked against independent truth (numpy, zlib).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "common/control/response.h"
#include "common/dump/json_writer.h"
#include "common/stats/half.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/raw_rank_test.h"

namespace tprobe {
namespace {

using dump::Json;
using testing::ConfigJson;
using testing::Dict;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::RawClient;
using testing::ReadFile;
using testing::RecordWriter;
using testing::Ref;
using testing::StepRequest;
using testing::WaitFor;

using Bytes = std::vector<std::byte>;

template <typename T>
Bytes AsBytes(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Sends a tensor as a Tensor record and chunks of at most 4 KiB.
bool SendTensor(RecordWriter& w, uint32_t ref, DType dtype,
                const std::vector<int64_t>& shape, const Bytes& bytes,
                bool requires_grad = false) {
  if (!w.Tensor(ref, dtype, shape, requires_grad, bytes.size())) return false;
  for (size_t i = 0; i < bytes.size(); i += 4096) {
    const size_t n = std::min<size_t>(4096, bytes.size() - i);
    if (!w.Chunk(ref, i, bytes.data() + i, n)) return false;
  }
  return true;
}

class DumpTasksTest : public testing::RawRankTest {
 protected:
  std::string StepDir(uint32_t step = 0) const {
    return Dump() + "/step" + std::to_string(step) + "/rank0";
  }
  // Parses a JSON file of the tree. Python writes non-finite floats as the
  // bare words NaN, Infinity and -Infinity, which are read as the strings
  // "NaN", "Infinity" and "-Infinity".
  Json Load(const std::string& name, uint32_t step = 0) const {
    const std::string text = ReadFile(StepDir(step) + "/" + name);
    std::string quoted;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        quoted += c;
        if (c == '\\') {
          quoted += text[++i];
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') in_string = true;
      bool replaced = false;
      for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
        if (std::string_view(text).substr(i, word.size()) == word) {
          quoted += '"' + std::string(word) + '"';
          i += word.size() - 1;
          replaced = true;
          break;
        }
      }
      if (!replaced) quoted += c;
    }
    return Json::parse(quoted);
  }
  std::vector<std::string> EntryNames() const {
    const Json doc = Load("dump.json");
    std::vector<std::string> names;
    for (const auto& [name, body] : doc["data"].items()) names.push_back(name);
    return names;
  }
  // A rank registered with `config_json`, ring of 1 MiB.
  std::unique_ptr<testing::RawRank> Rank(const std::string& config_json) {
    v1::Register reg = MakeRegister(config_json);
    reg.set_ring_bytes(uint64_t{1} << 20);
    return Register(reg);
  }
  // Closes the step (its Step after the records `w` wrote) and waits until
  // its files are written: Flush is answered once the boundaries written
  // before it have run.
  bool Step(RawClient& client, RecordWriter& w, uint32_t step) {
    v1::Response resp;
    v1::Request flush;
    flush.mutable_flush();
    return w.Boundary(StepRequest(step)) && client.Call(flush, &resp) &&
           control::IsOk(resp);
  }

  std::mt19937 rng_{12345};
};

// msprobe's data_name rule (reference 3.3) with .npy, every dtype, nested
// positions, parameters and parameter gradients; identical payloads share
// an inode; check_tree.py reloads every file with numpy and recomputes the
// statistics of its entry.
TEST_F(DumpTasksTest, TensorTaskFilesLoadWithNumpyAndReproduceTheStatistics) {
  ASSERT_TRUE(StartDaemon());
  // A relative dump_path is the trainer's: tprobed reads our working
  // directory at registration, and dump_data_dir keeps the path relative.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  auto rank = Rank(ConfigJson("./dump", "tensor", "mix"));
  std::filesystem::current_path(cwd);
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();

  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  auto floats = [&](size_t n, bool positive = false) {
    std::vector<float> v(n);
    for (float& x : v) x = positive ? std::fabs(uniform(rng_)) : uniform(rng_);
    return v;
  };
  auto halves = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (uint16_t& x : v) x = stats::FloatToHalf(uniform(rng_));
    return v;
  };
  auto bfloats = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (uint16_t& x : v) x = stats::FloatToBFloat16(uniform(rng_));
    return v;
  };
  const Bytes relu_in = AsBytes(floats(32, /*positive=*/true));
  const Bytes weight = AsBytes(bfloats(16));
  std::vector<double> f64(6);
  for (double& x : f64) x = uniform(rng_) * 1e3;
  const std::vector<int32_t> i32 = {-7, 0, 3, 100000, 42, -1, 9};
  const std::vector<uint8_t> u8 = {0, 255, 7, 8, 9};
  const std::vector<uint8_t> flags = {0, 1, 1, 0, 0, 1};
  const std::vector<int64_t> scalar = {5};

  const char* names[] = {"",
                         "Functional.relu.0.forward",
                         "Tensor.add_.0.forward",
                         "Torch.cat.0.forward",
                         "Module.conv1.Conv2d.forward.0",
                         "Functional.relu.0.backward",
                         "Module.conv1.Conv2d.parameters_grad.0"};
  for (uint32_t id = 1; id <= 6; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, names[id]));
  }
  uint64_t seq = 1;
  auto recompute = testing::Bool(false);
  // 1: relu's output equals its input (all positive): one file, two names.
  ASSERT_TRUE(SendTensor(w, 1, DType::kFloat32, {4, 8}, relu_in));
  ASSERT_TRUE(SendTensor(w, 2, DType::kFloat32, {4, 8}, relu_in));
  const testing::Entry relu = MakeEntry({{"input_args", List({Ref(1)})},
                                         {"input_kwargs", Dict({})},
                                         {"is_recompute", recompute},
                                         {"output", List({Ref(2)})}});
  ASSERT_TRUE(w.Entry(seq++, 0, 1, 0, relu));
  // 2: a 0-d int64, a typed int, a float16 kwarg, a bfloat16 output.
  ASSERT_TRUE(SendTensor(w, 3, DType::kInt64, {}, AsBytes(scalar)));
  ASSERT_TRUE(SendTensor(w, 4, DType::kFloat16, {16}, AsBytes(halves(16))));
  ASSERT_TRUE(SendTensor(w, 5, DType::kBFloat16, {3, 5}, AsBytes(bfloats(15))));
  ASSERT_TRUE(w.Entry(
      seq++, 0, 2, 0,
      MakeEntry({{"input_args",
                  List({Ref(3), testing::Typed("int", testing::Int(1))})},
                 {"input_kwargs", Dict({{"alpha", Ref(4)}})},
                 {"is_recompute", recompute},
                 {"output", List({Ref(5)})}})));
  // 3: a list argument holding float64 and bool tensors; int32 and uint8.
  ASSERT_TRUE(SendTensor(w, 6, DType::kUInt8, {5}, AsBytes(u8)));
  ASSERT_TRUE(SendTensor(w, 7, DType::kFloat64, {2, 3}, AsBytes(f64)));
  ASSERT_TRUE(SendTensor(w, 8, DType::kBool, {6}, AsBytes(flags)));
  ASSERT_TRUE(SendTensor(w, 9, DType::kInt32, {7}, AsBytes(i32)));
  ASSERT_TRUE(
      w.Entry(seq++, 0, 3, 0,
              MakeEntry({{"input_args", List({Ref(6), List({Ref(7), Ref(8)})})},
                         {"input_kwargs", Dict({})},
                         {"is_recompute", recompute},
                         {"output", List({Ref(9)})}})));
  // 4: a module with an empty output and a bfloat16 parameter.
  ASSERT_TRUE(SendTensor(w, 10, DType::kFloat32, {2, 3}, AsBytes(floats(6))));
  ASSERT_TRUE(SendTensor(w, 11, DType::kFloat32, {0, 3}, {}));
  ASSERT_TRUE(SendTensor(w, 12, DType::kBFloat16, {4, 4}, weight, true));
  ASSERT_TRUE(w.Entry(seq++, 0, 4, 0,
                      MakeEntry({{"input_args", List({Ref(10)})},
                                 {"input_kwargs", Dict({})},
                                 {"output", List({Ref(11)})},
                                 {"parameters", Dict({{"weight", Ref(12)}})},
                                 {"is_recompute", recompute}})));
  // 5: backward; 6: the parameter's gradient, equal to the weight.
  ASSERT_TRUE(SendTensor(w, 13, DType::kFloat32, {4, 8}, AsBytes(floats(32))));
  ASSERT_TRUE(SendTensor(w, 14, DType::kFloat32, {4, 8}, AsBytes(floats(32))));
  ASSERT_TRUE(w.Entry(
      seq++, 0, 5, 0,
      MakeEntry({{"input", List({Ref(13)})}, {"output", List({Ref(14)})}})));
  ASSERT_TRUE(SendTensor(w, 15, DType::kBFloat16, {4, 4}, weight));
  ASSERT_TRUE(
      w.Entry(seq++, 0, 6, 0, MakeEntry({{"weight", List({Ref(15)})}})));
  // A graph-mode style re-dump of entry 1: dropped, its files not rewritten.
  ASSERT_TRUE(SendTensor(w, 1, DType::kFloat32, {4, 8}, relu_in));
  ASSERT_TRUE(SendTensor(w, 2, DType::kFloat32, {4, 8}, relu_in));
  ASSERT_TRUE(w.Entry(seq++, 0, 1, 0, relu));
  ASSERT_TRUE(Step(rank->client, w, 0));

  const Json doc = Load("dump.json");
  EXPECT_EQ(doc["dump_data_dir"], "./dump/step0/rank0/dump_tensor_data");
  const Json& data = doc["data"];
  auto data_name = [&](const Json& tensor) {
    return tensor.value("data_name", std::string("(none)"));
  };
  EXPECT_EQ(data_name(data[names[1]]["input_args"][0]),
            "Functional.relu.0.forward.input.0.npy");
  EXPECT_EQ(data_name(data[names[1]]["output"][0]),
            "Functional.relu.0.forward.output.0.npy");
  EXPECT_EQ(data_name(data[names[2]]["input_args"][0]),
            "Tensor.add_.0.forward.input.0.npy");
  EXPECT_EQ(data_name(data[names[2]]["input_kwargs"]["alpha"]),
            "Tensor.add_.0.forward.kwargs.alpha.npy");
  EXPECT_EQ(data_name(data[names[3]]["input_args"][1][0]),
            "Torch.cat.0.forward.input.1.0.npy");
  EXPECT_EQ(data_name(data[names[3]]["input_args"][1][1]),
            "Torch.cat.0.forward.input.1.1.npy");
  EXPECT_EQ(data_name(data[names[4]]["parameters"]["weight"]),
            "Module.conv1.Conv2d.forward.0.parameters.weight.npy");
  EXPECT_EQ(data_name(data[names[4]]["output"][0]),
            "Module.conv1.Conv2d.forward.0.output.0.npy");
  EXPECT_EQ(data_name(data[names[5]]["output"][0]),
            "Functional.relu.0.backward.output.0.npy");
  EXPECT_EQ(data_name(data[names[6]]["weight"][0]),
            "Module.conv1.Conv2d.parameters_grad.0.weight.npy");
  EXPECT_EQ(data[names[2]]["output"][0]["dtype"], "torch.bfloat16");

  // Every name is a file; identical payloads are one inode.
  const std::string tensors = StepDir() + "/dump_tensor_data/";
  std::set<ino_t> inodes;
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(tensors)) {
    struct stat st {};
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    inodes.insert(st.st_ino);
    ++files;
    EXPECT_EQ(entry.path().extension(), ".npy") << entry.path();
  }
  EXPECT_EQ(files, 15u);
  EXPECT_EQ(inodes.size(), 13u) << "relu in/out and weight/grad are shared";
  EXPECT_TRUE(std::filesystem::equivalent(
      tensors + "Module.conv1.Conv2d.forward.0.parameters.weight.npy",
      tensors + "Module.conv1.Conv2d.parameters_grad.0.weight.npy"));

  const Json acc = Load("tprobe.json");
  EXPECT_EQ(acc["duplicates_dropped"], 1);
  EXPECT_EQ(acc["complete"], true);

  std::string output;
  EXPECT_EQ(testing::RunCommand(
                std::string(TPROBE_PYTHON) + " " +
                    TPROBE_SOURCE_DIR "/tests/e2e/check_tree.py " + Dump(),
                &output),
            0)
      << output;
  EXPECT_NE(output.find("15 tensors, 0 problems"), std::string::npos) << output;
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// summary_mode md5: zlib's CRC-32 of the raw bytes in the native dtype
// (bfloat16 stays 2 bytes), "%08x"; the empty tensor gives "00000000".
TEST_F(DumpTasksTest, Md5ValuesEqualPythonZlibCrc32OfTheSameBytes) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(
      ConfigJson(Dump(), "statistics", "L1", R"({"summary_mode": "md5"})"));
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();

  struct Case {
    DType dtype;
    std::vector<int64_t> shape;
  };
  // Sizes below and above 256 bytes take the two CRC code paths.
  const std::vector<Case> cases = {
      {DType::kFloat32, {3}},     {DType::kFloat32, {300, 101}},
      {DType::kBFloat16, {1000}}, {DType::kFloat16, {7, 9}},
      {DType::kInt64, {}},        {DType::kUInt8, {1}},
      {DType::kBool, {5}},        {DType::kComplex64, {33}},
      {DType::kFloat64, {0}},     {DType::kInt8, {4099}},
  };
  std::uniform_int_distribution<int> byte(0, 255);
  ASSERT_TRUE(
      w.Intern(1, record::InternKind::kName, "Functional.linear.0.forward"));
  std::vector<testing::Value> outputs;
  for (uint32_t i = 0; i < cases.size(); ++i) {
    int64_t numel = 1;
    for (int64_t d : cases[i].shape) numel *= d;
    Bytes bytes(numel * ElementSize(cases[i].dtype));
    for (std::byte& b : bytes) {
      // Bools must be 0 or 1; every other dtype takes any bit pattern.
      b = std::byte(cases[i].dtype == DType::kBool ? byte(rng_) & 1
                                                   : byte(rng_));
    }
    std::ofstream(dir_.path() + "/t" + std::to_string(i) + ".bin",
                  std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    ASSERT_TRUE(SendTensor(w, i + 1, cases[i].dtype, cases[i].shape, bytes));
    outputs.push_back(Ref(i + 1));
  }
  ASSERT_TRUE(
      w.Entry(1, 0, 1, 0, MakeEntry({{"output", testing::ListOf(outputs)}})));
  ASSERT_TRUE(Step(rank->client, w, 0));

  std::string script =
      "import sys, zlib\nfor p in sys.argv[1:]:\n"
      "    print('%08x' % zlib.crc32(open(p, 'rb').read()))\n";
  std::ofstream(dir_.path() + "/crc.py") << script;
  std::string command =
      std::string(TPROBE_PYTHON) + " " + dir_.path() + "/crc.py";
  for (size_t i = 0; i < cases.size(); ++i) {
    command += " " + dir_.path() + "/t" + std::to_string(i) + ".bin";
  }
  std::string expected;
  ASSERT_EQ(testing::RunCommand(command, &expected), 0) << expected;
  std::string actual;
  const Json doc = Load("dump.json");
  const Json& out = doc["data"]["Functional.linear.0.forward"]["output"];
  ASSERT_EQ(out.size(), cases.size());
  for (const Json& tensor : out) {
    actual += tensor["md5"].get<std::string>() + "\n";
  }
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(out[8]["md5"], "00000000");
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// overflow_check: only calls with an inf or NaN (in Max or Min) anywhere in
// their tensors are kept, with full stats and their .npy files;
// stack.json and construct.json cover every call. Once overflow_nums calls
// are kept the dump ends, as msprobe's does: nothing later is written, not
// even a later step's directory.
TEST_F(DumpTasksTest, OverflowCheckKeepsOnlyOverflowingCallsUpToOverflowNums) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(
      ConfigJson(Dump(), "overflow_check", "mix", R"({"overflow_nums": 2})"));
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Call {
    const char* name;
    std::vector<float> input, output;
  };
  const Call calls[] = {
      {"Functional.linear.0.forward", {1, 2}, {3, 4}},
      {"Functional.exp.0.forward", {100, 2}, {inf, 7.4f}},
      {"Tensor.div.0.forward", {nan, 1}, {nan, 1}},  // NaN in its input
      {"Torch.log.0.forward", {0, 1}, {-inf, 0}},    // past overflow_nums
  };
  ASSERT_TRUE(w.Intern(100, record::InternKind::kStack, "File a.py, line 1"));
  ASSERT_TRUE(
      w.Intern(99, record::InternKind::kName, "Module.layer.Linear.forward.0"));
  uint64_t seq = 1;
  ASSERT_TRUE(w.Call(true, seq++, 0, 99, record::CallKind::kModule));
  for (uint32_t i = 0; i < 4; ++i) {
    const uint32_t id = i + 1;
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, calls[i].name));
    ASSERT_TRUE(w.Call(true, seq++, 0, id, record::CallKind::kApi));
    ASSERT_TRUE(w.Float32Tensor(1, {2}, calls[i].input));
    ASSERT_TRUE(w.Float32Tensor(2, {2}, calls[i].output));
    ASSERT_TRUE(w.Entry(seq++, 0, id, 100,
                        MakeEntry({{"input_args", List({Ref(1)})},
                                   {"input_kwargs", Dict({})},
                                   {"output", List({Ref(2)})}})));
    ASSERT_TRUE(w.Call(false, seq++, 0, id, record::CallKind::kApi));
  }
  ASSERT_TRUE(w.Call(false, seq++, 0, 99, record::CallKind::kModule));
  ASSERT_TRUE(Step(rank->client, w, 0));
  // A later step: the dump has ended.
  ASSERT_TRUE(w.Call(true, seq++, 1, 4, record::CallKind::kApi));
  ASSERT_TRUE(w.Float32Tensor(1, {2}, {inf, 1}));
  ASSERT_TRUE(
      w.Entry(seq++, 1, 4, 100, MakeEntry({{"input_args", List({Ref(1)})}})));
  ASSERT_TRUE(w.Call(false, seq++, 1, 4, record::CallKind::kApi));
  ASSERT_TRUE(Step(rank->client, w, 1));
  EXPECT_FALSE(std::filesystem::exists(StepDir(1)));

  EXPECT_EQ(EntryNames(), (std::vector<std::string>{"Functional.exp.0.forward",
                                                    "Tensor.div.0.forward"}));
  const Json doc = Load("dump.json");
  EXPECT_EQ(doc["task"], "overflow_check");
  EXPECT_EQ(doc["dump_data_dir"], Dump() + "/step0/rank0/dump_tensor_data");
  const Json exp_out = doc["data"]["Functional.exp.0.forward"]["output"][0];
  EXPECT_EQ(exp_out["Max"], "Infinity");
  EXPECT_EQ(exp_out["Min"], 7.400000095367432);
  EXPECT_EQ(exp_out["data_name"], "Functional.exp.0.forward.output.0.npy");
  std::set<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(StepDir() + "/dump_tensor_data")) {
    files.insert(e.path().filename().string());
  }
  EXPECT_EQ(files,
            (std::set<std::string>{"Functional.exp.0.forward.input.0.npy",
                                   "Functional.exp.0.forward.output.0.npy",
                                   "Tensor.div.0.forward.input.0.npy",
                                   "Tensor.div.0.forward.output.0.npy"}));
  // Every call up to the last kept one is in construct.json and stack.json.
  EXPECT_EQ(Load("construct.json").size(), 4u);
  EXPECT_EQ(Load("stack.json")["0"][0],
            Json::array({"Functional.linear.0.forward",
                         "Functional.exp.0.forward", "Tensor.div.0.forward"}));
  std::string output;
  EXPECT_EQ(testing::RunCommand(
                std::string(TPROBE_PYTHON) + " " +
                    TPROBE_SOURCE_DIR "/tests/e2e/check_tree.py " + Dump(),
                &output),
            0)
      << output;
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(DumpTasksTest, OverflowNumsMinusOneKeepsEveryOverflow) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(
      ConfigJson(Dump(), "overflow_check", "L1", R"({"overflow_nums": -1})"));
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(w.Intern(i, record::InternKind::kName,
                         "Torch.exp." + std::to_string(i) + ".forward"));
    ASSERT_TRUE(w.Float32Tensor(1, {1}, {i % 2 == 1 ? inf : 1.0f}));
    ASSERT_TRUE(w.Entry(i, 0, i, 0, MakeEntry({{"output", List({Ref(1)})}})));
  }
  ASSERT_TRUE(Step(rank->client, w, 0));
  EXPECT_EQ(EntryNames(), (std::vector<std::string>{"Torch.exp.1.forward",
                                                    "Torch.exp.3.forward",
                                                    "Torch.exp.5.forward"}));
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// A corrupt record: the step is written with what came before it and is
// never complete.
TEST_F(DumpTasksTest, ACorruptStreamLeavesTheStepIncomplete) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(ConfigJson(Dump()));
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  record::TensorRecord bad{};
  bad.dtype = 200;  // no such dtype
  ASSERT_TRUE(
      w.Raw(record::RecordType::kTensor, std::as_bytes(std::span(&bad, 1))));
  ASSERT_TRUE(w.Entry(2, 0, 1, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(Step(rank->client, w, 0));
  EXPECT_EQ(EntryNames(), std::vector<std::string>{"Tensor.add.0.forward"});
  const Json acc = Load("tprobe.json");
  EXPECT_EQ(acc["stream_corrupt"], true);
  EXPECT_EQ(acc["complete"], false);
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// A record naming an id that was never interned is skipped and counted.
TEST_F(DumpTasksTest, SkippedRecordsLeaveTheStepIncomplete) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(ConfigJson(Dump()));
  ASSERT_NE(rank, nullptr);
  RecordWriter w = rank->Writer();
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(w.Entry(2, 0, 7, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(Step(rank->client, w, 0));
  const Json acc = Load("tprobe.json");
  EXPECT_EQ(acc["records_skipped"], 1);
  EXPECT_EQ(acc["complete"], false);
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// A trainer killed with SIGKILL mid-step: what it committed is written, and
// the step is marked incomplete (producer_died), within a second.
TEST_F(DumpTasksTest, AKilledTrainerKeepsWhatItCaptured) {
  ASSERT_TRUE(StartDaemon());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string error;
    auto rank = testing::RawRank::Open(
        Socket(), MakeRegister(ConfigJson(Dump())), &error);
    bool ok = rank != nullptr;
    if (ok) {
      RecordWriter w = rank->Writer();
      for (uint32_t i = 1; ok && i <= 100; ++i) {
        ok = w.Intern(i, record::InternKind::kName,
                      "Tensor.mul." + std::to_string(i - 1) + ".forward") &&
             w.Float32Tensor(1, {2}, {1.0f, static_cast<float>(i)}) &&
             w.Entry(i, 0, i, 0, MakeEntry({{"output", List({Ref(1)})}}));
      }
    }
    const char byte = ok ? 1 : 0;
    (void)!::write(ready[1], &byte, 1);
    ::pause();  // killed here, mid-step
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(byte, 1);
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string acc = ReadFile(StepDir() + "/tprobe.json");
        return acc.find("\"producer_died\": true") != std::string::npos;
      },
      std::chrono::seconds(1)));
  EXPECT_EQ(Load("dump.json")["data"].size(), 100u);
  EXPECT_EQ(
      Load("dump.json")["data"]["Tensor.mul.99.forward"]["output"][0]["Max"],
      100.0);
  EXPECT_EQ(Load("tprobe.json")["complete"], false);
  EXPECT_EQ(daemon_->Terminate(), 0);
}

}  // namespace
}  // namespace tprobe
