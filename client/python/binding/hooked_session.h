// The client session (client/session.h) that a tprobe._C.Session's hooks
// report to, as the binding's parts share it (py_session.h): it is owned
// from the constructor until close, every hook runs its body against it
// through Hook (guarded, hook_guard.h, and counted in
// Session.counters()['hook_failures']), and the calls it opens are handed
// to Python as tprobe._C.Call handles that only it takes back.
//
// Thread safety: every member needs the GIL; Release may run without it.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_HOOKED_SESSION_H_
#define TPROBE_CLIENT_PYTHON_BINDING_HOOKED_SESSION_H_

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "client/python/binding/api_hook.h"
#include "client/python/binding/hook_guard.h"
#include "client/session.h"

namespace tprobe::python {

class HookedSession;

// One open call, the handle that Session.*_begin returns and the matching
// *_end takes back: the session's plan of the call, kept as it is (its
// name made and interned once), and what the hooks ask of it.
struct Call : ApiCall {
  const HookedSession* owner = nullptr;
  bool open = true;  // *_end not yet called
};

class HookedSession {
 public:
  explicit HookedSession(std::unique_ptr<client::Session> session);
  ~HookedSession();  // Release()
  HookedSession(const HookedSession&) = delete;
  HookedSession& operator=(const HookedSession&) = delete;

  // The session; null once released.
  client::Session* get() const { return session_.get(); }
  // The failures the guards of this session's hooks stopped.
  std::atomic<uint64_t>& failures() const { return failures_; }

  // body(session) when the session exists, else R(fallback...) (R: what
  // body returns; void takes no fallback); a throw is counted in
  // failures() and gives R(fallback...) too.
  template <typename Body, typename... Fallback>
  auto Hook(const char* where, Body&& body, Fallback&&... fallback);

  // What the hooks ask of a call the session opened with `plan`.
  void Plan(client::CallPlan&& plan, ApiCall* call) const;
  // The same for a call whose plan the session wrote in place.
  void Plan(ApiCall* call) const;
  // The handle of a call the session opened with `plan`.
  pybind11::object Handle(client::CallPlan&& plan) const;
  // The open call behind `handle`, when this session opened it; null for
  // None, a foreign object or a call already ended.
  Call* Open(pybind11::handle handle) const;

  // Lets the session go: it says goodbye to the daemon (a bounded wait). In
  // a child forked without exec it is left alone: the parent's control
  // thread does not exist there, so it is never waited on.
  void Release();

 private:
  std::unique_ptr<client::Session> session_;
  mutable std::atomic<uint64_t> failures_{0};
};

template <typename Body, typename... Fallback>
auto HookedSession::Hook(const char* where, Body&& body,
                         Fallback&&... fallback) {
  return GuardHook(
      failures_, where,
      [&] {
        if (session_) return body(*session_);
        if constexpr (sizeof...(Fallback) != 0) {
          return decltype(body(*session_))(fallback...);
        }
      },
      std::forward<Fallback>(fallback)...);
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_HOOKED_SESSION_H_
