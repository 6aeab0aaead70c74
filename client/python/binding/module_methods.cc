// Session's and Call's per-module-call methods as fastcall methods
// (module_methods.h).

#include "client/python/binding/module_methods.h"

#include <Python.h>

#include <cstdint>

#include "client/python/binding/call_stack.h"
#include "client/python/binding/entry_values.h"
#include "client/python/binding/hooked_session.h"
#include "client/python/binding/py_session.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

// The C++ object behind `self`, a Session or a Call (the descriptor has
// checked its type); null with TypeError set when pybind11 has none.
template <typename T>
T* Self(PyObject* self) {
  try {
    return &py::handle(self).cast<T&>();
  } catch (const py::cast_error&) {
    PyErr_SetString(PyExc_TypeError, "an uninitialized tprobe._C object");
    return nullptr;
  }
}

PyObject* ModuleOpen(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  PySession* s = Self<PySession>(self);
  if (s == nullptr || !Arity("Session.module_open", n, 3, 4)) return nullptr;
  const Stack* stack = nullptr;
  if (n == 4 && args[3] != Py_None) {
    try {
      stack = py::handle(args[3]).cast<const Stack*>();
    } catch (const py::cast_error&) {
      PyErr_SetString(PyExc_TypeError,
                      "Session.module_open: stack must be a Stack or None");
      return nullptr;
    }
  }
  return s->modules().Open(args[0], args[1], args[2], stack).release().ptr();
}

PyObject* ModuleEnd(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  PySession* s = Self<PySession>(self);
  if (s == nullptr || !Arity("Session.module_end", n, 3, 3)) return nullptr;
  s->modules().End(args[0], args[1], args[2]);
  Py_RETURN_NONE;
}

PyObject* ModuleBackwardBegin(PyObject* self, PyObject* const* args,
                              Py_ssize_t n) {
  PySession* s = Self<PySession>(self);
  if (s == nullptr || !Arity("Session.module_backward_begin", n, 2, 2)) {
    return nullptr;
  }
  const int64_t index = PyLong_AsLongLong(args[1]);
  if (index == -1 && PyErr_Occurred()) return nullptr;
  return s->modules().BackwardBegin(args[0], index).release().ptr();
}

PyObject* ModuleBackwardEnd(PyObject* self, PyObject* const* args,
                            Py_ssize_t n) {
  PySession* s = Self<PySession>(self);
  if (s == nullptr || !Arity("Session.module_backward_end", n, 1, 3))
    return nullptr;
  s->modules().BackwardEnd(args[0], n > 1 ? args[1] : NoEntry(),
                           n > 2 ? args[2] : NoEntry());
  Py_RETURN_NONE;
}

PyObject* ParamGrad(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  PySession* s = Self<PySession>(self);
  if (s == nullptr || !Arity("Session.param_grad", n, 3, 3)) return nullptr;
  return PyBool_FromLong(s->modules().ParamGrad(args[0], args[1], args[2]));
}

// The methods, with their signatures for help() (the text before "--").
PyMethodDef g_methods[] = {
    {"module_open", AsMethod(ModuleOpen), METH_FASTCALL,
     "module_open($self, base, args, kwargs, stack=None, /)\n--\n\n"
     "module_begin and then module_inputs (kwargs None: none), in one "
     "call; returns the Call (None: not recorded, else module_end must "
     "follow). The call's stack is `stack` (a Stack) when given, else the "
     "running code's."},
    {"module_end", AsMethod(ModuleEnd), METH_FASTCALL,
     "module_end($self, call, output, parameters, /)\n--\n\n"
     "Writes the module call's outputs (if scope, list and data_mode keep "
     "them; never for a Call without `entry`) and closes it."},
    {"module_backward_begin", AsMethod(ModuleBackwardBegin), METH_FASTCALL,
     "module_backward_begin($self, base, index, /)\n--\n\n"
     "Opens the backward of forward call `index` of a module; returns its "
     "Call (None: not recorded, else module_backward_end must follow)."},
    {"module_backward_end", AsMethod(ModuleBackwardEnd), METH_FASTCALL,
     "module_backward_end($self, call, input=<none>, output=<none>, /)"
     "\n--\n\n"
     "Writes the module backward's entry and closes it; a side left out "
     "is not written."},
    {"param_grad", AsMethod(ParamGrad), METH_FASTCALL,
     "param_grad($self, base, name, grad, /)\n--\n\n"
     "Records a parameter gradient of the module `base`; False when it "
     "is not recorded."},
};

template <bool ApiCall::*Field>
PyObject* GetFlag(PyObject* self, void*) {
  Call* call = Self<Call>(self);
  if (call == nullptr) return nullptr;
  return PyBool_FromLong(call->*Field);
}

PyObject* GetIndex(PyObject* self, void*) {
  Call* call = Self<Call>(self);
  if (call == nullptr) return nullptr;
  return PyLong_FromUnsignedLong(call->plan.index);
}

PyGetSetDef g_call_getters[] = {
    {"entry", GetFlag<&ApiCall::entry>, nullptr,
     "Pass the call's stack and data to *_inputs / *_end.", nullptr},
    {"input", GetFlag<&ApiCall::input>, nullptr, "data_mode keeps the inputs.",
     nullptr},
    {"backward", GetFlag<&ApiCall::backward>, nullptr,
     "Report the call's backward.", nullptr},
    {"index", GetIndex, nullptr, "N in the call's name (its backward's too).",
     nullptr},
};

// Sets `descriptor` (a new reference, or null with an error set) on `type`
// as `name`.
void Put(py::handle type, const char* name, PyObject* descriptor) {
  if (descriptor == nullptr ||
      PyObject_SetAttrString(type.ptr(), name, descriptor) != 0) {
    Py_XDECREF(descriptor);
    throw py::error_already_set();
  }
  Py_DECREF(descriptor);
}

}  // namespace

void DefineModuleMethods(py::handle session, py::handle call) {
  auto* session_type = reinterpret_cast<PyTypeObject*>(session.ptr());
  for (PyMethodDef& method : g_methods) {
    Put(session, method.ml_name, PyDescr_NewMethod(session_type, &method));
  }
  auto* call_type = reinterpret_cast<PyTypeObject*>(call.ptr());
  for (PyGetSetDef& getter : g_call_getters) {
    Put(call, getter.name, PyDescr_NewGetSet(call_type, &getter));
  }
}

}  // namespace tprobe::python
