// A torch.Tensor's dtype, device, sizes, strides and data pointer read
// through PyTorch's stable C shim: the aoti_torch_* functions libtorch
// exports for AOTInductor's compiled models, whose C ABI PyTorch keeps
// across releases. A read costs a few indirect calls where the Python
// attributes cost one getter or method call each (about 2,000 instructions
// a tensor between them). The binding links no libtorch: the functions are
// looked up in the libtorch the process has already loaded, and where they
// are missing (PyTorch 1.13 has none) the encoder reads Python's attributes
// as before.
//
// What the shim is handed is an at::Tensor, which the Python object holds.
// Where it sits in the object is not part of the ABI, so UseTensorShim
// checks it on a sample tensor and turns the shim on only when every fact
// reads the same through the shim as through Python; only tensors of
// exactly the types it is given (torch.Tensor and torch.nn.Parameter, whose
// attributes are torch's own getters) are read through it. Anything the
// shim reports an error for (a sparse tensor's strides, data of a tensor
// without storage) is read through Python.
//
// Thread safety: every function needs the GIL.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_TENSOR_SHIM_H_
#define TPROBE_CLIENT_PYTHON_BINDING_TENSOR_SHIM_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <span>

#include "common/dtype.h"

namespace tprobe::python {

// What ReadTensorFacts reads of one tensor.
struct TensorFacts {
  DType dtype = DType::kFloat32;
  bool is_cpu = false;
  std::span<const int64_t> sizes;
  std::span<const int64_t> strides;
  const void* data = nullptr;  // its first element (storage plus offset)

  // torch's is_contiguous(): row-major strides, dimensions of size one
  // skipped; an empty tensor is contiguous.
  bool contiguous() const;
};

// Turns the shim on for tensors whose type is one of `types` (a tuple of
// types), when `sample` (a CPU float32 tensor with a storage offset and
// strides that are not row-major) reads the same through it as through
// Python; turns it off when `sample` is None. Returns whether it is on.
// Raises TypeError (the shim as it was) when `types` holds a non-type.
bool UseTensorShim(pybind11::handle sample, const pybind11::tuple& types);

// Reads `t` through the shim; false (out unspecified) when the shim is off,
// t's type is not one of its types, its dtype is one the ring lacks, it is
// a meta tensor, or the shim reports an error: the caller reads it through
// Python then.
bool ReadTensorFacts(PyObject* t, TensorFacts* out);

// Whether torch's grad mode is off on this thread, read through the shim
// (one call, where torch.is_grad_enabled() costs a Python call): false when
// it is on, or when the shim is off or lacks the function.
bool GradModeKnownOff();

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_TENSOR_SHIM_H_
