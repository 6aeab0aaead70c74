#include "client/selection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "client/risk_level.h"
#include "common/config/config.h"

namespace tprobe::client {
namespace {

config::Config Parse(const std::string& json) {
  Result<config::Config> parsed = config::ParseConfig(json);
  EXPECT_TRUE(parsed.ok()) << json << ": " << parsed.status().message();
  return parsed.ok() ? parsed.value() : config::Config();
}

// The events msprobe's hooks drive its scope with, in call order, and what
// the checks among them return.
enum Op {
  kFwd,     // a module forward call begins: BeginModule, then Check
  kBwd,     // a module backward call begins: BeginModule only
  kEnd,     // a module call ends: Check, then EndModule
  kApi,     // an API call begins, or a backward API call: Check
  kApiEnd,  // a forward API call ends: Check
  kGrad,    // a parameter gradient of the module base `name`: ParamGrad
  kWrote,   // the backward module call `name` wrote an entry
  kReset,   // step()
};

struct Event {
  Op op;
  std::string name;
  bool passes = false;
};

struct Case {
  const char* title;
  std::string config;
  std::vector<Event> events;
};

void Replay(const Case& c) {
  SCOPED_TRACE(c.title);
  Selection selection(Parse(c.config), true);
  for (size_t i = 0; i < c.events.size(); ++i) {
    const Event& e = c.events[i];
    bool passes = false;
    switch (e.op) {
      case kFwd:
        selection.BeginModule(e.name);
        passes = selection.Check(e.name);
        break;
      case kBwd:
        selection.BeginModule(e.name);
        continue;
      case kEnd:
        passes = selection.Check(e.name);
        selection.EndModule(e.name);
        break;
      case kApi:
      case kApiEnd:
        passes = selection.Check(e.name);
        break;
      case kGrad:
        passes = selection.ParamGrad(e.name);
        break;
      case kWrote:
        selection.NoteBackwardEntry(e.name);
        continue;
      case kReset:
        selection.ResetStep();
        continue;
    }
    EXPECT_EQ(passes, e.passes) << "event " << i << ": " << e.name;
  }
}

TEST(SelectionTest, NoScopeListOrRiskLevelIsEverything) {
  EXPECT_TRUE(Selection(Parse(R"({"level": "mix", "risk_level": "ALL"})"), true)
                  .everything());
  // msprobe applies risk_level to PyTorch APIs only.
  EXPECT_TRUE(Selection(Parse(R"({"level": "L0"})"), true).everything());
  EXPECT_TRUE(Selection(Parse(R"({"level": "mix"})"), false).everything());
  EXPECT_FALSE(Selection(Parse(R"({"level": "mix"})"), true).everything());
  EXPECT_FALSE(Selection(Parse(R"({"statistics": {"list": ["x"]}})"), true)
                   .everything());
}

TEST(SelectionTest, RiskLevelLeavesOutApisWhenNeitherScopeNorList) {
  const Case cases[] = {
      {"FOCUS, msprobe's default: every API but the low-risk ones",
       R"({"level": "mix"})",
       {{kFwd, "Module.fc.Linear.forward.0", true},
        {kApi, "Functional.linear.0.forward", true},
        {kApi, "Tensor.view.3.forward", false},
        {kApi, "Tensor.view.3.backward", false},
        {kApi, "Torch.arange.0.forward", false},
        {kApi, "Tensor.stride.12.forward", false},
        {kApi, "Tensor.__add__.1.forward", true},
        {kApi, "Torch.matmul.0.forward", true},
        {kEnd, "Module.fc.Linear.forward.0", true},
        {kGrad, "Module.fc.Linear", true}}},
      {"CORE: only the core APIs",
       R"({"level": "L1", "risk_level": "CORE"})",
       {{kApi, "Torch.matmul.0.forward", true},
        {kApi, "Torch.linalg.matmul.1.forward", true},
        {kApi, "Functional.layer_norm.0.backward", true},
        {kApi, "Distributed.all_reduce.0.forward", true},
        {kApi, "Tensor.scatter.2.forward", true},      // a collective's name
        {kApi, "Functional.linear.0.forward", false},  // msprobe 26.2.0
        {kApi, "Tensor.__add__.1.forward", false},
        {kApi, "Tensor.view.3.forward", false}}},
      {"ALL: every API",
       R"({"level": "L1", "risk_level": "ALL"})",
       {{kApi, "Tensor.view.3.forward", true}}},
      {"a list decides instead of the risk level",
       R"({"level": "L1", "risk_level": "CORE",
           "statistics": {"list": ["view"]}})",
       {{kApi, "Tensor.view.3.forward", true},
        {kApi, "Torch.matmul.0.forward", false}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, RiskOfApiIsMsprobes) {
  EXPECT_EQ(RiskOfApi("matmul"), ApiRisk::kCore);
  EXPECT_EQ(RiskOfApi("reshape"), ApiRisk::kLow);
  EXPECT_EQ(RiskOfApi("relu"), ApiRisk::kFocus);
  EXPECT_EQ(RiskOfApi("chain_matmullinear"), ApiRisk::kCore);
  EXPECT_FALSE(PassesRiskLevel(config::RiskLevel::kFocus, "Tensor.view"));
  EXPECT_TRUE(PassesRiskLevel(config::RiskLevel::kFocus, "add"));
  EXPECT_FALSE(PassesRiskLevel(config::RiskLevel::kFocus, "view"));
}

TEST(SelectionTest, ListMatchesSubstringsOfFullNames) {
  const Case cases[] = {
      {"any entry, case-sensitive",
       R"({"level": "L1", "statistics": {"list": ["relu", "Tensor.add"]}})",
       {{kApi, "Functional.relu.0.forward", true},
        {kApiEnd, "Functional.relu.0.forward", true},
        {kApi, "Functional.gelu.0.forward", false},
        {kApi, "Tensor.add_.0.forward", true},
        {kApi, "Tensor.__add__.0.forward", false},
        {kApi, "Functional.relu.0.backward", true}}},
      {"a full name with its index selects that call only, not its backward",
       R"({"level": "L1", "statistics": {"list": ["Torch.matmul.1.forward"]}})",
       {{kApi, "Torch.matmul.0.forward", false},
        {kApi, "Torch.matmul.1.forward", true},
        {kApi, "Torch.matmul.11.forward", false},
        {kApi, "Torch.matmul.1.backward", false}}},
      {"at L0 every module call matches by itself",
       R"({"level": "L0", "statistics": {"list": ["Block"]}})",
       {{kFwd, "Module.b.Block.forward.0", true},
        {kFwd, "Module.b.fc.Linear.forward.0", false},
        {kEnd, "Module.b.fc.Linear.forward.0", false},
        {kEnd, "Module.b.Block.forward.0", true},
        {kGrad, "Module.b.fc.Linear", false},
        {kGrad, "Module.b.Block", true}}},
      {"at mix a matching module opens the list range while it runs",
       R"({"level": "mix", "statistics": {"list": ["Module.1."]}})",
       {{kFwd, "Module.0.0.Linear.forward.0", false},
        {kApi, "Functional.linear.0.forward", false},
        {kEnd, "Module.0.0.Linear.forward.0", false},
        {kFwd, "Module.1.0.Linear.forward.0", true},
        {kApi, "Functional.linear.1.forward", true},
        {kFwd, "Module.helper.Norm.forward.0", true},
        {kEnd, "Module.helper.Norm.forward.0", true},
        {kEnd, "Module.1.0.Linear.forward.0", true},
        {kApi, "Functional.linear.2.forward", false},
        {kApi, "Functional.linear.2.backward", false},
        {kBwd, "Module.1.0.Linear.backward.0"},  // matches "Module.1." too
        {kApi, "Functional.linear.1.backward", true},
        {kEnd, "Module.1.0.Linear.backward.0", true},
        {kApi, "Functional.linear.0.backward", false}}},
      {"at mix nested matching modules keep the range open until the last ends",
       R"({"level": "mix", "statistics": {"list": ["Block"]}})",
       {{kFwd, "Module.outer.Block.forward.0", true},
        {kFwd, "Module.outer.inner.Block.forward.0", true},
        {kEnd, "Module.outer.inner.Block.forward.0", true},
        {kApi, "Functional.relu.0.forward", true},
        {kEnd, "Module.outer.Block.forward.0", true},
        {kApi, "Functional.relu.1.forward", false},
        {kBwd, "Module.outer.Block.backward.0"},  // matches: opens the range
        {kApi, "Functional.relu.0.backward", true},
        {kEnd, "Module.outer.Block.backward.0", true},
        {kApi, "Functional.gelu.0.backward", false}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, ScopeRangesFollowCallOrder) {
  const Case cases[] = {
      {"API range: the end API keeps its inputs, not its outputs",
       R"({"level": "L1", "statistics": {"scope":
           ["Functional.relu.1.forward", "Torch.add.0.forward"]}})",
       {{kApi, "Functional.relu.0.forward", false},
        {kApiEnd, "Functional.relu.0.forward", false},
        {kApi, "Functional.relu.1.forward", true},
        {kApiEnd, "Functional.relu.1.forward", true},
        {kApi, "Tensor.mul.0.forward", true},
        {kApiEnd, "Tensor.mul.0.forward", true},
        {kApi, "Torch.add.0.forward", true},
        {kApiEnd, "Torch.add.0.forward", false},
        {kApi, "Functional.relu.2.forward", false},
        {kApi, "Tensor.mul.0.backward", false},  // after the range closed
        {kApi, "Functional.relu.1.backward", false}}},
      {"start == end: that one API, inputs and outputs",
       R"({"level": "L1", "statistics": {"scope":
           ["Torch.add.1.forward", "Torch.add.1.forward"]}})",
       {{kApi, "Torch.add.0.forward", false},
        {kApi, "Torch.add.1.forward", true},
        {kApiEnd, "Torch.add.1.forward", true},
        {kApi, "Torch.add.2.forward", false}}},
      {"module range: from start's begin to end's end",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.b.B.forward.0"]}})",
       {{kFwd, "Module.p.P.forward.0", false},  // began before the range
        {kFwd, "Module.a.A.forward.0", true},
        {kFwd, "Module.a.c.C.forward.0", true},
        {kEnd, "Module.a.c.C.forward.0", true},
        {kEnd, "Module.a.A.forward.0", true},
        {kEnd, "Module.p.P.forward.0", true},  // its outputs: inside
        {kFwd, "Module.b.B.forward.0", true},
        {kFwd, "Module.b.d.D.forward.0", true},
        {kEnd, "Module.b.d.D.forward.0", true},
        {kEnd, "Module.b.B.forward.0", true},
        {kFwd, "Module.e.E.forward.0", false},
        {kEnd, "Module.e.E.forward.0", false},
        {kBwd, "Module.b.B.backward.0"},
        {kEnd, "Module.b.B.backward.0", false},
        {kGrad, "Module.b.B", false}}},
      {"module range ending inside a parent: the parent keeps its inputs",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.b.c.C.forward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", true},
        {kEnd, "Module.a.A.forward.0", true},
        {kFwd, "Module.b.B.forward.0", true},
        {kFwd, "Module.b.c.C.forward.0", true},
        {kEnd, "Module.b.c.C.forward.0", true},
        {kEnd, "Module.b.B.forward.0", false}}},
      {"mix: the end module's own start check closes the range",
       R"({"level": "mix", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.b.B.forward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", true},
        {kApi, "Functional.relu.0.forward", true},
        {kEnd, "Module.a.A.forward.0", true},
        {kFwd, "Module.b.B.forward.0", true},
        {kApi, "Functional.relu.1.forward", false},
        {kEnd, "Module.b.B.forward.0", false}}},
      {"a scope of backward names",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.b.B.backward.0", "Module.a.A.backward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", false},
        {kEnd, "Module.a.A.forward.0", false},
        {kBwd, "Module.c.C.backward.0"},
        {kEnd, "Module.c.C.backward.0", false},
        {kBwd, "Module.b.B.backward.0"},
        {kEnd, "Module.b.B.backward.0", true},
        {kBwd, "Module.a.A.backward.0"},
        {kEnd, "Module.a.A.backward.0", true},
        {kBwd, "Module.d.D.backward.0"},
        {kEnd, "Module.d.D.backward.0", false}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, GradientsFollowTheModuleNameOrItsBackwardEntry) {
  Replay({"list",
          R"({"level": "L0", "statistics": {"list": ["backward.0"]}})",
          {{kGrad, "Module.fc.Linear", false},
           {kWrote, "Module.fc.Linear.backward.0"},
           {kGrad, "Module.fc.Linear", true},
           {kGrad, "Module.emb.Embedding", false},
           {kReset, ""},
           {kGrad, "Module.fc.Linear", false}}});
}

TEST(SelectionTest, ANewStepClosesRanges) {
  const Case cases[] = {
      {"scope",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.z.Z.forward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", true},
        {kEnd, "Module.a.A.forward.0", true},
        {kReset, ""},
        {kFwd, "Module.b.B.forward.0", false},
        {kEnd, "Module.b.B.forward.0", false}}},
      {"mix list range",
       R"({"level": "mix", "statistics": {"list": ["Block"]}})",
       {{kFwd, "Module.b.Block.forward.0", true},  // never ended
        {kApi, "Functional.relu.0.forward", true},
        {kReset, ""},
        {kApi, "Functional.relu.0.forward", false}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, DataModeKeepsDirectionsAndSides) {
  struct Mode {
    const char* data_mode;
    bool forward_input, forward_output, backward_input, backward_output;
  };
  const Mode modes[] = {
      {R"(["all"])", true, true, true, true},
      {R"([])", true, true, true, true},
      {R"(["forward"])", true, true, false, false},
      {R"(["backward"])", false, false, true, true},
      {R"(["input"])", true, false, true, false},
      {R"(["output"])", false, true, false, true},
      {R"(["forward", "input"])", true, false, false, false},
      {R"(["forward", "output"])", false, true, false, false},
      {R"(["backward", "input"])", false, false, true, false},
      {R"(["input", "output"])", true, true, true, true},
      {R"(["forward", "backward", "input", "output"])", true, true, true, true},
  };
  for (const Mode& m : modes) {
    SCOPED_TRACE(m.data_mode);
    Selection s(Parse(std::string(R"({"statistics": {"data_mode": )") +
                      m.data_mode + "}}"),
                "pytorch");
    EXPECT_EQ(s.Keeps(true, true), m.forward_input);
    EXPECT_EQ(s.Keeps(true, false), m.forward_output);
    EXPECT_EQ(s.Keeps(false, true), m.backward_input);
    EXPECT_EQ(s.Keeps(false, false), m.backward_output);
    EXPECT_EQ(s.KeepsDirection(true), m.forward_input || m.forward_output);
    EXPECT_EQ(s.KeepsDirection(false), m.backward_input || m.backward_output);
  }
}

TEST(SelectionTest, StepAndRankFilters) {
  struct Check {
    const char* config;
    bool step;  // else rank
    int64_t value;
    bool selected;
  };
  const Check checks[] = {
      {R"({"step": []})", true, 0, true},
      {R"({"step": []})", true, 999999, true},
      {R"({"step": [1, "3-5"]})", true, 0, false},
      {R"({"step": [1, "3-5"]})", true, 1, true},
      {R"({"step": [1, "3-5"]})", true, 2, false},
      {R"({"step": [1, "3-5"]})", true, 3, true},
      {R"({"step": [1, "3-5"]})", true, 5, true},
      {R"({"step": [1, "3-5"]})", true, 6, false},
      {R"({"rank": []})", false, 7, true},
      {R"({"rank": [0, "2-3"]})", false, -1, true},  // no distributed rank
      {R"({"rank": [0, "2-3"]})", false, 0, true},
      {R"({"rank": [0, "2-3"]})", false, 1, false},
      {R"({"rank": [0, "2-3"]})", false, 3, true},
      {R"({"rank": [0, "2-3"]})", false, 4, false},
  };
  for (const Check& c : checks) {
    Selection s(Parse(c.config), true);
    const bool got = c.step ? s.StepSelected(c.value) : s.RankSelected(c.value);
    EXPECT_EQ(got, c.selected) << c.config << " " << c.value;
  }
}

// At mix, module calls of several threads open and close list ranges at
// once (no lock): a thread inside its own listed module call always sees a
// range open, and once every call ended none is.
TEST(SelectionTest, MixListRangesUnderConcurrentModuleCalls) {
  Selection s(Parse(R"({"level": "mix", "statistics": {"list": ["Block"]}})"),
              "pytorch");
  constexpr int kThreads = 4;
  constexpr int kCalls = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string prefix = "Module.t" + std::to_string(t);
      for (int i = 0; i < kCalls; ++i) {
        const std::string listed =
            prefix + ".Block.forward." + std::to_string(i);
        const std::string other =
            prefix + ".fc.Linear.forward." + std::to_string(i);
        s.BeginModule(listed);
        EXPECT_TRUE(s.Check(listed));
        s.BeginModule(other);  // a child: inside the range
        EXPECT_TRUE(s.Check(other));
        EXPECT_TRUE(s.Check(other));
        s.EndModule(other);
        EXPECT_TRUE(s.Check("Functional.relu.0.forward"));
        EXPECT_TRUE(s.Check(listed));
        s.EndModule(listed);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(s.Check("Functional.relu.0.forward"));
  // An end without its begin (one from before a step) closes nothing below
  // zero, so the next range still opens and closes.
  s.EndModule("Module.a.Block.forward.0");
  s.BeginModule("Module.b.Block.forward.0");
  EXPECT_TRUE(s.Check("Functional.relu.1.forward"));
  s.EndModule("Module.b.Block.forward.0");
  EXPECT_FALSE(s.Check("Functional.relu.2.forward"));
}

// Backward entries noted by several threads at once select their modules'
// gradients, and only theirs, until the step ends.
TEST(SelectionTest, BackwardEntriesUnderConcurrentThreads) {
  Selection s(Parse(R"({"level": "L0", "statistics": {"list": ["nomatch"]}})"),
              "pytorch");
  constexpr int kThreads = 4;
  constexpr int kModules = 2000;
  auto base = [](int t, int i, const char* kind) {
    return "Module." + std::string(kind) + std::to_string(t) + "_" +
           std::to_string(i) + ".Linear";
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kModules; ++i) {
        s.NoteBackwardEntry(base(t, i, "w") + ".backward.0");
        EXPECT_TRUE(s.ParamGrad(base(t, i, "w")));
        EXPECT_FALSE(s.ParamGrad(base(t, i, "n")));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(s.ParamGrad(base(t, kModules - 1, "w")));
  }
  s.ResetStep();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_FALSE(s.ParamGrad(base(t, 0, "w")));
  }
}

// risk_level alone keeps no state: threads checking at once get the same
// answers as one thread.
TEST(SelectionTest, RiskLevelChecksUnderConcurrentThreads) {
  Selection s(Parse(R"({"level": "L1"})"), true);  // FOCUS
  const std::string names[] = {
      "Tensor.view.0.forward", "Torch.matmul.0.forward",
      "Functional.relu.0.forward", "Tensor.reshape.3.backward"};
  std::vector<bool> want;
  for (const std::string& n : names) {
    want.push_back(PassesRiskLevel(config::RiskLevel::kFocus, n));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const size_t k = static_cast<size_t>(i) % std::size(names);
        ASSERT_EQ(s.Check(names[k]), want[k]) << names[k];
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace tprobe::client
