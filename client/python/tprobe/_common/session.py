"""Creating a rank's tprobe._C.Session from msprobe's PrecisionDebugger
arguments; shared by every framework's debugger."""

import atexit
import enum
import json
import os
import tempfile
from typing import Optional

from tprobe import _C, _daemon
from tprobe._common import producer_stats


class Framework(enum.Enum):
    """The framework a debugger records, set once per adapter (its
    PrecisionDebugger.FRAMEWORK): the session encodes every value by it and
    names it in msprobe's entries."""
    PYTORCH = "pytorch"
    MINDSPORE = "mindspore"


def config_with_overrides(config_path: Optional[str], overrides: dict) -> str:
    """config_path, or a temporary copy of it with the constructor's task,
    level and step written in (msprobe: arguments override the file)."""
    if not overrides:
        return config_path or ""
    content = {}
    if config_path:
        try:
            with open(config_path, encoding="utf-8") as f:
                content = json.load(f)
        except (OSError, ValueError) as error:
            raise ValueError(f"config: cannot read {config_path}: {error}")
    content.update(overrides)
    fd, path = tempfile.mkstemp(prefix="tprobe-config-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(content, f)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path


def new_session(config: str, dump_path: Optional[str], rank: int,
                framework: Framework) -> _C.Session:
    """A session for `framework`; raises ValueError for a bad config."""
    session = _C.Session(
        config_path=config,
        dump_path=dump_path or "",
        socket_path=_daemon.socket_path(),
        rank=rank,
        autostart_daemon=_daemon.autostart(),
        daemon_path=_daemon.daemon_binary(),
        framework=framework.value,
    )
    producer_stats.install(session, framework.value)
    return session
