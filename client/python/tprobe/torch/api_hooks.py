"""API hooks (levels L1 and mix): torch.nn.functional, torch.Tensor, torch,
torch._VF and torch.distributed functions are replaced by wrappers
(api_list.py says which: the installed msprobe's list, else its copy).

A wrapper is a tprobe._C.ApiWrapper (client/python/binding/api_hook.h): a call
runs no Python frame of tprobe's. A wrapped call made while capture is on,
and not from inside another hooked call or from tprobe itself, is reported
to the client core, which names it ``{Prefix}.{api}.{N}.forward``, counts it
and applies the filters; its plan says whether to pass data. Inputs are read
before the call (an in-place API shows them unchanged), outputs after it.
The API's own exception propagates unchanged and the call ends without an
entry. For torch.distributed calls the output is the arguments after the
call, since collectives work in place.

Backward: a hook on the grad_fn of the first output tensor reports
``{Prefix}.{api}.{N}.backward`` with input = the gradients flowing into that
node and output = the gradients it passes on. As in msprobe it fires even
after stop(), for backward passes of calls dumped before. While the wrappers
are in, torch's Function._register_hook (what grad_fn.register_hook calls)
is a tprobe._C.NodeHookRegistrar, which puts that hook into the node's hook
dict without the Python path that makes a RemovableHandle; every other hook
still goes through torch's.
"""

import collections
import threading
from typing import Any, Callable, Dict, List, Tuple

import torch

from tprobe._C import ApiWrapper, NodeHookRegistrar, Session
from tprobe.torch import api_list
from tprobe._common.wrapping import stand_in
from tprobe._common.runtime import Runtime

# Whether torch.compile's Dynamo is compiling a frame on this thread
# (CompileContext.try_get() is not None): the calls it makes then (on fake
# tensors, to build the graph and its guards) are not the model's, and are
# not recorded. msprobe 26.x refuses Dynamo outright on PyTorch >= 2.7;
# tprobe records what runs eagerly (hooks make Dynamo break the graph around
# every hooked call) and never stops training. The wrapper reads the
# threading.local that try_get reads (torch._guards._TLS.compile_context)
# itself, which runs no Python frame per call; try_get is the fallback where
# that local is not there.
try:  # PyTorch 2.x
    from torch import _guards
    if isinstance(getattr(_guards, "_TLS", None), threading.local):
        _compile_context = (_guards._TLS, "compile_context")
    else:
        _compile_context = _guards.CompileContext.try_get
except (ImportError, AttributeError):
    _compile_context = None


def _owners() -> Dict[str, List[Any]]:
    """Where each group's functions live (the first owner is looked up; the
    wrapper replaces the function in every owner that holds it)."""
    owners = {"Functional": [torch.nn.functional], "Tensor": [torch.Tensor],
              "Torch": [torch], "VF": [torch._VF]}
    try:
        import torch.distributed as dist
        if dist.is_available():
            owners["Distributed"] = [dist, dist.distributed_c10d]
    except ImportError:  # pragma: no cover
        pass
    return owners


def _targets() -> List[Tuple[str, List[Any], List[str]]]:
    owners = _owners()
    return [(prefix, owners[prefix],
             [n for n in names if f"{prefix}.{n}" not in api_list.SKIPPED])
            for prefix, names in api_list.groups().items()
            if prefix in owners]


def _resolve(owner: Any, dotted: str) -> Tuple[Any, str]:
    parts = dotted.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            break
    return owner, parts[-1]


# Where grad_fn.register_hook(hook) puts a hook: torch looks this name up on
# torch.autograd.Function (its _HookMixin base defines it).
_REGISTER_HOOK = "_register_hook"


class ApiHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # (owner, attribute, original, whether the owner itself held it)
        self._replaced: List[Tuple[Any, str, Any, bool]] = []

    def install(self) -> None:
        self._replace(torch.autograd.Function, _REGISTER_HOOK,
                      NodeHookRegistrar(
                          getattr(torch.autograd.Function, _REGISTER_HOOK),
                          collections.OrderedDict))
        for prefix, owners, names in _targets():
            for api in names:
                target, attr = _resolve(owners[0], api)
                original = getattr(target, attr, None) if target else None
                if not callable(original):
                    continue
                wrapper = self._wrap(Session.api_base(prefix, attr),
                                     original, prefix == "Distributed")
                for owner in owners:
                    target, attr = _resolve(owner, api)
                    if (target is None
                            or getattr(target, attr, None) is not original):
                        continue
                    self._replace(target, attr, wrapper)

    def _replace(self, target: Any, attr: str, value: Any) -> None:
        own = attr in getattr(target, "__dict__", {})
        self._replaced.append(
            (target, attr, getattr(target, attr), own))
        setattr(target, attr, value)

    @property
    def installed(self) -> bool:
        return bool(self._replaced)

    def restore(self) -> None:
        for target, attr, original, own in reversed(self._replaced):
            if own:
                setattr(target, attr, original)
            else:
                delattr(target, attr)
        self._replaced.clear()

    def _wrap(self, base: str, original: Callable,
              distributed: bool) -> Callable:
        wrapper = ApiWrapper(self.rt, base, original, distributed,
                             torch.Tensor, _compile_context)
        return stand_in(wrapper, original, base)
