// No exception leaves libtprobe through a function tprobe._C calls
// (client/exception_boundary.h). Each such function is checked to be
// noexcept at compile time; a few are then made to fail for real, with an
// operator new that this binary replaces and that throws std::bad_alloc
// once when armed, and must skip the call, count it and say it on stderr.

#include "client/exception_boundary.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "client/entry_builder.h"
#include "client/naming.h"
#include "client/recorder.h"
#include "client/risk_level.h"
#include "client/session.h"
#include "common/config/config.h"

namespace {

// Armed: the next allocation on any thread throws, once.
bool g_fail_next = false;

}  // namespace

void* operator new(size_t size) {
  if (g_fail_next) {
    g_fail_next = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace tprobe::client {
namespace {

// Every function libtprobe exports that tprobe._C imports (`nm -DuC` of
// _C), as _C calls it.
template <typename T>
T& Some() noexcept;
static_assert(noexcept(Session::Create(Some<const SessionOptions>())));
static_assert(noexcept(Some<Session>().Start()));
static_assert(noexcept(Some<Session>().Stop()));
static_assert(noexcept(Some<Session>().Step(0)));
static_assert(noexcept(Some<Session>().SetStep(0)));
static_assert(noexcept(Some<Session>().Configure(Some<const std::string>())));
static_assert(noexcept(Some<Session>().BeginModule("", true, 0, nullptr)));
static_assert(noexcept(Some<Session>().BeginApi("", true, 0, nullptr)));
static_assert(noexcept(Some<Session>().BeginParamGrad("", "", nullptr)));
static_assert(noexcept(Some<Session>().ReserveParamGrad("")));
static_assert(noexcept(Some<Session>().CheckEnd(nullptr)));
static_assert(noexcept(Some<Session>().EndCall(Some<const CallPlan>())));
static_assert(noexcept(Some<Session>().DumpAloneAtL1(std::string())));
static_assert(noexcept(Some<Session>().WriteEntry(Some<const CallPlan>(), 0,
                                                  Some<EntryBuilder>())));
static_assert(noexcept(Some<Session>().Flush(0)));
static_assert(noexcept(Some<Session>().BeginGroup("")));
static_assert(noexcept(Some<Session>().EndGroup()));
static_assert(std::is_nothrow_destructible_v<Session>);
static_assert(noexcept(Some<Recorder>().Intern(record::InternKind{}, "")));
static_assert(noexcept(Some<Recorder>().WriteTensorAwaitingStats(
    0, TensorType{}, {}, false, 0, false)));
static_assert(noexcept(Some<Recorder>().WriteProducerStats(
    Some<const RingSlot>(), Some<const record::ProducerStatsRecord>())));
static_assert(noexcept(Some<Recorder>().WriteProducerBytes(
    Some<const RingSlot>(), 0, 0, nullptr, 0)));
static_assert(noexcept(Some<const Recorder>().records_written()));
static_assert(noexcept(Some<const Recorder>().dropped_no_daemon()));
static_assert(noexcept(Some<const Recorder>().dropped(shm::DropReason{})));
static_assert(noexcept(Some<EntryBuilder>().Open(Part{})));
static_assert(noexcept(Some<EntryBuilder>().Whole(Part{})));
static_assert(noexcept(Some<const EntryBuilder>().empty()));
static_assert(noexcept(Some<EntryBuilder>().Write(0, 0, 0)));
static_assert(noexcept(Some<EntryBuilder>().Tensor(Some<record::ValueWriter>(),
                                                   TensorType{}, {}, false,
                                                   nullptr, 0)));
static_assert(noexcept(NextTensorRef()));
static_assert(noexcept(InForkedChild()));
static_assert(noexcept(ModuleBase(ModuleStyle{}, "", "")));
static_assert(noexcept(ApiBase("", "")));
static_assert(noexcept(RiskOfApi("")));
static_assert(noexcept(config::LoadConfigFile(Some<const std::string>())));
static_assert(noexcept(config::StepSelected(Some<const config::Config>(), 0)));
static_assert(noexcept(config::RankSelected(Some<const config::Config>(), 0)));
static_assert(noexcept(config::LastStep(Some<const config::Config>())));
static_assert(noexcept(config::TaskName(config::Task{})));
static_assert(noexcept(config::LevelName(config::Level{})));

TEST(ExceptionBoundaryTest, AFailedAllocationSkipsTheCallAndIsCounted) {
  const uint64_t before = StoppedExceptions();
  testing::internal::CaptureStderr();
  g_fail_next = true;
  const std::string base = ModuleBase(ModuleStyle::kModule, "layer1", "Conv");
  g_fail_next = false;
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(base, "");
  EXPECT_EQ(StoppedExceptions(), before + 1);
  EXPECT_NE(err.find("tprobe: ModuleBase failed (std::bad_alloc)"),
            std::string::npos)
      << err;
  // The next call, with memory, works.
  EXPECT_EQ(ModuleBase(ModuleStyle::kModule, "layer1", "Conv"),
            "Module.layer1.Conv");
}

TEST(ExceptionBoundaryTest, AConfigThatCannotBeReadIsAnErrorNotAThrow) {
  const std::string path = ::testing::TempDir() + "/boundary_config.json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"task": "statistics", "level": "L1"})", f);
  std::fclose(f);
  ASSERT_TRUE(config::LoadConfigFile(path).ok());
  g_fail_next = true;
  const Result<config::Config> loaded = config::LoadConfigFile(path);
  g_fail_next = false;
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(path), std::string::npos);
  EXPECT_NE(loaded.status().message().find("bad_alloc"), std::string::npos)
      << loaded.status().message();
}

TEST(ExceptionBoundaryTest, ASessionThatCannotBeMadeIsAnError) {
  SessionOptions options;
  options.socket_path = ::testing::TempDir() + "/no-daemon.sock";
  options.connect_timeout_ms = 0;
  testing::internal::CaptureStderr();
  g_fail_next = true;
  Result<std::unique_ptr<Session>> session = Session::Create(options);
  g_fail_next = false;
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(session.ok());
  EXPECT_NE(err.find("Session::Create failed"), std::string::npos) << err;
}

}  // namespace
}  // namespace tprobe::client
