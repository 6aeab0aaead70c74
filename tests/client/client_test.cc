// The public C++ Client (client/client.cc) against the real tprobed: scoped
// calls and typed tensors, and misuse that must never reach a dump tree
// (a Call of another Client or of an earlier step, a call never ended).

#include "tprobe/client.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/client_daemon_test.h"
#include "tests/support/daemon_process.h"

namespace tprobe {
namespace {

using Json = nlohmann::json;
using testing::ReadFile;

class ClientTest : public testing::ClientDaemonTest {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon()); }

  // A file of step `step` in the tree of `rank` ("rank" for -1).
  Json Read(uint32_t step, const std::string& file,
            const std::string& rank = "rank") {
    const std::string path =
        Dump() + "/step" + std::to_string(step) + "/" + rank + "/" + file;
    return Json::parse(ReadFile(path));
  }

  const std::vector<float> x_{1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> shape_{2, 3};
};

TEST_F(ClientTest, ScopedCallsEndThemselvesAndTypedTensorsKeepTheirDtype) {
  auto client = Make("mix");
  const std::vector<int32_t> ids{3, -4};
  const int64_t ids_shape[1] = {2};
  client->Start();
  {
    ScopedCall net = client->Module("net", "Net");
    EXPECT_TRUE(net.recorded());
    EXPECT_TRUE(net.Input(TensorData::Of(x_, shape_, true)));
    {
      ScopedCall add = client->Api("Torch", "add");
      EXPECT_TRUE(add.Input(TensorData::Of(ids, ids_shape)));
      EXPECT_TRUE(add.Kwarg("alpha", Value::OfInt(2)));
    }
    // Moving a scoped call hands the end over: it ends once.
    ScopedCall moved = std::move(net);
    EXPECT_FALSE(net.Output(TensorData::Of(x_, shape_)));
    EXPECT_TRUE(moved.Output(TensorData::Of(x_, shape_)));
  }
  client->Stop();
  client->Step();
  const ClientCounters c = client->counters();
  client.reset();
  EXPECT_EQ(c.calls_refused, 0u);
  EXPECT_EQ(c.calls_unclosed, 0u);

  const Json construct = Read(0, "construct.json");
  EXPECT_EQ(construct, Json::parse(R"({
    "Module.net.Net.forward.0": null,
    "Torch.add.0.forward": "Module.net.Net.forward.0"})"));
  const Json data = Read(0, "dump.json")["data"];
  const Json& x = data["Module.net.Net.forward.0"]["input_args"][0];
  EXPECT_EQ(x["dtype"], "torch.float32");
  EXPECT_EQ(x["shape"], Json::parse("[2, 3]"));
  EXPECT_EQ(x["requires_grad"], true);
  EXPECT_EQ(x["Max"], 6.0);
  EXPECT_EQ(x["Min"], 1.0);
  EXPECT_DOUBLE_EQ(x["Mean"].get<double>(), 3.5);
  EXPECT_NEAR(x["Norm"].get<double>(), std::sqrt(91.0), 1e-5);
  const Json& add = data["Torch.add.0.forward"];
  EXPECT_EQ(add["input_args"][0]["dtype"], "torch.int32");
  EXPECT_EQ(add["input_args"][0]["Min"], -4.0);
  EXPECT_EQ(add["input_kwargs"]["alpha"],
            Json::parse(R"({"type": "int", "value": 2})"));
  EXPECT_EQ(data["Module.net.Net.forward.0"]["output"][0]["Max"], 6.0);
  EXPECT_EQ(Read(0, "tprobe.json")["complete"], true);
}

// The case of the issue: a Call of a Client that is gone, used on another
// Client, named an id that Client never interned and wrote a stray step.
TEST_F(ClientTest, CallOfADestroyedClientIsRefusedAndNeverReachesTheRing) {
  auto first = Make("L0", 0);
  first->Start();
  const Call stale = first->BeginModule("a", "A");
  ASSERT_TRUE(stale.open());
  first.reset();

  auto second = Make("L0", 1);
  second->Start();
  {
    ScopedCall b = second->Module("b", "B");
    EXPECT_FALSE(
        second->AddTensor(stale, Section::kInput, TensorData::Of(x_, shape_)));
    second->EndCall(stale);
    EXPECT_TRUE(b.Input(TensorData::Of(x_, shape_)));
  }
  second->Stop();
  second->Step();
  const ClientCounters c = second->counters();
  second.reset();
  EXPECT_EQ(c.calls_refused, 2u);
  EXPECT_EQ(c.calls_unclosed, 0u);

  const Json accounting = Read(0, "tprobe.json", "rank1");
  EXPECT_EQ(accounting["complete"], true) << accounting.dump();
  EXPECT_EQ(accounting["records_skipped"], 0);
  EXPECT_EQ(accounting["entries"], 1);
  EXPECT_EQ(Read(0, "construct.json", "rank1"),
            Json::parse(R"({"Module.b.B.forward.0": null})"));
  // Nothing else was written: one step of each rank.
  EXPECT_FALSE(std::filesystem::exists(Dump() + "/step1"));
}

TEST_F(ClientTest, CallOfAnotherLiveClientIsRefused) {
  auto a = Make("L0", 0);
  auto b = Make("L0", 1);
  a->Start();
  b->Start();
  const Call mine = a->BeginModule("m", "M");
  EXPECT_FALSE(b->AddTensor(mine, Section::kInput, TensorData::Of(x_, shape_)));
  b->EndCall(mine);
  EXPECT_EQ(b->counters().calls_refused, 2u);
  EXPECT_EQ(a->counters().calls_refused, 0u);
  // Still open on its own Client.
  EXPECT_TRUE(a->AddTensor(mine, Section::kInput, TensorData::Of(x_, shape_)));
  a->EndCall(mine);
  a->EndCall(mine);  // twice: refused
  EXPECT_EQ(a->counters().calls_refused, 1u);
  // A default Call is "not opened", not misuse.
  b->EndCall(Call{});
  EXPECT_EQ(b->counters().calls_refused, 2u);
}

TEST_F(ClientTest, CallOfAnEarlierStepOrAnotherThreadIsRefused) {
  auto client = Make("L0");
  client->Start();
  const Call old = client->BeginModule("m", "M");
  Call other_thread;
  std::thread([&] { other_thread = client->BeginModule("t", "T"); }).join();
  ASSERT_TRUE(other_thread.open());
  client->EndCall(other_thread);  // open on the other thread only
  EXPECT_EQ(client->counters().calls_refused, 1u);
  client->Step();
  EXPECT_FALSE(
      client->AddTensor(old, Section::kInput, TensorData::Of(x_, shape_)));
  client->EndCall(old);
  const ClientCounters c = client->counters();
  EXPECT_EQ(c.calls_refused, 3u);
  EXPECT_EQ(c.calls_unclosed, 2u);  // old, and the other thread's call
}

// An unended call is closed at Step and marked incomplete; it is never the
// parent of the next step's calls.
TEST_F(ClientTest, UnendedModuleCallIsClosedAtStepAndMarkedIncomplete) {
  auto client = Make("L0");
  client->Start();
  const Call leaked = client->BeginModule("outer", "Outer");
  {
    ScopedCall inner = client->Module("outer.inner", "Inner");
    inner.Input(TensorData::Of(x_, shape_));
  }
  client->Stop();
  client->Step();
  for (int step = 1; step <= 2; ++step) {
    client->Start();
    {
      ScopedCall m = client->Module("m", "M");
      m.Input(TensorData::Of(x_, shape_));
    }
    client->Stop();
    client->Step();
  }
  client->EndCall(leaked);  // too late: refused
  const ClientCounters c = client->counters();
  client.reset();
  EXPECT_EQ(c.calls_unclosed, 1u);
  EXPECT_EQ(c.calls_refused, 1u);

  const Json step0 = Read(0, "tprobe.json");
  EXPECT_EQ(step0["complete"], false) << step0.dump();
  EXPECT_EQ(step0["calls_unclosed"], 1);
  EXPECT_EQ(Read(0, "construct.json"), Json::parse(R"({
    "Module.outer.Outer.forward.0": null,
    "Module.outer.inner.Inner.forward.0": "Module.outer.Outer.forward.0"})"));
  for (uint32_t step = 1; step <= 2; ++step) {
    EXPECT_EQ(Read(step, "construct.json"),
              Json::parse(R"({"Module.m.M.forward.0": null})"));
    const Json accounting = Read(step, "tprobe.json");
    EXPECT_EQ(accounting["complete"], true) << accounting.dump();
    EXPECT_EQ(accounting["calls_unclosed"], 0);
  }
}

// At L1 no construct records are sent, so only the client knows.
TEST_F(ClientTest, UnendedApiCallMarksItsStepIncomplete) {
  auto client = Make("L1");
  client->Start();
  const Call leaked = client->BeginApi("Torch", "matmul");
  ASSERT_TRUE(leaked.open());
  client->Stop();
  client->Step();
  client->Start();
  {
    ScopedCall relu = client->Api("Functional", "relu");
    relu.Input(TensorData::Of(x_, shape_));
  }
  client->Stop();
  client->Step();
  client.reset();
  EXPECT_EQ(Read(0, "tprobe.json")["complete"], false);
  EXPECT_EQ(Read(0, "tprobe.json")["calls_unclosed"], 1);
  EXPECT_EQ(Read(1, "tprobe.json")["complete"], true);
  EXPECT_TRUE(
      Read(1, "dump.json")["data"].contains("Functional.relu.0.forward"));
}

// Ending an outer call forgets the calls still open inside it: their
// entries are missing, so the step is not complete either.
TEST_F(ClientTest, CallsForgottenByAnOuterEndMarkTheStepIncomplete) {
  auto client = Make("L0");
  client->Start();
  {
    ScopedCall outer = client->Module("outer", "Outer");
    const Call inner = client->BeginModule("outer.inner", "Inner");
    ASSERT_TRUE(inner.open());
  }
  client->Stop();
  client->Step();
  EXPECT_EQ(client->counters().calls_unclosed, 1u);
  client.reset();
  EXPECT_EQ(Read(0, "tprobe.json")["calls_unclosed"], 1);
  EXPECT_EQ(Read(0, "tprobe.json")["complete"], false);
}

}  // namespace
}  // namespace tprobe
