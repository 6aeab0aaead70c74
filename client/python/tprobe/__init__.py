"""tprobe: a precision-debugging dump system with msprobe's output format.

The trainer side is thin: hooks hand names, values and tensor bytes to
``tprobe._C.Session``, which pushes them into shared-memory rings; the
per-node daemon ``tprobed`` computes the statistics and writes msprobe's
``step{N}/rank{R}/`` dump tree.

For PyTorch use the drop-in debugger::

    from tprobe.torch import PrecisionDebugger
"""

from tprobe._C import Session
from tprobe._version import __version__

__all__ = ["Session", "__version__"]
