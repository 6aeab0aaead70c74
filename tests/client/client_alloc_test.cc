// The C++ Client's hot path allocates nothing once warm (issue #9 item 4):
// this binary replaces the global operator new with one that counts, per
// thread, and plays the same calls in two steps against the real tprobed.
// The first step warms up (rings claimed, names interned, the per-thread
// pool of call slots and their buffers grown); the second must not allocate
// at all on the calling thread. The dump tree then shows that the counted
// calls were really written.

#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/client_daemon_test.h"
#include "tests/support/counting_allocator.h"
#include "tests/support/daemon_process.h"
#include "tprobe/client.h"

namespace tprobe {
namespace {

using Json = nlohmann::json;
using testing::ReadFile;
using testing::ThreadAllocations;

constexpr int kCalls = 200;  // per step and pattern

class ClientAllocTest : public testing::ClientDaemonTest {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon()); }

  // Plays `step` twice (step 0 warm, step 1 counted) and returns the
  // allocations of the counted step's calls, per call of `step`.
  template <typename Step>
  double AllocationsPerCall(Client& client, Step&& step) {
    uint64_t counted = 0;
    for (int s = 0; s < 2; ++s) {
      client.Start();
      const uint64_t before = ThreadAllocations();
      for (int i = 0; i < kCalls; ++i) step();
      if (s == 1) counted = ThreadAllocations() - before;
      client.Stop();
      client.Step();
    }
    return static_cast<double>(counted) / kCalls;
  }

  Json Data(uint32_t step) {
    return Json::parse(ReadFile(Dump() + "/step" + std::to_string(step) +
                                "/rank/dump.json"))["data"];
  }

  const std::vector<float> x_{1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> shape_{2, 3};
};

TEST_F(ClientAllocTest, WarmApiCallWithTensorsAllocatesNothing) {
  auto client = Make("mix");
  uint64_t recorded = 0;
  const double per_call = AllocationsPerCall(*client, [&] {
    const Call call = client->BeginApi("Functional", "scaled_dot_product");
    recorded += call.recorded() ? 1 : 0;
    client->AddTensor(call, Section::kInput, TensorData::Of(x_, shape_));
    client->AddTensor(call, Section::kOutput, TensorData::Of(x_, shape_));
    client->EndCall(call);
  });
  EXPECT_EQ(per_call, 0.0) << "allocations per BeginApi+AddTensor+EndCall";
  EXPECT_EQ(recorded, 2u * kCalls);
  const ClientCounters c = client->counters();
  client.reset();
  EXPECT_EQ(c.dropped_ring_full + c.dropped_too_large + c.dropped_no_daemon,
            0u);
  const Json data = Data(1);
  EXPECT_EQ(data.size(), static_cast<size_t>(kCalls));
  const std::string last = "Functional.scaled_dot_product." +
                           std::to_string(kCalls - 1) + ".forward";
  EXPECT_EQ(data[last]["output"][0]["Max"], 6.0) << data.dump();
}

TEST_F(ClientAllocTest, WarmModuleCallWithAnApiInsideAllocatesNothing) {
  auto client = Make("mix");
  uint64_t recorded = 0;
  const double per_call = AllocationsPerCall(*client, [&] {
    // Longer names than std::string keeps inline.
    const Call layer = client->BeginModule("encoder.layers.0", "Linear");
    recorded += layer.recorded() ? 1 : 0;
    client->AddTensor(layer, Section::kInput, TensorData::Of(x_, shape_));
    {
      ScopedCall mm = client->Api("Torch", "matmul");
      mm.Input(TensorData::Of(x_, shape_));
    }
    client->AddParameter(layer, "weight", TensorData::Of(x_, shape_));
    client->AddTensor(layer, Section::kParameter, TensorData::Of(x_, shape_));
    client->EndCall(layer);
  });
  EXPECT_EQ(per_call, 0.0)
      << "allocations per module forward call (with an API call inside)";
  EXPECT_EQ(recorded, 2u * kCalls);
  client.reset();
  const Json data = Data(1);
  EXPECT_EQ(data.size(), static_cast<size_t>(2 * kCalls));
  const Json& layer = data["Module.encoder.layers.0.Linear.forward." +
                           std::to_string(kCalls - 1)];
  EXPECT_EQ(layer["parameters"]["weight"]["Min"], 1.0) << layer.dump();
  EXPECT_EQ(layer["parameters"]["1"]["Max"], 6.0) << layer.dump();
  EXPECT_TRUE(
      data.contains("Torch.matmul." + std::to_string(kCalls - 1) + ".forward"));
}

// The backward pass: a module's backward call (its entry noted for the
// parameter gradients, client/selection.h) and the gradients of its
// parameters.
TEST_F(ClientAllocTest, WarmBackwardCallAndParamGradsAllocateNothing) {
  auto client = Make("mix");
  uint64_t recorded = 0;
  uint32_t index = 0;
  const double per_call = AllocationsPerCall(*client, [&] {
    const Call back = client->BeginModule("encoder.layers.0", "Linear",
                                          Direction::kBackward, index++ % 8);
    client->AddTensor(back, Section::kInput, TensorData::Of(x_, shape_));
    client->AddTensor(back, Section::kOutput, TensorData::Of(x_, shape_));
    client->EndCall(back);
    recorded += client->ParamGrad("encoder.layers.0", "Linear", "weight",
                                  TensorData::Of(x_, shape_))
                    ? 1
                    : 0;
    recorded += client->ParamGrad("encoder.layers.0", "Linear", "bias",
                                  TensorData::Of(x_, shape_))
                    ? 1
                    : 0;
  });
  EXPECT_EQ(per_call, 0.0)
      << "allocations per module backward call with two parameter gradients";
  EXPECT_EQ(recorded, 2u * 2u * kCalls);
  client.reset();
  const Json data = Data(1);
  const Json& grads = data["Module.encoder.layers.0.Linear.parameters_grad." +
                           std::to_string(kCalls - 1)];
  EXPECT_EQ(grads["bias"][0]["Max"], 6.0) << grads.dump();
}

// The counter itself: an allocation on this thread is seen.
// An allocation that fails inside the library (a thread's first call needs
// its slot) stops at the boundary: the call is not opened, nothing throws,
// the failure is counted, and the thread's next calls work once memory is
// back.
TEST_F(ClientAllocTest, AFailedAllocationIsContainedAndCounted) {
  auto client = Make("mix");
  client->Start();
  std::thread([&] {
    testing::FailThreadAllocations(true);
    const Call failed = client->BeginApi("Functional", "relu");
    testing::FailThreadAllocations(false);
    EXPECT_FALSE(failed.open());
    client->EndCall(failed);
    const Call call = client->BeginApi("Functional", "relu");
    EXPECT_TRUE(call.recorded());
    client->AddTensor(call, Section::kInput, TensorData::Of(x_, shape_));
    client->EndCall(call);
  }).join();
  client->Stop();
  client->Step();
  EXPECT_GE(client->counters().failures_contained, 1u);
  client.reset();
  // The failed call may have taken its index before it failed.
  const Json data = Data(0);
  ASSERT_EQ(data.size(), 1u) << data.dump();
  EXPECT_TRUE(data.begin().key().starts_with("Functional.relu."))
      << data.dump();
}

TEST_F(ClientAllocTest, TheCounterSeesAnAllocation) {
  const uint64_t before = ThreadAllocations();
  void* p = ::operator new(64);
  EXPECT_EQ(ThreadAllocations() - before, 1u);
  ::operator delete(p);
}

}  // namespace
}  // namespace tprobe
