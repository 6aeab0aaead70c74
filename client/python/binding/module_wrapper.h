// The module call wrapper of tprobe.torch.module_hooks, in C++.
//
// tprobe._C.ModuleWrapper(module, call, pre, post, abort, compiled) stands
// in for a module's torch.nn.Module._call_impl: it is set as the module's
// `_compiled_call_impl`, which Module.__call__ (PyTorch >= 2.1) calls in
// place of _call_impl when set. Called with the module's arguments, it
// runs, with no Python frame of its own and none of torch's hook loop:
//   r = pre(module, args, kwargs); (args, kwargs) = r unless r is None
//   output = call(*args, **kwargs)        # module._call_impl: the user's
//                                         # hooks and forward
//   r = post(module, args, kwargs, output); output = r unless r is None
// and returns the output. When `call` raises, abort(module) runs (what it
// raises is dropped) and the forward's exception goes on. What pre and
// post raise goes to the caller, as torch's hook loop lets it.
//
// torch.compile's Dynamo cannot trace the wrapper (it would break the graph
// at every module, and run code of its own around the calls). So a wrapper
// called while a frame evaluator other than CPython's is in (Dynamo's runs
// a compiled model) calls compiled(module), which is to put hooks in the
// wrappers' place (Dynamo traces those), and then only call(*args,
// **kwargs): the module's hooks record the call.
//
// Module.__getstate__ drops `_compiled_call_impl`, so a copy or a pickle of
// the module carries no wrapper.
//
// Thread safety: called with the GIL, as any Python callable.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_MODULE_WRAPPER_H_
#define TPROBE_CLIENT_PYTHON_BINDING_MODULE_WRAPPER_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

// Adds ModuleWrapper to the module.
void DefineModuleWrapper(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_MODULE_WRAPPER_H_
