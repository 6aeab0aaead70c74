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

from tprobe import _C
from tprobe._common.session import config_with_overrides, new_session
from tprobe.torch import values
from tprobe.torch.api_hooks import ApiHooks
from tprobe.torch.grad_hooks import GradHooks
from tprobe.torch.module_hooks import ModuleHooks
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

    @classmethod
    def forward_backward_dump_end(cls) -> None:
        cls.stop()

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
