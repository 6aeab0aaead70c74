"""tprobe for MindSpore (PyNative): a drop-in for msprobe's
``msprobe.mindspore``.

    from tprobe.mindspore import PrecisionDebugger
"""

from tprobe.mindspore.debugger import PrecisionDebugger

__all__ = ["PrecisionDebugger"]
