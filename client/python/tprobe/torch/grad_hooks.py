"""Parameter gradient entries (levels L0 and mix, and module_dump's modules
at L1): ``Module.{path}.{Class}.parameters_grad.{K}`` = {param: [grad], ...}.

A hook on each parameter sends its gradient once the backward has
accumulated it: ``param.grad``, as msprobe 26.x reads it from the
AccumulateGrad node's hook (torch >= 2.1, register_post_accumulate_grad_hook),
so that under gradient accumulation (micro-batches, no zero_grad) it is the
sum so far. On older torch (msprobe 8.3.3's) it is the gradient of this
backward, as 8.3.3's tensor hook gives it. The daemon merges the pieces of
one entry in arrival order, as msprobe's dict.update does. The client core
names the entry and decides whether it is dumped: K counts the module's
backward passes in the step (unlike msprobe 8.3.3, which never resets K, it
starts again at 0 each step, like every call index).
"""

import weakref
from typing import Callable

import torch

from tprobe._common.runtime import Runtime


class GradHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._modules: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        self._handles: list = []  # each hook's RemovableHandle

    def ensure(self, module: torch.nn.Module, base: str) -> None:
        """Hooks the module's own parameters, once per module; ``base`` is
        the module's name base ("Module.{path}.{Class}")."""
        if module in self._modules:
            return
        self._modules.add(module)
        for name, param in module._parameters.items():
            if param is None or not param.requires_grad:
                continue
            send = self._sender(base, name)
            if hasattr(param, "register_post_accumulate_grad_hook"):
                handle = param.register_post_accumulate_grad_hook(
                    lambda p, send=send: send(p.grad))
            else:
                handle = param.register_hook(send)
            self._handles.append(handle)

    def remove(self) -> None:
        """Takes every gradient hook off."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._modules = weakref.WeakSet()

    def _sender(self, base: str, param: str) -> Callable:
        rt = self.rt

        def hook(grad: torch.Tensor) -> None:
            if not rt.on or grad is None:
                return None
            local = rt.local
            local.busy += 1
            try:
                rt.session.param_grad(base, param, grad)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a parameter gradient hook", error)
            finally:
                local.busy -= 1
            return None

        return hook
