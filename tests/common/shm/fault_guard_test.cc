// Tests for common/shm/fault_guard.cc: a real file mapping truncated under
// its reader.

#include "common/shm/fault_guard.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tprobe::shm {
namespace {

constexpr size_t kBytes = 4 * 4096;

// A temporary file of kBytes bytes of 0xab, mapped shared; truncating the
// file makes the mapping fault.
class MappedFile {
 public:
  MappedFile() {
    char path[] = "/tmp/tprobe_fault_guard_XXXXXX";
    fd_ = ::mkstemp(path);
    ::unlink(path);
    std::string bytes(kBytes, '\xab');
    EXPECT_EQ(::write(fd_, bytes.data(), bytes.size()),
              static_cast<ssize_t>(kBytes));
    address_ =
        ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(address_, MAP_FAILED);
  }
  ~MappedFile() {
    ::munmap(address_, kBytes);
    ::close(fd_);
  }
  void Truncate() { ASSERT_EQ(::ftruncate(fd_, 0), 0); }
  void* address() const { return address_; }
  volatile const uint8_t* bytes() const {
    return static_cast<volatile const uint8_t*>(address_);
  }

 private:
  int fd_ = -1;
  void* address_ = nullptr;
};

TEST(FaultGuardTest, AWatchedMappingShrunkUnderItsReaderReadsZeros) {
  MappedFile file;
  auto guard = FaultGuard::Watch(file.address(), kBytes);
  ASSERT_TRUE(guard.ok()) << guard.status().message();
  EXPECT_EQ(file.bytes()[kBytes - 1], 0xab);
  EXPECT_FALSE((*guard)->faulted());

  file.Truncate();
  EXPECT_EQ(file.bytes()[kBytes - 1], 0) << "the fault reads zeros";
  EXPECT_TRUE((*guard)->faulted());
  EXPECT_EQ(file.bytes()[0], 0) << "the whole mapping was replaced";
}

TEST(FaultGuardTest, OnlyTheFaultedMappingIsMarked) {
  MappedFile shrunk, kept;
  auto a = FaultGuard::Watch(shrunk.address(), kBytes);
  auto b = FaultGuard::Watch(kept.address(), kBytes);
  ASSERT_TRUE(a.ok() && b.ok());
  shrunk.Truncate();
  (void)shrunk.bytes()[4096];
  EXPECT_TRUE((*a)->faulted());
  EXPECT_FALSE((*b)->faulted());
  EXPECT_EQ(kept.bytes()[4096], 0xab);
}

TEST(FaultGuardTest, ASlotIsFreedWithItsGuard) {
  MappedFile file;
  for (size_t i = 0; i < FaultGuard::kMaxWatched + 10; ++i) {
    auto guard = FaultGuard::Watch(file.address(), kBytes);
    ASSERT_TRUE(guard.ok())
        << "watch " << i << ": " << guard.status().message();
  }
}

TEST(FaultGuardTest, MoreMappingsThanTheLimitAreAClearError) {
  MappedFile file;
  std::vector<std::unique_ptr<FaultGuard>> guards;
  for (;;) {
    auto guard = FaultGuard::Watch(file.address(), kBytes);
    if (!guard.ok()) {
      EXPECT_NE(guard.status().message().find("cannot watch more than"),
                std::string::npos);
      break;
    }
    guards.push_back(std::move(guard).value());
    ASSERT_LE(guards.size(), FaultGuard::kMaxWatched);
  }
}

// Watches one mapping and reads another, shrunk one: not reached past the
// read.
void ReadAShrunkMappingNextToAWatchedOne() {
  MappedFile watched;
  MappedFile unwatched;
  auto guard = FaultGuard::Watch(watched.address(), kBytes);
  if (!guard.ok()) std::abort();
  unwatched.Truncate();
  (void)unwatched.bytes()[0];
  std::_Exit(0);
}

TEST(FaultGuardDeathTest, AFaultOutsideEveryWatchedMappingStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(ReadAShrunkMappingNextToAWatchedOne(), "");
}

}  // namespace
}  // namespace tprobe::shm
