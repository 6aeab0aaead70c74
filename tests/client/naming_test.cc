#include "client/naming.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tprobe::client {
namespace {

TEST(NamingTest, ModuleBaseIsStylePathAndClass) {
  struct Case {
    ModuleStyle style;
    const char* path;
    const char* class_name;
    const char* want;
  };
  const Case cases[] = {
      {ModuleStyle::kModule, "conv1", "Conv2d", "Module.conv1.Conv2d"},
      {ModuleStyle::kModule, "layer1.0.relu", "ReLU",
       "Module.layer1.0.relu.ReLU"},
      // A list of models: the model's position leads the path.
      {ModuleStyle::kModule, "1.0", "Linear", "Module.1.0.Linear"},
      {ModuleStyle::kCell, "net.dense", "Dense", "Cell.net.dense.Dense"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ModuleBase(c.style, c.path, c.class_name), c.want) << c.want;
  }
}

TEST(NamingTest, ApiBaseKeepsTheLastDottedPartOfTheApi) {
  struct Case {
    const char* prefix;
    const char* api;
    const char* want;
  };
  const Case cases[] = {
      {"Functional", "relu", "Functional.relu"},
      {"Torch", "linalg.norm", "Torch.norm"},  // shares Torch.norm's counter
      {"Torch", "norm", "Torch.norm"},
      {"Tensor", "__iadd__", "Tensor.__iadd__"},
      {"Distributed", "distributed_c10d.all_reduce", "Distributed.all_reduce"},
      {"NPU", "npu_fusion_attention", "NPU.npu_fusion_attention"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ApiBase(c.prefix, c.api), c.want) << c.want;
  }
}

TEST(NamingTest, CallNamesPutTheIndexWhereMsprobeDoes) {
  struct Case {
    std::string got;
    const char* want;
  };
  const Case cases[] = {
      {ModuleCallName("Module.conv1.Conv2d", true, 0),
       "Module.conv1.Conv2d.forward.0"},
      {ModuleCallName("Module.conv1.Conv2d", false, 12),
       "Module.conv1.Conv2d.backward.12"},
      {ModuleCallName("Cell.net.Dense", true, 3), "Cell.net.Dense.forward.3"},
      {ApiCallName("Functional.relu", true, 0), "Functional.relu.0.forward"},
      {ApiCallName("Tensor.__add__", false, 7), "Tensor.__add__.7.backward"},
      {ApiCallName("Torch.matmul", true, 4294967295u),
       "Torch.matmul.4294967295.forward"},
      {ParamGradName("Module.conv1.Conv2d", 0),
       "Module.conv1.Conv2d.parameters_grad.0"},
      {ParamGradName("Cell.net.Dense", 2), "Cell.net.Dense.parameters_grad.2"},
  };
  for (const Case& c : cases) EXPECT_EQ(c.got, c.want);
}

// One counter per base and kind; Reset starts every count again.
TEST(NamingTest, CallIndicesCountPerBaseAndResetAtStep) {
  enum Op { kModule, kApi, kReset };
  struct Event {
    Op op;
    const char* base;
    uint32_t want;
  };
  const Event events[] = {
      {kModule, "Module.fc.Linear", 0},
      {kModule, "Module.fc.Linear", 1},
      {kModule, "Module.act.ReLU", 0},
      {kApi, "Functional.relu", 0},
      // The same text as a module base does not share the API's counter.
      {kApi, "Module.fc.Linear", 0},
      {kApi, "Functional.relu", 1},
      {kModule, "Module.fc.Linear", 2},
      {kReset, "", 0},
      {kModule, "Module.fc.Linear", 0},
      {kApi, "Functional.relu", 0},
  };
  CallIndices indices;
  for (size_t i = 0; i < std::size(events); ++i) {
    const Event& e = events[i];
    switch (e.op) {
      case kModule:
        EXPECT_EQ(indices.NextModule(e.base), e.want) << "event " << i;
        break;
      case kApi:
        EXPECT_EQ(indices.NextApi(e.base), e.want) << "event " << i;
        break;
      case kReset:
        indices.Reset();
        break;
    }
  }
}

// Threads count the same bases at once without a lock: each base's indices
// are 0..n-1, each given once.
TEST(NamingTest, CallIndicesCountConcurrentCallsOnceEach) {
  CallIndices indices;
  constexpr int kThreads = 4;
  constexpr int kCalls = 5000;
  const std::string bases[] = {"Module.a.Linear", "Module.b.ReLU",
                               "Module.c.Conv2d"};
  std::vector<std::vector<uint32_t>> got(kThreads * std::size(bases));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const size_t b = static_cast<size_t>(i) % std::size(bases);
        got[t * std::size(bases) + b].push_back(indices.NextModule(bases[b]));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t b = 0; b < std::size(bases); ++b) {
    std::vector<uint32_t> all;
    for (int t = 0; t < kThreads; ++t) {
      const auto& mine = got[t * std::size(bases) + b];
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_FALSE(all.empty());
    for (size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(all[i], i) << bases[b] << ": an index given twice or skipped";
    }
  }
}

// More bases than the lock-free table holds still count right (the rest go
// to the locked map), and Reset starts them all again.
TEST(NamingTest, CallIndicesCountBasesBeyondTheTable) {
  CallIndices indices;
  constexpr int kBases = 20000;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kBases; ++i) {
      const std::string base = "Module.m" + std::to_string(i) + ".Linear";
      ASSERT_EQ(indices.NextModule(base), 0u) << base;
      ASSERT_EQ(indices.NextModule(base), 1u) << base;
    }
    indices.Reset();
  }
}

// K grows when the first parameter of the step gets another gradient, so
// every parameter of one backward pass shares K.
TEST(NamingTest, ParamGradIndexCountsPassesByTheFirstParameter) {
  struct Event {
    const char* base;
    const char* param;  // nullptr: Reset
    uint32_t want;
  };
  const Event events[] = {
      {"Module.fc.Linear", "bias", 0},  // gradients arrive bias first
      {"Module.fc.Linear", "weight", 0},
      {"Module.emb.Embedding", "weight", 0},
      {"Module.fc.Linear", "bias", 1},  // the second pass
      {"Module.fc.Linear", "weight", 1},
      {"Module.fc.Linear", "weight", 1},  // a repeat of a later parameter
      {"Module.fc.Linear", "bias", 2},
      {"", nullptr, 0},
      {"Module.fc.Linear", "weight", 0},  // a new step, a new first parameter
      {"Module.fc.Linear", "bias", 0},
      {"Module.fc.Linear", "weight", 1},
  };
  CallIndices indices;
  for (size_t i = 0; i < std::size(events); ++i) {
    const Event& e = events[i];
    if (e.param == nullptr) {
      indices.Reset();
      continue;
    }
    EXPECT_EQ(indices.ParamGrad(e.base, e.param), e.want) << "event " << i;
  }
}

// The K a module's next pass will get, which a placeholder entry is named
// with before its gradients come (under torch.compile), counts nothing.
TEST(NamingTest, NextParamGradPassPeeksAtK) {
  CallIndices indices;
  EXPECT_EQ(indices.NextParamGradPass("Module.fc.Linear"), 0u);
  EXPECT_EQ(indices.NextParamGradPass("Module.fc.Linear"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "weight"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "bias"), 0u);
  EXPECT_EQ(indices.NextParamGradPass("Module.fc.Linear"), 1u);
  EXPECT_EQ(indices.NextParamGradPass("Module.emb.Embedding"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "weight"), 1u);
  EXPECT_EQ(indices.NextParamGradPass("Module.fc.Linear"), 2u);
  indices.Reset();
  EXPECT_EQ(indices.NextParamGradPass("Module.fc.Linear"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "bias"), 0u);
}

// A key keeps its value's address and its id for good; ids are unique and
// never 0, in the lock-free slots and in the locked overflow alike.
TEST(NamingTest, TextTableKeepsEachKeysValueAndId) {
  TextTable<std::atomic<uint64_t>> table;
  constexpr int kKeys = 20000;  // beyond the slots: some overflow
  std::vector<TextTable<std::atomic<uint64_t>>::Found> first;
  std::set<uint32_t> ids;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "Module.m" + std::to_string(i) + ".Linear";
    auto found = table.Find(key);
    ASSERT_NE(found.id, 0u);
    EXPECT_TRUE(ids.insert(found.id).second) << key << ": id given twice";
    EXPECT_EQ(found.value->load(), 0u) << key << ": not a fresh value";
    found.value->store(static_cast<uint64_t>(i) + 1);
    first.push_back(found);
  }
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "Module.m" + std::to_string(i) + ".Linear";
    auto again = table.Find(key);
    ASSERT_EQ(again.value, first[i].value) << key;
    ASSERT_EQ(again.id, first[i].id) << key;
    ASSERT_EQ(again.value->load(), static_cast<uint64_t>(i) + 1) << key;
  }
}

// Threads that meet a key for the first time at once agree on its slot.
TEST(NamingTest, TextTableClaimsAKeyOnceUnderRaces) {
  TextTable<std::atomic<uint64_t>> table;
  constexpr int kThreads = 4;
  constexpr int kKeys = 3000;
  std::vector<std::vector<TextTable<std::atomic<uint64_t>>::Found>> got(
      kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        auto found = table.Find("Functional.op" + std::to_string(i));
        found.value->fetch_add(1);
        got[t].push_back(found);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kKeys; ++i) {
    for (int t = 1; t < kThreads; ++t) {
      ASSERT_EQ(got[t][i].value, got[0][i].value) << "key " << i;
      ASSERT_EQ(got[t][i].id, got[0][i].id) << "key " << i;
    }
    ASSERT_EQ(got[0][i].value->load(), uint64_t{kThreads}) << "key " << i;
  }
}

// Parameter gradients from several autograd threads at once: the first
// parameter's gradients number the passes 0..n-1, each once, and every
// other parameter's K is one of them; other modules keep their own count.
TEST(NamingTest, ParamGradIndexUnderConcurrentGradients) {
  CallIndices indices;
  constexpr int kThreads = 4;
  constexpr int kPasses = 2000;
  // The first gradient of the step decides the first parameter.
  ASSERT_EQ(indices.ParamGrad("Module.fc.Linear", "weight"), 0u);
  std::vector<std::vector<uint32_t>> weights(kThreads), biases(kThreads),
      own(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string mine = "Module.own" + std::to_string(t) + ".Linear";
      for (int i = 0; i < kPasses; ++i) {
        weights[t].push_back(indices.ParamGrad("Module.fc.Linear", "weight"));
        biases[t].push_back(indices.ParamGrad("Module.fc.Linear", "bias"));
        own[t].push_back(indices.ParamGrad(mine, "bias"));
        own[t].push_back(indices.ParamGrad(mine, "weight"));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<uint32_t> all;
  for (const auto& w : weights) all.insert(all.end(), w.begin(), w.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i], i + 1) << "a pass numbered twice or skipped";
  }
  for (int t = 0; t < kThreads; ++t) {
    for (size_t i = 0; i < biases[t].size(); ++i) {
      // A bias comes after its thread's weight of the same pass, so its K
      // is at least that weight's and at most the last pass.
      ASSERT_GE(biases[t][i], weights[t][i]);
      ASSERT_LE(biases[t][i], uint32_t{kThreads * kPasses});
    }
    for (size_t i = 0; i < own[t].size(); ++i) {
      ASSERT_EQ(own[t][i], i / 2) << "thread " << t << ": own module";
    }
  }
  indices.Reset();
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "bias"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "weight"), 0u);
  EXPECT_EQ(indices.ParamGrad("Module.fc.Linear", "bias"), 1u);
}

// Bases beyond the lock-free table keep their passes too (the overflow).
TEST(NamingTest, ParamGradIndexForModulesBeyondTheTable) {
  CallIndices indices;
  constexpr int kBases = 20000;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kBases; ++i) {
      const std::string base = "Module.m" + std::to_string(i) + ".Linear";
      ASSERT_EQ(indices.ParamGrad(base, "weight"), 0u) << base;
      ASSERT_EQ(indices.ParamGrad(base, "bias"), 0u) << base;
      ASSERT_EQ(indices.ParamGrad(base, "weight"), 1u) << base;
    }
    indices.Reset();
  }
}

}  // namespace
}  // namespace tprobe::client
