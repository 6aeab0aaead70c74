"""API hooks (levels L1 and mix): torch.nn.functional, torch.Tensor, torch,
torch._VF and torch.distributed functions are replaced by wrappers
(api_list.py says which).

A wrapped call made while capture is on, and not from inside another hooked
call or from tprobe itself, becomes the entry ``{Prefix}.{api}.{N}.forward``
with input_args, input_kwargs, is_recompute and output. N counts the calls
of that API in the step, dumped or not. Inputs are read before the call
(an in-place API shows them unchanged), outputs after it. For
torch.distributed calls the output is the arguments after the call, since
collectives work in place.

Backward: a hook on the grad_fn of the first output tensor writes
``{Prefix}.{api}.{N}.backward`` with input = the gradients flowing into that
node and output = the gradients it passes on. As in msprobe it fires even
after stop(), for backward passes of calls dumped before.
"""

from typing import Any, Callable, List, Optional, Tuple

import torch

from tprobe.torch import api_list
from tprobe.torch import stack as call_stack
from tprobe.torch.runtime import Runtime, first_tensor

_Tensor = torch.Tensor


def _targets() -> List[Tuple[str, List[Any], List[str]]]:
    groups = [
        ("Functional", [torch.nn.functional], api_list.FUNCTIONAL),
        ("Tensor", [torch.Tensor], api_list.TENSOR),
        ("Torch", [torch], api_list.TORCH),
        ("VF", [torch._VF], api_list.VF),
    ]
    try:
        import torch.distributed as dist
        if dist.is_available():
            groups.append(("Distributed", [dist, dist.distributed_c10d],
                           api_list.DISTRIBUTED))
    except ImportError:  # pragma: no cover
        pass
    return groups


def _resolve(owner: Any, dotted: str) -> Tuple[Any, str]:
    parts = dotted.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            break
    return owner, parts[-1]


class _Pending:
    """A recorded call between its start and its end."""

    __slots__ = ("name", "stack", "args", "kwargs", "construct")

    def __init__(self, name: str, stack: Optional[list], args: Any,
                 kwargs: Any, construct: bool) -> None:
        self.name = name
        self.stack = stack
        self.args = args
        self.kwargs = kwargs
        self.construct = construct


class ApiHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # (owner, attribute, original, whether the owner itself held it)
        self._replaced: List[Tuple[Any, str, Any, bool]] = []

    def install(self) -> None:
        for prefix, owners, names in _targets():
            for api in names:
                target, attr = _resolve(owners[0], api)
                original = getattr(target, attr, None) if target else None
                if not callable(original):
                    continue
                wrapper = self._wrap(f"{prefix}.{attr}.", original,
                                     prefix == "Distributed")
                for owner in owners:
                    target, attr = _resolve(owner, api)
                    if (target is None
                            or getattr(target, attr, None) is not original):
                        continue
                    own = attr in getattr(target, "__dict__", {})
                    self._replaced.append((target, attr, original, own))
                    setattr(target, attr, wrapper)

    def restore(self) -> None:
        for target, attr, original, own in reversed(self._replaced):
            if own:
                setattr(target, attr, original)
            else:
                delattr(target, attr)
        self._replaced.clear()

    def _wrap(self, prefix: str, original: Callable,
              distributed: bool) -> Callable:
        rt = self.rt
        record = self._record

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if rt.on and not rt.local.busy:
                return record(prefix, original, distributed, args, kwargs)
            return original(*args, **kwargs)

        wrapper.__name__ = getattr(original, "__name__", prefix)
        wrapper.__qualname__ = getattr(original, "__qualname__",
                                       wrapper.__name__)
        wrapper.__doc__ = getattr(original, "__doc__", None)
        wrapper.__wrapped__ = original
        return wrapper

    def _record(self, prefix: str, original: Callable, distributed: bool,
                args: tuple, kwargs: dict) -> Any:
        local = self.rt.local
        local.busy = 1
        try:
            pending = self._before(prefix, args, kwargs)
            out = original(*args, **kwargs)
            if pending is not None:
                self._after(pending, distributed, args, kwargs, out)
            return out
        finally:
            local.busy = 0

    def _before(self, prefix: str, args: tuple,
                kwargs: dict) -> Optional[_Pending]:
        rt = self.rt
        try:
            session = rt.session
            name = f"{prefix}{session.next_index(prefix)}.forward"
            construct = rt.api_calls_to_construct
            calls = rt.local.modules
            inside = bool(calls) and calls[-1].selected
            selection = rt.selection
            if not selection.forward_selected(name, inside):
                if construct:  # msprobe adds the node before filtering
                    session.call_begin(name, "api", "forward")
                    session.call_end(name, "api", "forward")
                return None
            if not session.connected:
                session.record_entry(name, None, {})  # counts the drop
                return None
            lines = call_stack.capture()
            if construct:
                session.call_begin(name, "api", "forward")
            if selection.forward and selection.input:
                return _Pending(name, lines, session.encode(args),
                                session.encode(kwargs), construct)
            return _Pending(name, lines, None, None, construct)
        except Exception as error:  # noqa: BLE001
            rt.warn_once("an API hook", error)
            return None

    def _after(self, pending: _Pending, distributed: bool, args: tuple,
               kwargs: dict, out: Any) -> None:
        rt = self.rt
        try:
            session = rt.session
            selection = rt.selection
            name = pending.name
            body = {}
            if pending.args is not None:
                body["input_args"] = pending.args
                body["input_kwargs"] = pending.kwargs
            body["is_recompute"] = False
            if selection.forward and selection.output:
                if distributed:
                    body["output"] = list(args) + list(kwargs.values())
                elif isinstance(out, (list, tuple)):
                    body["output"] = out
                else:
                    body["output"] = [out]
            if selection.forward:
                session.record_entry(name, pending.stack, body)
            if selection.backward:
                self._hook_backward(name, out, pending.construct)
            if pending.construct:
                session.call_end(name, "api", "forward")
        except Exception as error:  # noqa: BLE001
            rt.warn_once("an API hook", error)

    def _hook_backward(self, forward_name: str, out: Any,
                       construct: bool) -> None:
        tensor = first_tensor(out, _Tensor)
        if tensor is None or not tensor.requires_grad:
            return
        grad_fn = tensor.grad_fn
        if grad_fn is None:
            return
        rt = self.rt
        name = forward_name[:-len("forward")] + "backward"

        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            local = rt.local
            local.busy += 1
            try:
                session = rt.session
                if construct:
                    session.call_begin(name, "api", "backward")
                body = {"input": list(grad_outputs),
                        "output": list(grad_inputs)}
                session.record_entry(name, None,
                                     rt.selection.backward_body(body))
                if construct:
                    session.call_end(name, "api", "backward")
            except Exception as error:  # noqa: BLE001
                rt.warn_once("an API backward hook", error)
            finally:
                local.busy -= 1

        grad_fn.register_hook(hook)
