// Tests for common/shm/segment.cc on real POSIX shared memory.

#include "common/shm/segment.h"

#include <unistd.h>

#include <cstring>

#include "common/shm/ring.h"
#include "gtest/gtest.h"

namespace tprobe::shm {
namespace {

std::string UniqueName(const char* tag) {
  return std::string("tprobe.test.") + tag + "." + std::to_string(::getpid());
}

TEST(SegmentTest, CreateThenOpenSeesTheSameRings) {
  const std::string name = UniqueName("open");
  auto created = Segment::Create(name, 3, 1 << 16, ::getpid(),
                                 ProcessStartTime(::getpid()));
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto opened = Segment::Open(name);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ((*opened)->ring_count(), 3u);
  EXPECT_EQ((*opened)->header()->producer_pid, ::getpid());
  EXPECT_NE((*opened)->header()->producer_start_time, 0u);

  RingWriter w((*opened)->ring_header(2), (*opened)->ring_data(2));
  std::byte* p = w.Reserve(7, 5);
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "hello", 5);
  w.Commit();
  RingReader r((*created)->ring_header(2), (*created)->ring_data(2));
  auto rec = r.Peek();
  ASSERT_TRUE(rec.ok() && rec.value());
  EXPECT_EQ(rec.value()->type, 7);
  Segment::Remove(name);
}

TEST(SegmentTest, OpenMissingSegmentIsAClearError) {
  auto opened = Segment::Open(UniqueName("missing"));
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("cannot open shared memory"),
            std::string::npos);
}

TEST(SegmentTest, ForeignMagicIsRefused) {
  const std::string name = UniqueName("magic");
  auto created = Segment::Create(name, 1, 1 << 12, ::getpid(), 1);
  ASSERT_TRUE(created.ok());
  (*created)->header()->magic = 42;
  auto opened = Segment::Open(name);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("bad magic"), std::string::npos);
  Segment::Remove(name);
}

TEST(SegmentTest, OtherLayoutVersionIsRefused) {
  SegmentHeader h{};
  h.magic = kSegmentMagic;
  h.layout_version = kLayoutVersion + 1;
  h.ring_count = 1;
  h.ring_bytes = 4096;
  Status s = CheckHeader(h, SegmentBytes(1, 4096));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("layout version"), std::string::npos);
}

TEST(SegmentTest, ProcessStartTimeIdentifiesLiveProcessesOnly) {
  EXPECT_NE(ProcessStartTime(::getpid()), 0u);
  EXPECT_EQ(ProcessStartTime(0x7ffffff0), 0u);
}

}  // namespace
}  // namespace tprobe::shm
