#include "daemon/drain_worker.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "daemon/logger.h"
#include "tests/daemon/ring_records.h"
#include "tests/daemon/test_producer.h"
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

// CPU time (user + system) this process has used.
std::chrono::microseconds ProcessCpu() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return std::chrono::seconds(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         std::chrono::microseconds(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

class DrainWorkerTest : public ::testing::Test {
 protected:
  ~DrainWorkerTest() override {
    for (const auto& p : registry_.Snapshot()) {
      shm::Segment::Remove(p->segment_name());
    }
  }
  std::shared_ptr<Producer> AddProducer(uint64_t id) {
    auto created = Producer::Create(id, testing::Self(),
                                    MakeRegister(ConfigJson(dir_.path())));
    EXPECT_TRUE(created.ok()) << created.status().message();
    std::shared_ptr<Producer> p = std::move(created).value();
    registry_.Add(p);
    return p;
  }
  static testing::RecordWriter Writer(const Producer& p) {
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
  // The idle sleep is at most max_idle_sleep (2 ms); allow scheduling noise.
  EXPECT_LT(Clock::now() - written, std::chrono::milliseconds(100));
}

TEST_F(DrainWorkerTest, AnIdleWorkerUsesAlmostNoCpu) {
  DrainWorker worker(registry_, log_);
  worker.Start();
  // No producer: the worker blocks.
  auto before = ProcessCpu();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_LT(ProcessCpu() - before, std::chrono::milliseconds(10));
  // A producer with nothing to read: the worker backs off to sleeps of a
  // few ms (the old fixed 200 us poll used ~8 % of a core).
  auto p = AddProducer(9003);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  before = ProcessCpu();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LT(ProcessCpu() - before, std::chrono::milliseconds(20));
}

TEST_F(DrainWorkerTest, StopReturnsPromptlyWhileBlocked) {
  DrainWorker worker(registry_, log_);
  worker.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto start = Clock::now();
  worker.Stop();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace tprobe::daemon
