"""Call stacks for stack.json, in msprobe's line format.

Each line is ``File {path}, line {n}, in {function}, \\n {source line}``,
innermost frame first. tprobe's own frames (files under this package) and
frames without source text are left out. The session takes the running
code's stack itself when a call's entry begins (module_inputs,
api_inputs; client/python/binding/call_stack.cc); ``own_frames()`` tells
it which frames are tprobe's own.
"""

import os

from tprobe import _C

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def own_frames() -> None:
    """Leaves the frames of files under this package out of every stack."""
    _C.set_own_frames(_PACKAGE_DIR)
