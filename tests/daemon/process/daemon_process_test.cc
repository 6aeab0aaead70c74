// The real tprobed binary, driven over its socket by a raw client written
// here from the protocol (control.proto) and the record layout (record.h).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "common/control/response.h"
#include "common/dump/json_writer.h"
#include "common/shm/segment.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/expected_accounting.h"
#include "tests/support/raw_rank_test.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe {
namespace {

using testing::Clock;
using testing::ConfigJson;
using testing::GoodbyeRequest;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::MapsSegment;
using testing::RawClient;
using testing::RawRank;
using testing::ReadFile;
using testing::Ref;
using testing::StepRequest;
using testing::WaitFor;

// One module call with a float32 input and output, as record.h describes
// the stream of a ring: interned names, CallBegin, Tensor + Chunks, Entry,
// CallEnd. Returns false when the ring refused a record.
bool WriteModuleCall(shm::Segment& segment) {
  testing::RecordWriter w(segment.ring_header(0), segment.ring_data(0));
  using record::CallKind;
  using record::InternKind;
  const char stack[] =
      "File train.py, line 9, in forward, \n return self.fc(x)\0"
      "File train.py, line 20, in <module>, \n model(x)";
  return w.Intern(1, InternKind::kName, "Module.fc.Linear.forward.0") &&
         w.Intern(2, InternKind::kName, "Functional.linear.0.forward") &&
         w.Intern(3, InternKind::kStack,
                  std::string_view(stack, sizeof stack - 1)) &&
         w.Call(true, 1, 0, 1, CallKind::kModule) &&
         w.Call(true, 2, 0, 2, CallKind::kApi) &&
         w.Call(false, 3, 0, 2, CallKind::kApi) &&
         w.Float32Tensor(1, {2, 2}, {0.0f, 3.0f, 4.0f, 0.0f}, /*chunk=*/2) &&
         w.Float32Tensor(2, {4}, {-1.0f, 2.0f, -2.0f, 4.0f}, /*chunk=*/4,
                         /*requires_grad=*/true) &&
         w.Entry(4, 0, 1, 3,
                 MakeEntry({{"input_args", List({Ref(1)})},
                            {"input_kwargs", testing::Dict({})},
                            {"output", List({Ref(2)})},
                            {"parameters", testing::Dict({})},
                            {"is_recompute", testing::Bool(false)}})) &&
         w.Call(false, 5, 0, 1, CallKind::kModule);
}

constexpr char kExpectedDump[] = R"json({
 "task": "statistics",
 "level": "mix",
 "framework": "pytorch",
 "dump_data_dir": null,
 "data": {
  "Module.fc.Linear.forward.0": {
   "input_args": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float32",
     "shape": [
      2,
      2
     ],
     "Max": 4.0,
     "Min": 0.0,
     "Mean": 1.75,
     "Norm": 5.0,
     "requires_grad": false
    }
   ],
   "input_kwargs": {},
   "output": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float32",
     "shape": [
      4
     ],
     "Max": 4.0,
     "Min": -2.0,
     "Mean": 0.75,
     "Norm": 5.0,
     "requires_grad": true
    }
   ],
   "parameters": {},
   "is_recompute": false
  }
 }
})json";

// msprobe's order: the module's node follows the first API node inside it.
constexpr char kExpectedConstruct[] = R"json({
 "Functional.linear.0.forward": "Module.fc.Linear.forward.0",
 "Module.fc.Linear.forward.0": null
})json";

constexpr char kExpectedStack[] = R"json({
 "0": [
  [
   "Module.fc.Linear.forward.0"
  ],
  [
   "File train.py, line 9, in forward, \n return self.fc(x)",
   "File train.py, line 20, in <module>, \n model(x)"
  ]
 ]
})json";

// tprobe.json of the step of WriteModuleCall. `daemon_counted`: the records
// of a step no Step settled (the rank died or the daemon stopped), counted
// by the daemon (0: a Step settled it).
std::string AccountingOf(bool producer_died, int daemon_counted = 0) {
  testing::ExpectedAccounting expected{
      .complete = !producer_died, .entries = 1, .producer_died = producer_died};
  if (daemon_counted != 0) expected.daemon_counted = daemon_counted;
  return expected.Text();
}

// Flush is answered once every command queued and every boundary written
// before it has run: after it, the files of the steps closed before are on
// disk.
void Sync(RawClient& client) {
  v1::Request req;
  req.mutable_flush();
  v1::Response resp;
  ASSERT_TRUE(client.Call(req, &resp));
  ASSERT_TRUE(control::IsOk(resp)) << resp.error();
}

class DaemonProcessTest : public testing::RawRankTest {
 protected:
  // The step's journal exists and holds its first write (created and
  // written are two calls: a kill between them leaves an empty file).
  bool JournalWritten() const {
    std::error_code ec;
    return std::filesystem::file_size(DumpFile("tprobe.journal"), ec) > 0 &&
           !ec;
  }
};

TEST_F(DaemonProcessTest, StepAndGoodbyeWriteTheExactStepFiles) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  auto& [client, segment] = *rank;
  ASSERT_TRUE(WriteModuleCall(*segment));

  testing::RecordWriter w = rank->Writer();
  ASSERT_TRUE(w.Boundary(StepRequest(0)));
  Sync(client);
  EXPECT_EQ(ReadFile(DumpFile("dump.json")), kExpectedDump);
  EXPECT_EQ(ReadFile(DumpFile("construct.json")), kExpectedConstruct);
  EXPECT_EQ(ReadFile(DumpFile("stack.json")), kExpectedStack);
  EXPECT_EQ(ReadFile(DumpFile("tprobe.json")), AccountingOf(false));

  const std::string name = segment->name();
  ASSERT_TRUE(w.Boundary(GoodbyeRequest()));
  client.Close();
  EXPECT_TRUE(WaitFor([&] { return !MapsSegment(daemon_->pid(), name); },
                      std::chrono::seconds(5)))
      << "the daemon lets the segment go after Goodbye and hang-up";
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(DaemonProcessTest, SigtermWritesWhatWasCapturedAndExitsZero) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  auto& [client, segment] = *rank;
  ASSERT_TRUE(WriteModuleCall(*segment));

  EXPECT_EQ(daemon_->Terminate(), 0);
  EXPECT_EQ(ReadFile(DumpFile("dump.json")), kExpectedDump);
  EXPECT_EQ(ReadFile(DumpFile("construct.json")), kExpectedConstruct);
  // No Step came: the daemon's own count of the 13 records it read.
  EXPECT_EQ(ReadFile(DumpFile("tprobe.json")), AccountingOf(false, 13));
  EXPECT_FALSE(std::filesystem::exists(Socket()));
}

TEST_F(DaemonProcessTest, ClientDeathFinalisesItsStepAsIncomplete) {
  ASSERT_TRUE(StartDaemon());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The trainer: registers, writes, and dies without Goodbye.
    std::string error;
    auto rank =
        RawRank::Open(Socket(), MakeRegister(ConfigJson(Dump())), &error);
    ::_exit(rank != nullptr && WriteModuleCall(*rank->segment) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadFile(DumpFile("tprobe.json")) == AccountingOf(true, 13);
      },
      std::chrono::seconds(15)))  // about 1 s unloaded; a loaded or TSan run
                                  // takes longer
      << ReadFile(DumpFile("tprobe.json"));
  EXPECT_EQ(ReadFile(DumpFile("dump.json")), kExpectedDump);
  EXPECT_EQ(ReadFile(DumpFile("stack.json")), kExpectedStack);
  // Client id 1: the first registration of this daemon.
  const std::string segment = "tprobe." + std::to_string(::getuid()) + "." +
                              std::to_string(child) + ".1." +
                              std::to_string(daemon_->pid());
  EXPECT_TRUE(WaitFor([&] { return !MapsSegment(daemon_->pid(), segment); },
                      std::chrono::seconds(5)))
      << "the daemon lets the dead client's segment go";
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(DaemonProcessTest, EveryEntryOfSeveralRingsIsWrittenWhileRequestsRun) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Register(MakeRegister(ConfigJson(Dump()), /*ring_count=*/2));
  ASSERT_NE(rank, nullptr);
  RawClient& client = rank->client;
  shm::Segment& segment = *rank->segment;

  // Two producing threads, one ring each, as the client's hook threads.
  constexpr uint32_t kPerRing = 1500;
  std::atomic<uint64_t> seq{1};
  auto produce = [&](uint32_t ring) {
    testing::RecordWriter w(segment.ring_header(ring), segment.ring_data(ring));
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    // The ring is small: retry a full ring until the daemon drains it.
    auto retry = [&](auto write) {
      while (!write()) {
        if (Clock::now() > deadline) return false;
        std::this_thread::yield();
      }
      return true;
    };
    for (uint32_t i = 0; i < kPerRing; ++i) {
      const uint32_t id = ring * kPerRing + i + 1;
      const std::string name = "Tensor.add." + std::to_string(id) + ".forward";
      const std::vector<float> values(300, static_cast<float>(i));
      const bool ok =
          retry(
              [&] { return w.Intern(id, record::InternKind::kName, name); }) &&
          retry([&] { return w.Float32Tensor(id, {300}, values); }) &&
          retry([&] {
            return w.Entry(seq.fetch_add(1), 0, id, 0,
                           MakeEntry({{"output", List({Ref(id)})}}));
          });
      if (!ok) return;
    }
  };
  std::thread t0(produce, 0);
  std::thread t1(produce, 1);
  v1::Response resp;
  for (int i = 0; i < 20; ++i) {
    v1::Request req;
    if (i % 2 == 0) {
      req.mutable_flush();
    } else {
      req.mutable_status();
    }
    ASSERT_TRUE(client.Call(req, &resp));
    EXPECT_TRUE(control::IsOk(resp)) << resp.error();
  }
  t0.join();
  t1.join();
  // Every record read before the Step, which follows ring 1's alone.
  Sync(client);
  ASSERT_TRUE(rank->Writer(1).Boundary(StepRequest(0)));
  Sync(client);

  const dump::Json doc = dump::Json::parse(ReadFile(DumpFile("dump.json")));
  EXPECT_EQ(doc["data"].size(), 2 * kPerRing);
  const dump::Json acc = dump::Json::parse(ReadFile(DumpFile("tprobe.json")));
  EXPECT_EQ(acc["entries"], 2 * kPerRing);
  EXPECT_EQ(acc["complete"], true);
  EXPECT_EQ(doc["data"]["Tensor.add.1500.forward"]["output"][0]["Max"], 1499.0);
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// A rank's Start and Step travel only in its boundary ring: on the socket
// they are refused, from a connection that never registered (which would
// close every rank's step with its own counts) and from the rank's own
// alike, and no rank changes.
TEST_F(DaemonProcessTest, StartAndStepOnTheSocketAreRefused) {
  ASSERT_TRUE(StartDaemon());
  auto registered = Register();
  ASSERT_NE(registered, nullptr);
  RawClient& rank = registered->client;
  testing::RecordWriter w = registered->Writer();
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.mul.0.forward"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));

  RawClient forger(Socket());
  for (RawClient* client : {&forger, &rank}) {
    v1::Response resp;
    v1::Request forged = StepRequest(0);
    forged.mutable_step()->mutable_ledger()->set_produced(424242);
    ASSERT_TRUE(client->Call(forged, &resp));
    EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT) << resp.error();
    EXPECT_NE(resp.error().find("boundary ring"), std::string::npos)
        << resp.error();
    v1::Request start;
    start.mutable_start()->set_step(1);
    ASSERT_TRUE(client->Call(start, &resp));
    EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT) << resp.error();
    ASSERT_TRUE(client->Call(GoodbyeRequest(), &resp));
    EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT) << resp.error();
  }
  EXPECT_FALSE(std::filesystem::exists(DumpFile("tprobe.json")));

  // The rank's own Step, in its ring, closes the step with its own counts.
  ASSERT_TRUE(w.Boundary(StepRequest(0)));
  Sync(rank);
  const dump::Json acc = dump::Json::parse(ReadFile(DumpFile("tprobe.json")));
  EXPECT_EQ(acc["entries"], 1);
  EXPECT_EQ(acc["complete"], true) << acc.dump();
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(DaemonProcessTest, StopKeepsTheStepOpenForLaterEntries) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  auto& [client, segment] = *rank;
  testing::RecordWriter w(segment->ring_header(0), segment->ring_data(0));
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.mul.0.forward"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  v1::Request stop;
  stop.mutable_stop()->set_step(0);
  v1::Response resp;
  ASSERT_TRUE(client.Call(stop, &resp));
  ASSERT_TRUE(control::IsOk(resp)) << resp.error();
  // A flush of the open step writes it, marked open: never complete.
  Sync(client);
  EXPECT_EQ(dump::Json::parse(ReadFile(DumpFile("dump.json")))["data"].size(),
            1u);
  dump::Json acc = dump::Json::parse(ReadFile(DumpFile("tprobe.json")));
  EXPECT_EQ(acc["complete"], false);
  EXPECT_EQ(acc["step_open"], true);

  // API backward hooks still fire after stop(); step() then writes them.
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "Tensor.mul.0.backward"));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"input", List({})}})));
  ASSERT_TRUE(w.Boundary(StepRequest(0)));
  Sync(client);
  const dump::Json doc = dump::Json::parse(ReadFile(DumpFile("dump.json")));
  std::vector<std::string> names;
  for (const auto& [name, body] : doc["data"].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"Tensor.mul.0.forward",
                                             "Tensor.mul.0.backward"}));
  acc = dump::Json::parse(ReadFile(DumpFile("tprobe.json")));
  EXPECT_EQ(acc["complete"], true);
  EXPECT_EQ(acc["step_open"], false);
}

// tprobe.json of a step rebuilt from its journal: valid, not complete.
void ExpectRecovered(const std::string& dir) {
  EXPECT_FALSE(std::filesystem::exists(dir + "/tprobe.journal"));
  EXPECT_EQ(ReadFile(dir + "/dump.json"), kExpectedDump);
  EXPECT_EQ(ReadFile(dir + "/construct.json"), kExpectedConstruct);
  EXPECT_EQ(ReadFile(dir + "/stack.json"), kExpectedStack);
  const dump::Json acc = dump::Json::parse(ReadFile(dir + "/tprobe.json"));
  EXPECT_EQ(acc["complete"], false);
  EXPECT_EQ(acc["recovered"], true);
  EXPECT_EQ(acc["entries"], 1);
}

TEST_F(DaemonProcessTest, ADaemonKilledMidStepIsRecoveredWhenTheRankReturns) {
  ASSERT_TRUE(StartDaemon());
  {
    auto rank = Register();
    ASSERT_NE(rank, nullptr);
    ASSERT_TRUE(WriteModuleCall(*rank->segment));
    // The step stays open: its journal is all there is on disk.
    ASSERT_TRUE(
        WaitFor([&] { return JournalWritten(); }, std::chrono::seconds(10)));
    EXPECT_FALSE(std::filesystem::exists(DumpFile("dump.json")));
    ::kill(daemon_->pid(), SIGKILL);
    EXPECT_EQ(daemon_->Terminate(), 128 + SIGKILL);
  }
  // The rank comes back to a restarted daemon: its journal becomes the
  // step's files, marked recovered.
  ASSERT_TRUE(StartDaemon());
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  ExpectRecovered(Dump() + "/step0/rank0");
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(DaemonProcessTest, TprobeRecoverTurnsJournalsIntoValidSteps) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  auto& [client, segment] = *rank;
  ASSERT_TRUE(WriteModuleCall(*segment));
  ASSERT_TRUE(
      WaitFor([&] { return JournalWritten(); }, std::chrono::seconds(10)));
  ::kill(daemon_->pid(), SIGKILL);
  EXPECT_EQ(daemon_->Terminate(), 128 + SIGKILL);
  // A journal cut short by the kill keeps its whole records.
  {
    std::ofstream(DumpFile("tprobe.journal"), std::ios::app) << "\x40\x00\x00";
  }
  std::string output;
  ASSERT_EQ(testing::RunCommand(std::string(TPROBE_BIN) + " recover " + Dump(),
                                &output),
            0)
      << output;
  EXPECT_NE(output.find("1 step recovered"), std::string::npos) << output;
  ExpectRecovered(Dump() + "/step0/rank0");
}

TEST_F(DaemonProcessTest, AnIdleDaemonUsesAlmostNoCpu) {
  daemon_.emplace(std::vector<std::string>{TPROBED_PATH, "--socket", Socket(),
                                           "--foreground", "--workers", "2"},
                  Socket());
  ASSERT_TRUE(daemon_->started());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto before = testing::CostOf(daemon_->pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto after = testing::CostOf(daemon_->pid());
  // No client: the drain threads block, neither waking nor spinning.
  EXPECT_LT(after.sleeps - before.sleeps, 50);
  EXPECT_LT(after.cpu - before.cpu, std::chrono::milliseconds(250));
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  before = testing::CostOf(daemon_->pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  after = testing::CostOf(daemon_->pid());
  // A client with nothing to send: two drain threads back off to sleeps of
  // 2 ms, at most 1000 wake-ups a second (a fixed 200 us poll made 10000),
  // and no spin.
  EXPECT_LT(after.sleeps - before.sleeps, 1500);
  EXPECT_LT(after.cpu - before.cpu, std::chrono::milliseconds(500));
}

TEST_F(DaemonProcessTest, StatusReportsEveryRank) {
  ASSERT_TRUE(StartDaemon());
  auto registered = Register(MakeRegister(ConfigJson(Dump()), 1, /*rank=*/5));
  ASSERT_NE(registered, nullptr);
  auto& segment = registered->segment;
  ASSERT_TRUE(WriteModuleCall(*segment));
  segment->ring_header(0)->dropped[0].fetch_add(3);

  RawClient cli(Socket());  // the CLI: an unregistered connection
  v1::Request req;
  req.mutable_status();
  v1::Response resp;
  ASSERT_TRUE(cli.Call(req, &resp));
  ASSERT_TRUE(control::IsOk(resp));
  EXPECT_EQ(resp.status().daemon_pid(), daemon_->pid());
  ASSERT_EQ(resp.status().ranks_size(), 1);
  const v1::RankStatus& rank = resp.status().ranks(0);
  EXPECT_EQ(rank.pid(), ::getpid());
  EXPECT_EQ(rank.rank(), 5);
  // 3 interns, 4 calls, 2 tensors with 2 and 1 chunks, 1 entry.
  EXPECT_EQ(rank.records(), 13u);
  EXPECT_EQ(rank.dropped_ring_full(), 3u);
  EXPECT_EQ(rank.last_error(), "");
}

TEST_F(DaemonProcessTest, RequestsItCannotServeGetAClearError) {
  ASSERT_TRUE(StartDaemon());
  RawClient client(Socket());
  v1::Request req;
  *req.mutable_register_() = MakeRegister("{}");
  req.mutable_register_()->mutable_config()->set_task(
      static_cast<v1::Config::Task>(9));
  v1::Response resp;
  ASSERT_TRUE(client.Call(req, &resp));
  EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT);
  EXPECT_TRUE(resp.error().starts_with("config: ")) << resp.error();

  // A client of the release before step boundaries went into the ring.
  req.Clear();
  req.mutable_flush();
  ASSERT_TRUE(client.Call(req, &resp, /*version=*/3));
  EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT);
  EXPECT_EQ(resp.error(),
            "protocol version 3 is not supported: this tprobed speaks version "
            "4; use a client and daemon from the same tprobe release");

  // A Start without Register: a request this connection may not make.
  req.Clear();
  req.mutable_start()->set_step(0);
  ASSERT_TRUE(client.Call(req, &resp));
  EXPECT_EQ(resp.code(), v1::CODE_INVALID_ARGUMENT) << resp.error();
}

TEST_F(DaemonProcessTest, ASecondDaemonOnTheSameSocketRefusesToStart) {
  ASSERT_TRUE(StartDaemon());
  std::string output;
  EXPECT_EQ(testing::RunCommand(std::string(TPROBED_PATH) +
                                    " --foreground --socket " + Socket(),
                                &output),
            1);
  EXPECT_NE(output.find("another tprobed already answers on " + Socket()),
            std::string::npos)
      << output;
  EXPECT_TRUE(testing::SocketAnswers(Socket())) << "the first one still serves";
}

TEST_F(DaemonProcessTest, BadFlagsExitTwoAndHelpExitsZero) {
  std::string output;
  EXPECT_EQ(
      testing::RunCommand(std::string(TPROBED_PATH) + " --frobnicate", &output),
      2);
  EXPECT_NE(output.find("unknown option '--frobnicate'"), std::string::npos);
  EXPECT_EQ(testing::RunCommand(std::string(TPROBED_PATH) + " --help", &output),
            0);
  EXPECT_NE(output.find("--idle-exit SECONDS"), std::string::npos);
}

TEST_F(DaemonProcessTest, BackgroundDaemonReturnsOnceListeningAndIdleExits) {
  // Without --foreground the command returns only once the socket listens.
  std::string output;
  ASSERT_EQ(testing::RunCommand(std::string(TPROBED_PATH) +
                                    " --idle-exit 1 --socket " + Socket(),
                                &output),
            0)
      << output;
  EXPECT_TRUE(testing::SocketAnswers(Socket()));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/tprobed.log"));
  // With no client it leaves after its idle time and removes its socket.
  EXPECT_TRUE(WaitFor([&] { return !std::filesystem::exists(Socket()); },
                      std::chrono::seconds(10)));
  EXPECT_NE(ReadFile(dir_.path() + "/tprobed.log").find("no client for 1 s"),
            std::string::npos);
}

TEST_F(DaemonProcessTest, ShutdownRequestDrainsAndExits) {
  std::string output;
  ASSERT_EQ(testing::RunCommand(
                std::string(TPROBED_PATH) + " --socket " + Socket(), &output),
            0)
      << output;
  auto rank = Register();
  ASSERT_NE(rank, nullptr);
  ASSERT_TRUE(WriteModuleCall(*rank->segment));
  RawClient cli(Socket());
  v1::Request req;
  req.mutable_shutdown();
  v1::Response resp;
  ASSERT_TRUE(cli.Call(req, &resp));
  EXPECT_TRUE(control::IsOk(resp));
  EXPECT_TRUE(WaitFor([&] { return !std::filesystem::exists(Socket()); },
                      std::chrono::seconds(10)));
  EXPECT_TRUE(
      WaitFor([&] { return ReadFile(DumpFile("dump.json")) == kExpectedDump; },
              std::chrono::seconds(10)));
}

}  // namespace
}  // namespace tprobe
