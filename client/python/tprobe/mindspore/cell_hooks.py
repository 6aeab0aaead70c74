"""Cell hooks (levels L0 and mix).

Forward: a pre-hook opens the call in the client core (which names it
``Cell.{path}.{Class}.forward.{N}``, counts it, applies the filters and
opens its construct node); a post-hook hands over input_args, input_kwargs,
output and the cell's own parameters, and closes the call.

Backward: ``Cell.{path}.{Class}.backward.{N}`` (same N), with ``input`` =
the gradients of the outputs and ``output`` = the gradients of the
positional inputs (None where MindSpore computes none), through the gates
of grad_gate.py, as msprobe's cell hooks do. Parameter gradients come from
a hook on each parameter (``parameters_grad.{K}``).
"""

import weakref
from typing import Any, Callable, Optional

from mindspore import nn

from tprobe._C import Call, Session
from tprobe._common.models import new_submodules
from tprobe._common.runtime import Runtime
from tprobe.mindspore import grad_gate
from tprobe.mindspore.backward import Backward


class _Call:
    """One open cell forward call on this thread."""

    __slots__ = ("module", "base", "handle", "backward")

    def __init__(self, cell: nn.Cell, base: str, handle: Call) -> None:
        self.module = cell
        self.base = base
        self.handle = handle  # from Session.module_begin
        self.backward: Optional[Backward] = None


def own_parameters(cell: nn.Cell) -> dict:
    """The cell's own parameters by short name ("weight"), as msprobe
    writes them."""
    return {name.split(".")[-1]: param for name, param in
            cell.parameters_dict(recurse=False).items()}


class CellHooks:
    """Hooks every sub-cell of the models given to start(), once per
    model; remove() takes every hook off again."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._models: "weakref.WeakSet[nn.Cell]" = weakref.WeakSet()
        self._handles: list = []
        # (parameter id, cell base, name) -> its gradient hook's handle.
        self._param_handles: dict = {}

    def register(self, models: list, many: bool) -> None:
        for where, cell in new_submodules(models, many, self._models, nn.Cell,
                                          lambda c: c.cells_and_names()):
            base = Session.module_base(where, type(cell).__name__, cell=True)
            self._handles.append(cell.register_forward_pre_hook(
                self._pre_hook(base), with_kwargs=True))
            self._handles.append(cell.register_forward_hook(
                self._post_hook(), with_kwargs=True))

    def remove(self) -> None:
        for handle in self._handles + list(self._param_handles.values()):
            handle.remove()
        self._handles.clear()
        self._param_handles.clear()
        self._models = weakref.WeakSet()

    def _pre_hook(self, base: str) -> Callable:
        rt = self.rt

        def pre_hook(cell: nn.Cell, args: tuple, kwargs: dict) -> Any:
            if not rt.on or rt.local.busy:
                return None
            rt.local.busy += 1
            try:
                return self._open(cell, base, args, kwargs)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a cell forward pre-hook", error)
                return None
            finally:
                rt.local.busy -= 1

        return pre_hook

    def _post_hook(self) -> Callable:
        rt = self.rt

        def post_hook(cell: nn.Cell, args: tuple, kwargs: dict,
                      output: Any) -> Any:
            if rt.local.busy:
                return None
            call = rt.pop_call(cell)
            if call is None:
                return None
            rt.local.busy += 1
            try:
                return self._close(call, cell, args, kwargs, output)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a cell forward hook", error)
                return None
            finally:
                rt.local.busy -= 1

        return post_hook

    def _open(self, cell: nn.Cell, base: str, args: tuple,
              kwargs: dict) -> Any:
        rt = self.rt
        handle = rt.session.module_begin(base)
        if handle is None:
            return None
        call = _Call(cell, base, handle)
        rt.modules().append(call)
        if not (handle.backward and grad_gate.recording_grad()):
            return None
        call.backward = Backward(rt, base, handle.index, cell)
        gated = call.backward.inputs(args)
        return None if gated is args else (gated, kwargs)

    def _close(self, call: _Call, cell: nn.Cell, args: tuple, kwargs: dict,
               output: Any) -> Any:
        session = self.rt.session
        handle = call.handle
        if handle.entry:
            # msprobe's MindSpore dump reads a cell's inputs when it ends.
            session.module_inputs(handle, args, kwargs)
            session.module_end(handle, output, own_parameters(cell))
        else:
            session.module_end(handle, None, None)
        if handle.backward:
            self._hook_parameters(cell, call.base)
        backward = call.backward
        if backward is None:
            return None
        result = backward.outputs(output)
        return None if result is output else result

    def _hook_parameters(self, cell: nn.Cell, base: str) -> None:
        # As msprobe does, each forward call replaces the parameters'
        # gradient hooks: MindSpore runs a hook at the place in the backward
        # pass that its registration time gives it.
        for name, param in own_parameters(cell).items():
            if not param.requires_grad:
                continue
            key = (id(param), base, name)
            old = self._param_handles.pop(key, None)
            if old is not None:
                old.remove()
            self._param_handles[key] = param.register_hook(
                self._param_hook(base, name))

    def _param_hook(self, base: str, name: str) -> Callable:
        rt = self.rt

        def hook(grad: Any) -> None:
            if not rt.on:
                return None
            rt.local.busy += 1
            try:
                rt.session.param_grad(base, name, grad)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a parameter gradient hook", error)
            finally:
                rt.local.busy -= 1
            return None

        return hook
