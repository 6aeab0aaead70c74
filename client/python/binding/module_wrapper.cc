// The module call wrapper in C++ (module_wrapper.h).

#include "client/python/binding/module_wrapper.h"

#include <Python.h>

#include <cstddef>

#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

struct ModuleWrapper {
  PyObject_HEAD PyObject* module;
  PyObject* call;      // module._call_impl
  PyObject* pre;       // pre(module, args, kwargs) -> None | (args, kwargs)
  PyObject* post;      // post(module, args, kwargs, output) -> None | output
  PyObject* abort;     // abort(module), after call raised
  PyObject* compiled;  // compiled(module), under torch.compile
};

PyTypeObject g_wrapper_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// Takes pre's result `r` (a new reference) into *args and *kwargs (owned);
// false with an error set when it is neither None nor (tuple, dict).
bool TakeInputs(PyObject* r, PyObject** args, PyObject** kwargs) {
  if (r == Py_None) {
    Py_DECREF(r);
    return true;
  }
  if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
      !PyTuple_Check(PyTuple_GET_ITEM(r, 0)) ||
      !PyDict_Check(PyTuple_GET_ITEM(r, 1))) {
    PyErr_Format(PyExc_RuntimeError,
                 "a module call's pre must return None or (args, kwargs), "
                 "not %R",
                 r);
    Py_DECREF(r);
    return false;
  }
  Py_SETREF(*args, Py_NewRef(PyTuple_GET_ITEM(r, 0)));
  Py_SETREF(*kwargs, Py_NewRef(PyTuple_GET_ITEM(r, 1)));
  Py_DECREF(r);
  return true;
}

// The forward ran into an exception: abort(module) with the exception kept
// aside, then the exception back in place.
void Abort(const ModuleWrapper* w) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* done = PyObject_CallOneArg(w->abort, w->module);
  if (done == nullptr) PyErr_Clear();
  Py_XDECREF(done);
  PyErr_Restore(type, value, traceback);
}

// Whether a frame evaluator other than CPython's own is in: torch.compile's
// Dynamo puts its own in while it runs a compiled model.
bool UnderFrameEvaluator() {
  return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) !=
         _PyEval_EvalFrameDefault;
}

// Module.__call__ calls `_compiled_call_impl(*args, **kwargs)`: tp_call
// takes that tuple and dict as they are.
PyObject* WrapperCall(PyObject* self, PyObject* given_args,
                      PyObject* given_kwargs) {
  const auto* w = reinterpret_cast<ModuleWrapper*>(self);
  if (UnderFrameEvaluator()) {
    // compiled() puts hooks in its place, which `call` runs.
    PyObject* done = PyObject_CallOneArg(w->compiled, w->module);
    if (done == nullptr) PyErr_Clear();
    Py_XDECREF(done);
    return PyObject_Call(w->call, given_args, given_kwargs);
  }
  PyObject* args = Py_NewRef(given_args);
  PyObject* kwargs =
      given_kwargs != nullptr ? Py_NewRef(given_kwargs) : PyDict_New();
  PyObject* output = nullptr;
  if (kwargs != nullptr) {
    PyObject* pre_args[] = {w->module, args, kwargs};
    PyObject* r = PyObject_Vectorcall(w->pre, pre_args, 3, nullptr);
    if (r != nullptr && TakeInputs(r, &args, &kwargs)) {
      output = PyObject_Call(w->call, args, kwargs);
      if (output == nullptr) {
        Abort(w);
      } else {
        PyObject* post_args[] = {w->module, args, kwargs, output};
        r = PyObject_Vectorcall(w->post, post_args, 4, nullptr);
        if (r == nullptr) {
          Py_CLEAR(output);
        } else if (r == Py_None) {
          Py_DECREF(r);
        } else {
          Py_SETREF(output, r);
        }
      }
    }
  }
  Py_DECREF(args);
  Py_XDECREF(kwargs);
  return output;
}

PyObject* WrapperNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"module", "call",     "pre",  "post",
                                   "abort",  "compiled", nullptr};
  PyObject *module, *call, *pre, *post, *abort, *compiled;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOO",
                                   const_cast<char**>(keywords), &module, &call,
                                   &pre, &post, &abort, &compiled)) {
    return nullptr;
  }
  for (PyObject* f : {call, pre, post, abort, compiled}) {
    if (!PyCallable_Check(f)) {
      PyErr_Format(PyExc_TypeError,
                   "ModuleWrapper takes callables for call, pre, post, "
                   "abort and compiled, not %R",
                   f);
      return nullptr;
    }
  }
  auto* w = reinterpret_cast<ModuleWrapper*>(type->tp_alloc(type, 0));
  if (w == nullptr) return nullptr;
  w->module = Py_NewRef(module);
  w->call = Py_NewRef(call);
  w->pre = Py_NewRef(pre);
  w->post = Py_NewRef(post);
  w->abort = Py_NewRef(abort);
  w->compiled = Py_NewRef(compiled);
  return reinterpret_cast<PyObject*>(w);
}

// The module holds its wrapper (in its __dict__) and the wrapper the
// module: a cycle, which the collector breaks.
int WrapperTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<ModuleWrapper*>(self);
  Py_VISIT(w->module);
  Py_VISIT(w->call);
  Py_VISIT(w->pre);
  Py_VISIT(w->post);
  Py_VISIT(w->abort);
  Py_VISIT(w->compiled);
  return 0;
}

int WrapperClear(PyObject* self) {
  auto* w = reinterpret_cast<ModuleWrapper*>(self);
  Py_CLEAR(w->module);
  Py_CLEAR(w->call);
  Py_CLEAR(w->pre);
  Py_CLEAR(w->post);
  Py_CLEAR(w->abort);
  Py_CLEAR(w->compiled);
  return 0;
}

void WrapperDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  WrapperClear(self);
  Py_TYPE(self)->tp_free(self);
}

// The fields stay readable (a DataParallel replica's wrapper is made from
// its module's) but fixed.
template <PyObject* ModuleWrapper::*Field>
PyObject* Get(PyObject* self, void*) {
  PyObject* value = reinterpret_cast<ModuleWrapper*>(self)->*Field;
  return Py_NewRef(value != nullptr ? value : Py_None);
}

PyGetSetDef g_wrapper_getset[] = {
    {"module", Get<&ModuleWrapper::module>, nullptr, "the wrapped module",
     nullptr},
    {"pre", Get<&ModuleWrapper::pre>, nullptr, "pre(module, args, kwargs)",
     nullptr},
    {"post", Get<&ModuleWrapper::post>, nullptr,
     "post(module, args, kwargs, output)", nullptr},
    {"abort", Get<&ModuleWrapper::abort>, nullptr, "abort(module)", nullptr},
    {"compiled", Get<&ModuleWrapper::compiled>, nullptr, "compiled(module)",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

void DefineModuleWrapper(py::module_& m) {
  PyTypeObject& wrapper = g_wrapper_type;
  wrapper.tp_name = "tprobe._C.ModuleWrapper";
  wrapper.tp_doc =
      "ModuleWrapper(module, call, pre, post, abort, compiled): a module's "
      "_compiled_call_impl that calls pre(module, args, kwargs), "
      "call(*args, **kwargs), post(module, args, kwargs, output), and "
      "abort(module) when call raises; under torch.compile, "
      "compiled(module) and call(*args, **kwargs) alone.";
  wrapper.tp_basicsize = sizeof(ModuleWrapper);
  wrapper.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  wrapper.tp_new = WrapperNew;
  wrapper.tp_dealloc = WrapperDealloc;
  wrapper.tp_traverse = WrapperTraverse;
  wrapper.tp_clear = WrapperClear;
  wrapper.tp_call = WrapperCall;
  wrapper.tp_getset = g_wrapper_getset;
  ReadyType(&wrapper);
  AddType(m, "ModuleWrapper", &wrapper);
}

}  // namespace tprobe::python
