// The Session's per-call rules (client/session.h) against a real tprobed:
// levels, the outermost-API rule, counting of filtered-out calls, backward
// indices, the lifecycle gates and data_mode in the plans.

#include "client/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/session_daemon_test.h"

namespace tprobe::client {
namespace {

class SessionTest : public testing::SessionDaemonTest {};

TEST_F(SessionTest, LevelsDecideWhatIsRecordedAndWhatGetsConstructNodes) {
  struct Case {
    const char* level;
    bool modules, apis, api_construct;
  };
  const Case cases[] = {
      {"L0", true, false, false},
      {"L1", false, true, false},
      {"mix", true, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.level);
    auto s = Open(std::string(R"({"level": ")") + c.level + "\"}");
    ASSERT_TRUE(s);
    s->Start();
    CallPlan module, api;
    ASSERT_EQ(s->BeginModule("Module.fc.Linear", true, 0, &module), c.modules);
    if (c.modules) {
      EXPECT_EQ(module.name, "Module.fc.Linear.forward.0");
      EXPECT_TRUE(module.construct);
      EXPECT_TRUE(module.entry());
    }
    ASSERT_EQ(s->BeginApi("Functional.relu", true, 0, &api), c.apis);
    if (c.apis) {
      EXPECT_EQ(api.name, "Functional.relu.0.forward");
      EXPECT_EQ(api.construct, c.api_construct);
      EXPECT_TRUE(api.entry());
      s->EndCall(api);
    }
    if (c.modules) s->EndCall(module);
    s->Stop();
    s->Step();
  }
}

TEST_F(SessionTest, OnlyTheOutermostApiIsRecordedAndCounted) {
  auto s = Open(R"({"level": "mix"})");
  ASSERT_TRUE(s);
  s->Start();
  CallPlan outer, nested, module;
  ASSERT_TRUE(s->BeginApi("Torch.matmul", true, 0, &outer));
  EXPECT_FALSE(s->BeginApi("Torch.matmul", true, 0, &nested));
  EXPECT_FALSE(s->BeginApi("Tensor.t", true, 0, &nested));
  EXPECT_FALSE(s->BeginModule("Module.fc.Linear", true, 0, &module));
  s->EndCall(outer);
  CallPlan next;
  ASSERT_TRUE(s->BeginApi("Torch.matmul", true, 0, &next));
  EXPECT_EQ(next.name, "Torch.matmul.1.forward");
  s->EndCall(next);
  ASSERT_TRUE(s->BeginApi("Tensor.t", true, 0, &next));
  EXPECT_EQ(next.name, "Tensor.t.0.forward");  // the nested one never counted
  s->EndCall(next);
}

TEST_F(SessionTest, AnOpenApiCallLeftOpenIsForgottenAtStep) {
  auto s = Open(R"({"level": "L1"})");
  ASSERT_TRUE(s);
  s->Start();
  CallPlan lost, next;
  ASSERT_TRUE(s->BeginApi("Torch.add", true, 0, &lost));  // never ended
  s->Stop();
  s->Step();
  s->Start();
  ASSERT_TRUE(s->BeginApi("Torch.add", true, 0, &next));
  EXPECT_EQ(next.name, "Torch.add.0.forward");
  EXPECT_EQ(next.step, 1u);
  s->EndCall(next);
}

TEST_F(SessionTest, AnApiSiteGivesThePlansThatCallsWithoutOneGet) {
  auto s = Open(R"({"level": "L1"})");  // risk_level FOCUS: by risk level
  ASSERT_TRUE(s);
  ApiSite relu, view;
  const auto expect_same = [&](const char* base, ApiSite* site,
                               const char* name, bool dumped) {
    SCOPED_TRACE(name);
    CallPlan plan;
    ASSERT_TRUE(s->BeginApi(base, true, 0, &plan, site));
    EXPECT_EQ(plan.name, name);
    EXPECT_EQ(plan.dumped, dumped);
    EXPECT_EQ(plan.input, dumped);
    // The id the ring gives the name, whether kept in the site or not; a
    // call that is left out is not interned.
    EXPECT_EQ(
        plan.name_id,
        dumped ? s->recorder().Intern(record::InternKind::kName, name) : 0u);
    EXPECT_EQ(plan.name_id != 0, dumped);
    s->EndCall(plan);
  };
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE(step);
    s->Start();
    // One counter whether a call comes with the site or not.
    expect_same("Functional.relu", &relu, "Functional.relu.0.forward", true);
    expect_same("Functional.relu", nullptr, "Functional.relu.1.forward", true);
    expect_same("Functional.relu", &relu, "Functional.relu.2.forward", true);
    // risk_level FOCUS leaves views out, remembered or not.
    expect_same("Tensor.view", &view, "Tensor.view.0.forward", false);
    expect_same("Tensor.view", &view, "Tensor.view.1.forward", false);
    s->Stop();
    s->Step();
  }
  EXPECT_NE(relu.version, 0u);
  EXPECT_GE(relu.name_ids.size(), 3u);

  // A new config version: the site is filled again for it.
  const uint64_t before = relu.version;
  const std::string path = dir_.path() + "/all.json";
  std::ofstream(path) << R"({"level": "L1", "risk_level": "ALL", )"
                      << R"("dump_path": ")" << Dump() << R"("})";
  ASSERT_TRUE(s->Configure(path).ok());
  s->Start();
  expect_same("Tensor.view", &view, "Tensor.view.0.forward", true);
  expect_same("Functional.relu", &relu, "Functional.relu.0.forward", true);
  EXPECT_NE(relu.version, before);
  s->Stop();
  s->Step();

  // Another session: nothing of the first one's holds.
  auto other = Open(R"({"level": "L1"})");
  ASSERT_TRUE(other);
  // Its ids differ from the first session's for the same names.
  ASSERT_NE(other->recorder().Intern(record::InternKind::kName, "first"), 0u);
  other->Start();
  CallPlan plan;
  ASSERT_TRUE(other->BeginApi("Tensor.view", true, 0, &plan, &view));
  EXPECT_EQ(plan.name, "Tensor.view.0.forward");
  EXPECT_FALSE(plan.dumped);
  other->EndCall(plan);
  ASSERT_TRUE(other->BeginApi("Functional.relu", true, 0, &plan, &relu));
  EXPECT_EQ(plan.name, "Functional.relu.0.forward");
  EXPECT_NE(plan.name_id, 0u);
  EXPECT_EQ(plan.name_id,
            other->recorder().Intern(record::InternKind::kName, plan.name));
  other->EndCall(plan);
}

TEST_F(SessionTest, FilteredOutCallsAreCountedNamedAndKeepConstructNodes) {
  auto s = Open(R"({"level": "mix", "statistics": {"list": ["relu"]}})");
  ASSERT_TRUE(s);
  s->Start();
  const struct {
    const char* base;
    const char* name;
    bool dumped;
  } calls[] = {
      {"Functional.gelu", "Functional.gelu.0.forward", false},
      {"Functional.relu", "Functional.relu.0.forward", true},
      {"Functional.gelu", "Functional.gelu.1.forward", false},
      {"Functional.relu", "Functional.relu.1.forward", true},
  };
  for (const auto& c : calls) {
    CallPlan plan;
    ASSERT_TRUE(s->BeginApi(c.base, true, 0, &plan));
    EXPECT_EQ(plan.name, c.name);
    EXPECT_EQ(plan.dumped, c.dumped) << c.name;
    EXPECT_EQ(plan.entry(), c.dumped) << c.name;
    EXPECT_TRUE(plan.construct) << c.name;
    s->EndCall(plan);
  }
}

TEST_F(SessionTest, BackwardCallsReuseTheForwardIndexAndDoNotCount) {
  auto s = Open(R"({"level": "mix"})");
  ASSERT_TRUE(s);
  s->Start();
  CallPlan plan;
  ASSERT_TRUE(s->BeginModule("Module.fc.Linear", false, 5, &plan));
  EXPECT_EQ(plan.name, "Module.fc.Linear.backward.5");
  EXPECT_FALSE(plan.forward);
  s->EndCall(plan);
  ASSERT_TRUE(s->BeginApi("Functional.relu", false, 3, &plan));
  EXPECT_EQ(plan.name, "Functional.relu.3.backward");
  s->EndCall(plan);
  ASSERT_TRUE(s->BeginModule("Module.fc.Linear", true, 9, &plan));
  EXPECT_EQ(plan.name, "Module.fc.Linear.forward.0");
  s->EndCall(plan);
}

TEST_F(SessionTest, ApiBackwardIsRecordedAfterStopUntilStep) {
  auto s = Open(R"({"level": "mix"})");
  ASSERT_TRUE(s);
  s->Start();
  s->Stop();
  CallPlan plan;
  EXPECT_FALSE(s->BeginApi("Functional.relu", true, 0, &plan));
  EXPECT_FALSE(s->BeginModule("Module.fc.Linear", false, 0, &plan));
  ASSERT_TRUE(s->BeginApi("Functional.relu", false, 0, &plan));
  EXPECT_EQ(plan.step, 0u);
  s->EndCall(plan);
  s->Step();
  EXPECT_FALSE(s->BeginApi("Functional.relu", false, 0, &plan));
}

TEST_F(SessionTest, StepFilterAndTheLastStep) {
  auto s = Open(R"({"level": "L0", "step": [1]})");
  ASSERT_TRUE(s);
  CallPlan plan;
  s->Start();  // step 0: not selected
  EXPECT_FALSE(s->collecting());
  EXPECT_FALSE(s->BeginModule("Module.fc.Linear", true, 0, &plan));
  s->Stop();
  s->Step();
  s->Start();  // step 1
  ASSERT_TRUE(s->BeginModule("Module.fc.Linear", true, 0, &plan));
  EXPECT_EQ(plan.name, "Module.fc.Linear.forward.0");
  s->EndCall(plan);
  s->Stop();
  s->Step();
  s->Start();  // step 2: after the last configured step
  EXPECT_FALSE(s->collecting());
  EXPECT_FALSE(s->step_active());
}

// StartIfSelected and StepIfStopped take only a step like the last one,
// and leave the session as Start() and Step() would.
TEST_F(SessionTest, BoundariesOfAStepLikeTheLastOne) {
  auto s = Open(R"({"level": "L0", "step": [1, 2]})");
  ASSERT_TRUE(s);
  CallPlan plan;
  EXPECT_FALSE(s->StartIfSelected(true)) << "step 0 is not selected";
  ASSERT_TRUE(s->StartIfSelected(false));
  EXPECT_FALSE(s->collecting());
  EXPECT_FALSE(s->step_active());
  EXPECT_FALSE(s->BeginModule("Module.fc.Linear", true, 0, &plan));
  EXPECT_FALSE(s->StepIfStopped()) << "no Stop() yet: Step() ends it";
  EXPECT_EQ(s->step(), 0u);
  s->Stop();
  ASSERT_TRUE(s->StepIfStopped());
  EXPECT_EQ(s->step(), 1u);
  EXPECT_FALSE(s->StartIfSelected(false)) << "step 1 is selected";
  EXPECT_FALSE(s->collecting()) << "it changed nothing";
  for (uint32_t step : {1u, 2u}) {
    ASSERT_TRUE(s->StartIfSelected(true));
    EXPECT_TRUE(s->collecting());
    ASSERT_TRUE(s->BeginModule("Module.fc.Linear", true, 0, &plan));
    EXPECT_EQ(plan.name, "Module.fc.Linear.forward.0");
    s->EndCall(plan);
    s->Stop();
    EXPECT_TRUE(s->step_active()) << "backward calls still belong to it";
    ASSERT_TRUE(s->StepIfStopped());
    EXPECT_EQ(s->step(), step + 1);
  }
  EXPECT_FALSE(s->StartIfSelected(false))
      << "after the last step: Start() says so";
  s->Start();
  EXPECT_FALSE(s->collecting());
  s->Stop();
  s->Step();
  EXPECT_TRUE(s->StartIfSelected(false)) << "said once";
  // A config offered for the next step is Step()'s to take up.
  auto offered = Open(R"({"level": "L1", "step": [5]})");
  ASSERT_TRUE(offered);
  ASSERT_TRUE(offered->StartIfSelected(false));
  const std::string path = dir_.path() + "/l0.json";
  std::ofstream(path) << R"({"level": "L0", "step": [5], "dump_path": ")"
                      << Dump() << R"("})";
  ASSERT_TRUE(offered->Configure(path).ok());
  EXPECT_EQ(offered->config().level, config::Level::kL1) << "started";
  offered->Stop();
  EXPECT_FALSE(offered->StepIfStopped());
  offered->Step();
  EXPECT_EQ(offered->config().level, config::Level::kL0);
  EXPECT_TRUE(offered->StartIfSelected(false));
}

// msprobe's dump_enable reload: a rank gives itself its changed config.json
// as a live `tprobe configure` would, for it alone; at once before Start(),
// else at Step(). What cannot change live is refused, naming the key.
TEST_F(SessionTest, ConfigureGivesThisRankAloneANewConfig) {
  auto mine = Open(R"({"level": "L1"})");
  auto other = Open(R"({"level": "L1"})");
  ASSERT_TRUE(mine && other);
  auto write = [&](const std::string& name, const std::string& body) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << body;
    return path;
  };
  const std::string dump = R"(, "dump_path": ")" + Dump() + R"("})";
  const std::string l0 = write("l0.json", R"({"level": "L0")" + dump);
  ASSERT_TRUE(mine->Configure(l0).ok());
  EXPECT_EQ(mine->config().level, config::Level::kL0) << "not started: now";
  EXPECT_EQ(other->config().level, config::Level::kL1);

  mine->Start();
  const std::string mix = write("mix.json", R"({"level": "mix")" + dump);
  ASSERT_TRUE(mine->Configure(mix).ok());
  EXPECT_EQ(mine->config().level, config::Level::kL0) << "started: at Step";
  mine->Stop();
  mine->Step();
  EXPECT_EQ(mine->config().level, config::Level::kMix);
  other->Step();
  EXPECT_EQ(other->config().level, config::Level::kL1);

  const std::string fixed = write(
      "fixed.json", R"({"level": "L1", "tprobe": {"ring_count": 2})" + dump);
  const Status refused = mine->Configure(fixed);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("tprobe.ring_count cannot change"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(mine->config().level, config::Level::kMix);
  // A new dump_path is taken up, as msprobe's dump_enable reload takes it.
  const std::string moved =
      write("moved.json",
            R"({"level": "L1", "dump_path": ")" + Dump() + R"(-moved"})");
  ASSERT_TRUE(mine->Configure(moved).ok());
  EXPECT_EQ(mine->config().dump_path, Dump() + "-moved");
  EXPECT_FALSE(mine->Configure(dir_.path() + "/missing.json").ok());
}

TEST_F(SessionTest, DataModeShapesThePlans) {
  struct Case {
    const char* data_mode;
    bool forward_entry, input, output, wants_backward, param_grads;
  };
  const Case cases[] = {
      {R"(["all"])", true, true, true, true, true},
      {R"(["forward"])", true, true, true, false, false},
      {R"(["backward"])", false, false, false, true, true},
      {R"(["output"])", true, false, true, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.data_mode);
    auto s =
        Open(std::string(R"({"level": "L0", "statistics": {"data_mode": )") +
             c.data_mode + "}}");
    ASSERT_TRUE(s);
    s->Start();
    CallPlan plan, grad;
    ASSERT_TRUE(s->BeginModule("Module.fc.Linear", true, 0, &plan));
    EXPECT_TRUE(plan.dumped);
    EXPECT_EQ(plan.entry(), c.forward_entry);
    EXPECT_EQ(plan.input, c.input);
    EXPECT_EQ(plan.output, c.output);
    // At L0 every backward call is a construct.json node.
    EXPECT_TRUE(s->WantsBackward());
    s->EndCall(plan);
    EXPECT_EQ(s->BeginParamGrad("Module.fc.Linear", "weight", &grad),
              c.param_grads);
    if (c.param_grads) {
      EXPECT_EQ(grad.name, "Module.fc.Linear.parameters_grad.0");
    }
    s->Stop();
    s->Step();
    // At L1 backward calls matter only when data_mode keeps their data.
    auto l1 =
        Open(std::string(R"({"level": "L1", "statistics": {"data_mode": )") +
             c.data_mode + "}}");
    ASSERT_TRUE(l1);
    EXPECT_EQ(l1->WantsBackward(), c.wants_backward);
  }
}

TEST_F(SessionTest, OutputsAreCheckedAgainWhenACallEnds) {
  // An API scope closes right after its end API's first check, so that
  // call keeps its inputs and loses its outputs (msprobe 26.x).
  auto s = Open(R"({"level": "L1", "statistics": {"scope":
      ["Functional.relu.0.forward", "Functional.relu.1.forward"]}})");
  ASSERT_TRUE(s);
  s->Start();
  for (int i = 0; i < 2; ++i) {
    CallPlan plan;
    ASSERT_TRUE(s->BeginApi("Functional.relu", true, 0, &plan));
    EXPECT_TRUE(plan.input && plan.output && plan.stack()) << plan.name;
    s->CheckEnd(&plan);
    EXPECT_EQ(plan.output, i == 0) << plan.name;
    EXPECT_TRUE(plan.entry());
    s->EndCall(plan);
  }
}

TEST_F(SessionTest, ParamGradIndicesResetAtStep) {
  auto s = Open(R"({"level": "mix"})");
  ASSERT_TRUE(s);
  CallPlan plan;
  s->Start();
  const char* expected[] = {"Module.fc.Linear.parameters_grad.0",
                            "Module.fc.Linear.parameters_grad.0",
                            "Module.fc.Linear.parameters_grad.1"};
  const char* params[] = {"weight", "bias", "weight"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s->BeginParamGrad("Module.fc.Linear", params[i], &plan));
    EXPECT_EQ(plan.name, expected[i]);
  }
  s->Stop();
  s->Step();
  s->Start();
  ASSERT_TRUE(s->BeginParamGrad("Module.fc.Linear", "bias", &plan));
  EXPECT_EQ(plan.name, "Module.fc.Linear.parameters_grad.0");
}

// Hooks of several threads on one Session at once, with filters set (the
// per-call methods take no lock): every base's indices are 0..n-1, each
// given once; the parameter gradients number their passes 1..n after the
// first, each once; and the list range never loses a thread's open call.
TEST_F(SessionTest, ConcurrentHooksCountOnceEachUnderFilters) {
  const char* configs[] = {
      R"({"level": "mix", "statistics": {"list": ["Block"]},
          "tprobe": {"ring_count": 8, "ring_bytes": 1048576}})",
      R"({"level": "mix", "statistics": {"scope":
           ["Module.b.Block.forward.0", "Module.b.Block.forward.999999"],
           "list": ["Block"]},
          "tprobe": {"ring_count": 8, "ring_bytes": 1048576}})",
      R"({"level": "mix", "tprobe": {"ring_count": 8, "ring_bytes": 1048576}})",
  };
  constexpr int kThreads = 4;
  constexpr int kCalls = 300;
  for (const char* config : configs) {
    SCOPED_TRACE(config);
    auto s = Open(config);
    ASSERT_TRUE(s);
    s->Start();
    CallPlan seed;  // opens the scope: modules count on from 1
    ASSERT_TRUE(s->BeginModule("Module.b.Block", true, 0, &seed));
    s->CheckEnd(&seed);
    s->EndCall(seed);
    // The step's first gradient: "weight" marks the passes.
    ASSERT_TRUE(s->BeginParamGrad("Module.b.Block", "weight", &seed));
    ASSERT_EQ(seed.name, "Module.b.Block.parameters_grad.0");
    std::vector<std::vector<uint32_t>> modules(kThreads), apis(kThreads),
        passes(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        CallPlan module, api, grad;
        for (int i = 0; i < kCalls; ++i) {
          ASSERT_TRUE(s->BeginModule("Module.b.Block", true, 0, &module));
          modules[t].push_back(module.index);
          ASSERT_TRUE(s->BeginApi("Functional.relu", true, 0, &api));
          apis[t].push_back(api.index);
          // Inside this thread's own Block call: the list range is open.
          EXPECT_TRUE(api.dumped) << api.name;
          s->CheckEnd(&api);
          s->EndCall(api);
          s->CheckEnd(&module);
          EXPECT_TRUE(module.dumped) << module.name;
          s->EndCall(module);
          ASSERT_TRUE(s->BeginParamGrad("Module.b.Block", "weight", &grad));
          passes[t].push_back(grad.index);
          ASSERT_TRUE(s->BeginParamGrad("Module.b.Block", "bias", &grad));
          EXPECT_GE(grad.index, passes[t].back()) << grad.name;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (auto* got : {&modules, &apis, &passes}) {
      std::vector<uint32_t> all;
      for (const auto& mine : *got)
        all.insert(all.end(), mine.begin(), mine.end());
      std::sort(all.begin(), all.end());
      const uint32_t first = got == &apis ? 0 : 1;
      ASSERT_EQ(all.size(), size_t{kThreads * kCalls});
      for (size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(all[i], i + first) << "an index given twice or skipped";
      }
    }
    s->Stop();
    s->Step();
  }
}

}  // namespace
}  // namespace tprobe::client
