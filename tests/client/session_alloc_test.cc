// The Session's per-call methods allocate nothing once warm: this binary
// replaces the global operator new with one that counts this thread's
// allocations, and replays the same calls in a second step against a real
// tprobed (the first step interns the names and claims the table slots).
// Its own binary, so that the counting operator new touches no other test.

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "client/session.h"
#include "tests/support/counting_allocator.h"
#include "tests/support/session_daemon_test.h"

namespace tprobe::client {
namespace {

using testing::ThreadAllocations;

class SessionAllocTest : public testing::SessionDaemonTest {};

// One training step's hook events as the adapters drive them: a module
// forward with an API inside, the module's backward, its parameter
// gradients, and APIs of each risk class. Returns how many events ran.
int Replay(Session& s, CallPlan* module, CallPlan* api, CallPlan* grad) {
  int events = 0;
  for (int i = 0; i < 20; ++i) {
    if (s.BeginModule("Module.b.Block", true, 0, module)) {
      const uint32_t index = module->index;
      if (s.BeginApi("Functional.relu", true, 0, api)) {
        s.CheckEnd(api);
        s.EndCall(*api);
      }
      s.CheckEnd(module);
      s.EndCall(*module);
      if (s.BeginModule("Module.b.Block", false, index, module)) {
        s.CheckEnd(module);
        s.EndCall(*module);
      }
      s.BeginParamGrad("Module.b.Block", "weight", grad);
      s.BeginParamGrad("Module.b.Block", "bias", grad);
      events += 8;
    }
    for (const char* base :
         {"Torch.matmul", "Tensor.view", "Functional.relu"}) {
      if (s.BeginApi(base, true, 0, api)) {
        s.CheckEnd(api);
        s.EndCall(*api);
        events += 3;
      }
    }
  }
  return events;
}

TEST_F(SessionAllocTest, HookEventsAllocateNothingOnceWarm) {
  const char* configs[] = {
      R"({"level": "L1"})",  // risk_level FOCUS, PyTorch's default
      R"({"level": "mix"})",
      R"({"level": "L0"})",
      R"({"level": "mix", "statistics": {"list": ["Block"]}})",
      R"({"level": "mix", "statistics": {"scope":
          ["Module.b.Block.forward.0", "Module.b.Block.forward.10"]}})",
      R"({"level": "L1", "statistics": {"scope":
          ["Functional.relu.0.forward", "Torch.matmul.10.forward"]}})",
  };
  for (const char* config : configs) {
    SCOPED_TRACE(config);
    auto s = Open(config);
    ASSERT_TRUE(s);
    CallPlan module, api, grad;
    s->Start();
    // The first step interns its names: the counter sees the library's
    // allocations, so the check below can fail.
    const uint64_t cold = ThreadAllocations();
    ASSERT_GT(Replay(*s, &module, &api, &grad), 0);
    EXPECT_GT(ThreadAllocations() - cold, 0u);
    s->Stop();
    s->Step();
    s->Start();
    const uint64_t before = ThreadAllocations();
    const int events = Replay(*s, &module, &api, &grad);
    const uint64_t allocations = ThreadAllocations() - before;
    ASSERT_GT(events, 0);
    EXPECT_EQ(allocations, 0u) << "in " << events << " hook events";
    s->Stop();
    s->Step();
  }
}

}  // namespace
}  // namespace tprobe::client
