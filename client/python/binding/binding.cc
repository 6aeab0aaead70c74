// tprobe._C: the Python binding of the client core (pybind11). This file
// only wires the module together:
//   session_binding.h  Session, Call and Encoded: the dump session the
//                      adapters report their hooks' calls to;
//   value_encoder.h    msprobe's encoding of the Python values into entries,
//                      on the framework types of type_discovery.h;
//   hook_state.h       HookState and busy_flag: what the C hooks read on
//                      every call;
//   api_hook.h         ApiWrapper (the API wrapper of both adapters, in
//                      C++);
//   module_alias.h     the forward and backward of the module hooks'
//                      identity autograd Function, in C++;
//   module_hook.h      the module hooks' eager path and a module call's
//                      backward reports, in C++;
//   param_grad_hook.h  a parameter's gradient hook, in C++;
//   steady_steps.h     the step boundaries of a step like the last one, in
//                      C;
//   module_wrapper.h   the module call wrapper (ModuleWrapper) that runs
//                      the module hooks around a module's call, in C++;
//   call_stack.h       the call stacks of stack.json;
//   producer_stats.h   statistics the framework computes (statistics_on);
//   tensor_shim.h      tensor facts read through torch's stable C shim.
//
// Thread safety: every function of the module is called with the GIL held.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "client/python/binding/api_hook.h"
#include "client/python/binding/call_stack.h"
#include "client/python/binding/hook_state.h"
#include "client/python/binding/module_alias.h"
#include "client/python/binding/module_hook.h"
#include "client/python/binding/module_wrapper.h"
#include "client/python/binding/param_grad_hook.h"
#include "client/python/binding/producer_stats.h"
#include "client/python/binding/session_binding.h"
#include "client/python/binding/steady_steps.h"
#include "client/python/binding/tensor_shim.h"
#include "client/python/binding/type_discovery.h"
#include "client/risk_level.h"
#include "common/config/config.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  using tprobe::python::Types;
  m.doc() = "tprobe's client core: sessions that push hook data to tprobed";

  tprobe::python::DefineHookState(m, &tprobe::python::SessionPartsOf);
  tprobe::python::DefineApiHook(m);
  tprobe::python::DefineModuleAlias(m);
  tprobe::python::DefineModuleHook(m);
  tprobe::python::DefineParamGradHook(m);
  tprobe::python::DefineModuleWrapper(m);
  tprobe::python::DefineSteadySteps(m);

  m.def("set_own_frames", &tprobe::python::SetOwnFrames, py::arg("dir"),
        "Frames of files under dir are tprobe's own: the stacks of the "
        "entries leave them out.");

  m.def(
      "set_fallback",
      [](py::object fn) {
        PyObject*& slot = Types().fallback;
        Py_XDECREF(slot);
        slot = fn.is_none() ? nullptr : fn.release().ptr();
      },
      py::arg("fn"),
      "Sets the callable that encodes values of types the binding does not "
      "know: it returns None, ('raw', json_like) or ('value', python_value).");

  m.def("use_tensor_shim", &tprobe::python::UseTensorShim, py::arg("sample"),
        py::arg("types"),
        "Reads tensors of exactly these types (a tuple) through torch's "
        "stable C shim when sample (a CPU float32 tensor with a storage "
        "offset and strides that are not row-major) reads the same through "
        "it as through Python; None turns it off. Returns whether it is on.");

  m.def(
      "api_risk",
      [](const std::string& api) {
        switch (tprobe::client::RiskOfApi(api)) {
          case tprobe::client::ApiRisk::kCore:
            return "CORE";
          case tprobe::client::ApiRisk::kLow:
            return "LOW";
          case tprobe::client::ApiRisk::kFocus:
            break;
        }
        return "FOCUS";
      },
      py::arg("api"),
      "msprobe 26.x's risk of an API name without its group prefix: "
      "\"CORE\", \"FOCUS\" or \"LOW\" (risk_level).");

  m.def(
      "config_warnings",
      [](const std::string& path) {
        std::vector<std::string> warnings;
        auto loaded = tprobe::config::LoadConfigFile(path, &warnings);
        if (!loaded.ok()) throw py::value_error(loaded.status().message());
        return warnings;
      },
      py::arg("path"),
      "Checks the config.json at path: its warnings, one line for each key "
      "that has no effect in tprobe; ValueError with the config's message "
      "when it is invalid.");

  tprobe::python::DefineProducerStats(m);
  tprobe::python::DefineSession(m);
}
