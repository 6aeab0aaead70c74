// tprobe._C.SteadySteps (steady_steps.h).

#include "client/python/binding/steady_steps.h"

#include <Python.h>

#include "client/python/binding/hook_state.h"
#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_session.h"
#include "client/python/binding/py_types.h"
#include "client/python/binding/session_binding.h"

namespace tprobe::python {
namespace {

// At most this many dicts are watched.
constexpr Py_ssize_t kMaxWatched = 4;

struct SteadySteps {
  PyObject_HEAD PyObject* rt;     // the armed Runtime (a HookState), or null
  PyObject* session;              // its session then, held
  PySession* core;                // that session's PySession
  PyObject* model;                // a weak reference to the model, or None
  PyObject* watched;              // a tuple of dicts
  Py_ssize_t sizes[kMaxWatched];  // their sizes when armed
  const void* config;             // core->ConfigIdentity() when armed
  bool records;                   // the armed step records (rt's `on`)
};

SteadySteps* Of(PyObject* self) { return reinterpret_cast<SteadySteps*>(self); }

HookState* State(const SteadySteps* s) {
  return reinterpret_cast<HookState*>(s->rt);
}

void Disarm(SteadySteps* s) {
  Py_CLEAR(s->rt);
  Py_CLEAR(s->session);
  Py_CLEAR(s->model);
  Py_CLEAR(s->watched);
  s->core = nullptr;
  s->config = nullptr;
  s->records = false;
}

bool Armed(const SteadySteps* s) {
  return s->rt != nullptr && State(s)->session == s->session &&
         s->core->ConfigIdentity() == s->config;
}

// Whether every watched dict has the size it had when armed.
bool Unchanged(const SteadySteps* s) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(s->watched); ++i) {
    if (PyDict_GET_SIZE(PyTuple_GET_ITEM(s->watched, i)) != s->sizes[i]) {
      return false;
    }
  }
  return true;
}

// Whether `model` is the one armed with.
bool SameModel(const SteadySteps* s, PyObject* model) {
  if (s->model == Py_None || model == Py_None) return s->model == model;
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* armed = nullptr;
  if (PyWeakref_GetRef(s->model, &armed) < 0) {
    PyErr_Clear();
    return false;
  }
  Py_XDECREF(armed);  // only compared
  return armed == model;
#else
  return PyWeakref_GetObject(s->model) == model;  // None once it is gone
#endif
}

// arm(rt, model, watched=())
PyObject* Arm(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  SteadySteps* s = Of(self);
  if (!Arity("SteadySteps.arm", n, 2, 3)) return nullptr;
  Disarm(s);
  PyObject* watched = n > 2 ? args[2] : nullptr;
  if (watched != nullptr) {
    bool dicts =
        PyTuple_Check(watched) && PyTuple_GET_SIZE(watched) <= kMaxWatched;
    for (Py_ssize_t i = 0; dicts && i < PyTuple_GET_SIZE(watched); ++i) {
      dicts = PyDict_Check(PyTuple_GET_ITEM(watched, i));
    }
    if (!dicts) {
      PyErr_Format(PyExc_TypeError,
                   "SteadySteps.arm: watched must be a tuple of at most %zd "
                   "dicts",
                   kMaxWatched);
      return nullptr;
    }
  }
  HookState* state = AsHookState(args[0]);
  if (state == nullptr) {
    PyErr_SetString(PyExc_TypeError,
                    "SteadySteps.arm: rt must be a tprobe._C.HookState");
    return nullptr;
  }
  PySession* core =
      state->session != nullptr ? PySessionOf(state->session) : nullptr;
  const void* config = core != nullptr ? core->ConfigIdentity() : nullptr;
  if (config == nullptr) Py_RETURN_FALSE;  // no session, or it is closed
  PyObject* model = args[1] == Py_None ? Py_NewRef(Py_None)
                                       : PyWeakref_NewRef(args[1], nullptr);
  if (model == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
    PyErr_Clear();  // a model without weak references (a list) is not armed
    Py_RETURN_FALSE;
  }
  s->rt = Py_NewRef(args[0]);
  s->session = Py_NewRef(state->session);
  s->core = core;
  s->model = model;
  s->watched = watched != nullptr ? Py_NewRef(watched) : PyTuple_New(0);
  if (s->watched == nullptr) {
    Disarm(s);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(s->watched); ++i) {
    s->sizes[i] = PyDict_GET_SIZE(PyTuple_GET_ITEM(s->watched, i));
  }
  s->config = config;
  s->records = state->on != 0;
  Py_RETURN_TRUE;
}

PyObject* DisarmMethod(PyObject* self, PyObject*) {
  Disarm(Of(self));
  Py_RETURN_NONE;
}

// start(model=None)
PyObject* Start(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  const SteadySteps* s = Of(self);
  if (!Arity("SteadySteps.start", n, 0, 1)) return nullptr;
  if (!Armed(s) || !SameModel(s, n > 0 ? args[0] : Py_None) ||
      !s->core->StartIfSelected(s->records)) {
    Py_RETURN_FALSE;
  }
  State(s)->on = s->records;
  Py_RETURN_TRUE;
}

PyObject* Stop(PyObject* self, PyObject*) {
  const SteadySteps* s = Of(self);
  if (!Armed(s) || s->core->collecting() != s->records) Py_RETURN_FALSE;
  s->core->Stop();
  State(s)->on = 0;  // no session collects after its stop()
  Py_RETURN_TRUE;
}

PyObject* Step(PyObject* self, PyObject*) {
  const SteadySteps* s = Of(self);
  return PyBool_FromLong(Armed(s) && Unchanged(s) && s->core->StepIfStopped());
}

PyObject* GetArmed(PyObject* self, void*) {
  return PyBool_FromLong(Armed(Of(self)));
}

PyObject* GetRecords(PyObject* self, void*) {
  return PyBool_FromLong(Of(self)->records);
}

PyObject* New(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 ||
      (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "SteadySteps() takes no arguments");
    return nullptr;
  }
  return type->tp_alloc(type, 0);  // disarmed: every field null
}

// The objects an armed SteadySteps holds, for the cycle collector: a
// watched dict may hold hooks that lead back to whatever holds this one.
int Traverse(PyObject* self, visitproc visit, void* arg) {
  const SteadySteps* s = Of(self);
  Py_VISIT(s->rt);
  Py_VISIT(s->session);
  Py_VISIT(s->model);
  Py_VISIT(s->watched);
  return 0;
}

int Clear(PyObject* self) {
  Disarm(Of(self));
  return 0;
}

void Dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  Disarm(Of(self));
  Py_TYPE(self)->tp_free(self);
}

PyMethodDef g_methods[] = {
    {"arm", AsMethod(Arm), METH_FASTCALL,
     "arm($self, rt, model, watched=(), /)\n--\n\n"
     "Arms for steps like the one start(model) just started: recorded when "
     "rt.on, else not, in rt.session under its config now; step() is the "
     "debugger's once a dict of `watched` changed size. False (and "
     "disarmed) when `model` takes no weak reference or the session is "
     "closed."},
    {"disarm", DisarmMethod, METH_NOARGS,
     "disarm($self, /)\n--\n\nEvery boundary returns False until arm()."},
    {"start", AsMethod(Start), METH_FASTCALL,
     "start($self, model=None, /)\n--\n\n"
     "Starts a step like the armed one for the model armed with, setting "
     "rt.on; False, with nothing done, where start() must do its own "
     "work."},
    {"stop", Stop, METH_NOARGS,
     "stop($self, /)\n--\n\n"
     "Stops a step like the armed one, clearing rt.on; False, with nothing "
     "done, where stop() must do its own work."},
    {"step", Step, METH_NOARGS,
     "step($self, /)\n--\n\n"
     "Ends a stopped step when no live config is offered and no watched "
     "dict changed size; False, with nothing done, where step() must do "
     "its own work."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_getters[] = {
    {"armed", GetArmed, nullptr,
     "Armed, with rt's session and its config unchanged since.", nullptr},
    {"records", GetRecords, nullptr, "The armed step records.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

}  // namespace

void DefineSteadySteps(pybind11::module_& m) {
  PyTypeObject& type = g_type;
  type.tp_name = "tprobe._C.SteadySteps";
  type.tp_doc =
      "SteadySteps(): the start(), stop() and step() of a step like the "
      "last one, without the debugger's Python (disarmed until arm()).";
  type.tp_basicsize = sizeof(SteadySteps);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  type.tp_new = New;
  type.tp_dealloc = Dealloc;
  type.tp_traverse = Traverse;
  type.tp_clear = Clear;
  type.tp_methods = g_methods;
  type.tp_getset = g_getters;
  ReadyType(&type);
  AddType(m, "SteadySteps", &type);
}

}  // namespace tprobe::python
