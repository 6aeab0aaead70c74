#include "tools/import/tensor_name.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tprobe::import {
namespace {

using ::testing::HasSubstr;

TEST(TensorNameTest, ParsesTensorDumpFileName) {
  Result<TensorFileName> name = ParseTensorFileName(
      "Cell.network._backbone.loss.CrossEntropyLoss.forward.input.0_float32_"
      "165.npy");
  ASSERT_TRUE(name.ok()) << name.status().message();
  EXPECT_EQ(name->slot.cell, "Cell.network._backbone.loss.CrossEntropyLoss");
  EXPECT_EQ(name->slot.direction, Direction::kForward);
  EXPECT_EQ(name->slot.io, Io::kInput);
  EXPECT_EQ(name->slot.index, 0u);
  EXPECT_EQ(name->dtype, "float32");
  EXPECT_FALSE(name->in_mode);
  EXPECT_EQ(name->id, 165u);
  EXPECT_EQ(CellPath(name->slot.cell), "network._backbone.loss");
}

TEST(TensorNameTest, ParsesInModeFileName) {
  Result<TensorFileName> name = ParseTensorFileName(
      "Cell.model.layers.3.Block.backward.output.12_in_bfloat16_7.npy");
  ASSERT_TRUE(name.ok()) << name.status().message();
  EXPECT_EQ(name->slot.cell, "Cell.model.layers.3.Block");
  EXPECT_EQ(name->slot.direction, Direction::kBackward);
  EXPECT_EQ(name->slot.io, Io::kOutput);
  EXPECT_EQ(name->slot.index, 12u);
  EXPECT_EQ(name->dtype, "bfloat16");
  EXPECT_TRUE(name->in_mode);
  EXPECT_EQ(name->id, 7u);
}

TEST(TensorNameTest, RejectsMalformedNamesSayingWhy) {
  struct Case {
    const char* name;
    const char* why;
  } cases[] = {
      {"Cell.a.A.forward.input.0_float32_1.bin", "no .npy suffix"},
      {"Cell.a.A.sideways.input.0_float32_1.npy",
       "'sideways' is not forward or backward"},
      {"Cell.a.A.forward.inout.0_float32_1.npy",
       "'inout' is not input or output"},
      {"Cell.a.A.forward.input.x_float32_1.npy", "'x' is not a tensor index"},
      {"Cell.a.A.forward.input.0_float32_.npy", "'' is not a TensorDump id"},
      {"Cell.a.A.forward.input.0_float32.npy",
       "'0_float32' is not {index}_{dtype}_{id}"},
      {"Cell.a.A.forward.input.0_out_float32_1.npy",
       "'0_out_float32_1' is not {index}_{dtype}_{id}"},
      {"Cell.A.forward.input.0_float32_1.npy",
       "'Cell.A' is not Cell.{path}.{Class}"},
      {"Module.a.A.forward.input.0_float32_1.npy",
       "'Module.a.A' is not Cell.{path}.{Class}"},
      {"Cell..A.forward.input.0_float32_1.npy",
       "'Cell..A' is not Cell.{path}.{Class}"},
      {"Cell.a.A.forward.0.input.0_float32_1.npy",
       "'0' is not forward or backward"},
      {"notes.txt", "no .npy suffix"},
  };
  for (const Case& c : cases) {
    Result<TensorFileName> name = ParseTensorFileName(c.name);
    ASSERT_FALSE(name.ok()) << c.name;
    EXPECT_THAT(name.status().message(), HasSubstr(c.why)) << c.name;
    EXPECT_THAT(name.status().message(),
                HasSubstr(std::string("'") + c.name + "'"));
  }
}

TEST(TensorNameTest, BuildsMsprobeNames) {
  TensorSlot slot{"Cell.model.layers.0.Block", Direction::kBackward,
                  Io::kOutput, 2};
  EXPECT_EQ(SlotKey(slot), "Cell.model.layers.0.Block.backward.output.2");
  EXPECT_EQ(EntryName(slot, 3), "Cell.model.layers.0.Block.backward.3");
  EXPECT_EQ(DataName(slot, 3),
            "Cell.model.layers.0.Block.backward.3.output.2.npy");
}

TEST(TensorNameTest, RecognisesImportedNames) {
  EXPECT_TRUE(IsImportedFileName("Cell.model.Net.forward.0.input.0.npy"));
  EXPECT_TRUE(
      IsImportedFileName("Cell.model.layers.1.Block.backward.12.output.3.npy"));
  EXPECT_FALSE(
      IsImportedFileName("Cell.model.Net.forward.input.0_float32_1.npy"));
  EXPECT_FALSE(IsImportedFileName("Cell.model.Net.forward.0.input.0.pt"));
  EXPECT_FALSE(IsImportedFileName("Cell.Net.forward.0.input.0.npy"));
}

TEST(TensorNameTest, ParsesSlotNames) {
  Result<TensorSlot> slot = ParseSlotName("Cell.model.Net.forward.input.1");
  ASSERT_TRUE(slot.ok()) << slot.status().message();
  EXPECT_EQ(slot->cell, "Cell.model.Net");
  EXPECT_EQ(slot->io, Io::kInput);
  EXPECT_EQ(slot->index, 1u);

  Result<TensorSlot> bad = ParseSlotName("Cell.model.Net.forward.input");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("'input' is not a tensor index"));
}

}  // namespace
}  // namespace tprobe::import
