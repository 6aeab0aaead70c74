// tprobe._C.Session, Call and Encoded (session_binding.h).

#include "client/python/session_binding.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/core.h"
#include "client/entry_builder.h"
#include "client/naming.h"
#include "client/python/call_stack.h"
#include "client/python/producer_stats.h"
#include "client/python/type_discovery.h"
#include "client/python/value_encoder.h"
#include "client/session.h"
#include "common/record/record.h"
#include "common/record/writer.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

using client::Part;
using record::ValueWriter;

class PySession;

// One open call, the handle that Session.*_begin returns and the matching
// *_end takes back: the session's plan of the call, kept as it is (its
// name made and interned once), and what the hooks ask of it.
struct Call : ApiCall {
  const PySession* owner = nullptr;
  bool open = true;  // *_end not yet called
};

// A value encoded ahead of its entry (Session.encode): an API's inputs must
// be captured before the API runs, since in-place APIs change them.
struct Encoded {
  std::string bytes;  // one value (record::ValueWriter)
};

// The UTF-8 text of a str (no copy: CPython caches it), or false for any
// other object.
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

// The Python-facing session.
class PySession final : public ApiSession {
 public:
  PySession(const std::string& config_path, const std::string& dump_path,
            const std::string& socket_path, int rank, bool autostart_daemon,
            const std::string& daemon_path, int connect_timeout_ms,
            const std::string& framework)
      : framework_(framework == "mindspore" ? Framework::kMindSpore
                                            : Framework::kPyTorch) {
    if (framework != "pytorch" && framework != "mindspore") {
      throw py::value_error(
          "framework must be \"pytorch\" or \"mindspore\", not \"" + framework +
          "\"");
    }
    client::SessionOptions options;
    options.framework = framework;
    options.config_path = config_path;
    options.dump_path = dump_path;
    options.socket_path = socket_path;
    options.rank = rank;
    options.autostart_daemon = autostart_daemon;
    options.daemon_path = daemon_path.empty() && autostart_daemon
                              ? DaemonBesideModule()
                              : daemon_path;
    options.connect_timeout_ms = connect_timeout_ms;
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

  ~PySession() { Release(); }

  // Says goodbye to the daemon (bounded wait) and frees the session.
  void Close() {
    try {
      if (Py_IsInitialized() && !IsFinalizing()) {
        if (session_) FlushProducerStats();
        py::gil_scoped_release release;
        Release();
      } else {
        Release();
      }
    } catch (...) {
      Swallowed(__func__);
    }
  }

  void Start() {
    Guard(__func__, [&] {
      session_->Start();
      FollowStatisticsOn(session_.get());
    });
  }
  void Stop() {
    Guard(__func__, [&] { session_->Stop(); });
  }
  // The statistics handed to the framework's hook are in the rings first,
  // so the step's cut covers them: the one wait of the producer path, per
  // step, never per tensor.
  void Step() {
    Guard(__func__, [&] {
      FlushProducerStats();
      session_->Step();
      FollowStatisticsOn(session_.get());
    });
  }
  // From the adapter's statistics thread (producer_stats.h).
  size_t WriteProducerStatsFromHere(py::bytes values, py::bytes places) {
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
  // From the adapter's statistics thread: `copies` holds (address, size)
  // of host memory the caller keeps alive for the call.
  size_t WriteProducerBytesFromHere(const py::list& copies, py::bytes places) {
    if (!session_) return 0;
    std::vector<HostBytes> host;
    host.reserve(copies.size());
    for (py::handle copy : copies) {
      const auto pair = py::cast<py::tuple>(copy);
      if (pair.size() != 2) throw py::value_error("copies: (address, size)");
      host.push_back(
          {reinterpret_cast<const void*>(py::cast<uintptr_t>(pair[0])),
           py::cast<size_t>(pair[1])});
    }
    const std::string_view p = places;
    py::gil_scoped_release release;
    return WriteProducerBytes(session_->core(), host, p);
  }
  void SetStep(uint32_t step) {
    Guard(__func__, [&] { session_->SetStep(step); });
  }
  void BeginGroup(const std::string& name) {
    Guard(__func__, [&] { session_->BeginGroup(name); });
  }
  void EndGroup() {
    Guard(__func__, [&] { session_->EndGroup(); });
  }

  bool collecting() const { return session_ && session_->collecting(); }
  // Whether the config's step and rank lists take `step` of this rank
  // (PrecisionDebugger.save(), which needs no start()).
  bool Selects(int64_t step) const {
    if (!session_) return false;
    const config::Config& config = session_->config();
    return config::StepSelected(config, step) &&
           config::RankSelected(config, session_->rank());
  }
  bool connected() const { return session_ && session_->connected(); }
  int64_t step() const { return session_ ? session_->step() : 0; }
  int rank() const { return session_ ? session_->rank() : -1; }

  std::string level() const {
    return session_ ? std::string(config::LevelName(session_->config().level))
                    : std::string();
  }
  std::string task() const {
    return session_ ? std::string(config::TaskName(session_->config().task))
                    : std::string();
  }
  // max(step) of the config; None when any later step may still be
  // captured: the config lists no steps, or a live directive (tprobe
  // start/stop) is in force, which overrides the config's steps.
  py::object last_step() const {
    if (!session_ || session_->core().directive() != 0) return py::none();
    auto last = config::LastStep(session_->config());
    return last ? py::object(py::int_(*last)) : py::object(py::none());
  }
  std::string dump_path() const {
    return session_ ? session_->config().dump_path : std::string();
  }
  py::list scope() const {
    return ToList(session_ ? session_->config().scope : config::Config().scope);
  }
  py::list name_list() const {
    return ToList(session_ ? session_->config().list : config::Config().list);
  }
  py::dict data_mode() const {
    py::dict d;
    const config::DataMode m =
        session_ ? session_->config().data_mode : config::DataMode();
    d["forward"] = m.forward;
    d["backward"] = m.backward;
    d["input"] = m.input;
    d["output"] = m.output;
    return d;
  }

  py::dict counters() const {
    py::dict d;
    uint64_t written = 0, no_daemon = 0, ring_full = 0, too_large = 0;
    try {
      if (session_) {
        client::Core& core = session_->core();
        written = core.records_written();
        no_daemon = core.dropped_no_daemon();
        ring_full = core.dropped(shm::DropReason::kRingFull);
        too_large = core.dropped(shm::DropReason::kTooLarge);
      }
    } catch (...) {
      Swallowed(__func__);
    }
    d["records_written"] = written;
    d["dropped_no_daemon"] = no_daemon;
    d["dropped_ring_full"] = ring_full;
    d["dropped_too_large"] = too_large;
    d["hook_failures"] = hook_failures_.load(std::memory_order_relaxed);
    d["producer_stats_failures"] = ProducerStatsFailures();
    return d;
  }

  bool Flush(int timeout_ms) {
    if (!session_) return false;
    try {
      py::gil_scoped_release release;
      return session_->Flush(timeout_ms);
    } catch (...) {
      Swallowed(__func__);
      return false;
    }
  }

  // --- hooks -------------------------------------------------------------
  // The session names, counts and filters each call (client/session.h);
  // Python only hands over what its hooks saw. *_begin returns None when
  // nothing is recorded, else the call's handle (Call), which goes back
  // into the matching *_end; a handle is ended once.

  py::object ModuleBegin(py::handle base) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginModule(text, true, 0, &plan)) {
        return py::none();
      }
      return Handle(std::move(plan));
    } catch (...) {
      Swallowed(__func__);
      return py::none();
    }
  }

  // A module call began (its forward pre-hook): lists its stack and writes
  // the input side of its entry (input_args, input_kwargs), as msprobe 26.x
  // does there.
  void ModuleInputs(py::handle handle, py::handle args, py::handle kwargs) {
    try {
      const Call* call = Open(handle);
      if (call == nullptr || !call->plan.stack()) return;
      const client::CallPlan& plan = call->plan;
      client::EntryBuilder entry(session_->core());
      if (plan.input) {
        EncodeValue(entry, args, entry.Whole(Part::kInputArgs), framework_);
        if (PyDict_Check(kwargs.ptr())) {
          EncodeValue(entry, kwargs, entry.Whole(Part::kInputKwargs),
                      framework_);
        } else {
          entry.Open(Part::kInputKwargs);
        }
      }
      // With an empty body the record only lists the stack.
      session_->WriteEntry(plan, CapturedStackId(), entry);
    } catch (...) {
      Swallowed(__func__);
    }
  }

  // The module call ended (its forward hook): writes the output side of its
  // entry (output, parameters) when scope, list and data_mode keep it, and
  // closes the call.
  void ModuleEnd(py::handle handle, py::handle output, py::handle parameters) {
    try {
      Call* call = Open(handle);
      if (call == nullptr) return;
      call->open = false;
      client::CallPlan& plan = call->plan;
      session_->CheckEnd(&plan);
      if (plan.output) {
        client::EntryBuilder entry(session_->core());
        EncodeOutput(entry, output, entry.Whole(Part::kOutput));
        ValueWriter& params = entry.Open(Part::kParameters);
        if (PyDict_Check(parameters.ptr())) {
          for (auto [k, v] : py::reinterpret_borrow<py::dict>(parameters)) {
            if (v.is_none()) continue;
            params.Key(py::str(k).cast<std::string>());
            EncodeValue(entry, v, params, framework_);
          }
        }
        session_->WriteEntry(plan, 0, entry);
      }
      session_->EndCall(plan);
    } catch (...) {
      Swallowed(__func__);
    }
  }

  // A module's backward begins (its output gradients arrived): returns its
  // handle, None when it is not recorded (else module_backward_end must
  // follow).
  py::object ModuleBackwardBegin(py::handle base, int64_t index) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginModule(text, false, static_cast<uint32_t>(index),
                                 &plan)) {
        return py::none();
      }
      return Handle(std::move(plan));
    } catch (...) {
      Swallowed(__func__);
      return py::none();
    }
  }

  // The module's backward is done: writes its entry and closes it.
  void ModuleBackwardEnd(py::handle handle, py::handle input,
                         py::handle output) {
    try {
      Call* call = Open(handle);
      if (call == nullptr) return;
      call->open = false;
      session_->CheckEnd(&call->plan);
      WriteBackward(call->plan, input, output);
      session_->EndCall(call->plan);
    } catch (...) {
      Swallowed(__func__);
    }
  }

  py::object ApiBegin(py::handle base) {
    try {
      std::string_view text;
      Call call;
      if (!Text(base, &text) || !BeginApiCall(text, &call)) return py::none();
      call.owner = this;
      return py::cast(std::move(call));
    } catch (...) {
      Swallowed(__func__);
      return py::none();
    }
  }

  bool BeginApiCall(std::string_view base, ApiCall* call) override {
    try {
      client::CallPlan plan;
      if (!session_ || !session_->BeginApi(base, true, 0, &plan)) return false;
      Plan(std::move(plan), call);
      return true;
    } catch (...) {
      Swallowed(__func__);
      return false;
    }
  }

  // An API call is about to run: takes its stack and, when data_mode keeps
  // them, its inputs into the call.
  void ApiInputs(py::handle handle, py::handle args, py::handle kwargs) {
    Call* call = Open(handle);
    if (call != nullptr) TakeApiInputs(*call, args.ptr(), kwargs.ptr());
  }

  void TakeApiInputs(ApiCall& call, PyObject* args, PyObject* kwargs) override {
    try {
      if (!session_ || !call.entry) return;
      call.stack_id = CapturedStackId();
      if (call.plan.input) {
        EncodeAhead(args, &call.args);
        EncodeAhead(kwargs, &call.kwargs);
        call.inputs = true;
      }
    } catch (...) {
      Swallowed(__func__);
    }
  }

  void ApiEnd(py::handle handle, py::handle output) {
    Call* call = Open(handle);
    if (call == nullptr) return;
    call->open = false;
    EndApiCall(*call, output.is(NoEntry()) ? nullptr : output.ptr());
  }

  void EndApiCall(ApiCall& call, PyObject* output) override {
    try {
      if (!session_) return;
      client::CallPlan& plan = call.plan;
      session_->CheckEnd(&plan);
      if (output != nullptr) {
        client::EntryBuilder entry(session_->core());
        if (plan.entry()) {
          if (plan.input && call.inputs) {
            entry.Whole(Part::kInputArgs).Raw(call.args);
            entry.Whole(Part::kInputKwargs).Raw(call.kwargs);
          } else if (plan.input) {
            entry.Whole(Part::kInputArgs).Null();
            entry.Whole(Part::kInputKwargs).Null();
          }
          if (plan.output) {
            EncodeOutput(entry, output, entry.Whole(Part::kOutput));
          }
        }
        // An empty entry lists only the stack (data_mode keeps none of it).
        if (plan.entry() || plan.stack())
          session_->WriteEntry(plan, call.stack_id, entry);
      }
      session_->EndCall(plan);
    } catch (...) {
      Swallowed(__func__);
    }
  }

  void ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                       PyObject* output) override {
    ApiBackward(base, index, input, output);
  }

  void ApiBackward(py::handle base, int64_t index, py::handle input,
                   py::handle output) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginApi(text, false, static_cast<uint32_t>(index),
                              &plan)) {
        return;
      }
      WriteBackward(plan, input, output);
      session_->EndCall(plan);
    } catch (...) {
      Swallowed(__func__);
    }
  }

  bool ParamGrad(py::handle base, py::handle name, py::handle grad) {
    try {
      std::string_view text, param;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) || !Text(name, &param) ||
          !session_->BeginParamGrad(text, param, &plan)) {
        return false;
      }
      client::EntryBuilder entry(session_->core());
      ValueWriter& body = entry.Extra();
      body.Key(param);
      body.BeginList();
      EncodeValue(entry, grad, body, framework_);
      body.End();
      return session_->WriteEntry(plan, 0, entry);
    } catch (...) {
      Swallowed(__func__);
      return false;
    }
  }

  Encoded Encode(py::handle value) {
    Encoded e;
    EncodeAhead(value, &e.bytes);
    return e;
  }

  // A raw entry: `name` as given, no naming, filters or construct records.
  // For tests of the value encoding.
  bool RecordEntry(py::handle name, py::handle stack, py::handle body,
                   int64_t step) {
    try {
      if (!session_) return false;
      client::Core& core = session_->core();
      client::EntryBuilder entry(core);
      if (!core.attached()) return entry.Write(0, 0, 0);  // counts the drop
      std::string_view text;
      if (!Text(name, &text) || !PyDict_Check(body.ptr())) return false;
      ValueWriter& items = entry.Extra();
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(body)) {
        items.Key(py::str(k).cast<std::string>());
        if (PyBool_Check(v.ptr())) {
          items.Bool(v.ptr() == Py_True);  // is_recompute
        } else {
          TakeOrEncode(entry, v, items);
        }
      }
      const uint32_t name_id = core.Intern(record::InternKind::kName, text);
      const uint32_t step_no =
          step >= 0 ? static_cast<uint32_t>(step) : session_->step();
      return entry.Write(step_no, name_id, StackId(stack));
    } catch (...) {
      Swallowed(__func__);
      return false;
    }
  }

  // The marker api_end takes as `output` when the API raised: the call is
  // closed without an entry.
  static py::handle NoEntry() {
    static PyObject* marker =
        PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
    return marker;
  }

 private:
  // `value` encoded into `bytes` ahead of its entry (its tensors are pushed
  // now); null when no daemon is attached.
  void EncodeAhead(py::handle value, std::string* bytes) {
    ValueWriter out(bytes);
    if (!session_ || !session_->core().attached()) {
      out.Null();
      return;
    }
    client::EntryBuilder entry(session_->core());
    EncodeValue(entry, value, out, framework_);
  }

  // The running code's stack, interned in this thread's ring (0: none).
  uint32_t CapturedStackId() {
    std::shared_ptr<const Stack> stack = CaptureStack();
    return stack ? stack->text.Intern(session_->core()) : 0;
  }

  // The handle of a call the session opened.
  py::object Handle(client::CallPlan&& plan) const {
    Call call;
    call.owner = this;
    Plan(std::move(plan), &call);
    return py::cast(std::move(call));
  }

  // What the hooks ask of a call the session opened with `plan`.
  void Plan(client::CallPlan&& plan, ApiCall* call) const {
    call->entry = plan.entry() || plan.stack();
    call->input = plan.input;
    call->backward = session_->WantsBackward();
    call->plan = std::move(plan);
  }

  // The open call behind `handle`, when this session opened it; null for
  // None, a foreign object or a call already ended.
  Call* Open(py::handle handle) const {
    if (!session_ || !py::isinstance<Call>(handle)) return nullptr;
    Call& call = handle.cast<Call&>();
    return call.open && call.owner == this ? &call : nullptr;
  }

  // A backward entry: input = gradients of the forward outputs, output =
  // gradients of the forward inputs. A side passed as NoEntry() is left
  // out: the daemon merges the entries of one name, so the two sides may
  // come in separate calls.
  void WriteBackward(const client::CallPlan& plan, py::handle input,
                     py::handle output) {
    if (!plan.entry()) return;
    client::EntryBuilder entry(session_->core());
    if (plan.input && !input.is(NoEntry())) {
      EncodeValue(entry, input, entry.Whole(Part::kInput), framework_);
    }
    if (plan.output && !output.is(NoEntry())) {
      EncodeValue(entry, output, entry.Whole(Part::kOutput), framework_);
    }
    if (entry.empty()) return;
    session_->WriteEntry(plan, 0, entry);
  }

  // msprobe's output list: a list or tuple as it is, anything else as [x].
  void EncodeOutput(client::EntryBuilder& entry, py::handle output,
                    ValueWriter& out) {
    if (PyList_Check(output.ptr()) || PyTuple_Check(output.ptr())) {
      EncodeValue(entry, output, out, framework_);
    } else {
      out.BeginList();
      EncodeValue(entry, output, out, framework_);
      out.End();
    }
  }

  // An Encoded value is copied in; anything else is encoded now.
  void TakeOrEncode(client::EntryBuilder& entry, py::handle value,
                    ValueWriter& out) {
    if (py::isinstance<Encoded>(value)) {
      out.Raw(value.cast<Encoded&>().bytes);
    } else {
      EncodeValue(entry, value, out, framework_);
    }
  }

  // A stack given as a list of lines (record_entry).
  uint32_t StackId(py::handle stack) {
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

  static py::list ToList(const std::vector<std::string>& v) {
    py::list l;
    for (const auto& s : v) l.append(s);
    return l;
  }

  template <typename F>
  void Guard(const char* where, F&& f) {
    try {
      if (session_) f();
    } catch (...) {
      Swallowed(where);
    }
  }

  void Release() {
    if (!session_) return;
    FollowStatisticsOn(nullptr);
    if (client::InForkedChild()) {
      // The parent's control thread does not exist here: never wait on it.
      (void)session_.release();
      return;
    }
    session_.reset();
  }

  // Called in a catch block: a hook or call failed, and no exception may
  // cross into the trainer, so the failure is counted
  // (counters()["hook_failures"]) and the first one is named on stderr.
  void Swallowed(const char* where) const noexcept {
    if (hook_failures_.fetch_add(1, std::memory_order_relaxed) != 0) return;
    // The exception being handled lives until its handler ends, and so
    // does the text it points at.
    const char* what = "an unknown exception";
    try {
      throw;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr,
                 "tprobe: Session.%s failed (%s); that call is left out of "
                 "the dump, and every such failure is counted in "
                 "Session.counters()['hook_failures']\n",
                 where, what);
  }

  std::unique_ptr<client::Session> session_;
  mutable std::atomic<uint64_t> hook_failures_{0};
  // The framework whose value encodings the session's entries use (the
  // core gets its name, SessionOptions::framework, for msprobe's entry
  // keys).
  const Framework framework_;
};

}  // namespace

ApiSession* ApiSessionOf(PyObject* object) {
  try {
    py::handle h(object);
    if (!py::isinstance<PySession>(h)) return nullptr;
    return &h.cast<PySession&>();
  } catch (...) {
    PyErr_Clear();
    return nullptr;
  }
}

void DefineSession(py::module_& m) {
  py::class_<Encoded>(m, "Encoded",
                      "A value encoded ahead of its entry (Session.encode).");

  py::class_<Call>(m, "Call",
                   "One open call (Session.*_begin): handed back to the "
                   "matching *_end, which ends it once.")
      .def_readonly("entry", &Call::entry,
                    "Pass the call's stack and data to *_inputs / *_end.")
      .def_readonly("input", &Call::input, "data_mode keeps the inputs.")
      .def_readonly("backward", &Call::backward, "Report the call's backward.")
      .def_property_readonly(
          "index", [](const Call& c) { return c.plan.index; },
          "N in the call's name (its backward's too).");

  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::string&, const std::string&,
                    int, bool, const std::string&, int, const std::string&>(),
           py::arg("config_path") = "", py::arg("dump_path") = "",
           py::arg("socket_path") = "", py::arg("rank") = -1,
           py::arg("autostart_daemon") = true, py::arg("daemon_path") = "",
           py::arg("connect_timeout_ms") = 5000,
           py::arg("framework") = "pytorch")
      .def("close", &PySession::Close)
      .def("start", &PySession::Start)
      .def("stop", &PySession::Stop)
      .def("step", &PySession::Step)
      .def("write_producer_stats", &PySession::WriteProducerStatsFromHere,
           py::arg("values"), py::arg("places"),
           "Writes the statistics the framework computed (producer_stats.h) "
           "into this thread's ring: values, 4 uint64 per tensor; places, "
           "24 bytes per tensor. Returns how many were written.")
      .def("write_producer_bytes", &PySession::WriteProducerBytesFromHere,
           py::arg("copies"), py::arg("places"),
           "Writes the bytes of tensors the framework copied to the host "
           "(tasks tensor and overflow_check, producer_stats.h) into this "
           "thread's ring: copies, (address, size) of host memory per "
           "tensor, kept alive by the caller; places, 24 bytes per tensor. "
           "Returns how many were written whole.")
      .def("set_step", &PySession::SetStep, py::arg("step"),
           "Makes step the current step number (msprobe's set_init_step).")
      .def("begin_group", &PySession::BeginGroup, py::arg("name"),
           "Level mix: the calls until end_group() are inside the construct "
           "node `name` (msprobe's \"optimizer\", \"clip_grad\").")
      .def("end_group", &PySession::EndGroup)
      .def_property_readonly("collecting", &PySession::collecting)
      .def("selects", &PySession::Selects, py::arg("step"),
           "Whether the config's step and rank lists take `step` of this "
           "rank.")
      .def_property_readonly("connected", &PySession::connected)
      .def_property_readonly("current_step", &PySession::step)
      .def_property_readonly("rank", &PySession::rank)
      .def_property_readonly("level", &PySession::level)
      .def_property_readonly("task", &PySession::task)
      .def_property_readonly("dump_path", &PySession::dump_path)
      .def_property_readonly(
          "last_step", &PySession::last_step,
          "max(step) of the config; None: every step, or a live "
          "directive is in force")
      .def_property_readonly("scope", &PySession::scope)
      .def_property_readonly("list", &PySession::name_list)
      .def_property_readonly("data_mode", &PySession::data_mode)
      .def("counters", &PySession::counters)
      .def("flush", &PySession::Flush, py::arg("timeout_ms") = 10000)
      .def_static(
          "module_base",
          [](const std::string& path, const std::string& cls, bool cell) {
            return client::ModuleBase(cell ? client::ModuleStyle::kCell
                                           : client::ModuleStyle::kModule,
                                      path, cls);
          },
          py::arg("path"), py::arg("cls"), py::arg("cell") = false,
          "'Module.{path}.{cls}' (or 'Cell.…'): the name base of a module.")
      .def_static(
          "api_base",
          [](const std::string& prefix, const std::string& api) {
            return client::ApiBase(prefix, api);
          },
          py::arg("prefix"), py::arg("api"),
          "'{prefix}.{last dotted part of api}': the name base of an API.")
      .def("module_begin", &PySession::ModuleBegin, py::arg("base"),
           "Opens a module forward call; returns its Call (None: not "
           "recorded, else module_end must follow).")
      .def("module_inputs", &PySession::ModuleInputs, py::arg("call"),
           py::arg("args"), py::arg("kwargs"),
           "Lists the beginning module call's stack (the running code's) "
           "and writes its inputs (if data_mode keeps them).")
      .def("module_end", &PySession::ModuleEnd, py::arg("call"),
           py::arg("output"), py::arg("parameters"),
           "Writes the module call's outputs (if scope, list and data_mode "
           "keep them) and closes it.")
      .def("api_begin", &PySession::ApiBegin, py::arg("base"),
           "Opens an outermost API forward call; returns its Call (None: "
           "not recorded, else api_end must follow on this thread).")
      .def("api_inputs", &PySession::ApiInputs, py::arg("call"),
           py::arg("args"), py::arg("kwargs"),
           "Before the API runs: takes its stack (the running code's) and, "
           "if data_mode keeps them, its inputs into the call.")
      .def("api_end", &PySession::ApiEnd, py::arg("call"),
           py::arg("output") = PySession::NoEntry(),
           "Writes the API call's entry (unless `output` is left out) and "
           "closes it.")
      .def("module_backward_begin", &PySession::ModuleBackwardBegin,
           py::arg("base"), py::arg("index"),
           "Opens the backward of forward call `index` of a module; returns "
           "its Call (None: not recorded, else module_backward_end must "
           "follow).")
      .def("module_backward_end", &PySession::ModuleBackwardEnd,
           py::arg("call"), py::arg("input") = PySession::NoEntry(),
           py::arg("output") = PySession::NoEntry(),
           "Writes the module backward's entry and closes it.")
      .def("api_backward", &PySession::ApiBackward, py::arg("base"),
           py::arg("index"), py::arg("input") = PySession::NoEntry(),
           py::arg("output") = PySession::NoEntry(),
           "Records the backward of forward call `index` of an API; a side "
           "left out is not written (the entry's other calls add it).")
      .def("param_grad", &PySession::ParamGrad, py::arg("base"),
           py::arg("name"), py::arg("grad"),
           "Records a parameter gradient of the module `base`.")
      .def("encode", &PySession::Encode, py::arg("value"))
      .def("record_entry", &PySession::RecordEntry, py::arg("name"),
           py::arg("stack"), py::arg("body"), py::arg("step") = -1);
}

}  // namespace tprobe::python
