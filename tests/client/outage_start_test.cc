// A step started while no daemon is reachable, and a daemon that comes up on
// the socket afterwards: the race behind a step once written complete and
// empty (a Start queued on the socket during the outage reached the new
// daemon ahead of the records it never got). Start, Step and Goodbye now
// travel only in the boundary ring, so what the daemon sees is fixed by the
// rank alone. Each test drives one order of events against a real tprobed:
// the daemon is started after Start(), and the test waits until the
// session has taken it up (Recorder::connected(): attached, or held until the
// step ends) before it goes on; Flush waits until the steps are written.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "client/entry_builder.h"
#include "client/session.h"
#include "nlohmann/json.hpp"
#include "tests/support/daemon_process.h"
#include "tests/support/daemon_test.h"

namespace tprobe::client {
namespace {

using Json = nlohmann::json;

class OutageStartTest : public testing::DaemonTest {
 protected:
  // A session of task statistics at level L0 into Dump(), on Socket() where
  // no daemon answers yet.
  std::unique_ptr<Session> OpenWithoutDaemon() {
    const std::string path = dir_.path() + "/config.json";
    std::ofstream(path) << R"({"task": "statistics", "level": "L0",)"
                        << R"( "dump_path": ")" << Dump() << R"("})";
    SessionOptions options;
    options.config_path = path;
    options.socket_path = Socket();
    options.connect_timeout_ms = 100;
    auto session = Session::Create(options);
    EXPECT_TRUE(session.ok()) << session.status().message();
    if (!session.ok()) return nullptr;
    EXPECT_FALSE(session.value()->recorder().connected());
    return std::move(session).value();
  }

  // Starts the daemon and waits until `s` took it up (its channel
  // reconnects on its own, with a backoff of at most two seconds).
  bool DaemonComesUp(Session& s) {
    if (!StartDaemon()) return false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!s.recorder().connected()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  // One module call whose entry has an empty output; whether the entry
  // reached a daemon's ring.
  static bool Call(Session& s) {
    CallPlan plan;
    if (!s.BeginModule("Module.m.Linear", true, 0, &plan)) return false;
    EntryBuilder entry(s.recorder());
    entry.LayOut(plan);
    s.CheckEnd(&plan);
    const bool written = plan.entry() && s.WriteEntry(plan, 0, entry);
    s.EndCall(plan);
    return written;
  }

  // A file of step `step` (rank -1 writes into "rank").
  std::string StepFile(uint32_t step, const std::string& name) const {
    return Dump() + "/step" + std::to_string(step) + "/rank/" + name;
  }
  Json Read(uint32_t step, const std::string& name) const {
    return Json::parse(testing::ReadFile(StepFile(step, name)));
  }
};

// The daemon comes before the step's first record: the step is wholly its,
// and its Start, made while no daemon was there, reaches it first in the
// boundary ring. The step is written complete, with its entry.
TEST_F(OutageStartTest, ADaemonThatComesBeforeTheFirstRecordGetsTheStart) {
  auto s = OpenWithoutDaemon();
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(DaemonComesUp(*s));
  ASSERT_TRUE(s->connected()) << "nothing was recorded: attached at once";
  EXPECT_TRUE(Call(*s));
  s->Stop();
  s->Step();
  ASSERT_TRUE(s->Flush(60000));

  const Json acc = Read(0, "tprobe.json");
  EXPECT_EQ(acc["complete"], true) << acc.dump();
  EXPECT_EQ(acc["entries"], 1) << acc.dump();
  EXPECT_FALSE(acc.contains("daemon_outage")) << acc.dump();
  EXPECT_TRUE(
      Read(0, "dump.json")["data"].contains("Module.m.Linear.forward.0"));
}

// A step that records nothing still gets its folder from its Start, made
// before the daemon came.
TEST_F(OutageStartTest, AStartedStepWithoutRecordsGetsItsFolder) {
  auto s = OpenWithoutDaemon();
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(DaemonComesUp(*s));
  s->Stop();
  s->Step();
  ASSERT_TRUE(s->Flush(60000));
  const Json acc = Read(0, "tprobe.json");
  EXPECT_EQ(acc["complete"], true) << acc.dump();
  EXPECT_EQ(acc["entries"], 0) << acc.dump();
}

// The step recorded before the daemon came: its records were lost, so it
// belongs to the outage. The daemon, held until the step ends, never sees
// its Start and writes no tree for it (least of all a complete empty one);
// the next step is complete and reports the outage.
TEST_F(OutageStartTest, AStepThatRecordedBeforeTheDaemonCameIsTheOutages) {
  auto s = OpenWithoutDaemon();
  ASSERT_TRUE(s);
  s->Start();
  EXPECT_FALSE(Call(*s));
  EXPECT_GT(s->recorder().Totals().dropped.no_daemon, 0u);
  ASSERT_TRUE(DaemonComesUp(*s));
  EXPECT_FALSE(s->connected()) << "held until the step ends";
  s->Stop();
  s->Step();
  ASSERT_TRUE(s->connected());
  s->Start();
  EXPECT_TRUE(Call(*s));
  s->Stop();
  s->Step();
  ASSERT_TRUE(s->Flush(60000));

  EXPECT_FALSE(std::filesystem::exists(StepFile(0, "tprobe.json")))
      << "an outage step has no tree";
  const Json acc = Read(1, "tprobe.json");
  EXPECT_EQ(acc["complete"], true) << acc.dump();
  EXPECT_EQ(acc["entries"], 1) << acc.dump();
  ASSERT_TRUE(acc.contains("daemon_outage")) << acc.dump();
  EXPECT_EQ(acc["daemon_outage"]["steps"], Json::parse("[0, 0]")) << acc.dump();
}

}  // namespace
}  // namespace tprobe::client
