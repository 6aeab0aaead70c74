"""PrecisionDebugger: msprobe's MindSpore entry point (PyNative), backed by
tprobed.

    debugger = PrecisionDebugger(config_path="config.json")
    for batch in data:
        debugger.start(net)       # a Cell, or a list of Cells
        loss, grads = grad_fn(batch)
        optimizer(grads)
        debugger.stop()
        debugger.step()

It is a singleton: later constructions return the first instance and ignore
their arguments. A bad config, level L2 or a start() with something that is
not a Cell raise here, with a message; nothing else tprobe does raises into
training. API hooks are installed at construction (create the debugger
before the network runs), cell and primitive hooks at the first start()
with a network. After the last configured step every hook is removed and
every patched function put back, so training goes on at full speed.
"""

import atexit
import json
import os
import sys
import threading
from typing import Any, List, Optional

from mindspore import nn

from tprobe._common.runtime import Runtime
from tprobe._common.session import config_with_overrides, new_session
from tprobe.mindspore import grad_gate
from tprobe.mindspore.api_hooks import ApiHooks
from tprobe.mindspore.cell_hooks import CellHooks
from tprobe.mindspore.jit_hooks import JitHooks
from tprobe.mindspore.primitive_hooks import PrimitiveHooks


def current_rank() -> int:
    """mindspore.communication's rank when initialised, else $RANK_ID or
    $RANK, else -1 (the dump directory is then "rank")."""
    try:
        from mindspore.communication import GlobalComm, get_rank
        if GlobalComm.INITED:
            return int(get_rank())
    except Exception:  # noqa: BLE001
        pass
    for key in ("RANK_ID", "RANK"):
        try:
            return int(os.environ[key])
        except (KeyError, ValueError):
            pass
    return -1


def _configured_level(config_path: Optional[str],
                      level: Optional[str]) -> Optional[str]:
    if level is not None or not config_path:
        return level
    try:
        with open(config_path, encoding="utf-8") as f:
            value = json.load(f).get("level")
    except (OSError, ValueError, AttributeError):
        return None  # the client core reports an unreadable config
    return value if isinstance(value, str) else None


def _cells(model: Any) -> List[nn.Cell]:
    """model as a list of Cells; TypeError for anything else."""
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    if not models or not all(isinstance(m, nn.Cell) for m in models):
        raise TypeError(
            "tprobe.mindspore: start(model) takes a mindspore.nn.Cell or a "
            f"list of them, not {type(model).__name__}")
    return models


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
                 level: Optional[str] = None,
                 step: Optional[List[Any]] = None) -> None:
        if self._ready:
            return
        if _configured_level(config_path, level) == "L2":
            type(self)._instance = None
            raise ValueError(
                "tprobe.mindspore: level L2 (the kernel dump of MindSpore's "
                "own dump) is not supported; use L0, L1 or mix")
        overrides = {k: v for k, v in
                     (("task", task), ("level", level), ("step", step))
                     if v is not None}
        try:
            config = config_with_overrides(config_path, overrides)
            session = new_session(config, dump_path, current_rank(),
                                  "mindspore")
        except ValueError:
            type(self)._instance = None
            raise
        self._rt = Runtime(session, session.level)
        self._cells = CellHooks(self._rt)
        self._apis = ApiHooks(self._rt)
        self._primitives = PrimitiveHooks(self._rt)
        self._jit = JitHooks(self._rt, self._apis)
        self._ended = False
        if self._rt.level in ("L1", "mix"):
            self._apis.install()
            self._jit.install()
        atexit.register(self._close)
        self._ready = True

    # msprobe exposes these as class methods; they act on the instance.
    @classmethod
    def _get(cls) -> Optional["PrecisionDebugger"]:
        instance = cls._instance
        return instance if instance is not None and instance._ready else None

    @classmethod
    def start(cls, model: Any = None) -> None:
        """Starts (or resumes) dumping the current step. ``model`` is a
        Cell or a list of Cells; L0 and mix need one."""
        self = cls._get()
        if self is None or self._ended:
            return
        models = _cells(model) if model is not None else None
        try:
            self._start(models, isinstance(model, (list, tuple)))
        except Exception as error:  # noqa: BLE001
            self._rt.warn_once("PrecisionDebugger.start", error)

    @classmethod
    def stop(cls) -> None:
        self = cls._get()
        if self is None or self._ended:
            return
        self._rt.session.stop()
        self._rt.refresh()

    @classmethod
    def step(cls) -> None:
        self = cls._get()
        if self is None or self._ended:
            return
        self._rt.session.step()
        self._rt.refresh()
        grad_gate.release()

    @property
    def session(self) -> Any:
        """The underlying tprobe._C.Session (counters(), flush(), ...)."""
        return self._rt.session

    def _start(self, models: Optional[List[nn.Cell]], many: bool) -> None:
        rt = self._rt
        last = rt.session.last_step
        if last is not None and rt.session.current_step > last:
            rt.session.start()  # logs that the configured steps are done
            self._end()
            return
        if models is not None:
            if rt.level in ("L0", "mix"):
                self._cells.register(models, many)
            if rt.level in ("L1", "mix"):
                self._primitives.register(models)
        elif rt.level in ("L0", "mix") and not getattr(self, "_warned", 0):
            self._warned = 1
            sys.stderr.write("[tprobe] level %s needs a network: pass it "
                             "to start(); no cell is dumped\n" % rt.level)
        rt.session.start()
        rt.refresh()

    def _end(self) -> None:
        """Removes every hook and puts the original functions back."""
        self._ended = True
        rt = self._rt
        rt.on = False
        self._jit.restore()
        self._apis.restore()
        self._primitives.restore()
        self._cells.remove()
        grad_gate.release()

    def _close(self) -> None:
        rt = self._rt
        rt.on = False
        rt.session.close()
