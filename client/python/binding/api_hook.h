// The API-call recorder of both adapters, in C++ (levels L1 and mix).
//
// tprobe._C.ApiWrapper stands in for one hooked function (torch.add,
// torch.Tensor.add, F.linear, mindspore.ops.add, a MindSpore primitive's
// __call__, a mindspore.jit function). A call made while capture is on,
// not from inside another hooked call or tprobe itself, and not while
// Dynamo compiles, is reported to the session: begin, the stack and inputs
// before the API runs, the API, then the entry with its output and the
// call's end. Its backward: PyTorch's through a hook on the output's
// grad_fn (tensor_type); MindSpore's through the gates its adapter makes
// with MindSpore operators (gates_for: inputs() before the call, outputs()
// after it; tprobe/mindspore/backward.py). The common path runs no Python
// frame: the state it reads (capture on, the session, the per-thread busy
// flag) is C data (hook_state.h).

#ifndef TPROBE_CLIENT_PYTHON_BINDING_API_HOOK_H_
#define TPROBE_CLIENT_PYTHON_BINDING_API_HOOK_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "client/python/binding/hook_state.h"
#include "client/session.h"

namespace tprobe::python {

// One call between its begin and its end: the session's plan, what the
// hooks ask of it, and an API call's stack and inputs, taken before the API
// runs (an in-place API changes its inputs).
struct ApiCall {
  client::CallPlan plan;
  bool entry = false;     // pass the call's stack and data
  bool input = false;     // data_mode keeps the inputs
  bool backward = false;  // report the call's backward
  uint32_t stack_id = 0;
  bool inputs = false;       // args and kwargs hold the inputs
  std::string args, kwargs;  // one value each (record::ValueWriter)

  // Makes this a call not begun, keeping the capacity of its strings (the
  // name and the encoded inputs), so that a reused ApiCall allocates
  // nothing.
  void Clear() {
    std::string name = std::move(plan.name);
    name.clear();
    plan = client::CallPlan{};
    plan.name = std::move(name);
    entry = input = backward = inputs = false;
    stack_id = 0;
    args.clear();
    kwargs.clear();
  }
};

// A call's arguments as a vectorcall passes them: args[0..nargs) the
// positional ones, then one value per name in kwnames (a tuple, or null).
struct CallArgs {
  PyObject* const* args;
  Py_ssize_t nargs;
  PyObject* kwnames;
};

// The session side of the API hooks (session_binding.cc's Session). No method
// raises or leaves a Python error set; each needs the GIL.
class ApiSession {
 public:
  // Opens an outermost API forward call named by `base`, whose calls
  // share `site`; false when it is not recorded (else EndApiCall must
  // follow on this thread).
  virtual bool BeginApiCall(std::string_view base, client::ApiSite* site,
                            ApiCall* call) = 0;
  // Takes the call's stack (the running code's) and, when data_mode keeps
  // them, its inputs, read from the call's own arguments (no tuple or dict
  // is made for them).
  virtual void TakeApiInputs(ApiCall& call, const CallArgs& args) = 0;
  // Writes the call's entry with `output` (nullptr: no entry, the API
  // raised or the plan wants none) and ends the call.
  virtual void EndApiCall(ApiCall& call, PyObject* output) = 0;
  // Records the backward of forward call `index` of the API `base`.
  virtual void ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                               PyObject* output) = 0;

 protected:
  ~ApiSession() = default;
};

// Adds ApiWrapper and NodeHookRegistrar to the module.
void DefineApiHook(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_API_HOOK_H_
