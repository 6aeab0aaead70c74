// `tprobe status|start|stop|step|flush|shutdown`: the real tprobe binary
// against the real tprobed, with ranks played by raw clients.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/dump/json_writer.h"
#include "common/shm/directive.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/raw_rank_test.h"

namespace tprobe {
namespace {

using testing::ConfigJson;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::ReadFile;
using testing::RecordWriter;
using testing::WaitFor;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; in >> field;) fields.push_back(field);
  return fields;
}

class ControlCommandsTest : public testing::RawRankTest {
 protected:
  // Runs `tprobe ARGS --socket SOCKET`; returns the exit status.
  int Tprobe(const std::string& args, std::string* output = nullptr) const {
    std::string ignored;
    return testing::RunCommand(
        std::string(TPROBE_BIN) + " " + args + " --socket " + Socket(),
        output ? output : &ignored);
  }
  // Registers a rank and writes one entry "Tensor.add.0.forward" of step 0.
  std::unique_ptr<testing::RawRank> Rank(int rank) {
    auto registered = Register(MakeRegister(ConfigJson(Dump()), 1, rank));
    if (registered == nullptr) return nullptr;
    RecordWriter w = registered->Writer();
    EXPECT_TRUE(
        w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward") &&
        w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
    return registered;
  }
};

TEST_F(ControlCommandsTest, StatusPrintsOneLinePerRank) {
  ASSERT_TRUE(StartDaemon());
  auto a = Rank(5);
  auto b = Rank(-1);
  ASSERT_TRUE(a && b);
  auto& sa = a->segment;
  auto& sb = b->segment;
  sa->ring_header(0)->dropped[0].fetch_add(3);
  // Ring fill: wait until the daemon drained both.
  ASSERT_TRUE(WaitFor(
      [&] {
        return sa->ring_header(0)->tail.load() ==
                   sa->ring_header(0)->head.load() &&
               sb->ring_header(0)->tail.load() ==
                   sb->ring_header(0)->head.load();
      },
      std::chrono::seconds(5)));

  std::string output;
  ASSERT_EQ(Tprobe("status", &output), 0) << output;
  const auto lines = Lines(output);
  ASSERT_EQ(lines.size(), 4u) << output;
  EXPECT_EQ(lines[0], "tprobed pid " + std::to_string(daemon_->pid()) + " on " +
                          Socket() + ": 2 ranks");
  EXPECT_EQ(Fields(lines[1]),
            (std::vector<std::string>{"RANK", "PID", "STATE", "STEP",
                                      "RING_FILL", "BEHIND", "OPEN", "RECORDS",
                                      "BYTES", "RING_FULL", "TOO_LARGE",
                                      "NO_DAEMON", "OUTAGE", "LAST_ERROR"}));
  const std::string pid = std::to_string(::getpid());
  const std::string bytes = std::to_string(sa->ring_header(0)->bytes_written);
  // Both records read; step 0 is open until its Step.
  EXPECT_EQ(Fields(lines[2]),
            (std::vector<std::string>{"5", pid, "running", "0", "0", "0", "1",
                                      "2", bytes, "3", "0", "0", "-", "-"}));
  EXPECT_EQ(Fields(lines[3])[0], "-") << "no distributed rank";
  // The columns line up under their headers.
  EXPECT_EQ(lines[1].find("RECORDS"), lines[2].find(" 2 ") + 1);
}

TEST_F(ControlCommandsTest, StatusWithoutRanksSaysSo) {
  ASSERT_TRUE(StartDaemon());
  std::string output;
  ASSERT_EQ(Tprobe("status", &output), 0) << output;
  EXPECT_EQ(output, "tprobed pid " + std::to_string(daemon_->pid()) + " on " +
                        Socket() + ": 0 ranks\n");
}

TEST_F(ControlCommandsTest, FlushWritesEveryRanksOpenStepBeforeReturning) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(0);
  ASSERT_NE(rank, nullptr);
  std::string output;
  ASSERT_EQ(Tprobe("flush", &output), 0) << output;
  EXPECT_EQ(output, "tprobe flush: done (1 rank)\n");
  EXPECT_NE(ReadFile(DumpFile("dump.json")).find("Tensor.add.0.forward"),
            std::string::npos);
}

TEST_F(ControlCommandsTest, StatusJsonListsEveryRank) {
  ASSERT_TRUE(StartDaemon());
  auto registered = Rank(5);
  ASSERT_NE(registered, nullptr);
  const auto& segment = registered->segment;
  std::string output;
  ASSERT_EQ(Tprobe("status --json", &output), 0) << output;
  const auto doc = dump::Json::parse(output);
  EXPECT_EQ(doc["daemon_pid"], daemon_->pid());
  EXPECT_EQ(doc["socket"], Socket());
  ASSERT_EQ(doc["ranks"].size(), 1u) << output;
  const auto& rank = doc["ranks"][0];
  EXPECT_EQ(rank["rank"], 5);
  EXPECT_EQ(rank["pid"], ::getpid());
  EXPECT_EQ(rank["records"], segment->ring_header(0)->records_written.load());
  EXPECT_EQ(rank["bytes"], segment->ring_header(0)->bytes_written.load());
  EXPECT_EQ(rank["dropped"]["ring_full"], 0);
  EXPECT_TRUE(rank["last_error"].is_null());
}

TEST_F(ControlCommandsTest, CommandsWithoutRanksSayNothingHappened) {
  ASSERT_TRUE(StartDaemon());
  for (const char* command : {"flush", "stop", "start --steps 1"}) {
    std::string output;
    EXPECT_EQ(Tprobe(command, &output), 3) << command;
    EXPECT_NE(output.find("no rank is registered with tprobed on " + Socket() +
                          ": nothing to "),
              std::string::npos)
        << output;
  }
  std::string output;
  EXPECT_EQ(Tprobe("flush --json", &output), 3);
  const auto doc = dump::Json::parse(output);
  EXPECT_EQ(doc["command"], "flush");
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["ranks"], 0);
  EXPECT_NE(doc["error"].get<std::string>().find("nothing to flush"),
            std::string::npos);
  auto rank = Rank(0);
  ASSERT_NE(rank, nullptr);
  ASSERT_EQ(Tprobe("flush --json", &output), 0) << output;
  EXPECT_EQ(output, R"({"command":"flush","ok":true,"ranks":1,"error":null})"
                    "\n");
}

TEST_F(ControlCommandsTest, StartAndStopActOnEveryRank) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(0);
  ASSERT_NE(rank, nullptr);
  // The directive word of the rank's segment, as the rank reads it.
  auto directive = [&] {
    return shm::DecodeDirective(
        std::atomic_ref<uint64_t>(rank->segment->header()->directive)
            .load(std::memory_order_acquire));
  };
  EXPECT_EQ(directive().mode, shm::CaptureMode::kConfig);
  ASSERT_EQ(Tprobe("stop --wait"), 0);
  EXPECT_EQ(directive().mode, shm::CaptureMode::kPause);
  EXPECT_NE(ReadFile(DumpFile("dump.json")).find("Tensor.add.0.forward"),
            std::string::npos)
      << "stop --wait drains and writes what was captured before it answers";
  ASSERT_EQ(Tprobe("start --steps 3-5 --ranks 0"), 0);
  EXPECT_EQ(directive().mode, shm::CaptureMode::kCapture);
  EXPECT_EQ(directive().first_step, 3u);
  EXPECT_EQ(directive().last_step, 5u);
  ASSERT_EQ(Tprobe("start --steps 7-"), 0);
  EXPECT_EQ(directive().first_step, 7u);
  EXPECT_EQ(directive().last_step, shm::kOpenEnded);
  std::string output;
  EXPECT_EQ(Tprobe("start --ranks 2", &output), 3);
  EXPECT_NE(output.find("no registered rank matches --ranks 2 (registered "
                        "ranks: 0): nothing to start"),
            std::string::npos)
      << output;
  EXPECT_EQ(directive().first_step, 7u) << "a refused start changes nothing";
  EXPECT_EQ(Tprobe("start --steps 5-3", &output), 2);
  EXPECT_NE(output.find("bad --steps '5-3'"), std::string::npos) << output;
  EXPECT_EQ(Tprobe("start 3", &output), 2);
  EXPECT_NE(output.find("unexpected argument '3'"), std::string::npos);
}

TEST_F(ControlCommandsTest, EveryControlCommandPrintsOneJsonLine) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(0);
  ASSERT_NE(rank, nullptr);
  const std::string config = dir_.path() + "/live.json";
  std::ofstream(config) << ConfigJson(Dump(), "tensor", "L0");
  const std::pair<std::string, std::string> commands[] = {
      {"start", "start --steps 1-"},
      {"stop", "stop"},
      {"configure", "configure " + config},
      {"flush", "flush"},
      {"shutdown", "shutdown"}};
  for (const auto& [name, args] : commands) {
    std::string output;
    ASSERT_EQ(Tprobe(args + " --json", &output), 0) << args << ": " << output;
    EXPECT_EQ(output, R"({"command":")" + name +
                          R"(","ok":true,"ranks":1,"error":null})"
                          "\n");
  }
}

TEST_F(ControlCommandsTest, ShutdownMakesTheDaemonWriteAndExit) {
  ASSERT_TRUE(StartDaemon());
  auto rank = Rank(0);
  ASSERT_NE(rank, nullptr);
  ASSERT_EQ(Tprobe("shutdown"), 0);
  // It answers first, then writes and exits by itself (a zombie until
  // reaped; Terminate() then only collects its exit status).
  const std::string stat = "/proc/" + std::to_string(daemon_->pid()) + "/stat";
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string text = ReadFile(stat);
        return text.size() > text.rfind(')') + 2 &&
               text[text.rfind(')') + 2] == 'Z';
      },
      std::chrono::seconds(10)));
  EXPECT_FALSE(std::filesystem::exists(Socket()));
  EXPECT_NE(ReadFile(DumpFile("dump.json")).find("Tensor.add.0.forward"),
            std::string::npos);
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(ControlCommandsTest, TheSocketComesFromTprobeSocketWithoutTheFlag) {
  ASSERT_TRUE(StartDaemon());
  std::string output;
  EXPECT_EQ(testing::RunCommand("TPROBE_SOCKET=" + Socket() + " " +
                                    std::string(TPROBE_BIN) + " status",
                                &output),
            0)
      << output;
  EXPECT_NE(output.find(": 0 ranks"), std::string::npos) << output;
}

TEST_F(ControlCommandsTest, NoDaemonIsAClearErrorWithExitStatusOne) {
  std::string output;
  EXPECT_EQ(Tprobe("flush", &output), 1);
  EXPECT_EQ(output.rfind("tprobe flush: no tprobed answers on " + Socket(), 0),
            0u)
      << output;
  EXPECT_NE(output.find("pass --socket PATH"), std::string::npos);
}

TEST_F(ControlCommandsTest, BadCommandLinesExitTwo) {
  std::string output;
  EXPECT_EQ(Tprobe("configure", &output), 2);
  EXPECT_NE(output.find("tprobe configure: FILE is missing"),
            std::string::npos);
  // Only a rank's own connection closes its steps: no CLI command does.
  EXPECT_EQ(Tprobe("step 0", &output), 2);
  EXPECT_EQ(Tprobe("flush 3", &output), 2);
  EXPECT_NE(output.find("unexpected argument '3'"), std::string::npos);
  EXPECT_EQ(Tprobe("status --frobnicate", &output), 2);
  EXPECT_NE(output.find("unknown option '--frobnicate'"), std::string::npos);
}

TEST_F(ControlCommandsTest, EveryCommandHasHelpAndIsListed) {
  std::string overview;
  ASSERT_EQ(testing::RunCommand(std::string(TPROBE_BIN) + " --help", &overview),
            0);
  for (const char* command : {"status", "start", "stop", "configure", "flush",
                              "shutdown", "import"}) {
    EXPECT_NE(overview.find(std::string("\n  ") + command + " "),
              std::string::npos)
        << command << " is not listed:\n"
        << overview;
    std::string help;
    EXPECT_EQ(testing::RunCommand(
                  std::string(TPROBE_BIN) + " " + command + " --help", &help),
              0);
    EXPECT_EQ(help.rfind(std::string("Usage: tprobe ") + command, 0), 0u)
        << help;
    if (std::string_view(command) != "import") {
      EXPECT_NE(help.find("--socket PATH"), std::string::npos) << help;
    }
  }
}

}  // namespace
}  // namespace tprobe
