#include "client/step_ledger.h"

#include <gtest/gtest.h>

#include <string>

namespace tprobe::client {
namespace {

RecordTotals Connected(uint64_t generation, std::vector<uint64_t> rings) {
  RecordTotals t;
  t.active_generation = generation;
  for (uint64_t r : rings) t.committed += r;
  t.active_rings = std::move(rings);
  return t;
}

uint64_t Sum(const v1::StepLedger& l) {
  return l.committed() + l.read_by_lost_daemon() + l.dropped_ring_full() +
         l.dropped_too_large() + l.dropped_no_daemon() +
         l.dropped_daemon_gone();
}

TEST(StepLedgerTest, AStepCountsWhatChangedSinceTheLastOneWithEachRingsCut) {
  StepLedger ledger;
  RecordTotals t = Connected(7, {6, 4});
  t.dropped.ring_full = 2;
  v1::StepLedger first = ledger.Close(0, t, std::nullopt);
  EXPECT_EQ(first.produced(), 12u);
  EXPECT_EQ(first.committed(), 10u);
  EXPECT_EQ(first.dropped_ring_full(), 2u);
  ASSERT_EQ(first.ring_cuts_size(), 2);
  EXPECT_EQ(first.ring_cuts(0), 6u);
  EXPECT_EQ(first.ring_cuts(1), 4u);

  t = Connected(7, {9, 4});
  t.dropped.ring_full = 3;
  v1::StepLedger second = ledger.Close(1, t, std::nullopt);
  EXPECT_EQ(second.produced(), 4u);
  EXPECT_EQ(second.committed(), 3u);
  EXPECT_EQ(second.dropped_ring_full(), 1u);
  EXPECT_EQ(second.ring_cuts(0), 9u);
  EXPECT_EQ(Sum(second), second.produced());
  EXPECT_FALSE(ledger.TakeOutage());
}

TEST(StepLedgerTest, ADaemonLossBecomesAnOutageFromTheFirstUnansweredStep) {
  StepLedger ledger;
  (void)ledger.Close(0, Connected(1, {10}), std::nullopt);
  // Step 1: 5 more records went to the daemon that died (2 of them left
  // unread), then 4 calls found no daemon.
  RecordTotals lost;
  lost.committed = 15;
  lost.orphaned = 2;
  lost.dropped.no_daemon = 4;
  v1::StepLedger l = ledger.Close(1, lost, /*first_unacknowledged=*/0);
  EXPECT_EQ(l.produced(), 9u);
  EXPECT_EQ(l.committed(), 0u);
  EXPECT_EQ(l.ring_cuts_size(), 0);
  EXPECT_EQ(l.dropped_daemon_gone(), 2u);
  EXPECT_EQ(l.read_by_lost_daemon(), 3u);
  EXPECT_EQ(l.dropped_no_daemon(), 4u);
  EXPECT_EQ(Sum(l), l.produced());
  lost.dropped.no_daemon = 10;
  (void)ledger.Close(2, lost, 0);
  // A new daemon: its rings start at zero.
  RecordTotals back = Connected(2, {5});
  back.committed += lost.committed;
  back.orphaned = lost.orphaned;
  back.dropped.no_daemon = lost.dropped.no_daemon;
  v1::StepLedger after = ledger.Close(3, back, std::nullopt);
  EXPECT_EQ(after.committed(), 5u);
  EXPECT_EQ(after.produced(), 5u);
  const auto outage = ledger.TakeOutage();
  ASSERT_TRUE(outage);
  EXPECT_EQ(outage->first_step(), 0u);
  EXPECT_EQ(outage->last_step(), 2u);
  EXPECT_EQ(outage->produced(), 15u);
  EXPECT_EQ(outage->dropped_no_daemon(), 10u);
  EXPECT_EQ(outage->dropped_daemon_gone(), 2u);
  EXPECT_EQ(outage->read_by_lost_daemon(), 3u);
  EXPECT_EQ(outage->dropped_ring_full(), 0u);
  EXPECT_FALSE(ledger.TakeOutage()) << "reported once";
}

TEST(StepLedgerTest, LostEntriesAreCountedAllAndNamedUpToTheLimit) {
  StepLedger ledger;
  for (size_t i = 0; i < StepLedger::kMaxNames + 5; ++i) {
    ledger.NoteLostEntry("Module.m" + std::to_string(i) + ".forward.0");
  }
  v1::StepLedger l = ledger.Close(0, RecordTotals(), std::nullopt);
  EXPECT_EQ(l.entries_lost(), StepLedger::kMaxNames + 5);
  ASSERT_EQ(static_cast<size_t>(l.lost_entries_size()), StepLedger::kMaxNames);
  EXPECT_EQ(l.lost_entries(0), "Module.m0.forward.0");
  EXPECT_EQ(ledger.Close(1, RecordTotals(), std::nullopt).entries_lost(), 0u);
}

}  // namespace
}  // namespace tprobe::client
