"""Call stacks for stack.json, in msprobe's line format.

Each line is ``File {path}, line {n}, in {function}, \\n {source line}``,
innermost frame first. tprobe's own frames and frames without source text
are left out. Formatting a stack costs a linecache lookup per frame, so the
formatted lines are cached by the frames' (code, line) pairs: a training
loop repeats the same few hundred stacks.
"""

import linecache
import os
import sys
from typing import Dict, List, Optional, Tuple

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAX_CACHED = 20000

_cache: Dict[Tuple, List[str]] = {}


def _own(filename: str) -> bool:
    return filename.startswith(_PACKAGE_DIR)


def _format(key: Tuple) -> List[str]:
    lines = []
    for i in range(0, len(key), 2):
        code, lineno = key[i], key[i + 1]
        path = code.co_filename
        if _own(path):
            continue
        text = linecache.getline(path, lineno).strip() if lineno else ""
        if not text:
            continue
        lines.append(
            f"File {path}, line {lineno}, in {code.co_name}, \n {text}")
    return lines


def capture(depth: int = 1) -> Optional[List[str]]:
    """The stack of the caller ``depth`` frames up, as stack.json lines.

    Returns None when the stack cannot be read (it never raises).
    """
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    key = []
    append = key.append
    while frame is not None:
        append(frame.f_code)
        append(frame.f_lineno)
        frame = frame.f_back
    key = tuple(key)
    lines = _cache.get(key)
    if lines is None:
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        lines = _cache[key] = _format(key)
    return lines
