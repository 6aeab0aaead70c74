"""The state every hook shares: the session, whether capture is on, and a
per-thread guard that keeps tprobe from recording itself.

Naming, call indices, the outermost-API rule and the scope/list/data_mode
filters live in the client core (tprobe._C.Session); the hooks only report
what they see.

Hooks run inside the trainer, so every hook body is wrapped: tprobe's own
failures are swallowed (and counted once in a log line), never raised into
training. Only the hooked function's own exceptions propagate.
"""

import sys
import threading
from typing import Any, Optional

from tprobe._C import HookState, Session, busy_flag
from tprobe._common import stack as call_stack


class _ThreadState(threading.local):
    # > 0 while tprobe runs code on this thread or an API call is being
    # recorded: APIs and modules called then are not recorded. The counter
    # is the client's (client/python/binding/api_hook.h), which the C++ API
    # wrappers read.
    busy = busy_flag
    # Stack of open module forward calls (objects with .module, .base and
    # .handle, the Call that module_begin returned).
    modules: Optional[list] = None


class Runtime(HookState):
    """One per process, owned by the PrecisionDebugger.

    ``on`` mirrors ``session.collecting`` and is refreshed by start, stop and
    step, so that the hot path reads an attribute instead of calling into
    the session. ``on`` and ``session`` are HookState's C fields, which the
    C++ API wrappers read directly.
    """

    def __init__(self, session: Session, level: str) -> None:
        super().__init__()
        self.session = session
        self.level = level
        self.on = False
        self.local = _ThreadState()
        self._warned = False
        call_stack.own_frames()

    def refresh(self) -> None:
        self.on = bool(self.session.collecting)

    def modules(self) -> list:
        local = self.local
        stack = local.modules
        if stack is None:
            stack = local.modules = []
        return stack

    def pop_call(self, module: Any) -> Any:
        """Removes the innermost open forward call of `module` from this
        thread's stack and returns it (None when there is none). Calls left
        open inside it by an exception are closed without an entry."""
        calls = self.local.modules
        if not calls:
            return None
        for i in range(len(calls) - 1, -1, -1):
            if calls[i].module is module:
                call = calls[i]
                for lost in reversed(calls[i + 1:]):
                    self.session.module_end(lost.handle, None, None)
                del calls[i:]
                return call
        return None

    def warn_once(self, where: str, error: BaseException) -> None:
        """Reports the first internal failure; later ones stay quiet."""
        if self._warned:
            return
        self._warned = True
        try:
            sys.stderr.write(
                f"[tprobe] internal error in {where}: {error!r}; the entry "
                "is skipped and training goes on (further errors are not "
                "reported)\n")
        except Exception:  # noqa: BLE001 - stderr may be closed
            pass

