"""Module hooks (levels L0 and mix).

Forward: a pre-hook opens the call (index, construct node) and a post-hook
writes the entry ``Module.{path}.{Class}.forward.{N}`` with input_args,
input_kwargs, output, parameters and is_recompute. As in msprobe 8.3.3 the
inputs are read in the post-hook, so an in-place module shows its inputs
after the change. PyTorch 1.13 hands no kwargs to module hooks, so
input_kwargs is always {}.

Backward: ``Module.{path}.{Class}.backward.{N}`` (same N as the forward),
with ``input`` = gradients w.r.t. the forward outputs and ``output`` =
gradients w.r.t. the forward's tensor arguments. The gradients are taken by
an identity autograd node around the outputs (it runs when the module's
backward starts) and one around the inputs (it runs when the module's
backward is done). Unlike register_full_backward_hook, whose outputs are
views created by a custom Function, these nodes return plain aliases, so
code that later changes a module's output in place (``out += x``) keeps
working. Modules with ``inplace=True`` get no backward entry: their input
would be changed through the alias (msprobe misses these too).
"""

import weakref
from typing import Any, Callable, List, Optional, Sequence

import torch

from tprobe.torch import stack as call_stack
from tprobe.torch.grad_hooks import GradHooks
from tprobe.torch.runtime import Runtime

_Tensor = torch.Tensor


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


def _alias(callback: Callable, tensors: List[_Tensor]) -> tuple:
    result = _Alias.apply(callback, *tensors)
    return result if isinstance(result, tuple) else (result,)


class _Backward:
    """Collects one module call's gradients and writes its backward entry."""

    __slots__ = ("rt", "name", "arg_slots", "grad_outputs", "waits_inputs")

    def __init__(self, rt: Runtime, name: str, arg_slots: int) -> None:
        self.rt = rt
        self.name = name
        self.arg_slots = arg_slots  # tensor positional arguments
        self.grad_outputs: Optional[list] = None
        self.waits_inputs = False

    def on_output_grads(self, slots: List[int], count: int,
                        grads: Sequence[Optional[_Tensor]]) -> None:
        values: List[Optional[_Tensor]] = [None] * count
        for slot, grad in zip(slots, grads):
            values[slot] = grad
        self.grad_outputs = values
        if not self.waits_inputs:
            self._emit([None] * self.arg_slots)

    def on_input_grads(self, slots: List[int],
                       grads: Sequence[Optional[_Tensor]]) -> None:
        values: List[Optional[_Tensor]] = [None] * self.arg_slots
        for slot, grad in zip(slots, grads):
            values[slot] = grad
        self._emit(values)

    def _emit(self, grad_inputs: list) -> None:
        rt = self.rt
        if not rt.on:
            return
        local = rt.local
        local.busy += 1
        try:
            session = rt.session
            name = self.name
            session.call_begin(name, "module", "backward")
            body = {"input": self.grad_outputs or [], "output": grad_inputs}
            session.record_entry(name, None, rt.selection.backward_body(body))
            session.call_end(name, "module", "backward")
        except Exception as error:  # noqa: BLE001
            rt.warn_once("a module backward hook", error)
        finally:
            local.busy -= 1


class _Call:
    """One open module forward call on this thread."""

    __slots__ = ("module", "name", "backward_name", "selected", "backward")

    def __init__(self, module: torch.nn.Module, name: str,
                 backward_name: str, selected: bool) -> None:
        self.module = module
        self.name = name
        self.backward_name = backward_name
        self.selected = selected
        self.backward: Optional[_Backward] = None


class ModuleHooks:
    """Registers the hooks on every submodule of the models given to
    PrecisionDebugger.start(), once per model."""

    def __init__(self, rt: Runtime, grad_hooks: GradHooks) -> None:
        self.rt = rt
        self.grad_hooks = grad_hooks
        self._models: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()

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
                prefix = f"Module.{where}.{type(module).__name__}."
                module.register_forward_pre_hook(self._pre_hook(prefix))
                module.register_forward_hook(self._post_hook(prefix))

    def _pre_hook(self, prefix: str) -> Callable:
        rt = self.rt

        def pre_hook(module: torch.nn.Module, args: tuple) -> Optional[tuple]:
            if not rt.on:
                return None
            local = rt.local
            if local.busy:
                return None
            local.busy += 1
            try:
                return self._open(module, prefix, args)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a module forward pre-hook", error)
                return None
            finally:
                local.busy -= 1

        return pre_hook

    def _post_hook(self, prefix: str) -> Callable:
        rt = self.rt

        def post_hook(module: torch.nn.Module, args: tuple,
                      output: Any) -> Any:
            local = rt.local
            calls = local.modules
            if not calls or local.busy:
                return None
            call = self._pop(calls, module)
            if call is None:
                return None
            local.busy += 1
            try:
                return self._close(call, module, prefix, args, output)
            except Exception as error:  # noqa: BLE001
                rt.warn_once("a module forward hook", error)
                return None
            finally:
                local.busy -= 1

        return post_hook

    @staticmethod
    def _pop(calls: list, module: torch.nn.Module) -> Optional[_Call]:
        # Innermost first; calls left open by an exception are dropped.
        for i in range(len(calls) - 1, -1, -1):
            if calls[i].module is module:
                call = calls[i]
                del calls[i:]
                return call
        return None

    def _open(self, module: torch.nn.Module, prefix: str,
              args: tuple) -> Optional[tuple]:
        rt = self.rt
        session = rt.session
        index = session.next_index(prefix)
        name = f"{prefix}forward.{index}"
        calls = rt.modules()
        inside = bool(calls) and calls[-1].selected
        selected = rt.selection.forward_selected(name, inside)
        call = _Call(module, name, f"{prefix}backward.{index}", selected)
        calls.append(call)
        session.call_begin(name, "module", "forward")
        if not (selected and session.connected
                and self._wants_backward(module)):
            return None
        # slots: where in args; positions: where among the tensor arguments
        # (the backward entry's output list has one item per tensor).
        slots, positions, tensors, arg_slots = [], [], [], 0
        for i, arg in enumerate(args):
            if isinstance(arg, _Tensor):
                if arg.requires_grad:
                    slots.append(i)
                    positions.append(arg_slots)
                    tensors.append(arg)
                arg_slots += 1
        backward = call.backward = _Backward(rt, call.backward_name, arg_slots)
        if not tensors:
            return None
        backward.waits_inputs = True
        aliases = _alias(
            lambda grads: backward.on_input_grads(positions, grads), tensors)
        new_args = list(args)
        for i, alias in zip(slots, aliases):
            new_args[i] = alias
        return tuple(new_args)

    def _wants_backward(self, module: torch.nn.Module) -> bool:
        return (self.rt.selection.backward and torch.is_grad_enabled()
                and not getattr(module, "inplace", False))

    def _close(self, call: _Call, module: torch.nn.Module, prefix: str,
               args: tuple, output: Any) -> Any:
        rt = self.rt
        session = rt.session
        selection = rt.selection
        if call.selected and selection.forward and session.connected:
            outputs = output if isinstance(output, (list, tuple)) else [output]
            parameters = {k: v for k, v in module._parameters.items()
                          if v is not None}
            body = {"input_args": args, "input_kwargs": {}, "output": outputs,
                    "parameters": parameters, "is_recompute": False}
            selection.forward_body(body, ("input_args", "input_kwargs"),
                                   ("output",))
            session.record_entry(call.name, call_stack.capture(), body)
        session.call_end(call.name, "module", "forward")
        if call.selected and selection.backward:
            self.grad_hooks.ensure(module, prefix)
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
        slots, positions, tensors, count = [], [], [], 0
        for i, item in enumerate(items):
            if isinstance(item, _Tensor):
                if item.requires_grad:
                    slots.append(i)
                    tensors.append(item)
                    positions.append(count)
                count += 1
        if not tensors:
            return None
        aliases = _alias(
            lambda grads: backward.on_output_grads(positions, count, grads),
            tensors)
        for i, alias in zip(slots, aliases):
            items[i] = alias
        return rebuild(items)
