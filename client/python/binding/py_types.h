// What the binding's hand-written C types (api_hook.cc, module_alias.cc)
// share at definition: readying a type, adding it to the module, and the
// interned attribute names they read. Each throws
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

// `text` as an interned str, kept for the life of the process.
inline PyObject* InternName(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) throw pybind11::error_already_set();
  return s;
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PY_TYPES_H_
