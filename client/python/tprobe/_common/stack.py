"""Call stacks for stack.json, in msprobe's line format.

Each line is ``File {path}, line {n}, in {function}, \\n {source line}``,
innermost frame first. tprobe's own frames (files under this package) and
frames without source text are left out. ``capture()`` is
tprobe._C.capture_stack (client/python/call_stack.cc): it walks the frames
in C++ and caches the formatted stacks by the frames' (code, line) pairs, so
a repeated stack costs one walk; it returns a tprobe._C.Stack, which the
session's *_inputs / *_end take as their ``stack``, or None when the stack
cannot be read (it never raises).
"""

import os

from tprobe import _C

_C.set_own_frames(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

capture = _C.capture_stack
