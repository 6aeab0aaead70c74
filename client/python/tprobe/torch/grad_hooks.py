"""Parameter gradient entries (levels L0 and mix):
``Module.{path}.{Class}.parameters_grad.{K}`` = {param: [grad], ...}.

A hook on each parameter sends its gradient as it is computed; the daemon
merges the pieces of one entry in arrival order, as msprobe's dict.update
does. K counts the module's backward passes in this step: it is the number
of times the first parameter to get a gradient has got one, minus one (so
every parameter of one pass shares K). Unlike msprobe 8.3.3, which never
resets K, it starts again at 0 each step, like every other call index.
"""

import weakref
from typing import Callable, Dict, List

import torch

from tprobe.torch.runtime import Runtime


class GradHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._modules: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # entry prefix -> [K, name of the parameter that counts passes]
        self._passes: Dict[str, List] = {}

    def reset_step(self) -> None:
        self._passes.clear()

    def ensure(self, module: torch.nn.Module, prefix: str) -> None:
        """Hooks the module's own parameters, once per module."""
        if module in self._modules:
            return
        self._modules.add(module)
        entry = prefix + "parameters_grad"
        for name, param in module._parameters.items():
            if param is not None and param.requires_grad:
                param.register_hook(self._hook(entry, name))

    def _index(self, entry: str, param: str) -> int:
        passes = self._passes.get(entry)
        if passes is None:
            self._passes[entry] = passes = [0, param]
        elif passes[1] == param:
            passes[0] += 1
        return passes[0]

    def _hook(self, entry: str, param: str) -> Callable:
        rt = self.rt

        def hook(grad: torch.Tensor) -> None:
            if not rt.on:
                return None
            local = rt.local
            local.busy += 1
            try:
                name = f"{entry}.{self._index(entry, param)}"
                rt.session.record_entry(name, None, {param: [grad]})
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a parameter gradient hook", error)
            finally:
                local.busy -= 1
            return None

        return hook
