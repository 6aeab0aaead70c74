"""Primitive hooks (levels L1 and mix): the Primitive objects held by the
cells of the model given to start() (``self.matmul = ops.MatMul()``) are
dumped as ``Primitive.{attribute}.{Class}.{N}.forward``, as msprobe does.

Each hooked primitive gets a subclass of its own class whose __call__ is
a tprobe._C.ApiWrapper (the API hooks' recorder, client/python/
api_hook.h); restore() puts the original classes back. Backward: every
tensor input and output passes through ops.HookBackward, and each gradient
that arrives is added to the call's backward entry
(``Primitive.{attribute}.{Class}.{N}.backward``): ``input`` gathers the
gradients of the outputs, ``output`` those of the inputs, in arrival order.
"""

import functools
from typing import Any, Callable, List, Tuple

from mindspore import Tensor, ops
from mindspore.ops.primitive import Primitive

from tprobe._C import ApiWrapper
from tprobe._common.runtime import Runtime
from tprobe.mindspore import grad_gate


class PrimitiveHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._hooked: List[Tuple[Primitive, type]] = []

    def register(self, models: list) -> None:
        seen = {id(p) for p, _ in self._hooked}
        for root in models:
            for _, cell in root.cells_and_names():
                for attr, value in vars(cell).items():
                    if isinstance(value, Primitive) and id(value) not in seen:
                        seen.add(id(value))
                        self._hook(value, attr)

    def restore(self) -> None:
        for primitive, cls in reversed(self._hooked):
            primitive.__class__ = cls
        self._hooked.clear()

    def _hook(self, primitive: Primitive, attr: str) -> None:
        cls = primitive.__class__
        # The subclass is the primitive's own: its __call__ is a recorder
        # (tprobe._C.ApiWrapper) bound to this primitive.
        wrapper = ApiWrapper(self.rt, f"Primitive.{attr}.{cls.__name__}",
                             functools.partial(cls.__call__, primitive),
                             False, None, None, self._gates)
        primitive.__class__ = type(cls.__name__, (cls,),
                                   {"__call__": staticmethod(wrapper)})
        self._hooked.append((primitive, cls))

    def _gates(self, base: str, index: int, args: tuple) -> Any:
        """The wrapper's gates_for: while MindSpore records a graph."""
        if not grad_gate.recording_grad():
            return None
        return _Gates(self.rt, base, index)


class _Gates:
    """A primitive call's gates (tprobe._C.ApiWrapper's gates_for): each
    tensor input and output passes through its own ops.HookBackward, as
    msprobe does (MindSpore orders the backward pass by them)."""

    __slots__ = ("rt", "base", "index")

    def __init__(self, rt: Runtime, base: str, index: int) -> None:
        self.rt = rt
        self.base = base
        self.index = index

    def inputs(self, args: tuple) -> tuple:
        hook = self._hook([], "output")
        return tuple(ops.HookBackward(hook)(a) if isinstance(a, Tensor) else a
                     for a in args)

    def outputs(self, out: Any) -> Any:
        hook = self._hook([], "input")
        if isinstance(out, Tensor):
            return ops.HookBackward(hook)(out)
        if isinstance(out, tuple):
            return tuple(ops.HookBackward(hook)(t) if isinstance(t, Tensor)
                         else t for t in out)
        return out

    def _hook(self, captured: list, side: str) -> Callable:
        """Adds each gradient that arrives to the call's backward entry
        (`side` "output": those of the inputs, "input": of the outputs, in
        arrival order)."""
        rt, base, index = self.rt, self.base, self.index

        def hook(grad: Any) -> None:
            rt.local.busy += 1
            try:
                captured.extend(grad if isinstance(grad, tuple) else (grad,))
                rt.session.api_backward(base, index, **{side: captured})
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a primitive backward hook", error)
            finally:
                rt.local.busy -= 1

        return hook
