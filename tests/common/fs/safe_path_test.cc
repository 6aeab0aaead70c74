#include "common/fs/safe_path.h"

#include <gtest/gtest.h>

namespace tprobe::fs {
namespace {

TEST(SafePathTest, OrdinaryMsprobeNamesAreKeptByteForByte) {
  for (const char* name :
       {"Module.conv1.Conv2d.forward.0.input.0.npy",
        "Functional.relu.0.backward.output.0.npy", "a..b", "...", ".hidden"}) {
    EXPECT_EQ(SafeComponent(name), name);
    EXPECT_TRUE(IsSafeComponent(name)) << name;
  }
}

TEST(SafePathTest, SlashesAndNulsBecomeUnderscores) {
  EXPECT_EQ(SafeComponent("Module.x/../../etc/passwd.npy"),
            "Module.x_.._.._etc_passwd.npy");
  EXPECT_EQ(SafeComponent(std::string_view("a\0b", 3)), "a_b");
  EXPECT_FALSE(IsSafeComponent("a/b"));
}

TEST(SafePathTest, TheFolderAndItsParentAreNeverNamed) {
  EXPECT_EQ(SafeComponent(""), "_");
  EXPECT_EQ(SafeComponent("."), "_.");
  EXPECT_EQ(SafeComponent(".."), "_..");
  EXPECT_FALSE(IsSafeComponent(".."));
  EXPECT_FALSE(IsSafeComponent(""));
}

}  // namespace
}  // namespace tprobe::fs
