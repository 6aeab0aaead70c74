// The framework types the value encoder compares Python values against
// (torch.Tensor, torch.Size, mindspore.Tensor, numpy.generic, ...), found by
// importing their modules on first use: importing tprobe._C imports no
// framework, and a MindSpore session never imports torch. What is found is
// kept for the life of the interpreter (never freed).
//
// Thread safety: every function needs the GIL, which also guards the types
// and the dtype cache.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_TYPE_DISCOVERY_H_
#define TPROBE_CLIENT_PYTHON_BINDING_TYPE_DISCOVERY_H_

#include <Python.h>

#include <optional>
#include <unordered_map>

#include "common/dtype.h"

namespace tprobe::python {

// How a session encodes its values: msprobe writes PyTorch's and
// MindSpore's values differently. The adapter's descriptor names it
// (tprobe._C.ValueEncoding).
enum class ValueEncoding { kTorch, kMindSpore };

// The types looked up so far; nullptr for those not (yet) found.
struct FrameworkTypes {
  PyObject* tensor = nullptr;         // torch.Tensor
  PyObject* size = nullptr;           // torch.Size
  PyObject* dtype = nullptr;          // torch.dtype
  PyObject* device = nullptr;         // torch.device
  PyObject* memory_format = nullptr;  // torch.memory_format
  PyObject* np_generic = nullptr;     // numpy.generic, if numpy imports
  PyObject* ms_tensor = nullptr;      // mindspore.Tensor
  PyObject* ms_dtype = nullptr;       // mindspore's dtype base (typing.Type)
  // torch.dtype or mindspore dtype object -> ring dtype; nullopt for dtypes
  // the ring lacks.
  std::unordered_map<PyObject*, std::optional<DType>> dtypes;
  // Called for values of any other type (see tprobe._C.set_fallback).
  PyObject* fallback = nullptr;
  bool ready = false;     // the torch types
  bool ms_ready = false;  // the mindspore types
};

// The process's one FrameworkTypes.
FrameworkTypes& Types();

// Looks up the types of `encoding`'s framework (and numpy's) unless that was
// done. Raises pybind11's error_already_set when the framework does not import;
// a missing numpy leaves np_generic null.
void InitTypes(ValueEncoding encoding);

// Whether `obj` is an instance of `type`; false for a type not found (null).
inline bool IsInstance(PyObject* obj, PyObject* type) {
  return type != nullptr &&
         PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(type));
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_TYPE_DISCOVERY_H_
