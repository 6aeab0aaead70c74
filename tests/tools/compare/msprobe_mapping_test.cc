// tools/compare/msprobe_mapping.cc: the compare keys msprobe 26.2's
// -cm/-am/-dm give MindSpore row names, and its cross-framework dtypes.

#include "tools/compare/msprobe_mapping.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace tprobe::compare {
namespace {

using Kind = MsprobeMapping::Kind;

MsprobeMapping Of(Kind kind, const std::string& yaml) {
  Result<NameMapping> map = NameMapping::Parse(yaml, "test.yaml");
  EXPECT_TRUE(map.ok()) << map.status().message();
  return MsprobeMapping::Of(kind, std::move(*map));
}

TEST(MsprobeMappingTest, CellMappingRenamesCellsOfCallsOnly) {
  const MsprobeMapping plain = MsprobeMapping::Of(Kind::kCell, {});
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Module.fc1.Dense.forward.0.input.0");
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.parameters_grad.0.weight"),
            "Module.fc1.Dense.parameters_grad.0.weight");
  // A row of no call, and an empty name, stay unpaired.
  EXPECT_EQ(plain.Key("Cell.fc1.Dense.weight"), std::nullopt);
  EXPECT_EQ(plain.Key(""), std::nullopt);
  // Only the first "Cell" becomes "Module", wherever it is.
  EXPECT_EQ(plain.Key("Mint.tanh.0.forward.output.0"),
            "Mint.tanh.0.forward.output.0");
}

TEST(MsprobeMappingTest, CellMappingWholePathFirstThenKeysInFileOrder) {
  const MsprobeMapping m = Of(Kind::kCell,
                              "fc1.Dense: layer1.Linear\n"
                              "Dense: Linear\n"
                              "fc: proj\n");
  // The whole cell path is a key: its value alone.
  EXPECT_EQ(m.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Module.layer1.Linear.forward.0.input.0");
  // Otherwise every key found, in file order, replaces its first
  // occurrence: "fc2.Dense" -> "fc2.Linear" -> "proj2.Linear".
  EXPECT_EQ(m.Key("Cell.fc2.Dense.backward.0.output.0"),
            "Module.proj2.Linear.backward.0.output.0");
  EXPECT_EQ(m.Key("Cell.fc2.Dense.parameters_grad.0.bias"),
            "Module.proj2.Linear.parameters_grad.0.bias");
}

TEST(MsprobeMappingTest, ApiMappingRenamesMintClassesOnly) {
  const MsprobeMapping m = MsprobeMapping::Api();
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.input.0"),
            "Torch.tanh.0.forward.input.0");
  EXPECT_EQ(m.Key("MintFunctional.relu.0.backward.output.0"),
            "Functional.relu.0.backward.output.0");
  // Cells are not renamed under API mapping, as in msprobe.
  EXPECT_EQ(m.Key("Cell.fc1.Dense.forward.0.input.0"),
            "Cell.fc1.Dense.forward.0.input.0");
  EXPECT_EQ(m.Key("Tensor.Mint.0.forward.input.0"),
            "Tensor.Mint.0.forward.input.0");
}

TEST(MsprobeMappingTest, DataMappingMapsWholeNamesAndIgnoresDtypes) {
  const MsprobeMapping m =
      Of(Kind::kData,
         "Mint.tanh.0.forward.output.0: Torch.tanh.0.forward."
         "output.0\n");
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.output.0"),
            "Torch.tanh.0.forward.output.0");
  // A prefix is not a whole name.
  EXPECT_EQ(m.Key("Mint.tanh.0.forward.output.0.x"),
            "Mint.tanh.0.forward.output.0.x");
  EXPECT_TRUE(m.ignores_dtypes());
  EXPECT_FALSE(MsprobeMapping::Api().ignores_dtypes());
}

TEST(MsprobeMappingTest, DtypesOfOneFamilyPairAcrossFrameworksOnly) {
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Float32", "torch.float32"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("torch.bfloat16", "Float16"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Int64", "torch.int32"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("UInt8", "torch.int8"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Bool", "torch.bool"));
  EXPECT_TRUE(CrossFrameworkDtypesMatch("Complex64", "torch.complex128"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Float32", "torch.int32"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Bool", "torch.uint8"));
  // One framework: not this rule's to decide.
  EXPECT_FALSE(CrossFrameworkDtypesMatch("Int32", "Int64"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("torch.int32", "torch.int64"));
  EXPECT_FALSE(CrossFrameworkDtypesMatch("<class 'int'>", "torch.int64"));
}

}  // namespace
}  // namespace tprobe::compare
