// tprobe._C.QuietSteps (quiet_steps.h).

#include "client/python/binding/quiet_steps.h"

#include <Python.h>

#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_session.h"
#include "client/python/binding/py_types.h"

namespace tprobe::python {
namespace {

FindPySession g_session_of = nullptr;

struct QuietSteps {
  PyObject_HEAD PyObject* session;  // the armed tprobe._C.Session, or null
  PySession* core;                  // its PySession
  PyObject* model;                  // a weak reference to the model, or None
  const void* config;               // core->ConfigIdentity() when armed
};

QuietSteps* Of(PyObject* self) { return reinterpret_cast<QuietSteps*>(self); }

void Disarm(QuietSteps* q) {
  Py_CLEAR(q->session);
  Py_CLEAR(q->model);
  q->core = nullptr;
  q->config = nullptr;
}

bool Armed(const QuietSteps* q) {
  return q->session != nullptr && q->core->ConfigIdentity() == q->config;
}

// Whether `model` is the one armed with.
bool SameModel(const QuietSteps* q, PyObject* model) {
  if (q->model == Py_None || model == Py_None) return q->model == model;
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* armed = nullptr;
  if (PyWeakref_GetRef(q->model, &armed) < 0) {
    PyErr_Clear();
    return false;
  }
  Py_XDECREF(armed);  // only compared
  return armed == model;
#else
  return PyWeakref_GetObject(q->model) == model;  // None once it is gone
#endif
}

// arm(session, model)
PyObject* Arm(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  QuietSteps* q = Of(self);
  if (!Arity("QuietSteps.arm", n, 2, 2)) return nullptr;
  Disarm(q);
  PySession* core = g_session_of(args[0]);
  if (core == nullptr) {
    PyErr_SetString(PyExc_TypeError,
                    "QuietSteps.arm: session must be a tprobe._C.Session");
    return nullptr;
  }
  const void* config = core->ConfigIdentity();
  if (config == nullptr) Py_RETURN_FALSE;  // closed
  PyObject* model = args[1] == Py_None ? Py_NewRef(Py_None)
                                       : PyWeakref_NewRef(args[1], nullptr);
  if (model == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
    PyErr_Clear();  // a model without weak references is not armed with
    Py_RETURN_FALSE;
  }
  q->session = Py_NewRef(args[0]);
  q->core = core;
  q->model = model;
  q->config = config;
  Py_RETURN_TRUE;
}

PyObject* DisarmMethod(PyObject* self, PyObject*) {
  Disarm(Of(self));
  Py_RETURN_NONE;
}

// start(model=None)
PyObject* Start(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  const QuietSteps* q = Of(self);
  if (!Arity("QuietSteps.start", n, 0, 1)) return nullptr;
  return PyBool_FromLong(Armed(q) && SameModel(q, n > 0 ? args[0] : Py_None) &&
                         q->core->StartQuiet());
}

PyObject* Stop(PyObject* self, PyObject*) {
  const QuietSteps* q = Of(self);
  if (!Armed(q) || q->core->collecting()) Py_RETURN_FALSE;
  q->core->Stop();
  Py_RETURN_TRUE;
}

PyObject* Step(PyObject* self, PyObject*) {
  const QuietSteps* q = Of(self);
  return PyBool_FromLong(Armed(q) && q->core->StepQuiet());
}

PyObject* GetArmed(PyObject* self, void*) {
  return PyBool_FromLong(Armed(Of(self)));
}

PyObject* New(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 ||
      (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "QuietSteps() takes no arguments");
    return nullptr;
  }
  return type->tp_alloc(type, 0);  // disarmed: every field null
}

void Dealloc(PyObject* self) {
  Disarm(Of(self));
  Py_TYPE(self)->tp_free(self);
}

PyMethodDef g_methods[] = {
    {"arm", AsMethod(Arm), METH_FASTCALL,
     "arm($self, session, model, /)\n--\n\n"
     "Arms for the steps that follow a start(model) whose step records "
     "nothing, in `session` under its config now. False (and disarmed) "
     "when `model` takes no weak reference or the session is closed."},
    {"disarm", DisarmMethod, METH_NOARGS,
     "disarm($self, /)\n--\n\nEvery boundary returns False until arm()."},
    {"start", AsMethod(Start), METH_FASTCALL,
     "start($self, model=None, /)\n--\n\n"
     "Starts a step that records nothing for the model armed with; False, "
     "with nothing done, where start() must do its own work."},
    {"stop", Stop, METH_NOARGS,
     "stop($self, /)\n--\n\n"
     "Stops a step that collects nothing; False, with nothing done, where "
     "stop() must do its own work."},
    {"step", Step, METH_NOARGS,
     "step($self, /)\n--\n\n"
     "Ends a stopped step that collected nothing, when no live config is "
     "offered; False, with nothing done, where step() must do its own "
     "work."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_getters[] = {
    {"armed", GetArmed, nullptr,
     "Armed, with the session's config unchanged since.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

}  // namespace

void DefineQuietSteps(pybind11::module_& m, FindPySession session_of) {
  g_session_of = session_of;
  PyTypeObject& type = g_type;
  type.tp_name = "tprobe._C.QuietSteps";
  type.tp_doc =
      "QuietSteps(): the start(), stop() and step() of a step that records "
      "nothing, without the debugger's Python (disarmed until arm()).";
  type.tp_basicsize = sizeof(QuietSteps);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_new = New;
  type.tp_dealloc = Dealloc;
  type.tp_methods = g_methods;
  type.tp_getset = g_getters;
  ReadyType(&type);
  AddType(m, "QuietSteps", &type);
}

}  // namespace tprobe::python
