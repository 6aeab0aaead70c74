// Tests for client/recorder.cc on a real shared-memory segment read as the
// daemon reads it: ring heads are published in batches, and what a step's
// cut counts is always visible to the reader.

#include "client/recorder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/record/codec.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"

namespace tprobe::client {
namespace {

class RecorderTest : public ::testing::Test {
 protected:
  // Three data rings and, last, the boundary ring.
  static constexpr uint32_t kRings = 4;
  static constexpr uint32_t kDataRings = kRings - 1;

  RecorderTest() : recorder_(config::FullRingPolicy::kDrop, 0) {
    AttachAgain();
  }

  // The call records ring `i` shows the daemon now, read and freed.
  std::vector<record::CallView> Read(uint32_t i) {
    shm::RingReader reader(daemon_side_->ring_header(i),
                           daemon_side_->ring_data(i));
    std::vector<record::CallView> calls;
    for (;;) {
      auto rec = reader.Peek();
      EXPECT_TRUE(rec.ok());
      if (!rec.ok() || !rec.value()) break;
      auto decoded = record::Decode(rec.value()->type, rec.value()->payload);
      EXPECT_TRUE(decoded.ok());
      if (auto* call = std::get_if<record::CallView>(&decoded.value())) {
        calls.push_back(*call);
      }
      reader.Release();
    }
    return calls;
  }

  uint64_t Head(uint32_t i) {
    return daemon_side_->ring_header(i)->head.load();
  }

  // Writes `n` call records on this thread, after the name they use.
  void WriteCalls(int n) {
    const uint32_t id =
        recorder_.Intern(record::InternKind::kName, "Torch.add");
    ASSERT_NE(id, 0u);
    for (int k = 0; k < n; ++k) {
      ASSERT_TRUE(recorder_.WriteCall(true, 0, id, record::CallKind::kApi,
                                      record::Direction::kForward));
    }
  }

  // The boundaries the daemon reads now, read and freed.
  std::vector<std::string> Boundaries() {
    shm::RingReader reader(daemon_side_->ring_header(kDataRings),
                           daemon_side_->ring_data(kDataRings));
    std::vector<std::string> seen;
    for (;;) {
      auto rec = reader.Peek();
      if (!rec.ok() || !rec.value()) break;
      seen.emplace_back(
          reinterpret_cast<const char*>(rec.value()->payload.data()),
          rec.value()->payload.size());
      reader.Release();
    }
    return seen;
  }

  // A daemon of a new segment attaches (one that came back).
  void AttachAgain() {
    daemon_side_ =
        std::move(shm::Segment::Create("tprobe.recorder_test", kRings, 1 << 16,
                                       1 << 16, ::getpid(), 0))
            .value();
    recorder_.Attach(std::move(shm::Segment::Open(::fcntl(daemon_side_->fd(),
                                                          F_DUPFD_CLOEXEC, 0),
                                                  daemon_side_->name()))
                         .value());
  }

  std::unique_ptr<shm::Segment> daemon_side_;
  Recorder recorder_;
};

// Threads that wrote less than a batch and went away: nothing of theirs is
// visible until the step's totals are taken, and then every record the cut
// counts is.
TEST_F(RecorderTest, TotalsPublishEveryRecordTheCutCounts) {
  constexpr int kCalls = 5;
  static_assert(kCalls + 1 < shm::RingWriter::kPublishRecords);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&] { WriteCalls(kCalls); });
  for (std::thread& t : threads) t.join();
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(Head(i), 0u) << "ring " << i;

  const RecordTotals totals = recorder_.Totals();
  ASSERT_EQ(totals.active_rings.size(), kDataRings);
  for (uint32_t i = 0; i < kDataRings; ++i) {
    shm::RingReader reader(daemon_side_->ring_header(i),
                           daemon_side_->ring_data(i));
    uint64_t records = 0;
    while (true) {
      auto rec = reader.Peek();
      ASSERT_TRUE(rec.ok());
      if (!rec.value()) break;
      reader.Release();
      ++records;
    }
    EXPECT_EQ(records, totals.active_rings[i]) << "ring " << i;
  }
  EXPECT_EQ(totals.committed, 3u * (kCalls + 1));
}

TEST_F(RecorderTest, PublishAllShowsWhatThisThreadCommitted) {
  WriteCalls(3);
  EXPECT_EQ(Head(0), 0u);
  recorder_.PublishAll();
  EXPECT_EQ(Read(0).size(), 3u);
  // A full batch publishes itself.
  WriteCalls(static_cast<int>(shm::RingWriter::kPublishRecords));
  const size_t seen = Read(0).size();
  EXPECT_GT(seen, 0u);
  recorder_.PublishAll();
  EXPECT_EQ(seen + Read(0).size(), shm::RingWriter::kPublishRecords);
}

// Seqs rise on each thread, and a call that follows another thread's (the
// thread was joined) orders after it.
TEST_F(RecorderTest, SeqsFollowEachThreadAndTheirSynchronisation) {
  std::thread([&] { WriteCalls(4); }).join();
  WriteCalls(4);
  std::thread([&] { WriteCalls(4); }).join();
  recorder_.PublishAll();
  uint64_t last = 0;
  // Ring 0 is the first thread's, 1 this thread's, 2 the last thread's.
  for (uint32_t i = 0; i < 3; ++i) {
    const std::vector<record::CallView> calls = Read(i);
    ASSERT_EQ(calls.size(), 4u) << "ring " << i;
    for (const record::CallView& c : calls) {
      EXPECT_GT(c.call.seq, last) << "ring " << i;
      last = c.call.seq;
    }
  }
}

// More threads than data rings: the boundary ring is never claimed, and
// the thread without a ring drops (counted).
TEST_F(RecorderTest, NoHookThreadWritesIntoTheBoundaryRing) {
  for (uint32_t t = 0; t < kDataRings; ++t) {
    std::thread([&] { WriteCalls(1); }).join();
  }
  std::thread([&] {
    EXPECT_EQ(recorder_.Intern(record::InternKind::kName, "Torch.add"), 0u);
  }).join();
  recorder_.PublishAll();
  EXPECT_EQ(Head(kDataRings), 0u);
  EXPECT_EQ(recorder_.Totals().dropped.ring_full, 1u);
}

// A boundary goes into the last ring, after every data record committed
// before it is published (its cut is reachable); the daemon freeing it is
// the acknowledgement.
TEST_F(RecorderTest, BoundariesGoIntoTheLastRingAfterTheDataBeforeThem) {
  WriteCalls(3);
  EXPECT_EQ(Head(0), 0u);
  EXPECT_EQ(recorder_.WriteBoundary("step 7", 0, 7u),
            Recorder::BoundaryWrite::kWritten);
  EXPECT_EQ(Read(0).size(), 3u) << "the data was published first";
  EXPECT_EQ(recorder_.BoundaryAcknowledged(), -1);

  shm::RingReader reader(daemon_side_->ring_header(kDataRings),
                         daemon_side_->ring_data(kDataRings));
  auto rec = reader.Peek();
  ASSERT_TRUE(rec.ok() && rec.value());
  auto decoded = record::Decode(rec.value()->type, rec.value()->payload);
  ASSERT_TRUE(decoded.ok());
  const auto* boundary = std::get_if<record::BoundaryView>(&decoded.value());
  ASSERT_NE(boundary, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(boundary->request.data()),
                        boundary->request.size()),
            "step 7");
  EXPECT_FALSE(recorder_.WaitBoundariesRead(std::chrono::steady_clock::now()));
  reader.Release();
  EXPECT_EQ(recorder_.BoundaryAcknowledged(), 7);
  EXPECT_TRUE(recorder_.WaitBoundariesRead(std::chrono::steady_clock::now()));
  // Boundaries are not records of a step: the totals leave them out.
  EXPECT_EQ(recorder_.Totals().committed, 4u);
}

// The cap on steps ahead of the daemon is soft: past it a step waits (up
// to its wait), then goes in all the same, never dropped.
TEST_F(RecorderTest, StepsAheadOfTheDaemonWaitButAreNeverDropped) {
  for (uint32_t step = 0; step < Recorder::kMaxStepsAhead + 4; ++step) {
    ASSERT_EQ(recorder_.WriteBoundary("step", /*wait_ms=*/step % 2, step),
              Recorder::BoundaryWrite::kWritten)
        << step;
  }
  EXPECT_EQ(recorder_.BoundaryAcknowledged(), -1);
}

// A full boundary ring keeps a boundary in its backlog instead of dropping
// it: the backlog goes in first, in order, once the daemon frees room. A
// detached core has no daemon.
TEST_F(RecorderTest, AFullBoundaryRingQueuesInOrderInsteadOfDropping) {
  const std::string big(16 << 10, 'x');
  int written = 0;
  while (recorder_.WriteBoundary(big, 0) == Recorder::BoundaryWrite::kWritten) {
    ++written;
    ASSERT_LT(written, 100);
  }
  EXPECT_GT(written, 0);  // the last call queued its boundary
  EXPECT_EQ(recorder_.WriteBoundary("second", 0),
            Recorder::BoundaryWrite::kQueued);

  // The daemon reads everything: the backlog follows, in order.
  EXPECT_EQ(Boundaries().size(), static_cast<size_t>(written));
  EXPECT_FALSE(recorder_.WaitBoundariesRead(std::chrono::steady_clock::now()));
  EXPECT_EQ(Boundaries(), (std::vector<std::string>{big, "second"}));
  EXPECT_TRUE(recorder_.WaitBoundariesRead(std::chrono::steady_clock::now()));

  recorder_.Detach();
  EXPECT_EQ(recorder_.WriteBoundary("bye", 0),
            Recorder::BoundaryWrite::kNoDaemon);
}

// A Start made without a daemon is not lost: a daemon that attaches before
// the step's first record gets it first in its boundary ring. One that
// attaches after a record (held until the step ends) never sees it, nor
// does one attached after the step ended.
TEST_F(RecorderTest, AStartWithoutADaemonGoesFirstToOneAttachedBeforeARecord) {
  recorder_.Detach(/*daemon_lost=*/true);
  EXPECT_EQ(recorder_.WriteStart("start 1", 0),
            Recorder::BoundaryWrite::kNoDaemon);
  AttachAgain();
  ASSERT_TRUE(recorder_.attached());
  WriteCalls(1);
  EXPECT_EQ(recorder_.WriteBoundary("step 1", 0, 1u),
            Recorder::BoundaryWrite::kWritten);
  EXPECT_EQ(Boundaries(), (std::vector<std::string>{"start 1", "step 1"}));
  recorder_.StepBoundary(recorder_.Totals().produced());

  // Step 2 starts without a daemon and records: the next daemon is held.
  recorder_.Detach(/*daemon_lost=*/true);
  EXPECT_EQ(recorder_.WriteStart("start 2", 0),
            Recorder::BoundaryWrite::kNoDaemon);
  EXPECT_FALSE(recorder_.WriteCall(true, 2, 1, record::CallKind::kApi,
                                   record::Direction::kForward));
  AttachAgain();
  EXPECT_FALSE(recorder_.attached());
  EXPECT_TRUE(recorder_.connected());
  recorder_.StepBoundary(recorder_.Totals().produced());
  ASSERT_TRUE(recorder_.attached());
  EXPECT_EQ(recorder_.WriteBoundary("step 2", 0, 2u),
            Recorder::BoundaryWrite::kWritten);
  EXPECT_EQ(Boundaries(), (std::vector<std::string>{"step 2"}));
}

}  // namespace
}  // namespace tprobe::client
