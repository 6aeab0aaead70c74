"""msprobe's dynamic control: ``dump_enable`` in config.json.

When the config.json a PrecisionDebugger was made with has the key
``dump_enable``, the file is looked at again while training runs, on
msprobe 26.2's schedule: at start() (before it starts the step), after
stop() and after step(), at most every 0.5 s while dumping and every 3 s
while not, and only read when its size or modification time changed. No
hook looks at it, so a hooked call costs what it did.

- ``dump_enable: false`` stops capture: start() starts no step until the
  file says ``true`` again; a step that is running ends at its stop().
- A file whose ``dump_enable`` was deleted keeps the last value.
- A file that no longer parses (or is gone) stops dumping, with one warning
  line, and training goes on.
- Other changed fields are applied as a live ``tprobe configure`` applies
  them, to this rank alone (``apply``, Session.configure): from the next
  step, or from this one when it has not started; a new dump_path too, as
  in msprobe. What cannot change live (the "tprobe" section) is refused
  with one warning naming the key, and the config stays as it was.

Without the key nothing is re-read, as in msprobe.
"""

import json
import os
import sys
import time
from typing import Callable, Optional, Tuple

# msprobe 26.2's intervals between two looks at the file.
ENABLED_INTERVAL_S = 0.5
DISABLED_INTERVAL_S = 3.0


def _signature(path: str) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        content = json.load(f)
    if not isinstance(content, dict):
        raise ValueError("the top level is not a JSON object")
    return content


class DumpEnable:
    """Whether capture is enabled by config.json's dump_enable.

    ``check`` is the config's own validation (tprobe._C.config_warnings):
    it raises ValueError for a file the config refuses. ``apply`` gives the
    file to the session and returns "" or why it was not taken.

    Thread safety: called from the training thread only (start, stop, step).
    """

    def __init__(self, config_path: str, check: Callable[[str], object],
                 apply: Callable[[str], str]) -> None:
        self._path = config_path
        self._check = check
        self._apply = apply
        self.active = False
        self.enabled = True
        self._last_check = 0.0
        self._signature: Optional[Tuple[int, int]] = None
        self._fields: dict = {}
        if not config_path:
            return
        try:
            content = _read(config_path)
        except (OSError, ValueError):
            return  # the session reports a bad file
        value = content.get("dump_enable")
        if not isinstance(value, bool):
            return
        self.active = True
        self.enabled = value
        self._signature = _signature(config_path)
        self._fields = self._other_fields(content)

    @staticmethod
    def _other_fields(content: dict) -> dict:
        return {k: v for k, v in content.items() if k != "dump_enable"}

    def poll(self) -> None:
        """Looks at the file when msprobe's interval has passed; a changed
        file updates ``enabled``. Never raises."""
        if not self.active:
            return
        now = time.monotonic()
        interval = ENABLED_INTERVAL_S if self.enabled else DISABLED_INTERVAL_S
        if now - self._last_check < interval:
            return
        self._last_check = now
        signature = _signature(self._path)
        if signature is None or signature == self._signature:
            return
        self._signature = signature
        try:
            self._check(self._path)
            content = _read(self._path)
        except Exception as error:  # noqa: BLE001 - never into training
            if self.enabled:
                _warn(f"config.json no longer parses ({error}); dumping "
                      "stops until a valid file says dump_enable: true")
            self.enabled = False
            return
        value = content.get("dump_enable")
        if isinstance(value, bool):
            self.enabled = value
        fields = self._other_fields(content)
        if fields == self._fields:
            return
        error = self._apply(self._path)
        if error:
            _warn(f"config.json's other changed fields are not applied "
                  f"({error}); the config stays as it was")
            return
        self._fields = fields


def _warn(message: str) -> None:
    try:
        sys.stderr.write(f"[tprobe] dump_enable: {message}\n")
    except Exception:  # noqa: BLE001 - stderr may be closed
        pass
