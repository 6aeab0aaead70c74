#include "client/selection.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/config.h"

namespace tprobe::client {
namespace {

config::Config Parse(const std::string& json) {
  Result<config::Config> parsed = config::ParseConfig(json);
  EXPECT_TRUE(parsed.ok()) << json << ": " << parsed.status().message();
  return parsed.ok() ? parsed.value() : config::Config();
}

// What happens, in call order, and whether the call is dumped.
enum Op {
  kFwd,     // a module forward call begins
  kBwd,     // a module backward call begins
  kEnd,     // a module call ends (its result is not checked)
  kApi,     // a forward API call
  kApiBwd,  // a backward API call
  kGrad,    // a parameter gradient entry
  kReset,   // step()
};

struct Event {
  Op op;
  std::string name;
  bool dumped = false;
};

// "X.backward" -> "X.forward", wherever the direction sits in the name.
std::string ForwardOf(const std::string& name) {
  std::string out = name;
  out.replace(out.find(".backward"), 9, ".forward");
  return out;
}

std::string BaseOf(const std::string& name, const char* marker) {
  return name.substr(0, name.find(marker));
}

struct Case {
  const char* title;
  std::string config;
  std::vector<Event> events;
};

void Replay(const Case& c) {
  SCOPED_TRACE(c.title);
  Selection selection(Parse(c.config));
  for (size_t i = 0; i < c.events.size(); ++i) {
    const Event& e = c.events[i];
    bool dumped = false;
    switch (e.op) {
      case kFwd:
        dumped =
            selection.BeginModuleForward(BaseOf(e.name, ".forward"), e.name);
        break;
      case kBwd:
        dumped = selection.BeginModuleBackward(e.name, ForwardOf(e.name));
        break;
      case kEnd:
        selection.EndModule(e.name);
        continue;
      case kApi:
        dumped = selection.ApiForward(e.name);
        break;
      case kApiBwd:
        dumped = selection.ApiBackward(e.name, ForwardOf(e.name));
        break;
      case kGrad:
        dumped =
            selection.ParamGrad(BaseOf(e.name, ".parameters_grad"), e.name);
        break;
      case kReset:
        selection.ResetStep();
        continue;
    }
    EXPECT_EQ(dumped, e.dumped) << "event " << i << ": " << e.name;
  }
}

TEST(SelectionTest, NoScopeAndNoListDumpsEverything) {
  Selection selection(Parse(R"({"level": "mix", "statistics":
      {"scope": [], "list": []}})"));
  EXPECT_TRUE(selection.everything());
  Replay({"everything",
          R"({"level": "mix"})",
          {{kFwd, "Module.a.A.forward.0", true},
           {kApi, "Functional.relu.0.forward", true},
           {kEnd, "Module.a.A.forward.0"},
           {kBwd, "Module.a.A.backward.0", true},
           {kEnd, "Module.a.A.backward.0"},
           {kApiBwd, "Functional.relu.0.backward", true},
           {kGrad, "Module.a.A.parameters_grad.0", true}}});
  EXPECT_FALSE(
      Selection(Parse(R"({"statistics": {"list": ["x"]}})")).everything());
}

TEST(SelectionTest, ListMatchesSubstringsOfFullNames) {
  const Case cases[] = {
      {"any entry, case-sensitive",
       R"({"level": "L1", "statistics": {"list": ["relu", "Tensor.add"]}})",
       {{kApi, "Functional.relu.0.forward", true},
        {kApi, "Functional.gelu.0.forward", false},
        {kApi, "Tensor.add_.0.forward", true},
        {kApi, "Tensor.__add__.0.forward", false},
        {kApi, "Functional.leaky_relu.0.forward", true},
        {kFwd, "Module.act.ReLU.forward.0", false},
        {kEnd, "Module.act.ReLU.forward.0"}}},
      {"a full name with its index",
       R"({"level": "L1", "statistics": {"list": ["Torch.matmul.1.forward"]}})",
       {{kApi, "Torch.matmul.0.forward", false},
        {kApi, "Torch.matmul.1.forward", true},
        {kApi, "Torch.matmul.11.forward", false}}},
      {"at L0 every module must match by itself",
       R"({"level": "L0", "statistics": {"list": ["Block"]}})",
       {{kFwd, "Module.b.Block.forward.0", true},
        {kFwd, "Module.b.fc.Linear.forward.0", false},
        {kEnd, "Module.b.fc.Linear.forward.0"},
        {kEnd, "Module.b.Block.forward.0"}}},
      {"at mix a matching module opens the list range for its children",
       R"({"level": "mix", "statistics": {"list": ["Module.1."]}})",
       {{kFwd, "Module.0.0.Linear.forward.0", false},
        {kApi, "Functional.linear.0.forward", false},
        {kEnd, "Module.0.0.Linear.forward.0"},
        {kFwd, "Module.1.0.Linear.forward.0", true},
        {kApi, "Functional.linear.1.forward", true},
        {kFwd, "Module.helper.Norm.forward.0", true},
        {kApi, "Torch.norm.0.forward", true},
        {kEnd, "Module.helper.Norm.forward.0"},
        {kApi, "Functional.dropout.0.forward", true},
        {kEnd, "Module.1.0.Linear.forward.0"},
        {kApi, "Functional.linear.2.forward", false},
        {kFwd, "Module.helper.Norm.forward.1", false},
        {kEnd, "Module.helper.Norm.forward.1"}}},
      {"at mix nested matching modules keep the range open until the last ends",
       R"({"level": "mix", "statistics": {"list": ["Block"]}})",
       {{kFwd, "Module.outer.Block.forward.0", true},
        {kFwd, "Module.outer.inner.Block.forward.0", true},
        {kEnd, "Module.outer.inner.Block.forward.0"},
        {kApi, "Functional.relu.0.forward", true},
        {kEnd, "Module.outer.Block.forward.0"},
        {kApi, "Functional.relu.1.forward", false}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, ScopeDumpsFromStartToEndInclusive) {
  const Case cases[] = {
      {"API range",
       R"({"level": "L1", "statistics": {"scope":
           ["Functional.relu.1.forward", "Torch.add.0.forward"]}})",
       {{kApi, "Functional.relu.0.forward", false},
        {kApi, "Functional.relu.1.forward", true},
        {kApi, "Tensor.mul.0.forward", true},
        {kApi, "Torch.add.0.forward", true},
        {kApi, "Functional.relu.2.forward", false}}},
      {"start == end: that one API",
       R"({"level": "L1", "statistics": {"scope":
           ["Torch.add.1.forward", "Torch.add.1.forward"]}})",
       {{kApi, "Torch.add.0.forward", false},
        {kApi, "Torch.add.1.forward", true},
        {kApi, "Torch.add.2.forward", false}}},
      {"module range: from start's begin to end's end",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.b.B.forward.0"]}})",
       {{kFwd, "Module.p.P.forward.0", false},  // began before the range
        {kFwd, "Module.a.A.forward.0", true},
        {kFwd, "Module.a.c.C.forward.0", true},
        {kEnd, "Module.a.c.C.forward.0"},
        {kEnd, "Module.a.A.forward.0"},
        {kEnd, "Module.p.P.forward.0"},
        {kFwd, "Module.b.B.forward.0", true},
        {kFwd, "Module.b.d.D.forward.0", true},
        {kEnd, "Module.b.d.D.forward.0"},
        {kEnd, "Module.b.B.forward.0"},
        {kFwd, "Module.e.E.forward.0", false},
        {kEnd, "Module.e.E.forward.0"}}},
      {"[M, M]: the module and everything inside it",
       R"({"level": "mix", "statistics": {"scope":
           ["Module.m.M.forward.1", "Module.m.M.forward.1"]}})",
       {{kFwd, "Module.m.M.forward.0", false},
        {kApi, "Functional.relu.0.forward", false},
        {kEnd, "Module.m.M.forward.0"},
        {kFwd, "Module.m.M.forward.1", true},
        {kApi, "Functional.relu.1.forward", true},
        {kFwd, "Module.m.fc.Linear.forward.0", true},
        {kEnd, "Module.m.fc.Linear.forward.0"},
        {kEnd, "Module.m.M.forward.1"},
        {kApi, "Functional.relu.2.forward", false}}},
      {"mix: from a module to an API",
       R"({"level": "mix", "statistics": {"scope":
           ["Module.a.A.forward.0", "Functional.relu.1.forward"]}})",
       {{kApi, "Functional.relu.0.forward", false},
        {kFwd, "Module.a.A.forward.0", true},
        {kApi, "Functional.relu.1.forward", true},  // closes the range
        {kApi, "Functional.gelu.0.forward", false},
        {kEnd, "Module.a.A.forward.0"}}},
      {"scope and list: in range and listed",
       R"({"level": "L1", "statistics": {"list": ["relu"], "scope":
           ["Functional.relu.0.forward", "Functional.relu.2.forward"]}})",
       {{kApi, "Functional.relu.0.forward", true},
        {kApi, "Functional.gelu.0.forward", false},
        {kApi, "Functional.relu.1.forward", true},
        {kApi, "Functional.relu.2.forward", true},
        {kApi, "Functional.relu.3.forward", false}}},
      {"an end never reached keeps the range open",
       R"({"level": "L1", "statistics": {"scope":
           ["Torch.add.0.forward", "Torch.add.9.forward"]}})",
       {{kApi, "Torch.add.0.forward", true},
        {kApi, "Torch.add.1.forward", true},
        {kApi, "Torch.sub.0.forward", true}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, BackwardAndGradientsFollowTheirForwardOrTheirOwnName) {
  const Case cases[] = {
      {"module backward follows its forward call",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.a.A.forward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", true},
        {kEnd, "Module.a.A.forward.0"},
        {kFwd, "Module.b.B.forward.0", false},
        {kEnd, "Module.b.B.forward.0"},
        {kBwd, "Module.b.B.backward.0", false},
        {kEnd, "Module.b.B.backward.0"},
        {kBwd, "Module.a.A.backward.0", true},
        {kEnd, "Module.a.A.backward.0"},
        {kBwd, "Module.a.A.backward.1", false},  // no such forward call
        {kEnd, "Module.a.A.backward.1"}}},
      {"API backward follows its forward call",
       R"({"level": "L1", "statistics": {"scope":
           ["Functional.relu.0.forward", "Functional.relu.0.forward"]}})",
       {{kApi, "Functional.relu.0.forward", true},
        {kApi, "Functional.relu.1.forward", false},
        {kApiBwd, "Functional.relu.1.backward", false},
        {kApiBwd, "Functional.relu.0.backward", true}}},
      {"a backward call matches the list by its own name",
       R"({"level": "L1", "statistics": {"list": ["backward"]}})",
       {{kApi, "Functional.relu.0.forward", false},
        {kApiBwd, "Functional.relu.0.backward", true}}},
      {"a scope of backward names",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.b.B.backward.0", "Module.a.A.backward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", false},
        {kEnd, "Module.a.A.forward.0"},
        {kBwd, "Module.c.C.backward.0", false},
        {kEnd, "Module.c.C.backward.0"},
        {kBwd, "Module.b.B.backward.0", true},
        {kEnd, "Module.b.B.backward.0"},
        {kBwd, "Module.a.A.backward.0", true},
        {kEnd, "Module.a.A.backward.0"},
        {kBwd, "Module.d.D.backward.0", false},
        {kEnd, "Module.d.D.backward.0"}}},
      {"gradients follow any dumped forward call of the module",
       R"({"level": "L0", "statistics": {"list": ["fc"]}})",
       {{kFwd, "Module.fc.Linear.forward.0", true},
        {kEnd, "Module.fc.Linear.forward.0"},
        {kFwd, "Module.emb.Embedding.forward.0", false},
        {kEnd, "Module.emb.Embedding.forward.0"},
        {kGrad, "Module.fc.Linear.parameters_grad.0", true},
        {kGrad, "Module.emb.Embedding.parameters_grad.0", false}}},
      {"gradients match the list by their own name",
       R"({"level": "L0", "statistics": {"list": ["parameters_grad"]}})",
       {{kFwd, "Module.fc.Linear.forward.0", false},
        {kEnd, "Module.fc.Linear.forward.0"},
        {kGrad, "Module.fc.Linear.parameters_grad.0", true}}},
  };
  for (const Case& c : cases) Replay(c);
}

TEST(SelectionTest, ANewStepClosesRangesAndForgetsDumpedCalls) {
  const Case cases[] = {
      {"scope",
       R"({"level": "L0", "statistics": {"scope":
           ["Module.a.A.forward.0", "Module.z.Z.forward.0"]}})",
       {{kFwd, "Module.a.A.forward.0", true},
        {kEnd, "Module.a.A.forward.0"},
        {kFwd, "Module.b.B.forward.0", true},  // the range is still open
        {kEnd, "Module.b.B.forward.0"},
        {kReset, ""},
        {kFwd, "Module.b.B.forward.0", false},
        {kEnd, "Module.b.B.forward.0"},
        {kBwd, "Module.a.A.backward.0", false},
        {kEnd, "Module.a.A.backward.0"},
        {kGrad, "Module.a.A.parameters_grad.0", false}}},
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
                      m.data_mode + "}}"));
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
    Selection s(Parse(c.config));
    const bool got = c.step ? s.StepSelected(c.value) : s.RankSelected(c.value);
    EXPECT_EQ(got, c.selected) << c.config << " " << c.value;
  }
}

}  // namespace
}  // namespace tprobe::client
