"""Creating a rank's tprobe._C.Session from msprobe's PrecisionDebugger
arguments; shared by every framework's debugger."""

import atexit
import json
import os
import tempfile
from typing import Optional

from tprobe import _C, _daemon
from tprobe._common import producer_stats
from tprobe._common.framework import Framework


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
    """A session for `framework` (the adapter's descriptor): its values
    encoded, and its entries named, as msprobe writes that framework's.
    Raises ValueError for a bad config."""
    session = _C.Session(
        config_path=config,
        dump_path=dump_path or "",
        socket_path=_daemon.socket_path(),
        rank=rank,
        autostart_daemon=_daemon.autostart(),
        daemon_path=_daemon.daemon_binary(),
        framework=framework.name,
        encoding=framework.encoding,
        risk_level_applies=framework.risk_level_applies,
    )
    producer_stats.install(session, framework)
    return session
