"""tprobe for PyTorch: a drop-in for msprobe's ``msprobe.pytorch``.

    from tprobe.torch import PrecisionDebugger, module_dump, module_dump_end
    from tprobe.torch import seed_all
"""

from tprobe.torch.debugger import (PrecisionDebugger, module_dump,
                                   module_dump_end)
from tprobe.torch.seed import seed_all

__all__ = ["PrecisionDebugger", "module_dump", "module_dump_end",
           "seed_all"]
