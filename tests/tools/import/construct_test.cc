#include "tools/import/construct.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/import/record_builders.h"
#include "tools/import/call_order.h"

namespace tprobe::import {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using testing::Rec;

std::vector<std::pair<std::string, std::string>> Tree(
    std::vector<TensorRecord> records) {
  SortByExecution(records);
  AssignCallIndices(records);
  std::vector<std::pair<std::string, std::string>> tree;
  for (const CellCall& call : BuildCellCalls(records)) {
    tree.emplace_back(call.entry, call.parent.value_or("null"));
  }
  return tree;
}

TEST(ConstructTest, ParentCandidatesFollowTheNameRule) {
  EXPECT_THAT(ParentPathCandidates("model"), ElementsAre());
  EXPECT_THAT(ParentPathCandidates("model.embed"), ElementsAre("model"));
  EXPECT_THAT(ParentPathCandidates("model.layers.12"),
              ElementsAre("model.layers", "model"));
  EXPECT_THAT(ParentPathCandidates("model.layers.x"),
              ElementsAre("model.layers"));
  EXPECT_THAT(ParentPathCandidates("model.sublayers.1"),
              ElementsAre("model.sublayers"));
}

TEST(ConstructTest, NestsCellsByNameAndDirection) {
  EXPECT_THAT(
      Tree({
          Rec("Cell.model.Net", "forward", "input", 0, 1),
          Rec("Cell.model.layers.0.Block", "forward", "input", 0, 2),
          Rec("Cell.model.layers.0.attn.Attention", "forward", "input", 0, 3),
          Rec("Cell.model.layers.0.attn.Attention", "forward", "output", 0, 4),
          Rec("Cell.model.layers.0.Block", "forward", "output", 0, 5),
          Rec("Cell.model.Net", "forward", "output", 0, 6),
          Rec("Cell.model.Net", "backward", "input", 0, 7),
          Rec("Cell.model.layers.0.Block", "backward", "input", 0, 8),
          Rec("Cell.model.layers.0.Block", "backward", "output", 0, 9),
          Rec("Cell.model.Net", "backward", "output", 0, 10),
          Rec("Cell.other.Head", "forward", "output", 0, 11),
      }),
      ElementsAre(Pair("Cell.model.Net.forward.0", "null"),
                  Pair("Cell.model.layers.0.Block.forward.0",
                       "Cell.model.Net.forward.0"),
                  Pair("Cell.model.layers.0.attn.Attention.forward.0",
                       "Cell.model.layers.0.Block.forward.0"),
                  Pair("Cell.model.Net.backward.0", "null"),
                  Pair("Cell.model.layers.0.Block.backward.0",
                       "Cell.model.Net.backward.0"),
                  Pair("Cell.other.Head.forward.0", "null")));
}

TEST(ConstructTest, OrdersByLastInputElseFirstOutput) {
  // B has two inputs around A's; C has only outputs.
  EXPECT_THAT(Tree({
                  Rec("Cell.m.B", "forward", "input", 0, 1),
                  Rec("Cell.m.A", "forward", "input", 0, 2),
                  Rec("Cell.m.C", "forward", "output", 0, 3),
                  Rec("Cell.m.B", "forward", "input", 1, 4),
                  Rec("Cell.m.C", "forward", "output", 1, 5),
              }),
              ElementsAre(Pair("Cell.m.A.forward.0", "null"),
                          Pair("Cell.m.C.forward.0", "null"),
                          Pair("Cell.m.B.forward.0", "null")));
}

TEST(ConstructTest, AChildBelongsToTheParentCallThatEnclosesIt) {
  EXPECT_THAT(
      Tree({
          Rec("Cell.net.Net", "forward", "input", 0, 1),
          Rec("Cell.net.act.ReLU", "forward", "input", 0, 2),
          Rec("Cell.net.Net", "forward", "output", 0, 3),
          Rec("Cell.net.Net", "forward", "input", 0, 4),
          Rec("Cell.net.act.ReLU", "forward", "input", 0, 5),
          Rec("Cell.net.Net", "forward", "output", 0, 6),
      }),
      ElementsAre(
          Pair("Cell.net.Net.forward.0", "null"),
          Pair("Cell.net.act.ReLU.forward.0", "Cell.net.Net.forward.0"),
          Pair("Cell.net.Net.forward.1", "null"),
          Pair("Cell.net.act.ReLU.forward.1", "Cell.net.Net.forward.1")));
}

TEST(ConstructTest, FallsBackToTheFirstParentCallWhenNonePrecedes) {
  // The parent has only an output, dumped after the child.
  EXPECT_THAT(
      Tree({
          Rec("Cell.net.act.ReLU", "forward", "input", 0, 1),
          Rec("Cell.net.Net", "forward", "output", 0, 2),
      }),
      ElementsAre(Pair("Cell.net.act.ReLU.forward.0", "Cell.net.Net.forward.0"),
                  Pair("Cell.net.Net.forward.0", "null")));
}

}  // namespace
}  // namespace tprobe::import
