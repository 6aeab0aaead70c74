#include "daemon/ingest/drain_worker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "daemon/process/logger.h"
#include "tests/daemon/ring_records.h"
#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"

namespace tprobe::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ConfigJson;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::TempDir;

template <typename F>
bool WaitFor(F condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

class DrainWorkerTest : public ::testing::Test {
 protected:
  std::shared_ptr<Rank> AddProducer(uint64_t id) {
    auto created = Rank::Create(id, testing::Self(),
                                MakeRegister(ConfigJson(dir_.path())));
    EXPECT_TRUE(created.ok()) << created.status().message();
    std::shared_ptr<Rank> p = std::move(created).value();
    registry_.Add(p);
    return p;
  }
  static testing::RecordWriter Writer(const Rank& p) {
    return testing::RecordWriter(p.segment().ring_header(0),
                                 p.segment().ring_data(0));
  }

  TempDir dir_;
  Registry registry_;
  Logger log_ = MakeLogger(spdlog::level::off);
};

TEST_F(DrainWorkerTest, AProducerRegisteredWhileTheWorkerWaitsIsDrained) {
  DrainWorker worker(registry_, log_);
  worker.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it block
  auto p = AddProducer(9001);
  auto w = Writer(*p);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward"));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({})}})));
  EXPECT_TRUE(WaitFor([&] { return p->Counters().fill_bytes == 0; },
                      std::chrono::seconds(5)));
  worker.Stop();
  EXPECT_EQ(p->Lock()->assembler.Tree(0)->accounting().entries, 1u);
}

TEST_F(DrainWorkerTest, RecordsWrittenAfterAnIdlePeriodAreDrainedPromptly) {
  auto p = AddProducer(9002);
  DrainWorker worker(registry_, log_);
  worker.Start();
  // Long enough for the idle sleep to reach its maximum.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto w = Writer(*p);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Tensor.add.0.forward"));
  const auto written = Clock::now();
  EXPECT_TRUE(WaitFor([&] { return p->Counters().fill_bytes == 0; },
                      std::chrono::seconds(5)));
  // The idle sleep is at most max_idle_sleep (2 ms); the bound is loose so
  // that only a worker that blocks instead of polling can miss it.
  EXPECT_LT(Clock::now() - written, std::chrono::seconds(3));
}

TEST_F(DrainWorkerTest, AnIdleWorkerUsesAlmostNoCpu) {
  // Two threads, each polling at most every max_idle_sleep (2 ms) when idle.
  DrainWorker worker(registry_, log_, DrainWorkerOptions{.threads = 2});
  worker.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // No producer: the workers block, neither waking nor spinning.
  auto before = testing::CostOf(::getpid());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto after = testing::CostOf(::getpid());
  EXPECT_LT(after.sleeps - before.sleeps, 50);
  EXPECT_LT(after.cpu - before.cpu, std::chrono::milliseconds(250));
  // A producer with nothing to read: the workers back off to sleeps of
  // max_idle_sleep, at most 2 x 500 wake-ups in a second (the old fixed
  // 200 us poll made 10000), and no spin.
  auto p = AddProducer(9003);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  before = testing::CostOf(::getpid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  after = testing::CostOf(::getpid());
  EXPECT_LT(after.sleeps - before.sleeps, 1500);
  EXPECT_LT(after.cpu - before.cpu, std::chrono::milliseconds(500));
}

TEST_F(DrainWorkerTest, StopReturnsPromptlyWhileBlocked) {
  DrainWorker worker(registry_, log_);
  worker.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto start = Clock::now();
  worker.Stop();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace tprobe::daemon
