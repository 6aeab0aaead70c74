#include "daemon/ingest/drain.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "common/dump/npy.h"
#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"
#include "daemon/ingest/step_accounting.h"
#include "daemon/ingest/tensor_assembler.h"
#include "tests/daemon/drain_fixture.h"
#include "tests/daemon/ring_records.h"

namespace tprobe::daemon {
namespace {

using testing::ConfigJson;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::ReadFile;
using testing::Ref;
using testing::TempDir;
using testing::TestRank;

using DrainTest = testing::DrainFixture;

TEST_F(DrainTest, EntriesOfSeveralRingsAreAppliedInSeqOrder) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto w0 = p.Writer(0);
  auto w1 = p.Writer(1);
  ASSERT_TRUE(w0.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w0.Intern(3, record::InternKind::kName, "C"));
  ASSERT_TRUE(w1.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w1.Intern(4, record::InternKind::kName, "D"));
  const testing::Entry e = MakeEntry({{"output", List({})}});
  ASSERT_TRUE(w0.Entry(1, 0, 1, 0, e));
  ASSERT_TRUE(w0.Entry(3, 0, 3, 0, e));
  ASSERT_TRUE(w1.Entry(2, 0, 2, 0, e));
  ASSERT_TRUE(w1.Entry(4, 0, 4, 0, e));
  DrainAndWrite(p);
  EXPECT_EQ(Order(), (std::vector<std::string>{"A", "B", "C", "D"}));
}

// A Step message may find the next step's first records already committed:
// finishing step 0 must not release step 1's held module node early, or
// mix-level construct.json order would depend on timing.
TEST_F(DrainTest, FinishingAStepKeepsTheNextStepsHeldNodes) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Module.m.M.forward.0"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "Torch.add.0.forward"));
  ASSERT_TRUE(w.Call(true, 1, 1, 1, record::CallKind::kModule));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    ReleaseHeldNodes(*p, *state, *log_, /*up_to_step=*/0);
  }
  ASSERT_TRUE(w.Call(true, 2, 1, 2, record::CallKind::kApi));
  DrainAndWrite(p);
  const auto construct =
      dump::Json::parse(ReadFile(File("construct.json", /*step=*/1)));
  std::vector<std::string> order;
  for (const auto& [name, parent] : construct.items()) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string>{"Torch.add.0.forward",
                                             "Module.m.M.forward.0"}));
}

// A module left open in step 0 (same name as step 1's) is never a parent in
// step 1, and when step 0 is finished it counts as unclosed.
TEST_F(DrainTest, AModuleLeftOpenIsNoParentLaterAndIsCountedUnclosed) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Module.a.A.forward.0"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "Module.b.B.forward.0"));
  ASSERT_TRUE(w.Call(true, 1, 0, 1, record::CallKind::kModule));  // never ends
  ASSERT_TRUE(w.Call(true, 2, 1, 1, record::CallKind::kModule));
  ASSERT_TRUE(w.Call(true, 3, 1, 2, record::CallKind::kModule));
  ASSERT_TRUE(w.Call(false, 4, 1, 2, record::CallKind::kModule));
  ASSERT_TRUE(w.Call(false, 5, 1, 1, record::CallKind::kModule));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    ReleaseHeldNodes(*p, *state, *log_, /*up_to_step=*/0);
    CloseOpenCalls(*state, /*up_to_step=*/0);
    ASSERT_TRUE(state->assembler.Finish(0).ok());
    CloseOpenCalls(*state);  // step 1's calls all ended: nothing to count
  }
  DrainAndWrite(p);
  EXPECT_EQ(ReadFile(File("construct.json", 0)), R"({
 "Module.a.A.forward.0": null
})");
  EXPECT_EQ(ReadFile(File("construct.json", 1)), R"({
 "Module.a.A.forward.0": null,
 "Module.b.B.forward.0": "Module.a.A.forward.0"
})");
  EXPECT_EQ(Accounting()["calls_unclosed"], 1);
  EXPECT_EQ(Accounting()["complete"], false);
  const auto step1 = dump::Json::parse(ReadFile(File("tprobe.json", 1)));
  EXPECT_EQ(step1["calls_unclosed"], 0);
  EXPECT_EQ(step1["complete"], true);
}

// msprobe 26.x's "optimizer" node: it goes in at once (not held like a
// module's), with a null parent even inside a module, and is the parent of
// the calls until its CallEnd.
TEST_F(DrainTest, AGroupNodeGoesInAtOnceAndParentsTheCallsInside) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Module.m.M.forward.0"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "optimizer"));
  ASSERT_TRUE(w.Intern(3, record::InternKind::kName, "Tensor.mul_.0.forward"));
  ASSERT_TRUE(w.Intern(4, record::InternKind::kName, "Tensor.add.0.forward"));
  ASSERT_TRUE(w.Call(true, 1, 0, 1, record::CallKind::kModule));
  ASSERT_TRUE(w.Call(true, 2, 0, 2, record::CallKind::kGroup));
  ASSERT_TRUE(w.Call(true, 3, 0, 3, record::CallKind::kApi));
  ASSERT_TRUE(w.Call(false, 4, 0, 3, record::CallKind::kApi));
  ASSERT_TRUE(w.Call(false, 5, 0, 2, record::CallKind::kGroup));
  ASSERT_TRUE(w.Call(true, 6, 0, 4, record::CallKind::kApi));
  ASSERT_TRUE(w.Call(false, 7, 0, 4, record::CallKind::kApi));
  ASSERT_TRUE(w.Call(false, 8, 0, 1, record::CallKind::kModule));
  DrainAndWrite(p);
  EXPECT_EQ(ReadFile(File("construct.json")), R"({
 "optimizer": null,
 "Tensor.mul_.0.forward": "optimizer",
 "Module.m.M.forward.0": null,
 "Tensor.add.0.forward": "Module.m.M.forward.0"
})");
}

TEST_F(DrainTest, ChunksAssembleIntoTheTensorStatistics) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  ASSERT_TRUE(w.Float32Tensor(5, {2, 2}, {-1.0f, 2.0f, -2.0f, 4.0f},
                              /*chunk=*/1));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  DrainAndWrite(p);
  const dump::Json t = Dump()["data"]["X"]["output"][0];
  EXPECT_EQ(t["shape"], dump::Json::array({2, 2}));
  EXPECT_EQ(t["Max"], 4.0);
  EXPECT_EQ(t["Min"], -2.0);
  EXPECT_EQ(t["Mean"], 0.75);
  EXPECT_EQ(t["Norm"], 5.0);  // sqrt(1 + 4 + 4 + 16)
  EXPECT_FALSE(t.contains("md5"));
  EXPECT_EQ(Accounting()["complete"], true);
}

TEST_F(DrainTest, ChunksThatStopEarlyLeaveTheTensorIncomplete) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f};
  ASSERT_TRUE(w.Tensor(5, DType::kFloat32, {4}, false, sizeof values));
  ASSERT_TRUE(w.Chunk(5, 0, values, 8));  // the second half was dropped
  ASSERT_TRUE(w.Float32Tensor(6, {1}, {7.0f}));
  ASSERT_TRUE(
      w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5), Ref(6)})}})));
  DrainAndWrite(p);
  const dump::Json out = Dump()["data"]["X"]["output"];
  EXPECT_TRUE(out[0]["Max"].is_null());
  EXPECT_TRUE(out[0]["Norm"].is_null());
  EXPECT_EQ(out[0]["shape"], dump::Json::array({4}));
  EXPECT_EQ(out[1]["Max"], 7.0);
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
  EXPECT_EQ(Accounting()["complete"], false);
}

TEST_F(DrainTest, AChunkAtTheWrongOffsetLeavesTheTensorIncomplete) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  const float values[] = {1.0f, 2.0f};
  ASSERT_TRUE(w.Tensor(5, DType::kFloat32, {2}, false, sizeof values));
  ASSERT_TRUE(w.Chunk(5, 4, values + 1, 4));  // the first chunk is missing
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  DrainAndWrite(p);
  EXPECT_TRUE(Dump()["data"]["X"]["output"][0]["Max"].is_null());
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
}

// A module's input tensor goes into the ring when it is captured; its
// children's entries come before the module's own entry, which still finds
// it.
TEST_F(DrainTest, ATensorWaitsForItsEntryWhileOtherEntriesGoBy) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Module.m.M.forward.0"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "Torch.add.0.forward"));
  ASSERT_TRUE(w.Float32Tensor(5, {2}, {1.0f, -3.0f}));  // the module's input
  ASSERT_TRUE(w.Float32Tensor(6, {1}, {2.0f}));
  ASSERT_TRUE(w.Entry(1, 0, 2, 0, MakeEntry({{"output", List({Ref(6)})}})));
  ASSERT_TRUE(w.Float32Tensor(7, {1}, {9.0f}));  // the module's output
  ASSERT_TRUE(w.Entry(
      2, 0, 1, 0,
      MakeEntry({{"input_args", List({Ref(5)})}, {"output", List({Ref(7)})}})));
  DrainAndWrite(p);
  const dump::Json data = Dump()["data"];
  EXPECT_EQ(data["Torch.add.0.forward"]["output"][0]["Max"], 2.0);
  EXPECT_EQ(data["Module.m.M.forward.0"]["input_args"][0]["Max"], 1.0);
  EXPECT_EQ(data["Module.m.M.forward.0"]["input_args"][0]["Min"], -3.0);
  EXPECT_EQ(data["Module.m.M.forward.0"]["output"][0]["Max"], 9.0);
  EXPECT_EQ(Accounting()["complete"], true);
}

// An entry uses a tensor once: a second entry naming the same ref gets null,
// counted as an incomplete tensor of that entry.
TEST_F(DrainTest, ARefReferredToTwiceIsNullTheSecondTime) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w.Float32Tensor(5, {1}, {4.0f}));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(5)})}})));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->tensors.waiting(0), 0u);
    EXPECT_EQ(state->tensors.waiting_bytes(0), 0u);
    ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  }
  const dump::Json data = Dump()["data"];
  EXPECT_EQ(data["A"]["output"][0]["Max"], 4.0);
  EXPECT_TRUE(data["B"]["output"][0].is_null());
  EXPECT_TRUE(std::filesystem::exists(File("dump_tensor_data/A.output.0.npy")));
  EXPECT_FALSE(
      std::filesystem::exists(File("dump_tensor_data/B.output.0.npy")));
  const dump::Json accounting = Accounting();
  EXPECT_EQ(accounting["tensors_incomplete"], 1);
  EXPECT_EQ(accounting["incomplete_tensors"],
            dump::Json::array({"B.output.0"}));
  EXPECT_EQ(accounting["complete"], false);
}

// A tensor no entry refers to (its call never wrote one) is released, bytes
// and all, once its step is settled; the next step's tensor, already read,
// stays for its entry.
TEST_F(DrainTest, AnUnreferencedTensorIsReleasedWhenItsStepIsSettled) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  ASSERT_TRUE(w.Float32Tensor(5, {2}, {1.0f, 2.0f}));  // never referred to
  v1::StepLedger ledger;
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    ledger.add_ring_cuts(state->rings[0].records_read);  // step 0 ends here
  }
  ASSERT_TRUE(w.Float32Tensor(6, {1}, {3.0f}));  // step 1's
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_EQ(state->tensors.waiting(0), 2u);
  EXPECT_EQ(state->tensors.waiting_bytes(0), 12u);
  SettleStep(*state, 0, ledger);
  ReleaseSettledTensors(*p, *state, *log_);
  ASSERT_EQ(state->tensors.waiting(0), 1u);
  EXPECT_NE(state->tensors.Find(0, 6), nullptr);
  EXPECT_EQ(state->tensors.waiting_bytes(0), 4u);
  ASSERT_TRUE(w.Entry(1, 1, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
  DrainSome(*p, *state, 0, *log_);
  EXPECT_EQ(state->tensors.waiting(0), 0u);
  EXPECT_EQ(state->tensors.waiting_bytes(0), 0u);
  ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  EXPECT_EQ(dump::Json::parse(ReadFile(
                File("dump.json", 1)))["data"]["X"]["output"][0]["Max"],
            3.0);
}

TEST_F(DrainTest, Md5ModeAddsTheCrc32OfTheRawBytes) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "statistics", "mix",
                                     R"({"summary_mode": "md5"})")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  ASSERT_TRUE(w.Float32Tensor(5, {4}, {-1.0f, 2.0f, -2.0f, 4.0f}));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  DrainAndWrite(p);
  // zlib.crc32(struct.pack('<4f', -1.0, 2.0, -2.0, 4.0))
  EXPECT_EQ(Dump()["data"]["X"]["output"][0]["md5"], "95738bbd");
}

// A tensor of kStreamStatsBytes or more is reduced chunk by chunk where
// its chunks lie in the ring: its statistics and CRC-32 are those of all
// its bytes, however the chunks cut its elements, and a chunk out of place
// still leaves it incomplete.
TEST_F(DrainTest, ALargeTensorIsReducedChunkByChunkAsIfWhole) {
  v1::Register reg = MakeRegister(ConfigJson(dir_.path(), "statistics", "mix",
                                             R"({"summary_mode": "md5"})"));
  reg.set_ring_bytes(uint64_t{1} << 21);
  TestRank p(reg);
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  std::vector<float> values(100003);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = std::sin(static_cast<float>(i)) * 1000.0f + 0.25f;
  }
  const auto* bytes = reinterpret_cast<const std::byte*>(values.data());
  const size_t nbytes = values.size() * sizeof(float);
  ASSERT_GE(nbytes, kStreamStatsBytes);
  const std::vector<int64_t> shape = {static_cast<int64_t>(values.size())};
  ASSERT_TRUE(w.Tensor(5, DType::kFloat32, shape, false, nbytes));
  for (size_t offset = 0; offset < nbytes; offset += 12345) {
    ASSERT_TRUE(w.Chunk(5, offset, bytes + offset,
                        std::min<size_t>(12345, nbytes - offset)));
  }
  ASSERT_TRUE(w.Tensor(6, DType::kFloat32, shape, false, nbytes));
  ASSERT_TRUE(w.Chunk(6, 0, bytes, 70000));
  ASSERT_TRUE(w.Chunk(6, 70004, bytes + 70004, nbytes - 70004));
  ASSERT_TRUE(
      w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5), Ref(6)})}})));
  DrainAndWrite(p);
  const std::span<const std::byte> whole(bytes, nbytes);
  const stats::TensorStats expected = stats::ComputeStats(
      DType::kFloat32, shape, whole, stats::StatRules::kPyTorch);
  const dump::Json out = Dump()["data"]["X"]["output"];
  EXPECT_EQ(out[0]["Max"], std::get<double>(expected.max));
  EXPECT_EQ(out[0]["Min"], std::get<double>(expected.min));
  EXPECT_EQ(out[0]["Mean"], std::get<double>(expected.mean));
  EXPECT_EQ(out[0]["Norm"], std::get<double>(expected.norm));
  EXPECT_EQ(out[0]["md5"], stats::Crc32Hex(stats::Crc32(whole)));
  EXPECT_TRUE(out[1]["Max"].is_null());
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
}

TEST_F(DrainTest, TensorTaskWritesNpyFilesNamedByDataName) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(
      w.Intern(1, record::InternKind::kName, "Functional.relu.0.forward"));
  ASSERT_TRUE(w.Float32Tensor(5, {3}, {0.5f, -1.0f, 2.0f}));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  DrainAndWrite(p);
  const dump::Json doc = Dump();
  EXPECT_EQ(doc["dump_data_dir"],
            dir_.path() + "/step0/rank0/dump_tensor_data");
  EXPECT_EQ(doc["data"]["Functional.relu.0.forward"]["output"][0]["data_name"],
            "Functional.relu.0.forward.output.0.npy");
  auto npy = dump::ReadNpy(
      File("dump_tensor_data/Functional.relu.0.forward.output.0.npy"));
  ASSERT_TRUE(npy.ok()) << npy.status().message();
  EXPECT_EQ(npy->dtype, DType::kFloat32);
  EXPECT_EQ(npy->shape, (std::vector<int64_t>{3}));
  ASSERT_EQ(npy->data.size(), 12u);
  float back[3];
  std::memcpy(back, npy->data.data(), sizeof back);
  EXPECT_EQ(back[0], 0.5f);
  EXPECT_EQ(back[1], -1.0f);
  EXPECT_EQ(back[2], 2.0f);
}

TEST_F(DrainTest, OverflowCheckLogsEachOverflowAndWhenOverflowNumsIsReached) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "overflow_check", "L1",
                                     R"({"overflow_nums": 1})")));
  ASSERT_TRUE(p);
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(log_text);
  spdlog::logger log("test", sink);
  log.set_pattern("%v");
  auto w = p.Writer(0);
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName,
                         "Torch.exp." + std::to_string(id) + ".forward"));
    ASSERT_TRUE(w.Float32Tensor(1, {1}, {id == 1 ? 1.0f : inf}));
    ASSERT_TRUE(w.Entry(id, 0, id, 0, MakeEntry({{"output", List({Ref(1)})}})));
  }
  auto state = p->Lock();
  DrainSome(*p, *state, 0, log);
  EXPECT_TRUE(state->overflow_limit_reached);
  EXPECT_EQ(state->overflows_dumped, 1u);
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(log_text.str(),
            "producer " + std::to_string(p->client_id()) + " (pid " + pid +
                ", rank 0): overflow (inf or nan) in Torch.exp.2.forward\n"
                "producer " +
                std::to_string(p->client_id()) + " (pid " + pid +
                ", rank 0): overflow_nums 1 reached; the dump ends here, as "
                "msprobe's does: no later call and no later step is "
                "written\n");
  ASSERT_TRUE(state->assembler.WriteDirty().ok());
  // (dump.json holds Infinity, which only Python's json reads.)
  EXPECT_NE(ReadFile(File("dump.json")).find("Torch.exp.2.forward"),
            std::string::npos);
  EXPECT_EQ(ReadFile(File("dump.json")).find("Torch.exp.3.forward"),
            std::string::npos);
}

TEST_F(DrainTest, StacksAreSplitAtNulBytes) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  const char raw[] = "File a.py, line 1, in f, \n g()\0File b.py";
  const std::string stack(raw, sizeof raw - 1);
  ASSERT_TRUE(w.Intern(2, record::InternKind::kStack, stack));
  ASSERT_TRUE(w.Entry(1, 0, 1, 2, MakeEntry({})));
  DrainAndWrite(p);
  const dump::Json stacks = dump::Json::parse(ReadFile(File("stack.json")));
  EXPECT_EQ(
      stacks["0"][1],
      dump::Json::array({"File a.py, line 1, in f, \n g()", "File b.py"}));
  // An entry with an empty body only lists its stack (data_mode kept none
  // of the call's data).
  EXPECT_TRUE(dump::Json::parse(ReadFile(File("dump.json")))["data"].empty());
}

TEST_F(DrainTest, ACorruptRecordStopsOnlyThatProducer) {
  TempDir other_dir;
  TestRank bad(MakeRegister(ConfigJson(dir_.path())));
  TestRank good(MakeRegister(ConfigJson(other_dir.path())));
  ASSERT_TRUE(bad && good);
  auto wb = bad.Writer(0);
  record::TensorRecord r{};
  r.dtype = 200;  // no such dtype
  ASSERT_TRUE(
      wb.Raw(record::RecordType::kTensor, std::as_bytes(std::span(&r, 1))));
  ASSERT_TRUE(wb.Intern(1, record::InternKind::kName, "X"));
  auto wg = good.Writer(0);
  ASSERT_TRUE(wg.Intern(1, record::InternKind::kName, "Y"));
  ASSERT_TRUE(wg.Entry(1, 0, 1, 0, MakeEntry({})));
  {
    auto state = bad->Lock();
    EXPECT_EQ(DrainSome(*bad, *state, 0, *log_), 0u);
    EXPECT_TRUE(state->broken);
    EXPECT_EQ(state->last_error,
              "corrupt record on ring 0: malformed tensor record: unknown "
              "dtype 200");
    EXPECT_EQ(DrainSome(*bad, *state, 0, *log_), 0u) << "no longer read";
  }
  auto state = good->Lock();
  EXPECT_EQ(DrainSome(*good, *state, 0, *log_), 2u);
  EXPECT_FALSE(state->broken);
}

TEST_F(DrainTest, AMalformedEntryBodyIsCorrupt) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  record::EntryRecord r{};
  r.seq = 1;
  r.name_id = 1;
  std::vector<std::byte> payload(sizeof r + 3, std::byte{0xff});
  std::memcpy(payload.data(), &r, sizeof r);
  ASSERT_TRUE(w.Raw(record::RecordType::kEntry, payload));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->broken);
  EXPECT_EQ(state->last_error,
            "corrupt record on ring 0: malformed entry body at byte 0: an "
            "item has no key");
}

TEST_F(DrainTest, EntriesForAFinishedStepAreSkipped) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "X"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({})));
  auto state = p->Lock();
  ASSERT_TRUE(state->assembler.Finish(0).ok());
  DrainSome(*p, *state, 0, *log_);
  EXPECT_EQ(state->skipped_records, 1u);
  EXPECT_FALSE(state->broken);
  // Step 0 was written complete; the step now captured carries the loss.
  ASSERT_EQ(state->assembler.open_trees(), 1u);
  EXPECT_EQ(state->assembler.Tree(1)->accounting().records_skipped, 1u);
  EXPECT_FALSE(state->assembler.Tree(1)->accounting().complete());
}

TEST_F(DrainTest, RingDropsMarkTheStepIncomplete) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  p->segment().ring_header(0)->dropped[0].store(2);
  DrainAndWrite(p);
  EXPECT_EQ(Accounting()["dropped"]["ring_full"], 2);
  EXPECT_EQ(Accounting()["complete"], false);
}

TEST_F(DrainTest, RingCountersThatGoBackMarkOnlyThatProducerCorrupt) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto state = p->Lock();
  p->segment().ring_header(0)->dropped[0].store(5);
  DrainSome(*p, *state, 0, *log_);
  EXPECT_FALSE(state->broken);
  // A client that lowers its drop counter would make a subtraction wrap.
  p->segment().ring_header(0)->dropped[0].store(3);
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->broken);
  EXPECT_EQ(state->last_error,
            "corrupt record on ring 0: implausible ring counters (records, "
            "bytes or drops)");
  EXPECT_TRUE(state->assembler.Tree(0)->accounting().stream_corrupt);
}

TEST_F(DrainTest, MoreBytesWrittenThanTheRingHoldsIsCorrupt) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  p->segment().ring_header(0)->bytes_written.store(uint64_t{1} << 60);
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->broken);
}

TEST_F(DrainTest, ATensorOverTheMaximumIsNeverBufferedAndStaysIncomplete) {
  daemon::RankLimits limits;
  limits.max_tensor_bytes = 4096;
  TestRank p(MakeRegister(ConfigJson(dir_.path())), limits);
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward"));
  ASSERT_TRUE(w.Float32Tensor(1, {2048}, std::vector<float>(2048, 1.0f),
                              /*chunk=*/512));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(1)})}})));
  DrainAndWrite(p);
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
  EXPECT_EQ(Accounting()["stream_corrupt"], false);
  EXPECT_TRUE(
      Dump()["data"]["Tensor.add.0.forward"]["output"][0]["Max"].is_null());
}

TEST_F(DrainTest, InternTablesAreBoundedPerProducer) {
  daemon::RankLimits limits;
  limits.max_interned = 2;
  TestRank p(MakeRegister(ConfigJson(dir_.path())), limits);
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  for (uint32_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, "N"));
  }
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->broken);
  EXPECT_EQ(state->interns.names(), 2u);
}

TEST_F(DrainTest, DrainCommittedConsumesEverythingAlreadyCommitted) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/3));
  ASSERT_TRUE(p);
  for (uint32_t ring = 0; ring < 3; ++ring) {
    auto w = p.Writer(ring);
    for (uint32_t i = 0; i < 50; ++i) {
      const uint32_t id = ring * 100 + i + 1;
      ASSERT_TRUE(
          w.Intern(id, record::InternKind::kName, "E" + std::to_string(id)));
      ASSERT_TRUE(w.Entry(id, 0, id, 0, MakeEntry({{"input_args", List({})}})));
    }
  }
  auto state = p->Lock();
  DrainCommitted(*p, *state, *log_);
  EXPECT_EQ(p->Counters().fill_bytes, 0u);
  EXPECT_EQ(state->assembler.Tree(0)->accounting().entries, 150u);
}

// Read-ahead stops before a record that would open one step more than the
// bound allows, by count or by the bytes the open steps hold; a step already
// open is still read past the byte bound, and closing a step lets the next
// one in.
TEST_F(DrainTest, ReadAheadStopsAtTheOpenStepAndOpenByteBounds) {
  auto fill = [](TestRank& p) {
    auto w = p.Writer(0);
    EXPECT_TRUE(w.Intern(1, record::InternKind::kName, "Torch.add.0.forward"));
    const testing::Entry e =
        MakeEntry({{"output", testing::Str(std::string(4096, 'x'))}});
    uint64_t seq = 1;
    for (uint32_t step = 0; step < 6; ++step) {
      EXPECT_TRUE(w.Entry(seq++, step, 1, 0, e));
    }
  };
  {
    RankLimits limits;
    limits.max_open_steps = 2;
    TestRank p(MakeRegister(ConfigJson(dir_.path())), limits);
    ASSERT_TRUE(p);
    fill(p);
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->assembler.OpenSteps(), (std::vector<uint32_t>{0, 1}));
    ASSERT_TRUE(state->assembler.Finish(0).ok());
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->assembler.OpenSteps(), (std::vector<uint32_t>{1, 2}));
  }
  {
    // Each step holds a little over 4 KiB (its tree's text; a young tree
    // has no journal yet): the second one reaches a 6 KiB bound, so the
    // third waits.
    RankLimits limits;
    limits.max_open_bytes = 6 << 10;
    TestRank p(MakeRegister(ConfigJson(dir_.path() + "/b")), limits);
    ASSERT_TRUE(p);
    fill(p);
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->assembler.OpenSteps(), (std::vector<uint32_t>{0, 1}));
    EXPECT_GE(state->assembler.open_bytes(), size_t{8} << 10);
    ASSERT_TRUE(state->assembler.Finish(1).ok());
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->assembler.OpenSteps(), (std::vector<uint32_t>{2, 3}));
  }
}

}  // namespace
}  // namespace tprobe::daemon
