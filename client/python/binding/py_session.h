// The class behind tprobe._C.Session (session_binding.h binds it): a thin
// owner of its parts, each with its own state and file:
//   hooked_session.h  the client session the hooks report to, from the
//                     constructor until close, the hooks' failure counter
//                     and the handles of open calls;
//   entry_values.h    the hooks' Python values into entries, by the
//                     session's value encoding;
//   module_calls.h    module (and Cell) calls and parameter gradients;
//   api_calls.h       API calls, also as the ApiSession of api_hook.cc;
//   config_view.h     the config as Python reads it.
// PySession itself drives the session's lifecycle (start, stop, step,
// close, ...) and reads its counters. Every member a hook reaches runs its
// body through GuardHook (hook_guard.h): none raises, failures are counted
// in counters()['hook_failures'].
//
// Thread safety: every member needs the GIL; connecting, closing, flushing
// and a large tensor copy into the ring run with it released.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_
#define TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "client/python/binding/api_calls.h"
#include "client/python/binding/config_view.h"
#include "client/python/binding/entry_values.h"
#include "client/python/binding/hooked_session.h"
#include "client/python/binding/module_calls.h"
#include "client/python/binding/type_discovery.h"

namespace tprobe::python {

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

class PySession final {
 public:
  // Raises ValueError for a bad config (the one member that raises).
  explicit PySession(const PySessionArgs& args);
  PySession(const PySession&) = delete;  // the parts refer to each other
  PySession& operator=(const PySession&) = delete;

  void Close();  // says goodbye to the daemon (bounded wait)
  void Start();
  void Stop();
  void Step();
  // client::Session::StartIfSelected and StepIfStopped: false where they
  // did nothing, for Start() or Step() then.
  bool StartIfSelected(bool selected);
  bool StepIfStopped();
  // The config in force, as an identity: it changes whenever a live config
  // is taken up (null once closed).
  const void* ConfigIdentity() const;
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
  bool collecting() const;
  bool connected() const;
  int64_t step() const;
  int rank() const;

  HookedSession& session() { return session_; }
  EntryValues& values() { return values_; }
  ModuleCalls& modules() { return modules_; }
  ApiCalls& api() { return api_; }
  const ConfigView& config() const { return config_; }

 private:
  HookedSession session_;
  EntryValues values_;
  ModuleCalls modules_;
  ApiCalls api_;
  ConfigView config_;
};

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PY_SESSION_H_
