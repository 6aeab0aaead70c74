"""Call stacks for stack.json, in msprobe's line format.

Each line is ``File {path}, line {n}, in {function}, \\n {source line}``,
innermost frame first. tprobe's own frames (files under this package) and
frames without source text are left out. The session takes the running
code's stack itself when a call's entry begins (module_inputs,
api_inputs; client/python/binding/call_stack.cc); ``own_frames()`` tells
it which frames are tprobe's own.
"""

import os
from typing import Iterable, List, Tuple

from tprobe import _C

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def own_frames() -> None:
    """Leaves the frames of files under this package out of every stack."""
    _C.set_own_frames(_PACKAGE_DIR)


def lines(frames: Iterable[Tuple[str, int, str, str]]) -> List[str]:
    """stack.json's lines of ``frames`` (path, line, function, source text),
    innermost first, as the session formats the running code's: tprobe's
    own frames and those without source text left out (a stack made for a
    call that the session cannot see run, Session.module_open's
    ``stack``)."""
    found = []
    for path, line, function, text in frames:
        text = (text or "").strip()
        if text and line and not path.startswith(_PACKAGE_DIR):
            found.append(f"File {path}, line {line}, in {function}, \n {text}")
    return found
