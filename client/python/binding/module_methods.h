// The methods of tprobe._C.Session and tprobe._C.Call that the module hooks
// call on every module call (module_open, module_end,
// module_backward_begin, module_backward_end, param_grad; Call.entry,
// input, backward, index), bound as CPython fastcall methods and getters
// in place of pybind11's: its dispatcher (overload resolution, an argument
// caster per argument, the keyword table) cost about 5,000 instructions a
// call, which at level L0 was more than the C++ work of most of them
// (callgrind, docs/performance.md). They take their arguments by position
// only and raise TypeError for a wrong count; like every Session method
// they raise nothing else (hook_guard.h).

#ifndef TPROBE_CLIENT_PYTHON_BINDING_MODULE_METHODS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_MODULE_METHODS_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

// Puts the methods on `session` (the Session class) and the getters on
// `call` (the Call class), replacing what pybind11 defined under the same
// names, if anything.
void DefineModuleMethods(pybind11::handle session, pybind11::handle call);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_MODULE_METHODS_H_
