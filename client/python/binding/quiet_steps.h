// The step boundaries of a step that records nothing, in C.
//
// Training loops call start(), stop() and step() at every step, and most
// steps record nothing (the config selects a few). In such a step each of
// the three runs cold, after the step's forward, backward and optimizer:
// every Python function and pybind11 dispatch it touches comes back from
// memory. tprobe._C.QuietSteps lets the debugger skip its own work there.
// The debugger arms it at the end of a start() whose step records nothing
// and whose Python state would not change at the next boundaries (hooks
// suspended, no dump_enable to poll, ...); then start(model), stop() and
// step() go straight to the session's StartQuiet, Stop and StepQuiet
// (py_session.h) and return True, or return False, having done nothing,
// where the debugger must take its own path:
//   - start(model): `model` is not the one armed with (None included), or
//     the step is selected, or the configured steps are over;
//   - stop(): the step collects;
//   - step(): stop() was not called, the step collected, or a live config
//     is offered;
// and each of them once the session's config is not the one armed with.
// Nothing here raises into training but a call with the wrong arguments.
//
// Thread safety: called with the GIL held, from the training thread.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_QUIET_STEPS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_QUIET_STEPS_H_

#include <Python.h>
#include <pybind11/pybind11.h>

namespace tprobe::python {

class PySession;

// The PySession behind a tprobe._C.Session, or null for any other object.
// Raises nothing.
using FindPySession = PySession* (*)(PyObject* session);

// Adds QuietSteps to the module.
void DefineQuietSteps(pybind11::module_& m, FindPySession session_of);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_QUIET_STEPS_H_
