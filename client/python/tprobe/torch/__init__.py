"""tprobe for PyTorch: a drop-in for msprobe's ``msprobe.pytorch``.

    from tprobe.torch import PrecisionDebugger
"""

from tprobe.torch.debugger import PrecisionDebugger

__all__ = ["PrecisionDebugger"]
