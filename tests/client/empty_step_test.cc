// EmptyStep (client/empty_step.h): the cause of a collected step that wrote
// no entry, returned for every such step and said on stderr once per
// process. A cause is said once per process, so each is met in one test.

#include "client/empty_step.h"

#include <gtest/gtest.h>

#include <string>

namespace tprobe::client {
namespace {

using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

StepFacts Collected(config::Level level, bool filtered = false) {
  StepFacts facts;
  facts.step = 4;
  facts.rank = 2;
  facts.level = level;
  facts.started = true;
  facts.step_selected = true;
  facts.rank_selected = true;
  facts.filtered = filtered;
  facts.daemon = true;
  return facts;
}

// Closes two steps of `facts` (after `note` each): returns what stderr got
// from each, and checks both give `cause`.
std::pair<std::string, std::string> TwoSteps(EmptyStep& empty,
                                             const StepFacts& facts,
                                             void (*note)(EmptyStep&),
                                             v1::EmptyCause cause) {
  std::string said[2];
  for (std::string& s : said) {
    note(empty);
    CaptureStderr();
    EXPECT_EQ(empty.Close(facts), cause);
    s = GetCapturedStderr();
  }
  return {said[0], said[1]};
}

void Nothing(EmptyStep&) {}
void Call(EmptyStep& e) { e.NoteCall(); }
void NoModel(EmptyStep& e) { e.NoteNoModel(); }

TEST(EmptyStepTest, FiltersThatKeptNoCallAreSaidOnce) {
  EmptyStep empty;
  auto [first, second] = TwoSteps(empty, Collected(config::Level::kL1, true),
                                  Call, v1::EMPTY_CAUSE_SCOPE_LIST);
  EXPECT_EQ(first,
            "[tprobe] step 4 of rank 2 wrote no entry: config.json's "
            "\"scope\"/\"list\" matched none of the calls that ran; its "
            "tprobe.json says why_empty (said once)\n");
  EXPECT_EQ(second, "");
  StepFacts risk = Collected(config::Level::kL1, true);
  risk.by_risk_level = true;
  auto [said, again] = TwoSteps(empty, risk, Call, v1::EMPTY_CAUSE_RISK_LEVEL);
  EXPECT_NE(said.find("\"risk_level\" kept none"), std::string::npos) << said;
  EXPECT_EQ(again, "");
}

TEST(EmptyStepTest, NoCallGivesTheLevelsCause) {
  EmptyStep empty;
  auto [l1, l1_again] = TwoSteps(empty, Collected(config::Level::kL1), Nothing,
                                 v1::EMPTY_CAUSE_NO_API);
  EXPECT_NE(l1.find("level L1 dumps API calls and none ran"), std::string::npos)
      << l1;
  EXPECT_EQ(l1_again, "");
  // Without a daemon no tree says it.
  StepFacts no_daemon = Collected(config::Level::kL0);
  no_daemon.daemon = false;
  auto [l0, l0_again] =
      TwoSteps(empty, no_daemon, Nothing, v1::EMPTY_CAUSE_NO_CALLS);
  EXPECT_EQ(l0,
            "[tprobe] step 4 of rank 2 wrote no entry: no module call ran "
            "between start() and stop() (said once)\n");
  EXPECT_EQ(l0_again, "");
  // The adapter says a missing model itself.
  auto [model, model_again] = TwoSteps(empty, Collected(config::Level::kMix),
                                       NoModel, v1::EMPTY_CAUSE_NO_MODEL);
  EXPECT_EQ(model, "");
  EXPECT_EQ(model_again, "");
}

TEST(EmptyStepTest, ARankNotSelectedIsSaidOnceWithoutATreeCause) {
  EmptyStep empty;
  StepFacts facts = Collected(config::Level::kL1);
  facts.rank_selected = false;
  auto [first, second] =
      TwoSteps(empty, facts, Call, v1::EMPTY_CAUSE_UNSPECIFIED);
  EXPECT_EQ(first,
            "[tprobe] rank 2 is not in config.json's \"rank\" list: it dumps "
            "nothing and writes no step folder (said once)\n");
  EXPECT_EQ(second, "");
}

TEST(EmptyStepTest, NoCauseForAStepWithAnEntryOrOneNotCollected) {
  EmptyStep empty;
  CaptureStderr();
  empty.NoteCall();
  empty.NoteEntry();
  EXPECT_EQ(empty.Close(Collected(config::Level::kL1, true)),
            v1::EMPTY_CAUSE_UNSPECIFIED);
  // The entry was that step's: the next one has none.
  StepFacts not_started = Collected(config::Level::kL1);
  not_started.started = false;
  EXPECT_EQ(empty.Close(not_started), v1::EMPTY_CAUSE_UNSPECIFIED);
  StepFacts other_step = Collected(config::Level::kL1);
  other_step.step_selected = false;
  EXPECT_EQ(empty.Close(other_step), v1::EMPTY_CAUSE_UNSPECIFIED);
  EXPECT_EQ(empty.Close(Collected(config::Level::kDebug)),
            v1::EMPTY_CAUSE_UNSPECIFIED);
  // Calls that nothing filters and no entry: no cause tprobe knows.
  empty.NoteCall();
  EXPECT_EQ(empty.Close(Collected(config::Level::kL1)),
            v1::EMPTY_CAUSE_UNSPECIFIED);
  EXPECT_EQ(GetCapturedStderr(), "");
}

}  // namespace
}  // namespace tprobe::client
