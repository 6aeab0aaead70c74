// tprobe._C.Session: one rank's dump session (client/session.h) as Python
// sees it (the class is PySession, py_session.h), which names, counts and
// filters every call. Python hooks report calls by their name base
// (module_begin/module_end, api_begin/api_end,
// *_backward, param_grad) with the Python values they saw; a *_begin
// returns a tprobe._C.Call handle (the session's plan of the call) that the
// matching *_end takes back, once. The values go into the entries through
// the value encoder (value_encoder.h); Session.encode returns a
// tprobe._C.Encoded, a value encoded ahead of its entry.
//
// Errors: a bad config makes the constructor raise ValueError with the
// config's message. No other method raises: failures stop at the binding's
// boundary (hook_guard.h) and become a False return, a null value or a
// counter, so that tprobe never breaks training.
//
// Thread safety: every method is called with the GIL held; connecting,
// closing, flushing and a large tensor copy into the ring run with the GIL
// released.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_SESSION_BINDING_H_
#define TPROBE_CLIENT_PYTHON_BINDING_SESSION_BINDING_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include "client/python/binding/hook_state.h"

namespace tprobe::python {

class PySession;

// Adds Session, Call and Encoded to the module.
void DefineSession(pybind11::module_& m);

// The C++ parts of a tprobe._C.Session object; null for other objects
// (hook_state.h SessionOf). Raises nothing.
SessionParts SessionPartsOf(PyObject* session);

// The PySession behind a tprobe._C.Session object; null for other objects.
// Raises nothing.
PySession* PySessionOf(PyObject* session);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_SESSION_BINDING_H_
