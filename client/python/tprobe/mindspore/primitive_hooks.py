"""Primitive hooks (levels L1 and mix): the Primitive objects held by the
cells of the model given to start() (``self.matmul = ops.MatMul()``) are
dumped as ``Primitive.{attribute}.{Class}.{N}.forward``, as msprobe does.

Each hooked primitive gets a subclass of its own class whose __call__
reports the call; restore() puts the original classes back. Backward: every
tensor input and output passes through ops.HookBackward, and each gradient
that arrives is added to the call's backward entry
(``Primitive.{attribute}.{Class}.{N}.backward``): ``input`` gathers the
gradients of the outputs, ``output`` those of the inputs, in arrival order.
"""

from typing import Any, Callable, List, Tuple

from mindspore import Tensor, ops
from mindspore.ops.primitive import Primitive

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
        base = f"Primitive.{attr}.{cls.__name__}"
        call = self._call(base, cls.__call__)
        primitive.__class__ = type(cls.__name__, (cls,), {"__call__": call})
        self._hooked.append((primitive, cls))

    def _call(self, base: str, original: Callable) -> Callable:
        rt = self.rt
        record = self._record

        def __call__(prim: Primitive, *args: Any, **kwargs: Any) -> Any:
            if rt.on and not rt.local.busy:
                return record(base, original, prim, args, kwargs)
            return original(prim, *args, **kwargs)

        return __call__

    def _record(self, base: str, original: Callable, prim: Primitive,
                args: tuple, kwargs: dict) -> Any:
        rt = self.rt
        local = rt.local
        local.busy = 1
        session = rt.session
        call = session.api_begin(base)
        try:
            if call is None:
                return original(prim, *args, **kwargs)
            index = call.index
            grads = call.backward and grad_gate.recording_grad()
            if grads:
                args = self._hook_inputs(base, index, args)
            if call.entry:
                session.api_inputs(call, args, kwargs)
            out = original(prim, *args, **kwargs)
            if call.entry:
                session.api_end(call, out)
            else:
                session.api_end(call)
            call = None
            return self._hook_outputs(base, index, out) if grads else out
        finally:
            local.busy = 0
            if call is not None:
                session.api_end(call)  # the primitive raised: no entry

    def _grad_hook(self, base: str, index: int, captured: list,
                   side: str) -> Callable:
        rt = self.rt

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

    def _hook_inputs(self, base: str, index: int, args: tuple) -> tuple:
        hook = self._grad_hook(base, index, [], "output")
        return tuple(ops.HookBackward(hook)(a) if isinstance(a, Tensor) else a
                     for a in args)

    def _hook_outputs(self, base: str, index: int, out: Any) -> Any:
        # One HookBackward per tensor, as msprobe does: MindSpore orders the
        # backward pass by them.
        hook = self._grad_hook(base, index, [], "input")
        if isinstance(out, Tensor):
            return ops.HookBackward(hook)(out)
        if isinstance(out, tuple):
            return tuple(ops.HookBackward(hook)(t) if isinstance(t, Tensor)
                         else t for t in out)
        return out
