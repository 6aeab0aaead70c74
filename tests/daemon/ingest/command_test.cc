// RankCommand (daemon/ingest/command.cc): a rank's Step turned into the
// command its pipeline runs, its why_empty checked against the causes this
// daemon knows.

#include "daemon/ingest/command.h"

#include <gtest/gtest.h>

namespace tprobe::daemon {
namespace {

v1::Request StepWithCause(int cause) {
  v1::Request request;
  request.mutable_step()->set_step(3);
  request.mutable_step()->set_why_empty(static_cast<v1::EmptyCause>(cause));
  return request;
}

TEST(RankCommandTest, AStepsCauseBecomesTprobeJsonsCode) {
  const std::pair<v1::EmptyCause, const char*> known[] = {
      {v1::EMPTY_CAUSE_UNSPECIFIED, ""},
      {v1::EMPTY_CAUSE_SCOPE_LIST, "scope_list"},
      {v1::EMPTY_CAUSE_RISK_LEVEL, "risk_level"},
      {v1::EMPTY_CAUSE_NO_MODEL, "no_model"},
      {v1::EMPTY_CAUSE_NO_API, "no_api"},
      {v1::EMPTY_CAUSE_NO_CALLS, "no_calls"},
  };
  for (const auto& [cause, code] : known) {
    const Command c = RankCommand(StepWithCause(cause));
    EXPECT_EQ(c.kind, Command::Kind::kStep);
    EXPECT_EQ(c.step, 3u);
    EXPECT_EQ(c.why_empty, code) << cause;
  }
}

TEST(RankCommandTest, ACauseThisDaemonDoesNotKnowIsDropped) {
  // A newer (or hostile) rank's value: parsed from the wire as it came.
  v1::Request parsed;
  ASSERT_TRUE(parsed.ParseFromString(StepWithCause(77).SerializeAsString()));
  EXPECT_EQ(RankCommand(parsed).why_empty, "");
  EXPECT_EQ(RankCommand(StepWithCause(-1)).why_empty, "");
}

TEST(RankCommandTest, AGoodbyeCarriesTheCauseOfTheStepItEnds) {
  v1::Request request;
  request.mutable_goodbye()->set_step(5);
  request.mutable_goodbye()->set_why_empty(v1::EMPTY_CAUSE_NO_API);
  Command c = RankCommand(request);
  EXPECT_EQ(c.kind, Command::Kind::kGoodbye);
  EXPECT_EQ(c.step, 5u);
  EXPECT_EQ(c.why_empty, "no_api");
  EXPECT_FALSE(c.ledger);
  // Neither a ledger nor a cause: the goodbye is about no step.
  request.mutable_goodbye()->set_why_empty(v1::EMPTY_CAUSE_UNSPECIFIED);
  c = RankCommand(request);
  EXPECT_EQ(c.step, 0u);
  EXPECT_EQ(c.why_empty, "");
}

}  // namespace
}  // namespace tprobe::daemon
