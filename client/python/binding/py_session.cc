// tprobe._C.Session's lifecycle, counters and config, and what its calls
// share (py_session.h).

#include "client/python/binding/py_session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "client/core.h"
#include "client/naming.h"
#include "client/python/binding/call_stack.h"
#include "client/python/binding/producer_stats.h"
#include "client/python/binding/value_encoder.h"
#include "common/config/config.h"

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

py::list ToList(const std::vector<std::string>& v) {
  py::list l;
  for (const auto& s : v) l.append(s);
  return l;
}

}  // namespace

PySession::PySession(const PySessionArgs& args) : encoding_(args.encoding) {
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
  session_ = std::move(created).value();
  FollowStatisticsOn(session_.get());
}

PySession::~PySession() { Release(); }

void PySession::Close() {
  GuardHook(hook_failures_, "Session.close", [&] {
    if (Py_IsInitialized() && !IsFinalizing()) {
      if (session_) FlushProducerStats();
      py::gil_scoped_release release;
      Release();
    } else {
      Release();
    }
  });
}

void PySession::Start() {
  Hook("Session.start", [&] {
    session_->Start();
    FollowStatisticsOn(session_.get());
  });
}

void PySession::Stop() {
  Hook("Session.stop", [&] { session_->Stop(); });
}

// The statistics handed to the framework's hook are in the rings first, so
// the step's cut covers them: the one wait of the producer path, per step,
// never per tensor.
void PySession::Step() {
  Hook("Session.step", [&] {
    FlushProducerStats();
    session_->Step();
    FollowStatisticsOn(session_.get());
  });
}

void PySession::SetStep(uint32_t step) {
  Hook("Session.set_step", [&] { session_->SetStep(step); });
}

void PySession::DumpAloneAtL1(const std::string& base) {
  Hook("Session.dump_alone_at_l1", [&] { session_->DumpAloneAtL1(base); });
}

void PySession::NoteNoModel() {
  Hook("Session.note_no_model", [&] { session_->NoteNoModel(); });
}

std::string PySession::Configure(const std::string& config_path) {
  return Hook(
      "Session.configure",
      [&] {
        py::gil_scoped_release release;  // waits for the daemon's answer
        const Status s = session_->Configure(config_path);
        return s.ok() ? std::string() : s.message();
      },
      std::string("tprobe could not take the config up"));
}

void PySession::BeginGroup(const std::string& name) {
  Hook("Session.begin_group", [&] { session_->BeginGroup(name); });
}

void PySession::EndGroup() {
  Hook("Session.end_group", [&] { session_->EndGroup(); });
}

bool PySession::Flush(int timeout_ms) {
  return Hook(
      "Session.flush",
      [&] {
        py::gil_scoped_release release;
        return session_->Flush(timeout_ms);
      },
      false);
}

py::dict PySession::counters() const {
  py::dict d;
  uint64_t written = 0, no_daemon = 0, ring_full = 0, too_large = 0;
  if (session_) {
    client::Core& core = session_->core();
    written = core.records_written();
    no_daemon = core.dropped_no_daemon();
    ring_full = core.dropped(shm::DropReason::kRingFull);
    too_large = core.dropped(shm::DropReason::kTooLarge);
  }
  d["records_written"] = written;
  d["dropped_no_daemon"] = no_daemon;
  d["dropped_ring_full"] = ring_full;
  d["dropped_too_large"] = too_large;
  d["hook_failures"] = hook_failures_.load(std::memory_order_relaxed) +
                       UnattributedFailures().load(std::memory_order_relaxed);
  d["producer_stats_failures"] = ProducerStatsFailures();
  return d;
}

size_t PySession::WriteProducerStatsFromHere(py::bytes values,
                                             py::bytes places) {
  if (!session_) return 0;
  char* vp = nullptr;
  char* pp = nullptr;
  Py_ssize_t vn = 0;
  Py_ssize_t pn = 0;
  if (PyBytes_AsStringAndSize(values.ptr(), &vp, &vn) != 0 ||
      PyBytes_AsStringAndSize(places.ptr(), &pp, &pn) != 0) {
    PyErr_Clear();
    return 0;
  }
  const std::string_view v(vp, static_cast<size_t>(vn));
  const std::string_view p(pp, static_cast<size_t>(pn));
  py::gil_scoped_release release;
  return WriteProducerStats(session_->core(), v, p);
}

// `copies` holds (address, size) of host memory the caller keeps alive for
// the call.
size_t PySession::WriteProducerBytesFromHere(const py::list& copies,
                                             py::bytes places) {
  if (!session_) return 0;
  std::vector<HostBytes> host;
  host.reserve(copies.size());
  for (py::handle copy : copies) {
    const auto pair = py::cast<py::tuple>(copy);
    if (pair.size() != 2) throw py::value_error("copies: (address, size)");
    host.push_back({reinterpret_cast<const void*>(py::cast<uintptr_t>(pair[0])),
                    py::cast<size_t>(pair[1])});
  }
  const std::string_view p = places;
  py::gil_scoped_release release;
  return WriteProducerBytes(session_->core(), host, p);
}

bool PySession::collecting() const {
  return session_ && session_->collecting();
}

bool PySession::Selects(int64_t step) const {
  if (!session_) return false;
  const config::Config& config = session_->config();
  return config::StepSelected(config, step) &&
         config::RankSelected(config, session_->rank());
}

bool PySession::connected() const { return session_ && session_->connected(); }
int64_t PySession::step() const { return session_ ? session_->step() : 0; }
int PySession::rank() const { return session_ ? session_->rank() : -1; }

std::string PySession::level() const {
  return session_ ? std::string(config::LevelName(session_->config().level))
                  : std::string();
}

std::string PySession::task() const {
  return session_ ? std::string(config::TaskName(session_->config().task))
                  : std::string();
}

py::object PySession::last_step() const {
  if (!session_ || session_->core().directive() != 0) return py::none();
  auto last = config::LastStep(session_->config());
  return last ? py::object(py::int_(*last)) : py::object(py::none());
}

std::string PySession::dump_path() const {
  return session_ ? session_->config().dump_path : std::string();
}

py::list PySession::scope() const {
  return ToList(session_ ? session_->config().scope : config::Config().scope);
}

py::list PySession::name_list() const {
  return ToList(session_ ? session_->config().list : config::Config().list);
}

py::dict PySession::data_mode() const {
  py::dict d;
  const config::DataMode m =
      session_ ? session_->config().data_mode : config::DataMode();
  d["forward"] = m.forward;
  d["backward"] = m.backward;
  d["input"] = m.input;
  d["output"] = m.output;
  return d;
}

py::handle PySession::NoEntry() {
  static PyObject* marker =
      PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return marker;
}

void PySession::EncodeInto(client::EntryBuilder& entry, py::handle obj,
                           record::ValueWriter& out) {
  EncodeValue(entry, obj, out, encoding_, hook_failures_);
}

void PySession::EncodeOutput(client::EntryBuilder& entry, py::handle output,
                             record::ValueWriter& out) {
  if (PyList_Check(output.ptr()) || PyTuple_Check(output.ptr())) {
    EncodeInto(entry, output, out);
  } else {
    out.BeginList();
    EncodeInto(entry, output, out);
    out.End();
  }
}

void PySession::EncodeAhead(py::handle value, std::string* bytes) {
  record::ValueWriter out(bytes);
  if (!session_ || !session_->core().attached()) {
    out.Null();
    return;
  }
  client::EntryBuilder entry(session_->core());
  EncodeInto(entry, value, out);
}

void PySession::TakeOrEncode(client::EntryBuilder& entry, py::handle value,
                             record::ValueWriter& out) {
  if (py::isinstance<Encoded>(value)) {
    out.Raw(value.cast<Encoded&>().bytes);
  } else {
    EncodeInto(entry, value, out);
  }
}

void PySession::WriteBackward(const client::CallPlan& plan, py::handle input,
                              py::handle output) {
  if (!plan.entry()) return;
  client::EntryBuilder entry(session_->core());
  if (plan.input && !input.is(NoEntry())) {
    EncodeInto(entry, input, entry.Whole(client::Part::kInput));
  }
  if (plan.output && !output.is(NoEntry())) {
    EncodeInto(entry, output, entry.Whole(client::Part::kOutput));
  }
  if (entry.empty()) return;
  session_->WriteEntry(plan, 0, entry);
}

uint32_t PySession::CapturedStackId() {
  std::shared_ptr<const Stack> stack = CaptureStack();
  return stack ? stack->text.Intern(session_->core()) : 0;
}

uint32_t PySession::StackId(py::handle stack) {
  if (stack.is_none()) return 0;
  client::StackText text;
  for (py::handle line : stack) {
    std::string_view view;
    if (Text(line, &view)) {
      text.Add(view);
    } else {
      text.Add(line.cast<std::string>());
    }
  }
  return text.Intern(session_->core());
}

py::object PySession::Handle(client::CallPlan&& plan) const {
  Call call;
  call.owner = this;
  Plan(std::move(plan), &call);
  return py::cast(std::move(call));
}

void PySession::Plan(client::CallPlan&& plan, ApiCall* call) const {
  call->entry = plan.entry() || plan.stack();
  call->input = plan.input;
  call->backward = session_->WantsBackward();
  call->plan = std::move(plan);
}

Call* PySession::Open(py::handle handle) const {
  if (!session_ || !py::isinstance<Call>(handle)) return nullptr;
  Call& call = handle.cast<Call&>();
  return call.open && call.owner == this ? &call : nullptr;
}

void PySession::Release() {
  if (!session_) return;
  FollowStatisticsOn(nullptr);
  if (client::InForkedChild()) {
    // The parent's control thread does not exist here: never wait on it.
    (void)session_.release();
    return;
  }
  session_.reset();
}

bool Text(py::handle obj, std::string_view* out) {
  if (!PyUnicode_Check(obj.ptr())) return false;
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    return false;
  }
  *out = std::string_view(data, static_cast<size_t>(size));
  return true;
}

}  // namespace tprobe::python
