"""PrecisionDebugger: msprobe's PyTorch entry point, backed by tprobed.

    debugger = PrecisionDebugger(config_path="config.json")
    for batch in data:
        debugger.start(model)
        ...forward, backward, optimizer step...
        debugger.stop()
        debugger.step()

It is a singleton: later constructions return the first instance and ignore
their arguments. A bad config raises ValueError here, with the config's
message; after construction nothing tprobe does raises into training. API
hooks are installed at construction (create the debugger before the model
runs), module hooks at the first start() with a model.
"""

import atexit
import os
import sys
import threading
from typing import Any, List, Optional

import torch

from tprobe import _C
from tprobe._common.session import config_with_overrides, new_session
from tprobe.torch import values
from tprobe.torch.api_hooks import ApiHooks
from tprobe.torch.grad_hooks import GradHooks
from tprobe.torch.module_hooks import ModuleHooks
from tprobe.torch.optimizer_hooks import OptimizerHooks
from tprobe._common.runtime import Runtime


def current_rank() -> int:
    """torch.distributed's rank when initialised, else $RANK, else -1 (the
    dump directory is then "rank", as msprobe names it)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # noqa: BLE001
        pass
    try:
        return int(os.environ["RANK"])
    except (KeyError, ValueError):
        return -1


class PrecisionDebugger:
    _instance: Optional["PrecisionDebugger"] = None
    _lock = threading.Lock()

    def __new__(cls, *args: Any, **kwargs: Any) -> "PrecisionDebugger":
        with cls._lock:
            if cls._instance is None:
                instance = super().__new__(cls)
                instance._ready = False
                cls._instance = instance
            return cls._instance

    def __init__(self, config_path: Optional[str] = None,
                 task: Optional[str] = None, dump_path: Optional[str] = None,
                 level: Optional[str] = None, model: Any = None,
                 step: Optional[List[Any]] = None) -> None:
        if self._ready:
            return
        overrides = {k: v for k, v in
                     (("task", task), ("level", level), ("step", step))
                     if v is not None}
        self._config = config_with_overrides(config_path, overrides)
        self._dump_path = dump_path
        self._rank = current_rank()
        try:
            session = new_session(self._config, dump_path, self._rank,
                                  "pytorch")
        except ValueError:
            type(self)._instance = None
            raise
        self.model = model
        self._rt = Runtime(session, session.level)
        self._grads = GradHooks(self._rt)
        self._modules = ModuleHooks(self._rt, self._grads)
        self._apis = ApiHooks(self._rt)
        self._started = False
        _C.set_fallback(values.fallback)
        if self._rt.level in ("L1", "mix"):
            self._apis.install()
        if self._rt.level == "mix":
            OptimizerHooks(self._rt).install()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)
        atexit.register(self._close)
        self._ready = True

    # msprobe exposes these as class methods; they act on the instance.
    @classmethod
    def _get(cls) -> Optional["PrecisionDebugger"]:
        instance = cls._instance
        return instance if instance is not None and instance._ready else None

    @classmethod
    def start(cls, model: Any = None, token_range: Any = None) -> None:
        if token_range is not None:
            raise NotImplementedError(
                "PrecisionDebugger.start: token_range is not supported by "
                "tprobe (msprobe dumps only the given token range of an "
                "inference run); call start() without it")
        self = cls._get()
        if self is None:
            return
        try:
            self._start(model)
        except Exception as error:  # noqa: BLE001
            self._rt.warn_once("PrecisionDebugger.start", error)

    @classmethod
    def stop(cls) -> None:
        self = cls._get()
        if self is None:
            return
        self._rt.session.stop()
        self._rt.refresh()

    @classmethod
    def step(cls) -> None:
        self = cls._get()
        if self is None:
            return
        rt = self._rt
        rt.session.step()
        rt.refresh()
        if rt.session.level != rt.level:
            self._follow_level(rt.session.level)

    @classmethod
    def forward_backward_dump_end(cls) -> None:
        """msprobe's deprecated name for stop()."""
        cls.stop()

    @classmethod
    def set_init_step(cls, step: int) -> None:
        """Numbers the steps from ``step``: the next start() records into
        step{step}, and each step() counts on from there."""
        self = cls._require("set_init_step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"set_init_step: step must be an integer >= 0, "
                             f"got {step!r}")
        self._rt.session.set_step(step)
        self._rt.refresh()

    @classmethod
    def save(cls, variable: Any, name: str, save_backward: bool = True) -> None:
        """msprobe's save() writes only at its level "debug" (debug.json),
        which tprobe does not support (the config refuses it); at every
        other level msprobe ignores the call, and so does tprobe. Bad
        arguments raise ValueError."""
        cls._require("save")
        if not isinstance(name, str):
            raise ValueError(f"save: name must be a str, got {name!r}")
        if not isinstance(save_backward, bool):
            raise ValueError(f"save: save_backward must be a bool, got "
                             f"{save_backward!r}")

    @classmethod
    def _require(cls, what: str) -> "PrecisionDebugger":
        self = cls._get()
        if self is None:
            raise RuntimeError(f"{what}: create the PrecisionDebugger first")
        return self

    def _module_dump(self, module: Any, name: str) -> None:
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"module_dump: module must be a torch.nn.Module, "
                            f"got {type(module).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"module_dump: dump_name must be a str, got "
                            f"{name!r}")
        if self._rt.level == "L1":
            raise NotImplementedError(
                "module_dump: tprobe records modules at levels L0 and mix "
                "only, not at L1; configure level mix")
        if not self._modules.register_one(module, name):
            sys.stderr.write("[tprobe] module_dump: the module is hooked "
                             "already (start() with its model); it is "
                             "dumped as part of that model\n")
            return
        # As in msprobe: inside the module no API is recorded.
        self._apis.restore()
        self._modules.module_dump_on = True

    def _follow_level(self, level: str) -> None:
        """A live config (``tprobe configure``) changed the level at this
        step boundary: API hooks go in for L1 and mix; module hooks go in
        at the next start() with a model. Hooks the new level does not use
        stay in place and record nothing (the session refuses their
        calls)."""
        self._rt.level = level
        if (level in ("L1", "mix") and not self._apis.installed
                and not self._modules.module_dump_on):
            self._apis.install()

    def _module_dump_end(self) -> None:
        self._modules.module_dump_on = False
        if self._rt.level in ("L1", "mix") and not self._apis.installed:
            self._apis.install()

    @property
    def session(self) -> _C.Session:
        """The underlying tprobe._C.Session (counters(), flush(), ...)."""
        return self._rt.session

    def _start(self, model: Any) -> None:
        rt = self._rt
        if not self._started:
            self._started = True
            rank = current_rank()
            if rank != self._rank:
                # torch.distributed came up after construction: msprobe reads
                # the rank at the first start(), so the session follows it.
                rt.session.close()
                rt.session = new_session(self._config, self._dump_path, rank,
                                         "pytorch")
                self._rank = rank
        model = model if model is not None else self.model
        if rt.level in ("L0", "mix"):
            if model is None:
                if not getattr(self, "_warned_model", False):
                    self._warned_model = True
                    sys.stderr.write("[tprobe] level %s needs a model: pass "
                                     "it to PrecisionDebugger or start(); "
                                     "no module is dumped\n" % rt.level)
            else:
                self._modules.register(model)
        rt.session.start()
        rt.refresh()

    def _forked(self) -> None:
        # A forked child (a DataLoader worker) never writes into the
        # parent's rings; its hooks go quiet.
        self._rt.on = False

    def _close(self) -> None:
        rt = self._rt
        rt.on = False
        rt.session.close()


def module_dump(module: Any, dump_name: str) -> None:
    """Dumps ``module`` alone as ``Module.{dump_name}.{Class}`` until
    module_dump_end(); its children and the APIs it calls are not recorded
    (msprobe's module_dump). REQUIRES: a PrecisionDebugger exists."""
    PrecisionDebugger._require("module_dump")._module_dump(module, dump_name)


def module_dump_end() -> None:
    """Ends module_dump(); API hooks are back for levels L1 and mix."""
    PrecisionDebugger._require("module_dump_end")._module_dump_end()
