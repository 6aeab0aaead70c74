// What the binding uses from Python 3.10's C API on older interpreters
// (the package supports CPython 3.9 and later).

#pragma once

#include <Python.h>

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject* Py_NewRef(PyObject* o) {
  Py_INCREF(o);
  return o;
}
#endif
