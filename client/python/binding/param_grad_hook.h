// A parameter's gradient hook in C++ (tprobe.torch.grad_hooks).
//
// tprobe._C.ParamGradHook(rt, base, name, of_param) is the hook registered
// on one parameter: called with a gradient (a tensor hook, or Megatron's
// main_grad) or, `of_param`, with the parameter itself (a
// post-accumulate-grad hook, which reads its .grad), it reports the
// gradient to rt.session as parameter `name` of the module `base` while
// capture is on (rt.on), with no Python frame. A None gradient is not
// reported. What fails is reported once through rt.warn_once; the hook
// always returns None (it never changes the gradient).
//
// Thread safety: called with the GIL, as any Python callable.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_PARAM_GRAD_HOOK_H_
#define TPROBE_CLIENT_PYTHON_BINDING_PARAM_GRAD_HOOK_H_

#include <pybind11/pybind11.h>

namespace tprobe::python {

// Adds ParamGradHook to the module.
void DefineParamGradHook(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PARAM_GRAD_HOOK_H_
