"""API hooks (levels L1 and mix): mindspore.ops, Tensor methods, mint,
mint.nn.functional, communication.comm_func and mint.distributed functions
are replaced by wrappers (api_list.py says which) until restore().

A wrapper is a tprobe._C.ApiWrapper, the recorder PyTorch's API hooks use
too (client/python/binding/api_hook.h): a wrapped call made while capture is on,
and not from inside another hooked call or from tprobe itself, is recorded
as ``{Prefix}.{api}.{N}.forward``, inputs before the call, outputs after
it; for the distributed groups the output is the arguments after the call,
since collectives work in place. Backward: ``{Prefix}.{api}.{N}.backward``
through the gates of backward.py (its gates_for) when MindSpore records a
graph, as msprobe's API cells do: with no floating tensor among the
inputs, ``output`` is [].
"""

from typing import Any, Callable, List, Tuple

from mindspore import Tensor

from tprobe._C import ApiWrapper, Session
from tprobe._common.runtime import Runtime
from tprobe._common.wrapping import stand_in
from tprobe.mindspore import api_list, grad_gate
from tprobe.mindspore.backward import Backward

_DISTRIBUTED = ("Distributed", "MintDistributed")


def _targets() -> List[Tuple[str, Any, List[str]]]:
    from mindspore import mint, ops
    from mindspore.mint.nn import functional
    groups = [("Functional", ops, api_list.OPS),
              ("Tensor", Tensor, api_list.TENSOR),
              ("Mint", mint, api_list.MINT),
              ("MintFunctional", functional, api_list.MINT_FUNCTIONAL)]
    try:
        from mindspore.communication import comm_func
        groups.append(("Distributed", comm_func, api_list.COMM_FUNC))
    except ImportError:  # pragma: no cover - a build without communication
        pass
    try:
        from mindspore.mint import distributed
        groups.append(("MintDistributed", distributed,
                       api_list.MINT_DISTRIBUTED))
    except ImportError:  # pragma: no cover
        pass
    return groups


def _resolve(owner: Any, dotted: str) -> Tuple[Any, str]:
    """The object holding `dotted` ("auto_generate.quant_matmul") below
    owner, and the attribute's name."""
    parts = dotted.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner, parts[-1]


class ApiHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # (owner, attribute, original, whether the owner itself held it,
        # wrapper)
        self._replaced: List[Tuple[Any, str, Any, bool, Any]] = []

    def install(self) -> None:
        for prefix, owner, names in _targets():
            for api in names:
                target, attr = _resolve(owner, api)
                original = getattr(target, attr, None)
                if not callable(original) or isinstance(original, type):
                    continue
                held = getattr(target, "__dict__", {})
                own = attr in held
                wrapper = self._wrap(Session.api_base(prefix, api), original,
                                     prefix in _DISTRIBUTED)
                if own and isinstance(held[attr],
                                      (staticmethod, classmethod)):
                    # A class's static or class method (Tensor.from_numpy):
                    # its original is bound already, so the wrapper takes
                    # no instance; the descriptor itself is put back.
                    original = held[attr]
                    wrapper = staticmethod(wrapper)
                self._replaced.append((target, attr, original, own, wrapper))
                setattr(target, attr, wrapper)

    @property
    def installed(self) -> bool:
        return bool(self._replaced)

    def restore(self) -> None:
        self.suspend()
        self._replaced.clear()

    def suspend(self) -> None:
        """Puts the original functions back (for a jit compilation, which
        must not see the wrappers) until resume()."""
        for owner, attr, original, own, _ in reversed(self._replaced):
            if own:
                setattr(owner, attr, original)
            else:
                delattr(owner, attr)

    def resume(self) -> None:
        for owner, attr, _, _, wrapper in self._replaced:
            setattr(owner, attr, wrapper)

    def _wrap(self, base: str, original: Callable,
              distributed: bool) -> Callable:
        wrapper = ApiWrapper(self.rt, base, original, distributed, None,
                             None, self._gates)
        return stand_in(wrapper, original, base)

    def _gates(self, base: str, index: int, args: tuple) -> Any:
        """The gates of a call whose backward is recorded (the wrapper's
        gates_for): msprobe's API cells, while MindSpore records a
        graph."""
        if not grad_gate.recording_grad():
            return None
        return Backward(self.rt, base, index)
