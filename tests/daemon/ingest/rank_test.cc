#include "daemon/ingest/rank.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "daemon/process/shm_space.h"
#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"

namespace tprobe::daemon {
namespace {

using testing::ConfigJson;
using testing::MakeRegister;
using testing::TempDir;

TEST(RankTest, SegmentIsNamedAfterUidPidClientIdAndDaemonPid) {
  TempDir dir;
  auto p = Rank::Create(77, testing::Self(),
                        MakeRegister(ConfigJson(dir.path()), 3));
  ASSERT_TRUE(p.ok()) << p.status().message();
  // The daemon here is this process (crash_cleanup.h).
  const std::string expected = "tprobe." + std::to_string(::getuid()) + "." +
                               std::to_string(::getpid()) + ".77." +
                               std::to_string(::getpid());
  EXPECT_EQ((*p)->segment_name(), expected);
  EXPECT_EQ((*p)->segment().ring_count(), 3u);
  EXPECT_EQ((*p)->segment().header()->producer_pid, ::getpid());
  EXPECT_EQ((*p)->Lock()->rings.size(), 3u);
}

TEST(RankTest, TheSegmentIsSealedAtItsSize) {
  TempDir dir;
  auto p =
      Rank::Create(79, testing::Self(), MakeRegister(ConfigJson(dir.path())));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const int seals = ::fcntl((*p)->segment().fd(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_EQ(seals & F_SEAL_WRITE, 0) << "the rank writes its rings";
}

TEST(RankTest, ABadConfigIsRefusedNamingTheKey) {
  v1::Register reg = MakeRegister("{}");
  reg.mutable_config()->set_level(static_cast<v1::Config::Level>(7));
  auto p = Rank::Create(1, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "config: level is invalid, it should be one of [L0, L1, mix, "
            "debug]");
  reg.clear_config();
  p = Rank::Create(1, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "Register carries no config");
}

TEST(RankTest, ABadRingGeometryIsRefused) {
  TempDir dir;
  v1::Register reg = MakeRegister(ConfigJson(dir.path()));
  reg.set_ring_bytes(100000);
  auto p = Rank::Create(1, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "ring_bytes 100000 must be a power of two from 65536 to "
            "1073741824");
  reg.set_ring_bytes(1 << 16);
  reg.set_ring_count(66);
  p = Rank::Create(1, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "ring_count 66 is out of range: use 1 to 65 (the data rings and "
            "the boundary ring)");
}

TEST(RankTest, TheFrameworkIsLookedUpOnceAndAnUnknownOneIsRefused) {
  TempDir dir;
  v1::Register reg = MakeRegister(ConfigJson(dir.path()));
  reg.set_framework("tensorflow");
  auto p = Rank::Create(1, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "framework 'tensorflow' is not one tprobed dumps: use pytorch or "
            "mindspore");
  reg.set_framework("mindspore");
  p = Rank::Create(2, testing::Self(), reg);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)->Lock()->assembler.options().framework, &dump::kMindSpore);
  reg.clear_framework();
  p = Rank::Create(3, testing::Self(), reg);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)->Lock()->assembler.options().framework, &dump::kPyTorch)
      << "unset is PyTorch";
}

TEST(RankTest, ARelativeDumpPathIsTakenFromTheClientsWorkingDirectory) {
  TempDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto p = Rank::Create(78, testing::Self(),
                        MakeRegister(ConfigJson("./dump", "tensor")));
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto state = (*p)->Lock();
  EXPECT_EQ(state->assembler.options().write_path, dir.path() + "/dump");
  EXPECT_EQ(state->assembler.options().dump_path, "./dump")
      << "dump_data_dir keeps the path as configured, as msprobe does";
}

TEST(RankTest, RingsThatDoNotFitInMemoryAreRefusedClearly) {
  TempDir dir;
  v1::Register reg = MakeRegister(ConfigJson(dir.path()), 64);
  reg.set_ring_bytes(config::kMaxRingBytes);  // 63 GiB in all
  if (CheckShmSpace(65ull << 30, "a test").ok()) {
    GTEST_SKIP() << "64 GiB of memory are available here";
  }
  auto p = Rank::Create(80, testing::Self(), reg);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(
                "the 63 rings of 1048576 KiB and the boundary ring of rank 0 "
                "need 6451"),
            std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find(" MiB of shared memory, but "),
            std::string::npos)
      << p.status().message();
}

}  // namespace
}  // namespace tprobe::daemon
