// The framework types, looked up on first use (type_discovery.h).

#include "client/python/binding/type_discovery.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace tprobe::python {
namespace {

PyObject* Keep(py::object o) { return o.release().ptr(); }

PyObject* NumpyGeneric() {
  try {
    return Keep(py::module_::import("numpy").attr("generic"));
  } catch (py::error_already_set&) {
    return nullptr;
  }
}

// The MindSpore types, for a MindSpore session.
void InitMindSporeTypes() {
  FrameworkTypes& t = Types();
  if (t.ms_ready) return;
  py::module_ ms = py::module_::import("mindspore");
  t.ms_tensor = Keep(ms.attr("Tensor"));
  t.ms_dtype =
      Keep(py::module_::import("mindspore._c_expression.typing").attr("Type"));
  if (t.np_generic == nullptr) t.np_generic = NumpyGeneric();
  t.ms_ready = true;
}

}  // namespace

FrameworkTypes& Types() {
  static FrameworkTypes* types = new FrameworkTypes();
  return *types;
}

void InitTypes(ValueEncoding encoding) {
  if (encoding == ValueEncoding::kMindSpore) {
    InitMindSporeTypes();
    return;
  }
  FrameworkTypes& t = Types();
  if (t.ready) return;
  py::module_ torch = py::module_::import("torch");
  t.tensor = Keep(torch.attr("Tensor"));
  t.size = Keep(torch.attr("Size"));
  t.dtype = Keep(torch.attr("dtype"));
  t.device = Keep(torch.attr("device"));
  t.memory_format = Keep(torch.attr("memory_format"));
  if (t.np_generic == nullptr) t.np_generic = NumpyGeneric();
  t.ready = true;
}

}  // namespace tprobe::python
