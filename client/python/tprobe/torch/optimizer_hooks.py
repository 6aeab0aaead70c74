"""msprobe 26.x's "optimizer" and "clip_grad" construct nodes (level mix).

While an optimizer's step() runs (PyTorch >= 2: torch's global optimizer
step pre/post hooks) or one of torch.nn.utils' clip_grad_norm_,
clip_grad_norm and clip_grad_value_ runs (wrapped in place, on every
version), the calls recorded have the node "optimizer" (or "clip_grad") as
their construct.json parent, and that node (parent null) goes in before the
first of them (Session.begin_group). They do nothing while no session
records, and restore() takes them off (after the last configured step).
"""

import importlib
from typing import Any, Callable, List, Tuple

import torch

from tprobe._common.runtime import Runtime
from tprobe._common.wrapping import stand_in

_CLIP_GRAD = ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_")


class OptimizerHooks:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._handles: List[Any] = []
        # (name, original) of each torch.nn.utils function wrapped.
        self._clip: List[Tuple[str, Callable]] = []

    @property
    def installed(self) -> bool:
        return bool(self._handles or self._clip)

    def restore(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for name, original in reversed(self._clip):
            setattr(torch.nn.utils, name, original)
        self._clip = []

    def install(self) -> None:
        optim = importlib.import_module("torch.optim.optimizer")
        if hasattr(optim, "register_optimizer_step_pre_hook"):
            self._handles = [
                optim.register_optimizer_step_pre_hook(
                    lambda *_: self._begin("optimizer")),
                optim.register_optimizer_step_post_hook(
                    lambda *_: self._end()),
            ]
        for name in _CLIP_GRAD:
            original = getattr(torch.nn.utils, name, None)
            if callable(original):
                self._clip.append((name, original))
                setattr(torch.nn.utils, name, self._wrap_clip(original, name))

    def _wrap_clip(self, original: Callable, name: str) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self._begin("clip_grad")
            try:
                return original(*args, **kwargs)
            finally:
                self._end()

        return stand_in(wrapper, original, f"torch.nn.utils.{name}")

    def _begin(self, group: str) -> None:
        try:
            self.rt.session.begin_group(group)
        except Exception as error:  # noqa: BLE001
            self.rt.warn_once("an optimizer hook", error)

    def _end(self) -> None:
        try:
            self.rt.session.end_group()
        except Exception as error:  # noqa: BLE001
            self.rt.warn_once("an optimizer hook", error)
