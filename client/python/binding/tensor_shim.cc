// Tensor facts through PyTorch's stable C shim (tensor_shim.h).

#include "client/python/binding/tensor_shim.h"

#include <dlfcn.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace py = pybind11;

namespace tprobe::python {
namespace {

// The shim's C types (torch/csrc/inductor/aoti_torch/c/shim.h): a handle
// is a pointer to an at::Tensor, an error is nonzero.
using AtenTensorHandle = void*;
using ShimError = int32_t;

struct ShimFunctions {
  ShimError (*dim)(AtenTensorHandle, int64_t*) = nullptr;
  ShimError (*sizes)(AtenTensorHandle, int64_t**) = nullptr;
  ShimError (*strides)(AtenTensorHandle, int64_t**) = nullptr;
  ShimError (*dtype)(AtenTensorHandle, int32_t*) = nullptr;
  ShimError (*device_type)(AtenTensorHandle, int32_t*) = nullptr;
  ShimError (*data_ptr)(AtenTensorHandle, void**) = nullptr;
  bool (*grad_mode)() = nullptr;  // optional: null where libtorch lacks it
};

// Where a tensor object's at::Tensor is found.
enum class Holder {
  kInObject,  // right after the object's header (PyTorch 2.x since 2.6 or so)
  kCdata,     // through its `_cdata` (the TensorImpl address): one getter
};

// ScalarType codes are small; the ring's dtype of each, or -1.
constexpr int kMaxScalarType = 64;

struct Shim {
  ShimFunctions fn;
  int32_t cpu = -1;
  int32_t meta = -1;
  std::array<int, kMaxScalarType> dtypes{};
  Holder holder = Holder::kInObject;
  std::vector<PyTypeObject*> types;  // held
  PyObject* cdata_name = nullptr;    // "_cdata", held
};

Shim* g_shim = nullptr;  // the shim in use (the GIL guards it)

template <typename F>
bool Find(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

// An int32_t code from a shim function of no arguments, or -1.
int32_t Code(void* lib, const std::string& name) {
  int32_t (*f)() = nullptr;
  return Find(lib, name.c_str(), &f) ? f() : -1;
}

// The shim's functions and codes, from the libtorch already loaded; false
// when this libtorch lacks one.
bool Load(Shim* shim) {
  void* lib = dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  ShimFunctions& fn = shim->fn;
  if (!Find(lib, "aoti_torch_get_dim", &fn.dim) ||
      !Find(lib, "aoti_torch_get_sizes", &fn.sizes) ||
      !Find(lib, "aoti_torch_get_strides", &fn.strides) ||
      !Find(lib, "aoti_torch_get_dtype", &fn.dtype) ||
      !Find(lib, "aoti_torch_get_device_type", &fn.device_type) ||
      !Find(lib, "aoti_torch_get_data_ptr", &fn.data_ptr)) {
    return false;
  }
  Find(lib, "aoti_torch_grad_mode_is_enabled", &fn.grad_mode);
  shim->cpu = Code(lib, "aoti_torch_device_type_cpu");
  shim->meta = Code(lib, "aoti_torch_device_type_meta");
  if (shim->cpu < 0 || shim->meta < 0) return false;
  shim->dtypes.fill(-1);
  constexpr std::string_view kPrefix = "torch.";
  for (const DTypeInfo& info : kDTypes) {
    const std::string name =
        "aoti_torch_dtype_" + std::string(info.torch.substr(kPrefix.size()));
    const int32_t code = Code(lib, name);
    if (code >= 0 && code < kMaxScalarType) {
      shim->dtypes[code] = static_cast<int>(info.dtype);
    }
  }
  return true;
}

// The TensorImpl address `t._cdata` gives, or null with no error set.
void* CdataOf(PyObject* t, PyObject* name) {
  PyObject* value = PyObject_GetAttr(t, name);
  if (value == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  void* impl = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  if (impl == nullptr) PyErr_Clear();
  return impl;
}

// Reads `t`, whose at::Tensor is at `handle`.
bool Read(const Shim& shim, AtenTensorHandle handle, TensorFacts* out) {
  const ShimFunctions& fn = shim.fn;
  int32_t code = -1;
  int32_t device = -1;
  int64_t ndim = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  void* data = nullptr;
  if (fn.dtype(handle, &code) != 0 || code < 0 || code >= kMaxScalarType ||
      shim.dtypes[code] < 0 || fn.device_type(handle, &device) != 0 ||
      device == shim.meta || fn.dim(handle, &ndim) != 0 ||
      fn.sizes(handle, &sizes) != 0 || fn.strides(handle, &strides) != 0 ||
      fn.data_ptr(handle, &data) != 0) {
    return false;
  }
  const auto n = static_cast<size_t>(ndim);
  out->dtype = static_cast<DType>(shim.dtypes[code]);
  out->is_cpu = device == shim.cpu;
  out->sizes = {sizes, n};
  out->strides = {strides, n};
  out->data = data;
  return true;
}

bool ReadWith(const Shim& shim, PyObject* t, TensorFacts* out) {
  if (shim.holder == Holder::kInObject) {
    return Read(shim, reinterpret_cast<char*>(t) + sizeof(PyObject), out);
  }
  void* impl = CdataOf(t, shim.cdata_name);
  // An at::Tensor is one pointer to its TensorImpl.
  return impl != nullptr && Read(shim, &impl, out);
}

// Whether `read` holds the ints of the Python sequence `python`.
bool Same(std::span<const int64_t> read, py::handle python) {
  const auto values = python.cast<std::vector<int64_t>>();
  return std::equal(read.begin(), read.end(), values.begin(), values.end());
}

// Whether `sample` reads the same through the shim as through Python.
bool Agrees(const Shim& shim, py::handle sample) {
  TensorFacts facts;
  if (!ReadWith(shim, sample.ptr(), &facts)) return false;
  const auto data = sample.attr("data_ptr")().cast<uintptr_t>();
  return facts.dtype == DType::kFloat32 &&
         py::str(sample.attr("dtype")).cast<std::string>() == "torch.float32" &&
         facts.is_cpu == sample.attr("is_cpu").cast<bool>() &&
         Same(facts.sizes, sample.attr("shape")) &&
         Same(facts.strides, sample.attr("stride")()) &&
         reinterpret_cast<uintptr_t>(facts.data) == data &&
         facts.contiguous() == sample.attr("is_contiguous")().cast<bool>();
}

void Drop(Shim* shim) {
  for (PyTypeObject* type : shim->types) Py_DECREF(type);
  Py_XDECREF(shim->cdata_name);
  delete shim;
}

}  // namespace

bool TensorFacts::contiguous() const {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
  }
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool UseTensorShim(py::handle sample, const py::tuple& types) {
  std::vector<PyTypeObject*> known;
  for (py::handle type : types) {
    if (!PyType_Check(type.ptr())) {
      throw py::type_error("use_tensor_shim: types must hold types only");
    }
    known.push_back(reinterpret_cast<PyTypeObject*>(type.ptr()));
  }
  if (g_shim != nullptr) {
    Drop(g_shim);
    g_shim = nullptr;
  }
  if (sample.is_none()) return false;
  std::unique_ptr<Shim, void (*)(Shim*)> shim(new Shim(), Drop);
  if (!Load(shim.get())) return false;
  shim->cdata_name = PyUnicode_InternFromString("_cdata");
  if (shim->cdata_name == nullptr) throw py::error_already_set();
  for (PyTypeObject* type : known) {
    Py_INCREF(type);
    shim->types.push_back(type);
  }
  // The at::Tensor right after the header holds the TensorImpl that
  // `_cdata` names; else the holder is `_cdata` itself.
  void* impl = CdataOf(sample.ptr(), shim->cdata_name);
  if (impl == nullptr) return false;  // not a tensor
  const auto* in_object = reinterpret_cast<void* const*>(
      reinterpret_cast<char*>(sample.ptr()) + sizeof(PyObject));
  shim->holder = *in_object == impl ? Holder::kInObject : Holder::kCdata;
  if (!Agrees(*shim, sample)) return false;
  g_shim = shim.release();
  return true;
}

bool ReadTensorFacts(PyObject* t, TensorFacts* out) {
  const Shim* shim = g_shim;
  if (shim == nullptr) return false;
  PyTypeObject* type = Py_TYPE(t);
  for (PyTypeObject* known : shim->types) {
    if (type == known) return ReadWith(*shim, t, out);
  }
  return false;
}

bool GradModeKnownOff() {
  const Shim* shim = g_shim;
  return shim != nullptr && shim->fn.grad_mode != nullptr &&
         !shim->fn.grad_mode();
}

}  // namespace tprobe::python
