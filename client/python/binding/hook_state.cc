// HookState and busy_flag (hook_state.h).

#include "client/python/binding/hook_state.h"

#include <structmember.h>

#include <cstddef>

#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

SessionOf g_session_of = nullptr;
thread_local long t_busy = 0;
PyObject* s_warn_once = nullptr;

// --- HookState: the base of Runtime -----------------------------------------

PyTypeObject g_state_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

int StateTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<HookState*>(self)->session);
  return 0;
}

int StateClear(PyObject* self) {
  auto* state = reinterpret_cast<HookState*>(self);
  state->api = nullptr;
  state->modules = nullptr;
  Py_CLEAR(state->session);
  return 0;
}

void StateDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  StateClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* StateGetSession(PyObject* self, void*) {
  PyObject* session = reinterpret_cast<HookState*>(self)->session;
  return Py_NewRef(session != nullptr ? session : Py_None);
}

int StateSetSession(PyObject* self, PyObject* value, void*) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "session cannot be deleted");
    return -1;
  }
  auto* state = reinterpret_cast<HookState*>(self);
  Py_XSETREF(state->session, Py_NewRef(value));
  const SessionParts parts = g_session_of(value);
  state->api = parts.api;
  state->modules = parts.modules;
  return 0;
}

PyMemberDef g_state_members[] = {{"on", T_BOOL, offsetof(HookState, on), 0,
                                  "Capture is on: the hooks report calls."},
                                 {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef g_state_getset[] = {
    {"session", StateGetSession, StateSetSession,
     "The tprobe._C.Session the hooks report to.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// --- busy_flag: the per-thread busy counter as a descriptor -----------------

struct BusyFlag {
  PyObject_HEAD
};

PyTypeObject g_busy_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* BusyGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyLong_FromLong(t_busy);
}

int BusySet(PyObject*, PyObject*, PyObject* value) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "busy cannot be deleted");
    return -1;
  }
  const long v = PyLong_AsLong(value);
  if (v == -1 && PyErr_Occurred()) return -1;
  t_busy = v;
  return 0;
}

}  // namespace

HookState* AsHookState(PyObject* object) {
  return PyObject_TypeCheck(object, &g_state_type)
             ? reinterpret_cast<HookState*>(object)
             : nullptr;
}

HookState* WithModules(PyObject* rt) {
  HookState* state = rt != nullptr ? AsHookState(rt) : nullptr;
  return state != nullptr && state->modules != nullptr ? state : nullptr;
}

HookState* Recording(PyObject* rt) {
  HookState* state = WithModules(rt);
  return state != nullptr && state->on ? state : nullptr;
}

long& ThreadBusy() { return t_busy; }

void WarnOnce(PyObject* state, const char* where) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (state != nullptr && value != nullptr) {
    PyObject* text = PyUnicode_FromString(where);
    PyObject* done = text ? PyObject_CallMethodObjArgs(state, s_warn_once, text,
                                                       value, nullptr)
                          : nullptr;
    Py_XDECREF(done);
    Py_XDECREF(text);
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
}

void DefineHookState(py::module_& m, SessionOf session_of) {
  g_session_of = session_of;
  s_warn_once = InternName("warn_once");

  PyTypeObject& state = g_state_type;
  state.tp_name = "tprobe._C.HookState";
  state.tp_doc =
      "What the hooks read on every call: `on` (capture is on) and "
      "`session`. The base of tprobe._common.runtime.Runtime.";
  state.tp_basicsize = sizeof(HookState);
  state.tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  state.tp_new = PyType_GenericNew;
  state.tp_dealloc = StateDealloc;
  state.tp_traverse = StateTraverse;
  state.tp_clear = StateClear;
  state.tp_members = g_state_members;
  state.tp_getset = g_state_getset;
  ReadyType(&state);
  AddType(m, "HookState", &state);

  PyTypeObject& busy = g_busy_type;
  busy.tp_name = "tprobe._C.BusyFlag";
  busy.tp_doc =
      "The calling thread's busy counter (> 0: tprobe runs code, APIs and "
      "modules called now are not recorded), as a descriptor for a class "
      "attribute.";
  busy.tp_basicsize = sizeof(BusyFlag);
  busy.tp_flags = Py_TPFLAGS_DEFAULT;
  busy.tp_descr_get = BusyGet;
  busy.tp_descr_set = BusySet;
  ReadyType(&busy);
  m.attr("busy_flag") = py::reinterpret_steal<py::object>(
      reinterpret_cast<PyObject*>(PyObject_New(BusyFlag, &busy)));
}

}  // namespace tprobe::python
