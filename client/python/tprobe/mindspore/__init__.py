"""tprobe for MindSpore (PyNative): a drop-in for msprobe's
``msprobe.mindspore``.

    from tprobe.mindspore import PrecisionDebugger, seed_all

msprobe's other public names are here too and raise NotImplementedError
saying what tprobe does instead (docs/msprobe-api.md).
"""

from tprobe._common.unsupported import unsupported
from tprobe.mindspore.debugger import PrecisionDebugger
from tprobe.mindspore.seed import seed_all

_GRAPH = ("graph-mode dumping is not supported this way; dump in PyNative "
          "with PrecisionDebugger, or import a graph-mode dump with "
          "`tprobe import`")
MsprobeStep = unsupported(
    "MsprobeStep", "call PrecisionDebugger.start(), stop() and step() in "
    "the training loop")
MsprobeInitStep = unsupported(
    "MsprobeInitStep", "call PrecisionDebugger.set_init_step(step)")
TrainerMon = unsupported(
    "TrainerMon", "msprobe's training monitor is not part of tprobe; "
    "PrecisionDebugger dumps statistics of every call")
save = unsupported("save", _GRAPH)
save_grad = unsupported("save_grad", _GRAPH)
step = unsupported("step", "call PrecisionDebugger.step()")

__all__ = ["PrecisionDebugger", "seed_all", "MsprobeStep", "MsprobeInitStep",
           "TrainerMon", "save", "save_grad", "step"]
