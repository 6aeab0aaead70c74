// The rank's Start, Step and Goodbye as Boundary records (common/shm/
// README.md, "Step boundaries in the ring"), run by a producer's pipeline
// (daemon/ingest/rank_pipeline.h) on a real segment written as a rank
// writes it.

#include <gtest/gtest.h>

#include <string>

#include "common/control/socket_path.h"
#include "common/dump/json_writer.h"
#include "daemon/ingest/rank_pipeline.h"
#include "daemon/ingest/registry.h"
#include "tests/daemon/drain_fixture.h"
#include "tests/daemon/ring_records.h"

namespace tprobe::daemon {
namespace {

using testing::ConfigJson;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::RecordWriter;
using testing::TestRank;

class BoundaryTest : public testing::DrainFixture {
 protected:
  // Writes `request` into `ring` as the rank's Boundary record.
  static bool Boundary(RecordWriter& ring, v1::Request request,
                       uint32_t version = control::kProtocolVersion) {
    request.set_version(version);
    const std::string bytes = request.SerializeAsString();
    return ring.Raw(record::RecordType::kBoundary,
                    std::as_bytes(std::span(bytes)));
  }
  static v1::Request Start(uint32_t step) {
    v1::Request r;
    r.mutable_start()->set_step(step);
    return r;
  }
  // Step `step` with `produced` records, all committed, and the data ring's
  // cut.
  static v1::Request Step(uint32_t step, uint64_t produced, uint32_t data_ring,
                          uint64_t cut) {
    v1::Request r;
    r.mutable_step()->set_step(step);
    v1::StepLedger* ledger = r.mutable_step()->mutable_ledger();
    ledger->set_produced(produced);
    ledger->set_committed(produced);
    for (uint32_t i = 0; i < data_ring; ++i) ledger->add_ring_cuts(0);
    ledger->add_ring_cuts(cut);
    return r;
  }
  static v1::Request Goodbye() {
    v1::Request r;
    r.mutable_goodbye();
    return r;
  }

  size_t Run(TestRank& p) {
    auto state = p->Lock();
    return RunPipeline(*p, *state, registry_, *log_, /*batch=*/0);
  }

  Registry registry_;
};

// A step's records, its end and the next step that produced nothing: the
// first tree is written with the rank's count, the second still gets its
// folder, and the goodbye finalises the rank as a clean exit.
TEST_F(BoundaryTest, StartStepAndGoodbyeRunInOrderWithTheData) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto data = p.Writer(0);
  auto boundaries = p.Writer(1);
  ASSERT_TRUE(Boundary(boundaries, Start(0)));
  ASSERT_TRUE(data.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(data.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(Boundary(boundaries, Step(0, 2, 0, 2)));
  ASSERT_TRUE(Boundary(boundaries, Start(1)));
  ASSERT_TRUE(Boundary(boundaries, Step(1, 0, 0, 2)));
  ASSERT_TRUE(Boundary(boundaries, Goodbye()));
  Run(p);
  EXPECT_TRUE(p->Lock()->closed);
  EXPECT_EQ(Order(), (std::vector<std::string>{"A"}));
  const dump::Json step0 = Accounting(0);
  EXPECT_EQ(step0["complete"], true) << step0.dump();
  EXPECT_EQ(step0["records"]["produced"], 2);
  EXPECT_EQ(step0["records"]["written"], 2);
  const dump::Json step1 = Accounting(1);
  EXPECT_EQ(step1["producer_died"], false) << step1.dump();
  EXPECT_EQ(step1["records"]["produced"], 0) << step1.dump();
  // Every boundary was read: the rank's confirmation.
  const shm::RingHeader* h = p->segment().ring_header(1);
  EXPECT_EQ(h->tail.load(), h->head.load());
}

// The boundary ring is read first here, but the Step runs only once the
// data ring has been read up to its cut: the entry is the step's, not a
// late record skipped after the step was written.
TEST_F(BoundaryTest, AStepWaitsForTheDataBeforeItsCut) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto boundaries = p.Writer(0);
  auto data = p.Writer(1);
  ASSERT_TRUE(data.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(data.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(Boundary(boundaries, Start(0)));
  ASSERT_TRUE(Boundary(boundaries, Step(0, 2, 1, 2)));
  Run(p);
  EXPECT_EQ(Order(), (std::vector<std::string>{"A"}));
  const dump::Json step0 = Accounting(0);
  EXPECT_EQ(step0["complete"], true) << step0.dump();
  EXPECT_EQ(step0["records"]["written"], 2) << step0.dump();
  EXPECT_FALSE(p->Lock()->closed);
}

// Records the cut counts that never came (the ring holds nothing more) are
// unread, and the step is not complete; the boundary does not wait forever.
TEST_F(BoundaryTest, ACutThatIsNeverReachedCountsUnread) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto data = p.Writer(0);
  auto boundaries = p.Writer(1);
  ASSERT_TRUE(Boundary(boundaries, Start(0)));
  ASSERT_TRUE(data.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(Boundary(boundaries, Step(0, 3, 0, 3)));
  Run(p);
  const dump::Json step0 = Accounting(0);
  EXPECT_EQ(step0["complete"], false) << step0.dump();
  EXPECT_EQ(step0["records"]["dropped"]["unread"], 2) << step0.dump();
}

// A boundary record is input like any other: one that does not parse, of
// another protocol version or with another body marks the stream corrupt.
TEST_F(BoundaryTest, AMalformedBoundaryMarksTheStreamCorrupt) {
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind);
    TestRank p(MakeRegister(ConfigJson(dir_.path())));
    ASSERT_TRUE(p);
    auto ring = p.Writer(0);
    if (kind == 0) {
      const std::string garbage = "\xff\xff\xff\xff not a request";
      ASSERT_TRUE(ring.Raw(record::RecordType::kBoundary,
                           std::as_bytes(std::span(garbage))));
    } else if (kind == 1) {
      ASSERT_TRUE(Boundary(ring, Start(0), control::kProtocolVersion - 1));
    } else {
      v1::Request flush;
      flush.mutable_flush();
      ASSERT_TRUE(Boundary(ring, flush));
    }
    Run(p);
    auto state = p->Lock();
    EXPECT_TRUE(state->broken);
    EXPECT_NE(state->last_error.find("boundary"), std::string::npos)
        << state->last_error;
  }
}

}  // namespace
}  // namespace tprobe::daemon
