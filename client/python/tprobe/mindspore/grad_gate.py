"""Backward data for cells and APIs, the way MindSpore reports it, with
MindSpore's CellBackwardHook operator (the one behind Cell backward hooks;
an identity in the forward pass), as msprobe uses it:
- a CallGate: the call's inputs go through it before the call and its
  outputs after it; when the call's backward is done, its hook gets the
  gradients of the inputs and of the outputs (in that order: opposite to
  PyTorch's). A gradient MindSpore does not compute (an input that needs
  none) is None;
- gate_outputs: the outputs go through a second gate whose hook fires when
  the call's backward starts, with the gradients of the outputs. MindSpore
  never fires it for a dict output; the CallGate's hook still does
  (backward.py opens the call then).
The operator passes on the tensors at the top level of a tuple only: one
nested deeper (``(y, (a, b))``) goes around it, and its gradient is in
neither list, as in msprobe's entries (the whole tuple goes through, as
msprobe passes it).
The gates of a step are kept until step() (release()): MindSpore holds
their hooks only weakly.
"""

from collections import OrderedDict
from typing import Any, Callable

import mindspore as ms
from mindspore import Tensor
from mindspore.common.api import _pynative_executor
from mindspore.ops.operations import _inner_ops

# Integer and bool tensors carry no gradient.
_NO_GRAD = (ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8,
            ms.uint16, ms.uint32, ms.uint64)


def recording_grad() -> bool:
    """Whether MindSpore is recording a graph for a backward pass."""
    return bool(_pynative_executor.requires_grad())


def differentiable(args: tuple) -> bool:
    """Whether any of args is a floating tensor (one that can get a
    gradient)."""
    return any(isinstance(a, Tensor) and a.dtype not in _NO_GRAD
               for a in args)


_alive: list = []


def release() -> None:
    """Forgets the gates of the step that ended."""
    _alive.clear()


class _Gate:
    __slots__ = ("hooks", "op")

    def __init__(self, name: str, owner: Any, hook: Callable,
                 pre: bool) -> None:
        self.hooks = OrderedDict(((name, hook),))
        self.op = _inner_ops.CellBackwardHook(name, owner, self.hooks)
        if pre:
            self.op.register_backward_pre_hook()
        else:
            self.op.register_backward_hook()
        _alive.append(self)


class CallGate:
    """The gate of one call: pass its inputs (before the call) and its
    outputs (after it) through it. When the call's backward is done,
    on_grads(grads of the outputs, grads of the inputs) runs."""

    __slots__ = ("_gate",)

    def __init__(self, name: str, owner: Any,
                 on_grads: Callable[[tuple, tuple], None]) -> None:
        # MindSpore hands (cell, grads of the inputs, grads of the outputs)
        # here once the gradient has passed both ends.
        self._gate = _Gate(name, owner,
                           lambda _c, ins, outs: on_grads(outs, ins), False)

    def inputs(self, args: tuple) -> tuple:
        out = self._gate.op(args)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    def outputs(self, output: Any) -> Any:
        return _through(self._gate.op, output)


def _through(op: Any, output: Any) -> Any:
    if isinstance(output, Tensor):
        return op(output)
    if isinstance(output, dict) and output:
        # MindSpore passes a dict through as a dict (msprobe passes any
        # output); a pre-hook gate never fires on one (gate_outputs).
        return op(output)
    if not (isinstance(output, tuple) and output):
        return output
    result = op(output)
    return result if isinstance(result, tuple) else (result,)


def gate_outputs(name: str, owner: Any, output: Any,
                 on_grads: Callable[[tuple], None]) -> Any:
    """output (a tensor or a tuple) passed through a gate; on_grads(output
    grads) runs when the call's backward starts. Anything else is returned
    as it is."""
    if not isinstance(output, (Tensor, tuple)) or output == ():
        return output
    gate = _Gate(name, owner, lambda _c, grads: on_grads(grads), True)
    return _through(gate.op, output)
