// The class behind tprobe._C.Session (session_binding.h binds it). Its
// members are defined by role:
//   py_session.cc    lifecycle, counters, the config as Python reads it,
//                    and what every kind of call shares (handles, values);
//   module_calls.cc  module (and Cell) forward and backward calls, and
//                    parameter gradients;
//   api_calls.cc     API calls (also through ApiSession, for api_hook.cc),
//                    values encoded ahead, and raw entries.
// Every member a hook reaches runs its body through GuardHook (hook_guard.h):
// none raises, failures are counted in counters()['hook_failures'].
//
// Thread safety: every member needs the GIL; connecting, closing, flushing
// and a large tensor copy into the ring run with it released.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_
#define TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "client/entry_builder.h"
#include "client/python/binding/api_hook.h"
#include "client/python/binding/hook_guard.h"
#include "client/python/binding/type_discovery.h"
#include "client/session.h"
#include "common/record/writer.h"

namespace tprobe::python {

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
bool Text(pybind11::handle obj, std::string_view* out);

// What a Session is made with (tprobe._C.Session's arguments).
struct PySessionArgs {
  std::string config_path, dump_path, socket_path;
  int rank = -1;
  bool autostart_daemon = true;
  std::string daemon_path;
  int connect_timeout_ms = 5000;
  std::string framework;  // msprobe's name, as data: never compared here
  ValueEncoding encoding = ValueEncoding::kTorch;
  bool risk_level_applies = true;
};

class PySession final : public ApiSession {
 public:
  // Raises ValueError for a bad config (the one member that raises).
  explicit PySession(const PySessionArgs& args);
  ~PySession();

  // --- lifecycle and counters (py_session.cc) ------------------------------
  void Close();  // says goodbye to the daemon (bounded wait)
  void Start();
  void Stop();
  void Step();
  void SetStep(uint32_t step);
  // client::Session::DumpAloneAtL1 (msprobe's module_dump at level L1).
  void DumpAloneAtL1(const std::string& base);
  // client::Session::NoteNoModel: start() got no model at a module level.
  void NoteNoModel();
  // client::Session::Configure: "" once the daemon took the config, else
  // why not (a bad file, a key that cannot change live, no daemon).
  std::string Configure(const std::string& config_path);
  void BeginGroup(const std::string& name);
  void EndGroup();
  bool Flush(int timeout_ms);
  pybind11::dict counters() const;
  // From the adapter's statistics thread (producer_stats.h).
  size_t WriteProducerStatsFromHere(pybind11::bytes values,
                                    pybind11::bytes places);
  size_t WriteProducerBytesFromHere(const pybind11::list& copies,
                                    pybind11::bytes places);

  bool collecting() const;
  // Whether the config's step and rank lists take `step` of this rank
  // (PrecisionDebugger.save(), which needs no start()).
  bool Selects(int64_t step) const;
  bool connected() const;
  int64_t step() const;
  int rank() const;
  std::string level() const;
  std::string task() const;
  // max(step) of the config; None when any later step may still be
  // captured: the config lists no steps, or a live directive (tprobe
  // start/stop) is in force, which overrides the config's steps.
  pybind11::object last_step() const;
  std::string dump_path() const;
  pybind11::list scope() const;
  pybind11::list name_list() const;
  pybind11::dict data_mode() const;

  // --- module calls (module_calls.cc) --------------------------------------
  // The session names, counts and filters each call (client/session.h);
  // Python only hands over what its hooks saw. *_begin returns None when
  // nothing is recorded, else the call's handle (Call), which goes back
  // into the matching *_end; a handle is ended once.
  pybind11::object ModuleBegin(pybind11::handle base);
  void ModuleInputs(pybind11::handle handle, pybind11::handle args,
                    pybind11::handle kwargs);
  void ModuleEnd(pybind11::handle handle, pybind11::handle output,
                 pybind11::handle parameters);
  pybind11::object ModuleBackwardBegin(pybind11::handle base, int64_t index);
  void ModuleBackwardEnd(pybind11::handle handle, pybind11::handle input,
                         pybind11::handle output);
  bool ParamGrad(pybind11::handle base, pybind11::handle name,
                 pybind11::handle grad);

  // --- API calls (api_calls.cc) --------------------------------------------
  pybind11::object ApiBegin(pybind11::handle base);
  void ApiInputs(pybind11::handle handle, pybind11::handle args,
                 pybind11::handle kwargs);
  void ApiEnd(pybind11::handle handle, pybind11::handle output);
  void ApiBackward(pybind11::handle base, int64_t index, pybind11::handle input,
                   pybind11::handle output);
  bool BeginApiCall(std::string_view base, ApiCall* call) override;
  void TakeApiInputs(ApiCall& call, PyObject* args, PyObject* kwargs) override;
  void EndApiCall(ApiCall& call, PyObject* output) override;
  void ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                       PyObject* output) override;
  Encoded Encode(pybind11::handle value);
  // A raw entry: `name` as given, no naming, filters or construct records.
  // For tests of the value encoding.
  bool RecordEntry(pybind11::handle name, pybind11::handle stack,
                   pybind11::handle body, int64_t step);

  // The marker api_end and the backward calls take for a side that is left
  // out (api_end: the API raised, the call is closed without an entry).
  static pybind11::handle NoEntry();

 private:
  // The handle of a module call `base` opened forward or backward (of
  // forward call `index`); None when it is not recorded (module_calls.cc).
  pybind11::object BeginModuleCall(const char* where, pybind11::handle base,
                                   bool forward, uint32_t index);

  // --- shared by every kind of call (py_session.cc) ------------------------
  // body() when the session exists, guarded; fallback otherwise.
  template <typename Body, typename... Fallback>
  auto Hook(const char* where, Body&& body, Fallback&&... fallback);

  // `obj` encoded into `out` (value_encoder.h).
  void EncodeInto(client::EntryBuilder& entry, pybind11::handle obj,
                  record::ValueWriter& out);
  // msprobe's output list: a list or tuple as it is, anything else as [x].
  void EncodeOutput(client::EntryBuilder& entry, pybind11::handle output,
                    record::ValueWriter& out);
  // `value` encoded into `bytes` ahead of its entry (its tensors are pushed
  // now); null when no daemon is attached.
  void EncodeAhead(pybind11::handle value, std::string* bytes);
  // An Encoded value is copied in; anything else is encoded now.
  void TakeOrEncode(client::EntryBuilder& entry, pybind11::handle value,
                    record::ValueWriter& out);
  // A backward entry: input = gradients of the forward outputs, output =
  // gradients of the forward inputs. A side passed as NoEntry() is left
  // out: the daemon merges the entries of one name, so the two sides may
  // come in separate calls.
  void WriteBackward(const client::CallPlan& plan, pybind11::handle input,
                     pybind11::handle output);
  // The running code's stack, interned in this thread's ring (0: none).
  uint32_t CapturedStackId();
  // A stack given as a list of lines (record_entry).
  uint32_t StackId(pybind11::handle stack);
  // The handle of a call the session opened.
  pybind11::object Handle(client::CallPlan&& plan) const;
  // What the hooks ask of a call the session opened with `plan`.
  void Plan(client::CallPlan&& plan, ApiCall* call) const;
  // The open call behind `handle`, when this session opened it; null for
  // None, a foreign object or a call already ended.
  Call* Open(pybind11::handle handle) const;
  void Release();

  std::unique_ptr<client::Session> session_;
  mutable std::atomic<uint64_t> hook_failures_{0};
  const ValueEncoding encoding_;
};

template <typename Body, typename... Fallback>
auto PySession::Hook(const char* where, Body&& body, Fallback&&... fallback) {
  return GuardHook(
      hook_failures_, where,
      [&] {
        if (session_) return body();
        if constexpr (sizeof...(Fallback) != 0) {
          return decltype(body())(fallback...);
        }
      },
      std::forward<Fallback>(fallback)...);
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_
