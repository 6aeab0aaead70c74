// A parameter's gradient hook in C++ (param_grad_hook.h).

#include "client/python/binding/param_grad_hook.h"

#include <Python.h>
#include <structmember.h>

#include <cstddef>

#include "client/python/binding/hook_state.h"
#include "client/python/binding/module_calls.h"
#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

PyObject* s_grad = nullptr;

struct ParamGradHook {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* rt;    // the Runtime (a HookState)
  PyObject* base;  // Module.{path}.{Class}
  PyObject* name;  // the parameter's name in the module
  char of_param;   // called with the parameter: its .grad is the gradient
};

PyTypeObject g_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// hook(grad_or_param)
PyObject* HookCall(PyObject* self, PyObject* const* args, size_t nargsf,
                   PyObject* kwnames) {
  auto* hook = reinterpret_cast<ParamGradHook*>(self);
  if (PyVectorcall_NARGS(nargsf) != 1 ||
      (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError,
                    "a parameter gradient hook takes one argument");
    return nullptr;
  }
  HookState* state = Recording(hook->rt);
  if (state == nullptr) Py_RETURN_NONE;
  PyObject* grad =
      hook->of_param ? PyObject_GetAttr(args[0], s_grad) : Py_NewRef(args[0]);
  if (grad == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return nullptr;
    WarnOnce(hook->rt, "a parameter gradient hook");
    Py_RETURN_NONE;
  }
  if (grad != Py_None) {
    PyObject* session = Py_NewRef(state->session);  // keeps modules alive
    ++ThreadBusy();
    state->modules->ParamGrad(hook->base, hook->name, grad);
    --ThreadBusy();
    Py_DECREF(session);
  }
  Py_DECREF(grad);
  Py_RETURN_NONE;
}

PyObject* HookNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"rt", "base", "name", "of_param", nullptr};
  PyObject *rt, *base, *name;
  int of_param;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OUUp",
                                   const_cast<char**>(keywords), &rt, &base,
                                   &name, &of_param)) {
    return nullptr;
  }
  if (AsHookState(rt) == nullptr) {
    PyErr_SetString(PyExc_TypeError, "ParamGradHook: rt must be a HookState");
    return nullptr;
  }
  auto* hook = reinterpret_cast<ParamGradHook*>(type->tp_alloc(type, 0));
  if (hook == nullptr) return nullptr;
  hook->vectorcall = HookCall;
  hook->rt = Py_NewRef(rt);
  hook->base = Py_NewRef(base);
  hook->name = Py_NewRef(name);
  hook->of_param = static_cast<char>(of_param);
  return reinterpret_cast<PyObject*>(hook);
}

// The hook holds the Runtime, which holds the hooks' handles: a cycle the
// collector breaks.
int HookTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<ParamGradHook*>(self)->rt);
  return 0;
}

int HookClear(PyObject* self) {
  Py_CLEAR(reinterpret_cast<ParamGradHook*>(self)->rt);
  return 0;
}

void HookDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  auto* hook = reinterpret_cast<ParamGradHook*>(self);
  Py_CLEAR(hook->rt);
  Py_CLEAR(hook->base);
  Py_CLEAR(hook->name);
  Py_TYPE(self)->tp_free(self);
}

PyMemberDef g_members[] = {{"base", T_OBJECT, offsetof(ParamGradHook, base),
                            READONLY, "Module.{path}.{Class}"},
                           {"name", T_OBJECT, offsetof(ParamGradHook, name),
                            READONLY, "the parameter's name in the module"},
                           {nullptr, 0, 0, 0, nullptr}};

}  // namespace

void DefineParamGradHook(py::module_& m) {
  s_grad = InternName("grad");
  PyTypeObject& type = g_type;
  type.tp_name = "tprobe._C.ParamGradHook";
  type.tp_doc =
      "ParamGradHook(rt, base, name, of_param): a parameter's gradient "
      "hook that reports the gradient it is given (of_param: the .grad of "
      "the parameter it is given) to rt.session while rt.on.";
  type.tp_basicsize = sizeof(ParamGradHook);
  type.tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  type.tp_new = HookNew;
  type.tp_dealloc = HookDealloc;
  type.tp_traverse = HookTraverse;
  type.tp_clear = HookClear;
  type.tp_vectorcall_offset = offsetof(ParamGradHook, vectorcall);
  type.tp_call = PyVectorcall_Call;
  type.tp_members = g_members;
  ReadyType(&type);
  AddType(m, "ParamGradHook", &type);
}

}  // namespace tprobe::python
