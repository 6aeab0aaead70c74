// Tests for common/shm/segment.cc on real memory files.

#include "common/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/shm/ring.h"
#include "gtest/gtest.h"

namespace tprobe::shm {
namespace {

// What a producer receives over the socket: its own descriptor of the
// creator's memory file.
Result<std::unique_ptr<Segment>> OpenCopy(const Segment& created) {
  return Segment::Open(::fcntl(created.fd(), F_DUPFD_CLOEXEC, 0),
                       created.name());
}

TEST(SegmentTest, CreateThenOpenSeesTheSameRings) {
  auto created = Segment::Create("tprobe.test.open", 3, 1 << 16, 1 << 12,
                                 ::getpid(), ProcessStartTime(::getpid()));
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto opened = OpenCopy(**created);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ((*opened)->ring_count(), 3u);
  // Every ring but the last has ring_bytes; the last ends the segment.
  EXPECT_EQ((*opened)->ring_data(0).size(), 1u << 16);
  EXPECT_EQ((*opened)->ring_data(1).size(), 1u << 16);
  EXPECT_EQ((*opened)->ring_data(2).size(), 1u << 12);
  EXPECT_EQ((*opened)->ring_data(2).data() + (1 << 12),
            reinterpret_cast<std::byte*>((*opened)->header()) +
                SegmentBytes(3, 1 << 16, 1 << 12));
  EXPECT_EQ((*opened)->header()->producer_pid, ::getpid());
  EXPECT_NE((*opened)->header()->producer_start_time, 0u);
  EXPECT_EQ((*opened)->fd(), -1) << "an opener keeps no descriptor";

  RingWriter w((*opened)->ring_header(2), (*opened)->ring_data(2));
  std::byte* p = w.Reserve(7, 5);
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "hello", 5);
  w.Commit();
  w.Publish();
  RingReader r((*created)->ring_header(2), (*created)->ring_data(2));
  auto rec = r.Peek();
  ASSERT_TRUE(rec.ok() && rec.value());
  EXPECT_EQ(rec.value()->type, 7);
}

TEST(SegmentTest, ASegmentCannotBeShrunkOrGrownByItsOpener) {
  auto created =
      Segment::Create("tprobe.test.sealed", 2, 1 << 16, 1 << 16, ::getpid(), 1);
  ASSERT_TRUE(created.ok()) << created.status().message();
  // What a producer could try with the descriptor it was passed.
  const int fd = ::fcntl((*created)->fd(), F_DUPFD_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::ftruncate(fd, off_t{1} << 30), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1)
      << "no further seal can be added";
  ::close(fd);
  (*created)->ring_header(1)->head.store(77);
  EXPECT_EQ((*created)->ring_header(1)->head.load(), 77u);
  EXPECT_FALSE((*created)->faulted());
}

TEST(SegmentTest, ASegmentHasNoNameInAnyFileSystem) {
  const std::string name = "tprobe.test.unnamed." + std::to_string(::getpid());
  auto created = Segment::Create(name, 1, 1 << 12, 1 << 12, ::getpid(), 1);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name));
  // Its label shows where it is mapped.
  std::ifstream maps("/proc/self/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("/memfd:" + name), std::string::npos);
}

TEST(SegmentTest, OpeningWhatIsNotASegmentIsAClearError) {
  const int fd = ::memfd_create("not-a-segment", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 16), 0);
  auto small = Segment::Open(::dup(fd), "small");
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("too small to hold a header"),
            std::string::npos)
      << small.status().message();
  ASSERT_EQ(::ftruncate(fd, 1 << 16), 0);
  auto zeros = Segment::Open(fd, "zeros");
  ASSERT_FALSE(zeros.ok());
  EXPECT_NE(zeros.status().message().find("bad magic"), std::string::npos);
  auto closed = Segment::Open(fd, "closed");  // Open closed it
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.status().message().find("cannot open"), std::string::npos);
}

TEST(SegmentTest, ForeignMagicIsRefused) {
  auto created =
      Segment::Create("tprobe.test.magic", 1, 1 << 12, 1 << 12, ::getpid(), 1);
  ASSERT_TRUE(created.ok());
  (*created)->header()->magic = 42;
  auto opened = OpenCopy(**created);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("bad magic"), std::string::npos);
}

TEST(SegmentTest, OtherLayoutVersionIsRefused) {
  SegmentHeader h{};
  h.magic = kSegmentMagic;
  h.layout_version = kLayoutVersion + 1;
  h.ring_count = 1;
  h.ring_bytes = 4096;
  h.last_ring_bytes = 4096;
  Status s = CheckHeader(h, SegmentBytes(1, 4096, 4096));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("layout version"), std::string::npos);
}

TEST(SegmentTest, ImplausibleRingSizesAreRefused) {
  SegmentHeader h{};
  h.magic = kSegmentMagic;
  h.layout_version = kLayoutVersion;
  h.ring_count = 2;
  h.ring_bytes = 4096;
  const uint64_t mapped = SegmentBytes(2, 4096, 4096);
  for (const uint64_t last :
       {uint64_t{0}, uint64_t{4095}, uint64_t{6144}, uint64_t{1} << 63}) {
    h.last_ring_bytes = last;
    Status s = CheckHeader(h, mapped);
    ASSERT_FALSE(s.ok()) << last;
    EXPECT_NE(s.message().find("implausible ring geometry"), std::string::npos)
        << s.message();
  }
  // A last ring that does not fit the mapping.
  h.last_ring_bytes = 8192;
  Status s = CheckHeader(h, mapped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("smaller than"), std::string::npos);
  h.last_ring_bytes = 4096;
  EXPECT_TRUE(CheckHeader(h, mapped).ok());
}

TEST(SegmentTest, ProcessStartTimeIdentifiesLiveProcessesOnly) {
  EXPECT_NE(ProcessStartTime(::getpid()), 0u);
  EXPECT_EQ(ProcessStartTime(0x7ffffff0), 0u);
}

}  // namespace
}  // namespace tprobe::shm
