// Tests for common/shm/segment.cc on real POSIX shared memory.

#include "common/shm/segment.h"

#include <sys/stat.h>
#include <sys/wait.h>
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
  w.Publish();
  RingReader r((*created)->ring_header(2), (*created)->ring_data(2));
  auto rec = r.Peek();
  ASSERT_TRUE(rec.ok() && rec.value());
  EXPECT_EQ(rec.value()->type, 7);
  Segment::Remove(name);
}

TEST(SegmentTest, ASegmentShrunkUnderItsCreatorReadsZerosAndIsFaulted) {
  const std::string name = UniqueName("shrunk");
  auto created = Segment::Create(name, 2, 1 << 16, ::getpid(), 1);
  ASSERT_TRUE(created.ok()) << created.status().message();
  RingHeader* last = (*created)->ring_header(1);
  last->head.store(77);
  EXPECT_FALSE((*created)->faulted());
  // What the opener (who owns the segment) can do to it.
  ASSERT_EQ(::truncate(("/dev/shm/" + name).c_str(), 0), 0);
  EXPECT_EQ(last->head.load(), 0u) << "read zeros instead of a SIGBUS";
  EXPECT_TRUE((*created)->faulted());
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

// Whether a process running as `uid`/`gid` can open segment `name` for
// writing, as a producer does. REQUIRES: running as root.
bool OpenableAs(uid_t uid, gid_t gid, const std::string& name) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(2);
    ::_exit(Segment::Open(name).ok() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

constexpr uid_t kNobody = 65534;

TEST(SegmentTest, ASegmentIsPrivateToItsCreator) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const std::string name = UniqueName("private");
  auto created = Segment::Create(name, 1, 1 << 12, ::getpid(), 1);
  ASSERT_TRUE(created.ok()) << created.status().message();
  struct stat st;
  ASSERT_EQ(::stat(("/dev/shm/" + name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(OpenableAs(kNobody, kNobody, name));
  Segment::Remove(name);
}

TEST(SegmentTest, ARootDaemonGivesTheSegmentToItsOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const std::string name = UniqueName("owner");
  auto created = Segment::Create(name, 1, 1 << 12, ::getpid(), 1,
                                 SegmentOwner{kNobody, kNobody});
  ASSERT_TRUE(created.ok()) << created.status().message();
  struct stat st;
  ASSERT_EQ(::stat(("/dev/shm/" + name).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNobody);
  EXPECT_TRUE(OpenableAs(kNobody, kNobody, name));
  Segment::Remove(name);
}

TEST(SegmentTest, AnOwnerThatIsNotRootsOwnIsRefusedWithoutRoot) {
  if (::geteuid() != 0) {
    const std::string name = UniqueName("foreign");
    auto created = Segment::Create(name, 1, 1 << 12, ::getpid(), 1,
                                   SegmentOwner{::geteuid() + 1, ::getegid()});
    ASSERT_FALSE(created.ok());
    EXPECT_NE(created.status().message().find("must run as root"),
              std::string::npos)
        << created.status().message();
    EXPECT_FALSE(Segment::Open(name).ok()) << "nothing is left behind";
    return;
  }
  // As root: a child that gave up root cannot give a segment away.
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    const std::string name = UniqueName("foreign");
    auto created = Segment::Create(name, 1, 1 << 12, ::getpid(), 1,
                                   SegmentOwner{kNobody + 1, kNobody});
    const bool refused = !created.ok() &&
                         created.status().message().find("must run as root") !=
                             std::string::npos &&
                         !Segment::Open(name).ok();
    ::_exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SegmentTest, ProcessStartTimeIdentifiesLiveProcessesOnly) {
  EXPECT_NE(ProcessStartTime(::getpid()), 0u);
  EXPECT_EQ(ProcessStartTime(0x7ffffff0), 0u);
}

}  // namespace
}  // namespace tprobe::shm
