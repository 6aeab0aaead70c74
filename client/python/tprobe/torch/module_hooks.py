"""Module hooks (levels L0 and mix).

Forward: a pre-hook opens the call in the client core (which names it
``Module.{path}.{Class}.forward.{N}``, counts it, applies the filters and
opens its construct node) and hands over its stack and input_args; a
post-hook hands over output and parameters and closes the call. As in
msprobe 26.x the inputs are read in the pre-hook, so an in-place module
shows its inputs before the change, and the entry, completed by the
post-hook, ends up after its children's. On PyTorch 2.x the hooks take the
keyword arguments too (``with_kwargs=True``) and they become input_kwargs;
PyTorch 1.13 hands module hooks no kwargs, so input_kwargs is {} there, as
in msprobe.

Backward: ``Module.{path}.{Class}.backward.{N}`` (same N as the forward),
begun when the gradients of its outputs arrive and ended when its own are
computed, so the backward calls in between are inside it (construct.json
parents, list ranges),
with ``input`` = gradients w.r.t. the forward outputs and ``output`` =
gradients w.r.t. the forward's tensor arguments. The gradients are taken by
an identity autograd node around the outputs (it runs when the module's
backward starts) and one around the inputs (it runs when the module's
backward is done). Unlike register_full_backward_hook, whose outputs are
views created by a custom Function, these nodes return plain aliases, so
code that later changes a module's output in place (``out += x``) keeps
working. Modules with ``inplace=True`` get no backward entry: their input
would be changed through the alias (msprobe misses these too).

Under torch.compile the hooks run eagerly (``torch.compiler.disable``):
Dynamo neither traces nor compiles them, so no compiled hook frame exists
whose guards would call the hooked Tensor.stride at run time.
"""

import inspect
import weakref
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

from tprobe._C import Call, Session
from tprobe.torch.grad_hooks import GradHooks
from tprobe._common.runtime import Runtime

_Tensor = torch.Tensor
# PyTorch 2.x hands module hooks the keyword arguments (input_kwargs).
_WITH_KWARGS = "with_kwargs" in inspect.signature(
    torch.nn.Module.register_forward_pre_hook).parameters
# PyTorch >= 2.1: keeps Dynamo out of a function (None before).
_DISABLE_DYNAMO = getattr(getattr(torch, "compiler", None), "disable", None)


def _eager(hook: Callable) -> Callable:
    return _DISABLE_DYNAMO(hook) if _DISABLE_DYNAMO is not None else hook


class _Alias(torch.autograd.Function):
    """Identity on tensors whose backward reports the incoming gradients."""

    @staticmethod
    def forward(ctx: Any, callback: Callable, *tensors: _Tensor) -> tuple:
        ctx.callback = callback
        ctx.set_materialize_grads(False)
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Optional[_Tensor]) -> tuple:
        try:
            ctx.callback(grads)
        except Exception:  # noqa: BLE001 - never break the backward pass
            pass
        return (None,) + grads


def _grad_tensors(items: Sequence[Any]
                  ) -> Tuple[List[int], List[int], List[torch.Tensor], int]:
    """The tensors among ``items`` that need gradients: their slots in
    ``items``, their positions among all tensor items (a backward entry's
    list has one item per tensor), the tensors, and the tensor count."""
    slots: List[int] = []
    positions: List[int] = []
    tensors: List[torch.Tensor] = []
    count = 0
    for i, item in enumerate(items):
        if isinstance(item, _Tensor):
            if item.requires_grad:
                slots.append(i)
                positions.append(count)
                tensors.append(item)
            count += 1
    return slots, positions, tensors, count


def _alias(callback: Callable, tensors: List[_Tensor]) -> tuple:
    result = _Alias.apply(callback, *tensors)
    return result if isinstance(result, tuple) else (result,)


class _Backward:
    """Collects one module call's gradients and reports its backward."""

    __slots__ = ("rt", "base", "index", "arg_slots", "grad_outputs",
                 "waits_inputs", "handle")

    def __init__(self, rt: Runtime, base: str, index: int,
                 arg_slots: int) -> None:
        self.rt = rt
        self.base = base
        self.index = index
        self.arg_slots = arg_slots  # tensor positional arguments
        self.grad_outputs: Optional[list] = None
        self.waits_inputs = False
        # From Session.module_backward_begin: the open backward call.
        self.handle: Optional[Call] = None

    def on_output_grads(self, slots: List[int], count: int,
                        grads: Sequence[Optional[_Tensor]]) -> None:
        values: List[Optional[_Tensor]] = [None] * count
        for slot, grad in zip(slots, grads):
            values[slot] = grad
        self.grad_outputs = values
        # The module's backward begins: calls made until it ends (its
        # children's backward) are inside it.
        self._call(self._begin)
        if not self.waits_inputs:
            # No argument needs a gradient: as torch's BackwardHook (msprobe
            # 26.x) reports it, the entry's output is empty.
            self._emit([])

    def on_input_grads(self, slots: List[int],
                       grads: Sequence[Optional[_Tensor]]) -> None:
        values: List[Optional[_Tensor]] = [None] * self.arg_slots
        for slot, grad in zip(slots, grads):
            values[slot] = grad
        self._emit(values)

    def _emit(self, grad_inputs: list) -> None:
        self._call(lambda: self._end(grad_inputs))

    def _begin(self) -> None:
        self.handle = self.rt.session.module_backward_begin(self.base,
                                                            self.index)

    def _end(self, grad_inputs: list) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            self.rt.session.module_backward_end(
                handle, self.grad_outputs or [], grad_inputs)

    def _call(self, fn: Callable[[], None]) -> None:
        rt = self.rt
        if not rt.on:
            return
        local = rt.local
        local.busy += 1
        try:
            fn()
        except Exception as error:  # noqa: BLE001
            rt.warn_once("a module backward hook", error)
        finally:
            local.busy -= 1


class _Call:
    """One open module forward call on this thread."""

    __slots__ = ("module", "base", "handle", "backward")

    def __init__(self, module: torch.nn.Module, base: str,
                 handle: Call) -> None:
        self.module = module
        self.base = base
        self.handle = handle  # from Session.module_begin
        self.backward: Optional[_Backward] = None


class ModuleHooks:
    """Registers the hooks on every submodule of the models given to
    PrecisionDebugger.start(), once per model."""

    def __init__(self, rt: Runtime, grad_hooks: GradHooks) -> None:
        self.rt = rt
        self.grad_hooks = grad_hooks
        self._models: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # Every module with tprobe's hooks.
        self._hooked: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # module_dump(): whether its modules record now.
        self.module_dump_on = False

    def register(self, model: Any) -> None:
        many = isinstance(model, (list, tuple))
        models = list(model) if many else [model]
        for i, root in enumerate(models):
            if not isinstance(root, torch.nn.Module) or root in self._models:
                continue
            self._models.add(root)
            for path, module in root.named_modules():
                if module is root:
                    continue  # msprobe skips the model itself
                where = f"{i}.{path}" if many else path
                self._hook(module, where, None)

    def register_one(self, module: torch.nn.Module, path: str) -> bool:
        """Hooks ``module`` alone (not its children) as ``Module.{path}.
        {Class}``, recording only while ``module_dump_on`` (msprobe's
        module_dump). False when the module has tprobe's hooks already."""
        if module in self._hooked:
            return False
        self._hook(module, path, lambda: self.module_dump_on)
        return True

    def _hook(self, module: torch.nn.Module, path: str,
              gate: Optional[Callable[[], bool]]) -> None:
        self._hooked.add(module)
        base = Session.module_base(path, type(module).__name__)
        pre_hook = self._pre_hook(base, gate)
        post_hook = self._post_hook()
        if not _WITH_KWARGS:
            module.register_forward_pre_hook(_eager(pre_hook))
            module.register_forward_hook(_eager(post_hook))
            return

        def pre_hook_kwargs(module: torch.nn.Module, args: tuple,
                            kwargs: dict) -> Optional[tuple]:
            new_args = pre_hook(module, args, kwargs)
            return None if new_args is None else (new_args, kwargs)

        def post_hook_kwargs(module: torch.nn.Module, args: tuple,
                             kwargs: dict, output: Any) -> Any:
            return post_hook(module, args, output)

        module.register_forward_pre_hook(_eager(pre_hook_kwargs),
                                         with_kwargs=True)
        module.register_forward_hook(_eager(post_hook_kwargs),
                                     with_kwargs=True)

    def _pre_hook(self, base: str,
                  gate: Optional[Callable[[], bool]]) -> Callable:
        rt = self.rt

        def pre_hook(module: torch.nn.Module, args: tuple,
                     kwargs: Optional[dict] = None) -> Optional[tuple]:
            if not rt.on or (gate is not None and not gate()):
                return None
            local = rt.local
            if local.busy:
                return None
            local.busy += 1
            try:
                return self._open(module, base, args, kwargs)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a module forward pre-hook", error)
                return None
            finally:
                local.busy -= 1

        return pre_hook

    def _post_hook(self) -> Callable:
        rt = self.rt

        def post_hook(module: torch.nn.Module, args: tuple,
                      output: Any) -> Any:
            local = rt.local
            calls = local.modules
            if not calls or local.busy:
                return None
            call = self.rt.pop_call(module)
            if call is None:
                return None
            local.busy += 1
            try:
                return self._close(call, module, output)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a module forward hook", error)
                return None
            finally:
                local.busy -= 1

        return post_hook

    def _open(self, module: torch.nn.Module, base: str, args: tuple,
              kwargs: Optional[dict]) -> Optional[tuple]:
        rt = self.rt
        session = rt.session
        handle = session.module_begin(base)
        if handle is None:
            return None
        if handle.entry:
            # As msprobe 26.x: the stack and the inputs are taken when the
            # module begins (an in-place module shows its inputs unchanged).
            session.module_inputs(handle, args,
                                  kwargs if kwargs is not None else {})
        call = _Call(module, base, handle)
        rt.modules().append(call)
        if not (handle.backward and torch.is_grad_enabled()
                and not getattr(module, "inplace", False)):
            return None
        slots, positions, tensors, arg_slots = _grad_tensors(args)
        backward = call.backward = _Backward(rt, base, handle.index,
                                             arg_slots)
        if not tensors:
            return None
        backward.waits_inputs = True
        aliases = _alias(
            lambda grads: backward.on_input_grads(positions, grads), tensors)
        new_args = list(args)
        for i, alias in zip(slots, aliases):
            new_args[i] = alias
        return tuple(new_args)

    def _close(self, call: _Call, module: torch.nn.Module,
               output: Any) -> Any:
        session = self.rt.session
        handle = call.handle
        if handle.entry:
            session.module_end(handle, output, module._parameters)
        else:
            session.module_end(handle, None, None)
        if handle.backward:
            self.grad_hooks.ensure(module, call.base)
        if call.backward is None:
            return None
        return self._wrap_output(call.backward, output)

    @staticmethod
    def _wrap_output(backward: _Backward, output: Any) -> Any:
        if isinstance(output, _Tensor):
            items, rebuild = [output], lambda new: new[0]
        elif type(output) in (tuple, list):
            items, rebuild = list(output), type(output)
        else:
            return None  # dicts and other containers: no backward entry
        slots, positions, tensors, count = _grad_tensors(items)
        if not tensors:
            return None
        aliases = _alias(
            lambda grads: backward.on_output_grads(positions, count, grads),
            tensors)
        for i, alias in zip(slots, aliases):
            items[i] = alias
        return rebuild(items)
