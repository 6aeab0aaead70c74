// What the binding's hand-written C types share at definition: readying a
// type, adding it to the module, fastcall methods and the interned
// attribute names they read. Each throws
// pybind11::error_already_set on failure, at import of tprobe._C.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_PY_TYPES_H_
#define TPROBE_CLIENT_PYTHON_BINDING_PY_TYPES_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

inline void ReadyType(PyTypeObject* type) {
  if (PyType_Ready(type) != 0) throw pybind11::error_already_set();
}

// Adds `type` to module `m` as `name`.
inline void AddType(pybind11::module_& m, const char* name,
                    PyTypeObject* type) {
  m.attr(name) = pybind11::reinterpret_borrow<pybind11::object>(
      reinterpret_cast<PyObject*>(type));
}

// A METH_FASTCALL function, and the type PyMethodDef holds it as.
using FastMethod = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);

inline PyCFunction AsMethod(FastMethod f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

// Whether a fastcall method's `nargs` is within [least, most]; TypeError
// set when not. `name` is the method as its caller knows it
// ("Session.module_open").
inline bool Arity(const char* name, Py_ssize_t nargs, Py_ssize_t least,
                  Py_ssize_t most) {
  if (nargs >= least && nargs <= most) return true;
  if (least == most) {
    PyErr_Format(PyExc_TypeError,
                 "%s takes %zd positional arguments (%zd given)", name, least,
                 nargs);
  } else {
    PyErr_Format(PyExc_TypeError,
                 "%s takes %zd to %zd positional arguments (%zd given)", name,
                 least, most, nargs);
  }
  return false;
}

// `text` as an interned str, kept for the life of the process.
inline PyObject* InternName(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) throw pybind11::error_already_set();
  return s;
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PY_TYPES_H_
