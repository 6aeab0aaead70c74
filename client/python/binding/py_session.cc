// tprobe._C.Session's lifecycle and counters, and its parts put together
// (py_session.h).

#include "client/python/binding/py_session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "client/exception_boundary.h"
#include "client/python/binding/call_stack.h"
#include "client/python/binding/producer_stats.h"
#include "client/recorder.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// tprobed beside this module when nothing names one: bin/tprobed inside the
// package (a wheel), or the build tree's bin/tprobed (python/tprobe/../../bin).
std::string DaemonBesideModule() {
  if (const char* env = std::getenv("TPROBED"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&DaemonBesideModule), &info) == 0 ||
      info.dli_fname == nullptr) {
    return std::string();
  }
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.rfind('/') + 1);
  for (const char* rel : {"bin/tprobed", "../../bin/tprobed"}) {
    const std::string candidate = dir + rel;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::string();
}

// The client session `args` describe, connected; raises ValueError for a
// bad config.
std::unique_ptr<client::Session> Connect(const PySessionArgs& args) {
  client::SessionOptions options;
  options.framework = args.framework;
  options.risk_level_applies = args.risk_level_applies;
  options.config_path = args.config_path;
  options.dump_path = args.dump_path;
  options.socket_path = args.socket_path;
  options.rank = args.rank;
  options.autostart_daemon = args.autostart_daemon;
  options.daemon_path = args.daemon_path.empty() && args.autostart_daemon
                            ? DaemonBesideModule()
                            : args.daemon_path;
  options.connect_timeout_ms = args.connect_timeout_ms;
  Result<std::unique_ptr<client::Session>> created =
      Status::Error("not created");
  {
    py::gil_scoped_release release;  // connecting may take a while
    created = client::Session::Create(options);
  }
  if (!created.ok()) throw py::value_error(created.status().message());
  return std::move(created).value();
}

}  // namespace

PySession::PySession(const PySessionArgs& args)
    : session_(Connect(args)),
      values_(session_, args.encoding),
      modules_(session_, values_),
      api_(session_, values_),
      config_(session_) {
  FollowStatisticsOn(session_.get());
}

void PySession::Close() {
  GuardHook(session_.failures(), "Session.close", [&] {
    if (Py_IsInitialized() && !IsFinalizing()) {
      ForgetCapturedFrame();
      if (session_.get() != nullptr) FlushProducerStats();
      py::gil_scoped_release release;
      session_.Release();
    } else {
      session_.Release();
    }
  });
}

void PySession::Start() {
  session_.Hook("Session.start", [&](client::Session& session) {
    session.Start();
    FollowStatisticsOn(&session);
  });
}

void PySession::Stop() {
  ForgetCapturedFrame();
  session_.Hook("Session.stop",
                [&](client::Session& session) { session.Stop(); });
}

// The statistics handed to the framework's hook are in the rings first, so
// the step's cut covers them: the one wait of the producer path, per step,
// never per tensor.
void PySession::Step() {
  ForgetCapturedFrame();
  session_.Hook("Session.step", [&](client::Session& session) {
    FlushProducerStats();
    session.Step();
    FollowStatisticsOn(&session);
  });
}

bool PySession::StartIfSelected(bool selected) {
  return session_.Hook(
      "Session.start",
      [&](client::Session& session) {
        return session.StartIfSelected(selected);
      },
      false);
}

// As Step(); the config stays, so the statistics mode does too.
bool PySession::StepIfStopped() {
  ForgetCapturedFrame();
  return session_.Hook(
      "Session.step",
      [](client::Session& session) {
        FlushProducerStats();
        return session.StepIfStopped();
      },
      false);
}

const void* PySession::ConfigIdentity() const {
  const client::Session* session = session_.get();
  return session != nullptr ? &session->config() : nullptr;
}

void PySession::SetStep(uint32_t step) {
  session_.Hook("Session.set_step",
                [&](client::Session& session) { session.SetStep(step); });
}

void PySession::DumpAloneAtL1(const std::string& base) {
  session_.Hook("Session.dump_alone_at_l1",
                [&](client::Session& session) { session.DumpAloneAtL1(base); });
}

void PySession::NoteNoModel() {
  session_.Hook("Session.note_no_model",
                [&](client::Session& session) { session.NoteNoModel(); });
}

std::string PySession::Configure(const std::string& config_path) {
  return session_.Hook(
      "Session.configure",
      [&](client::Session& session) {
        py::gil_scoped_release release;  // waits for the daemon's answer
        const Status s = session.Configure(config_path);
        return s.ok() ? std::string() : s.message();
      },
      std::string("tprobe could not take the config up"));
}

void PySession::BeginGroup(const std::string& name) {
  session_.Hook("Session.begin_group",
                [&](client::Session& session) { session.BeginGroup(name); });
}

void PySession::EndGroup() {
  session_.Hook("Session.end_group",
                [&](client::Session& session) { session.EndGroup(); });
}

bool PySession::Flush(int timeout_ms) {
  return session_.Hook(
      "Session.flush",
      [&](client::Session& session) {
        py::gil_scoped_release release;
        return session.Flush(timeout_ms);
      },
      false);
}

py::dict PySession::counters() const {
  py::dict d;
  uint64_t written = 0, no_daemon = 0, ring_full = 0, too_large = 0;
  if (client::Session* session = session_.get()) {
    client::Recorder& core = session->recorder();
    written = core.records_written();
    no_daemon = core.dropped_no_daemon();
    ring_full = core.dropped(shm::DropReason::kRingFull);
    too_large = core.dropped(shm::DropReason::kTooLarge);
  }
  d["records_written"] = written;
  d["dropped_no_daemon"] = no_daemon;
  d["dropped_ring_full"] = ring_full;
  d["dropped_too_large"] = too_large;
  // With the library's: an exception it stopped inside a hook's call
  // (client/exception_boundary.h) skipped that call too.
  d["hook_failures"] = session_.failures().load(std::memory_order_relaxed) +
                       UnattributedFailures().load(std::memory_order_relaxed) +
                       client::StoppedExceptions();
  d["producer_stats_failures"] = ProducerStatsFailures();
  return d;
}

bool PySession::collecting() const {
  const client::Session* session = session_.get();
  return session != nullptr && session->collecting();
}

bool PySession::connected() const {
  const client::Session* session = session_.get();
  return session != nullptr && session->connected();
}

int64_t PySession::step() const {
  const client::Session* session = session_.get();
  return session != nullptr ? session->step() : 0;
}

int PySession::rank() const {
  const client::Session* session = session_.get();
  return session != nullptr ? session->rank() : -1;
}

}  // namespace tprobe::python
