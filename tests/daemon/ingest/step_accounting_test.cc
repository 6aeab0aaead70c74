// Step accounting (daemon/ingest/step_accounting.h) against the counts a rank
// sends: each step is charged its own drops and its own unread records,
// whatever the rings' running totals hold by the time it is settled.

#include "daemon/ingest/step_accounting.h"

#include <gtest/gtest.h>

#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"

namespace tprobe::daemon {
namespace {

using testing::ConfigJson;
using testing::MakeRegister;
using testing::TempDir;
using testing::TestRank;

constexpr auto kFull = static_cast<size_t>(shm::DropReason::kRingFull);

v1::StepLedger Ledger(uint64_t produced, uint64_t committed, uint64_t ring_full,
                      uint64_t cut) {
  v1::StepLedger l;
  l.set_produced(produced);
  l.set_committed(committed);
  l.set_dropped_ring_full(ring_full);
  l.add_ring_cuts(cut);
  return l;
}

// The records of `step` as settled (all zero when it was not).
const dump::RecordLedger& Records(RankState& state, uint32_t step) {
  static const dump::RecordLedger kNone;
  const auto& records = state.assembler.Tree(step)->accounting().records;
  return records ? *records : kNone;
}

class StepAccountingTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// The ring header already counts step 1's drops when step 0 is settled:
// step 0 gets its own 3, and the step left open at the end the other 5.
TEST_F(StepAccountingTest, DropsAreChargedToTheStepTheyHappenedIn) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto state = p->Lock();
  RingState& ring = state->rings[0];
  ring.records_read = 10;
  ring.seen.dropped[kFull] = 8;  // 3 in step 0, then 5 in step 1
  SettleStep(*state, 0, Ledger(13, 10, 3, 10));
  EXPECT_EQ(Records(*state, 0).dropped.ring_full, 3u);
  ring.records_read = 14;
  state->assembler.Tree(1);
  SettleOpenStep(*state);
  const dump::RecordLedger& open = Records(*state, 1);
  EXPECT_EQ(open.dropped.ring_full, 5u)
      << "step 1's drops were settled with step 0";
  EXPECT_EQ(open.written, 4u);
  EXPECT_EQ(open.produced, 9u);
}

// A corrupt ring stops being read after 10 of step 0's 20 records: step 0
// has 10 unread, and step 1 only its own 5, not step 0's again.
TEST_F(StepAccountingTest, UnreadRecordsAreCountedOnce) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto state = p->Lock();
  state->rings[0].records_read = 10;
  SettleStep(*state, 0, Ledger(20, 20, 0, 20));
  SettleStep(*state, 1, Ledger(5, 5, 0, 25));
  SettleStep(*state, 2, Ledger(7, 7, 0, 32));
  const auto& step0 = Records(*state, 0);
  const auto& step1 = Records(*state, 1);
  const auto& step2 = Records(*state, 2);
  EXPECT_EQ(step0.unread, 10u);
  EXPECT_EQ(step0.written, 10u);
  EXPECT_EQ(step1.unread, 5u);
  EXPECT_EQ(step1.written, 0u);
  EXPECT_EQ(step2.unread, 7u);
}

}  // namespace
}  // namespace tprobe::daemon
