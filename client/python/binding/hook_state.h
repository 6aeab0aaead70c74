// What the binding's C hooks read on every call, as C data (api_hook.h's
// API wrapper, module_hook.h's module hooks).
//
// tprobe._C.HookState is the base of tprobe._common.runtime.Runtime: its
// `on` (capture is on) and `session` (the tprobe._C.Session) are fields of
// the C struct, read without attribute lookups, and setting `session`
// resolves the session's C++ parts once. tprobe._C.busy_flag is the
// per-thread busy counter as a descriptor, so that `rt.local.busy` (a
// threading.local with the descriptor on its class) is the counter the C
// hooks read (ThreadBusy()).
//
// Thread safety: every function needs the GIL; ThreadBusy() is the calling
// thread's own.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_HOOK_STATE_H_
#define TPROBE_CLIENT_PYTHON_BINDING_HOOK_STATE_H_

#include <Python.h>
#include <pybind11/pybind11.h>

namespace tprobe::python {

class ApiSession;
class ModuleCalls;

// The parts of a tprobe._C.Session that the C hooks call; both null for
// any other object.
struct SessionParts {
  ApiSession* api = nullptr;
  ModuleCalls* modules = nullptr;
};

// The parts of `session`. Raises nothing.
using SessionOf = SessionParts (*)(PyObject* session);

struct HookState {
  PyObject_HEAD char on;  // capture is on (Runtime.on)
  PyObject* session;      // the tprobe._C.Session (Runtime.session), or null
  ApiSession* api;        // its parts (SessionOf), alive while it is
  ModuleCalls* modules;
};

// `object` as a HookState (a Runtime), or null when it is not one.
HookState* AsHookState(PyObject* object);

// `rt`'s state when its session has module calls; null when it has none
// (or `rt` is null or no runtime).
HookState* WithModules(PyObject* rt);

// WithModules while capture is on; null when it is off.
HookState* Recording(PyObject* rt);

// The calling thread's busy counter: > 0 while tprobe runs code on this
// thread or an API call is being recorded; APIs and modules called then
// are not recorded.
long& ThreadBusy();

// Reports a failure of tprobe's own (the Python error set now) through
// state.warn_once(where, error) (state: a Runtime, or null), and clears
// it.
void WarnOnce(PyObject* state, const char* where);

// Adds HookState and busy_flag to the module.
void DefineHookState(pybind11::module_& m, SessionOf session_of);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_HOOK_STATE_H_
