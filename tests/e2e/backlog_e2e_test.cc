// End to end: a rank that runs far ahead of its daemon. The real C++
// example at full speed into a real tprobed with a low --max-open-steps:
// the daemon's open files and memory stay flat (the drain stops reading
// ahead, the rank's rings fill and its full-ring policy applies), every step
// reaches the disk with its accounting, no journal or empty folder is left,
// and SIGTERM ends the daemon promptly.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/support/daemon_process.h"
#include "tests/support/daemon_test.h"
#include "tests/support/sanitizers.h"

namespace tprobe {
namespace {

using testing::ReadFile;
using testing::RunCommand;
namespace fs = std::filesystem;

constexpr int kSteps = 6000;

// Under ASan only the descriptors are checked (tests/support/sanitizers.h).
constexpr bool kRssMeans = !testing::kAddressSanitizer;

long OpenFds(pid_t pid) {
  long n = 0;
  std::error_code ec;
  for (auto it =
           fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

long RssKb(pid_t pid) {
  std::istringstream status(
      ReadFile("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// The C++ example at full speed, in a thread, into a real tprobed with
// --max-open-steps 4.
class BacklogE2eTest : public testing::DaemonTest {
 protected:
  void SetUp() override {
    daemon_.emplace(
        std::vector<std::string>{TPROBED_PATH, "--socket", Socket(),
                                 "--foreground", "--max-open-steps", "4"},
        Socket());
    ASSERT_TRUE(daemon_->started());
    std::ofstream(config_) << R"({"task": "statistics", "dump_path": ")"
                           << dir_.path()
                           << R"(/dump", "rank": [], "step": [], )"
                           << R"("level": "mix"})";
  }
  void TearDown() override {
    if (rank_.joinable()) rank_.join();
  }

  // Starts the rank for `steps` steps and waits for the warm-up: it has
  // registered and its first steps are written (or it ended).
  void StartRank(int steps) {
    rank_ = std::thread([this, steps] {
      rc_ = RunCommand(std::string(EXAMPLE_PATH) + " --config " + config_ +
                           " --socket " + Socket() + " --steps " +
                           std::to_string(steps),
                       &out_);
      done_ = true;
    });
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done_ && !fs::exists(dir_.path() + "/dump/step20") &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  const std::string config_ = dir_.path() + "/config.json";
  std::thread rank_;
  std::atomic<bool> done_{false};
  int rc_ = -1;
  std::string out_;
};

TEST_F(BacklogE2eTest, AFastRankKeepsTheDaemonsFilesAndMemoryFlat) {
  StartRank(kSteps);
  const long fds_warm = OpenFds(daemon_->pid());
  const long rss_warm = RssKb(daemon_->pid());
  long fds_max = fds_warm;
  long rss_max = rss_warm;
  while (!done_) {
    fds_max = std::max(fds_max, OpenFds(daemon_->pid()));
    rss_max = std::max(rss_max, RssKb(daemon_->pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  rank_.join();
  ASSERT_EQ(rc_, 0) << out_;

  // Without the bound, each open step held a journal descriptor and its
  // tree: thousands of each within seconds.
  EXPECT_LE(fds_max, fds_warm + 4) << "open files grew under the backlog";
  if (kRssMeans) {
    EXPECT_LE(rss_max - rss_warm, 32 * 1024)
        << "daemon memory grew under the backlog: " << rss_warm << " kB -> "
        << rss_max << " kB";
  }

  const auto term = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon_->Terminate(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - term, std::chrono::seconds(10));

  // The rank's own count, as the example prints it.
  const size_t at = out_.find("ring full ");
  ASSERT_NE(at, std::string::npos) << out_;
  const uint64_t rank_ring_full =
      std::strtoull(out_.c_str() + at + 10, nullptr, 10);
  int steps = 0;
  uint64_t ring_full = 0;
  for (const auto& step : fs::directory_iterator(dir_.path() + "/dump")) {
    ++steps;
    const fs::path rank_dir = step.path() / "rank";
    EXPECT_FALSE(fs::exists(rank_dir / "tprobe.journal")) << step.path();
    for (const char* file :
         {"dump.json", "stack.json", "construct.json", "tprobe.json"}) {
      ASSERT_TRUE(fs::exists(rank_dir / file)) << rank_dir / file;
    }
    const auto accounting =
        nlohmann::json::parse(ReadFile(rank_dir / "tprobe.json"));
    const auto& records = accounting.at("records");
    uint64_t dropped = 0;
    for (const auto& [reason, n] : records.at("dropped").items()) {
      dropped += n.get<uint64_t>();
    }
    EXPECT_EQ(records.at("produced").get<uint64_t>(),
              records.at("written").get<uint64_t>() + dropped)
        << step.path();
    ring_full += records.at("dropped").at("ring_full").get<uint64_t>();
  }
  EXPECT_EQ(steps, kSteps);
  EXPECT_EQ(ring_full, rank_ring_full) << "drops in no step's tprobe.json";
  // Every file parses, and each step's accounting balances: what was
  // produced was written or counted as dropped.
  ASSERT_EQ(RunCommand(std::string(TPROBE_PYTHON) + " " + TPROBE_SOURCE_DIR +
                           "/tests/e2e/check_tree.py " + dir_.path() + "/dump",
                       &out_),
            0)
      << out_;
}

// Control never waits behind a rank's backlog: `tprobe stop` and `start`
// answer at once while the rank is thousands of records ahead of its daemon;
// `stop --wait` answers once the captured steps are on disk.
TEST_F(BacklogE2eTest, StopAndStartAnswerAtOnceUnderABacklog) {
  StartRank(1000000);
  ASSERT_FALSE(done_) << out_;
  auto timed = [&](const std::string& command, std::string* output) {
    const auto start = std::chrono::steady_clock::now();
    const int status = RunCommand(
        std::string(TPROBE_BIN) + " " + command + " --socket " + Socket(),
        output);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    return std::pair<int, long>(status, static_cast<long>(ms));
  };
  std::string output;
  // 1 s is generous: the daemon answers on its control thread without
  // touching the rank's pipeline; the rest is starting the CLI.
  auto [stop_rc, stop_ms] = timed("stop", &output);
  EXPECT_EQ(stop_rc, 0) << output;
  EXPECT_LT(stop_ms, 1000) << "tprobe stop waited on the backlog";
  auto [start_rc, start_ms] = timed("start", &output);
  EXPECT_EQ(start_rc, 0) << output;
  EXPECT_LT(start_ms, 1000) << "tprobe start waited on the backlog";
  auto [wait_rc, wait_ms] = timed("stop --wait --timeout 60", &output);
  EXPECT_EQ(wait_rc, 0) << output;
  RecordProperty("stop_ms", static_cast<int>(stop_ms));
  RecordProperty("stop_wait_ms", static_cast<int>(wait_ms));
  // Stopped: the rank runs on without capturing; end it.
  ASSERT_EQ(RunCommand(
                std::string(TPROBE_BIN) + " status --json --socket " + Socket(),
                &output),
            0)
      << output;
  const nlohmann::json status = nlohmann::json::parse(output);
  for (const auto& r : status.at("ranks")) {
    ::kill(r.at("pid").get<pid_t>(), SIGTERM);
  }
  rank_.join();
  EXPECT_EQ(daemon_->Terminate(), 0);
}

}  // namespace
}  // namespace tprobe
