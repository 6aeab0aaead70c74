// A tprobe._C.Session's module (and Cell) calls (py_session.h): forward
// (Session.module_begin, module_inputs, module_end), backward
// (module_backward_begin, module_backward_end) and parameter gradients
// (param_grad). The session names, counts and filters each call; Python
// only hands over what its hooks saw. A *_begin returns None when nothing
// is recorded, else the call's handle (a Call), which goes back into the
// matching *_end; a handle is ended once.
//
// Thread safety: every member needs the GIL.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_MODULE_CALLS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_MODULE_CALLS_H_

#include <pybind11/pybind11.h>

#include <cstdint>

#include "client/python/binding/call_stack.h"
#include "client/python/binding/entry_values.h"
#include "client/python/binding/hooked_session.h"

namespace tprobe::python {

class ModuleCalls {
 public:
  ModuleCalls(HookedSession& session, EntryValues& values);

  pybind11::object Begin(pybind11::handle base);
  // Lists the beginning call's stack and writes its inputs, if data_mode
  // keeps them (its forward pre-hook). The stack is `stack` when given
  // (a compiled graph's call), else the running code's.
  void Inputs(pybind11::handle handle, pybind11::handle args,
              pybind11::handle kwargs, const Stack* stack = nullptr);
  // Begin and then Inputs, in one call from the forward pre-hook.
  pybind11::object Open(pybind11::handle base, pybind11::handle args,
                        pybind11::handle kwargs, const Stack* stack = nullptr);
  // Writes the call's outputs and parameters, if scope, list and data_mode
  // keep them, and closes it (its forward hook). A call whose handle says
  // no `entry` is closed as if both were None.
  void End(pybind11::handle handle, pybind11::handle output,
           pybind11::handle parameters);
  // The backward of forward call `index` begins (its output gradients
  // arrived).
  pybind11::object BackwardBegin(pybind11::handle base, int64_t index);
  // The backward is done: writes its entry and closes it.
  void BackwardEnd(pybind11::handle handle, pybind11::handle input,
                   pybind11::handle output);
  // A gradient of the parameter `name` of the module `base`.
  bool ParamGrad(pybind11::handle base, pybind11::handle name,
                 pybind11::handle grad);
  // Holds the place of the module's next parameter gradients in dump.json
  // (Session::ReserveParamGrad).
  void ReserveParamGrad(pybind11::handle base);

 private:
  // The handle of a module call `base` opened forward or backward (of
  // forward call `index`); None when it is not recorded.
  pybind11::object BeginCall(const char* where, pybind11::handle base,
                             bool forward, uint32_t index);

  HookedSession& session_;
  EntryValues& values_;
};

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_MODULE_CALLS_H_
