// The eager path of tprobe.torch.module_hooks in C++: what a module call's
// forward pre-hook and forward hook do, and its backward reports, with no
// Python frame where the call's inputs and output are single tensors.
//
// tprobe._C.ModuleHookBase is the base of module_hooks._ModuleHook, one
// per hooked module. Python sets its fields: rt (the Runtime, a HookState),
// base ("Module.{path}.{Class}"), gate (None, or a callable: the module
// records only while it returns true), grad_hooks (its ensure(module,
// base) hooks the module's parameters), inplace (no backward entry) and
// params_hooked. Its methods:
//   records()                  whether a call that begins now is reported
//   begin(module, args, kwargs, stack=None) -> ModuleCall | None
//                              opens a call (the caller holds busy): the
//                              session names it and takes its stack (the
//                              running code's, or `stack`) and inputs
//   take(module) -> ModuleCall | None
//                              the module's innermost open call, off this
//                              thread's stack (rt.local.modules)
//   end(call, module, output) -> bool
//                              closes the call with its output and the
//                              module's parameters; True when its backward
//                              is awaited
//   eager_pre(module, args, kwargs)           the forward pre-hook
//   eager_post(module, args, kwargs, output)  the forward hook
//   abort(module)              the forward raised: the call ends without
//                              an entry
// kwargs is None where torch hands hooks none (PyTorch 1.13). eager_pre and
// eager_post return what a torch hook returns: None, or the arguments
// ((args, kwargs) when kwargs is given) or output with the tensors that
// need a gradient replaced by identity autograd nodes (module_alias.h)
// that report the call's backward. A lone tensor is replaced here; any
// other value goes through the `wrap` tool.
//
// tprobe._C.ModuleCall is one call, then its backward: module, base,
// handle (the session's Call), rt, grad_outputs and backward are readable,
// wants_backward and waits_inputs settable; on_output_grads(grads) begins
// its backward (the output gradients arrived), on_input_grads(grads) ends
// it.
//
// set_module_hook_tools(tensor, apply, functorch_apply, functorch_active,
// is_grad_enabled, wrap) hands over, once, what the hooks call in torch:
// torch.Tensor; the identity Function's C++ apply and its functorch-aware
// apply, used while functorch_active() (None: never); torch.is_grad_enabled;
// wrap(report, value), which replaces the tensors of any other value.
//
// Failures of tprobe's own are reported once (Runtime.warn_once) and the
// hook returns None; only errors that are not an Exception
// (KeyboardInterrupt) go on to the trainer.
//
// Thread safety: every function needs the GIL.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_MODULE_HOOK_H_
#define TPROBE_CLIENT_PYTHON_BINDING_MODULE_HOOK_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

// Adds ModuleHookBase, ModuleCall and set_module_hook_tools to the module.
void DefineModuleHook(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_MODULE_HOOK_H_
