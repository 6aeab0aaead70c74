// The forward and backward of tprobe.torch.module_hooks._Alias in C++, so
// that neither runs a Python frame (a module call makes two aliases, and
// each backward runs one node):
//   tprobe._C.AliasForward(detach): forward(ctx, report, *tensors) sets
//     ctx.report = report and ctx.materialize_grads = False and returns
//     the tuple of detach(t) for each tensor;
//   tprobe._C.alias_backward: bound to the node (a method), (ctx, *grads)
//     calls ctx.report(grads), swallowing what it raises (never break the
//     backward pass), and returns (None,) + grads.
//
// Thread safety: each runs with the GIL, as autograd calls them.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_MODULE_ALIAS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_MODULE_ALIAS_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

// Adds AliasForward and alias_backward to the module.
void DefineModuleAlias(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_MODULE_ALIAS_H_
