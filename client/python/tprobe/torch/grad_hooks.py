"""Parameter gradient entries (levels L0 and mix, and module_dump's modules
at L1): ``Module.{path}.{Class}.parameters_grad.{K}`` = {param: [grad], ...}.

A hook on each parameter sends its gradient once the backward has
accumulated it: ``param.grad``, as msprobe 26.x reads it from the
AccumulateGrad node's hook (torch >= 2.1, register_post_accumulate_grad_hook),
so that under gradient accumulation (micro-batches, no zero_grad) it is the
sum so far. On older torch (msprobe 8.3.3's) it is the gradient of this
backward, as 8.3.3's tensor hook gives it.

A Megatron model (its class comes from a ``megatron`` module, msprobe
26.x's test) accumulates into ``param.main_grad`` from its own hook on the
AccumulateGrad node and clears ``param.grad``. There, on torch >= 2.1, the
gradient is ``param.main_grad``, read by a hook registered behind
Megatron's on that node, as msprobe 26.x reads it.

Each hook is a tprobe._C.ParamGradHook (client/python/binding/
param_grad_hook.h), which reports with no Python frame.

The daemon merges the pieces of one entry in arrival order, as msprobe's
dict.update does. The client core names the entry and decides whether it
is dumped: K counts the module's backward passes in the step (unlike
msprobe 8.3.3, which never resets K, it starts again at 0 each step, like
every call index).
"""

import weakref
from typing import Any, Optional

import torch

from tprobe._C import ParamGradHook
from tprobe._common.runtime import Runtime
from tprobe.torch.hook_switch import HookSwitch


def is_megatron(model: Any) -> bool:
    """msprobe 26.x's test: the model, or one of a list of models, has a
    class from a ``megatron`` module."""
    models = model if isinstance(model, (list, tuple)) else [model]
    return any("megatron" in type(m).__module__ for m in models)


class GradHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # Set by the debugger from the model it hooks (is_megatron).
        self.megatron = False
        self._modules: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # Each hook's RemovableHandle; out of the parameters for the steps
        # that record nothing (tprobe.torch.hook_switch).
        self.switch = HookSwitch()
        # The AccumulateGrad nodes hooked for main_grad: a node nobody holds
        # is made anew at the next forward, without the hook.
        self._accumulators: list = []

    def ensure(self, module: torch.nn.Module, base: str) -> None:
        """Hooks the module's own parameters, once per module; ``base`` is
        the module's name base ("Module.{path}.{Class}")."""
        if module in self._modules:
            return
        self._modules.add(module)
        for name, param in module._parameters.items():
            if param is None or not param.requires_grad:
                continue
            torch_2_1 = hasattr(param, "register_post_accumulate_grad_hook")
            accumulator = (_accumulator(param) if torch_2_1 and self.megatron
                           and hasattr(param, "main_grad") else None)
            if accumulator is not None:
                send = ParamGradHook(self.rt, base, name, False)
                handle = accumulator.register_hook(
                    lambda *_, p=param, send=send: send(p.main_grad))
                self._accumulators.append(accumulator)
            elif torch_2_1:
                handle = param.register_post_accumulate_grad_hook(
                    ParamGradHook(self.rt, base, name, True))
            else:
                handle = param.register_hook(
                    ParamGradHook(self.rt, base, name, False))
            self.switch.add((handle,))

    def remove(self) -> None:
        """Takes every gradient hook off."""
        self.switch.remove()
        self._accumulators.clear()
        self._modules = weakref.WeakSet()


def _accumulator(param: torch.nn.Parameter) -> Optional[Any]:
    """The parameter's AccumulateGrad node, as Megatron's DDP finds it, or
    None where no graph is being built (no_grad)."""
    grad_fn = param.expand_as(param).grad_fn
    return None if grad_fn is None else grad_fn.next_functions[0][0]
