// _Alias's forward and backward in C++ (module_alias.h).

#include "client/python/binding/module_alias.h"

#include <Python.h>

#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

PyObject* s_report = nullptr;
PyObject* s_materialize_grads = nullptr;

// --- AliasForward -----------------------------------------------------------

struct AliasForward {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* detach;  // torch.Tensor.detach
};

PyTypeObject g_forward_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// forward(ctx, report, *tensors)
PyObject* ForwardCall(PyObject* self, PyObject* const* args, size_t nargsf,
                      PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 2 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError,
                    "forward takes (ctx, report, *tensors) by position");
    return nullptr;
  }
  PyObject* ctx = args[0];
  if (PyObject_SetAttr(ctx, s_report, args[1]) != 0 ||
      PyObject_SetAttr(ctx, s_materialize_grads, Py_False) != 0) {
    return nullptr;
  }
  PyObject* detach = reinterpret_cast<AliasForward*>(self)->detach;
  PyObject* out = PyTuple_New(n - 2);
  if (out == nullptr) return nullptr;
  for (Py_ssize_t i = 2; i < n; ++i) {
    PyObject* alias = PyObject_Vectorcall(detach, args + i, 1, nullptr);
    if (alias == nullptr) {
      Py_DECREF(out);
      return nullptr;
    }
    PyTuple_SET_ITEM(out, i - 2, alias);
  }
  return out;
}

PyObject* ForwardNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"detach", nullptr};
  PyObject* detach;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O",
                                   const_cast<char**>(keywords), &detach)) {
    return nullptr;
  }
  if (!PyCallable_Check(detach)) {
    PyErr_SetString(PyExc_TypeError, "detach must be callable");
    return nullptr;
  }
  auto* f = reinterpret_cast<AliasForward*>(type->tp_alloc(type, 0));
  if (f == nullptr) return nullptr;
  f->vectorcall = ForwardCall;
  Py_INCREF(detach);
  f->detach = detach;
  return reinterpret_cast<PyObject*>(f);
}

void ForwardDealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<AliasForward*>(self)->detach);
  Py_TYPE(self)->tp_free(self);
}

// --- alias_backward ---------------------------------------------------------

struct AliasBackward {
  PyObject_HEAD vectorcallfunc vectorcall;
};

PyTypeObject g_backward_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// backward(ctx, *grads)
PyObject* BackwardCall(PyObject*, PyObject* const* args, size_t nargsf,
                       PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 1 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError,
                    "backward takes (ctx, *grads) by position");
    return nullptr;
  }
  PyObject* out = PyTuple_New(n);
  if (out == nullptr) return nullptr;
  PyTuple_SET_ITEM(out, 0, Py_NewRef(Py_None));
  for (Py_ssize_t i = 1; i < n; ++i) {
    PyTuple_SET_ITEM(out, i, Py_NewRef(args[i]));
  }
  // The report gets the gradients alone; a failure of it is swallowed
  // (never break the backward pass), as the Python backward did.
  PyObject* grads = PyTuple_GetSlice(out, 1, n);
  PyObject* report = grads ? PyObject_GetAttr(args[0], s_report) : nullptr;
  PyObject* done = report ? PyObject_CallOneArg(report, grads) : nullptr;
  if (done == nullptr) PyErr_Clear();
  Py_XDECREF(done);
  Py_XDECREF(report);
  Py_XDECREF(grads);
  return out;
}

// Bound like a function: the node's `apply` gets the node as ctx.
PyObject* BackwardGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

}  // namespace

void DefineModuleAlias(py::module_& m) {
  s_report = InternName("report");
  s_materialize_grads = InternName("materialize_grads");

  PyTypeObject& forward = g_forward_type;
  forward.tp_name = "tprobe._C.AliasForward";
  forward.tp_doc =
      "AliasForward(detach): an autograd Function's forward(ctx, report, "
      "*tensors): ctx.report = report, ctx.materialize_grads = False, "
      "returns (detach(t), ...).";
  forward.tp_basicsize = sizeof(AliasForward);
  forward.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  forward.tp_new = ForwardNew;
  forward.tp_dealloc = ForwardDealloc;
  forward.tp_vectorcall_offset = offsetof(AliasForward, vectorcall);
  forward.tp_call = PyVectorcall_Call;
  ReadyType(&forward);
  AddType(m, "AliasForward", &forward);

  PyTypeObject& backward = g_backward_type;
  backward.tp_name = "tprobe._C.AliasBackward";
  backward.tp_doc =
      "An autograd node's backward(ctx, *grads), bound like a method: "
      "calls ctx.report(grads) (what it raises is swallowed) and returns "
      "(None,) + grads.";
  backward.tp_basicsize = sizeof(AliasBackward);
  backward.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                      Py_TPFLAGS_METHOD_DESCRIPTOR;
  backward.tp_vectorcall_offset = offsetof(AliasBackward, vectorcall);
  backward.tp_call = PyVectorcall_Call;
  backward.tp_descr_get = BackwardGet;
  ReadyType(&backward);
  auto* instance = PyObject_New(AliasBackward, &backward);
  if (instance == nullptr) throw py::error_already_set();
  instance->vectorcall = BackwardCall;
  m.attr("alias_backward") =
      py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(instance));
}

}  // namespace tprobe::python
