"""Parameter gradient entries (levels L0 and mix):
``Module.{path}.{Class}.parameters_grad.{K}`` = {param: [grad], ...}.

A hook on each parameter sends its gradient as it is computed; the daemon
merges the pieces of one entry in arrival order, as msprobe's dict.update
does. The client core names the entry and decides whether it is dumped: K
counts the module's backward passes in the step (unlike msprobe 8.3.3, which
never resets K, it starts again at 0 each step, like every call index).
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
            if param is not None and param.requires_grad:
                self._handles.append(
                    param.register_hook(self._hook(base, name)))

    def remove(self) -> None:
        """Takes every gradient hook off."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._modules = weakref.WeakSet()

    def _hook(self, base: str, param: str) -> Callable:
        rt = self.rt

        def hook(grad: torch.Tensor) -> None:
            if not rt.on:
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
