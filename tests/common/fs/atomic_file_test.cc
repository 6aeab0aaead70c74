// common/fs/atomic_file.cc: files that appear whole.

#include "common/fs/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tprobe::fs {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tp-atomic-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t Entries() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      (void)e;
      ++n;
    }
    return n;
  }
  std::string dir_;
};

TEST_F(AtomicFileTest, WritesAndReplacesWithMode0640WhateverTheUmask) {
  const std::string path = dir_ + "/dump.json";
  const mode_t old = ::umask(077);
  ASSERT_TRUE(WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second").ok());
  ::umask(old);
  EXPECT_EQ(Read(path), "second");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(Entries(), 1u) << "no temporary file is left";
}

TEST_F(AtomicFileTest, NeverWritesThroughASymlinkAtTheTemporaryName) {
  const std::string path = dir_ + "/dump.json";
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "untouched";
  ASSERT_EQ(::symlink(victim.c_str(), TempPath(path).c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(path, "data").ok());
  EXPECT_EQ(Read(path), "data");
  EXPECT_EQ(Read(victim), "untouched");
}

TEST_F(AtomicFileTest, AFailureLeavesTheOldFileAndNoTemporary) {
  const std::string path = dir_ + "/x.npy";
  ASSERT_TRUE(WriteFileAtomic(path, "old").ok());
  Status s = ReplaceFile(path, TempPath(path), [](const std::string& tmp) {
    std::ofstream(tmp) << "half";
    return Status::Error("disk full");
  });
  EXPECT_EQ(s.message(), "disk full");
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(Entries(), 1u);
  s = WriteFileAtomic(dir_ + "/missing/x.json", "data");
  EXPECT_EQ(
      s.message().rfind("cannot create " + dir_ + "/missing/x.json.tmp", 0), 0u)
      << s.message();
}

}  // namespace
}  // namespace tprobe::fs
