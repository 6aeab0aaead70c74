"""tprobe for PyTorch: a drop-in for msprobe's ``msprobe.pytorch``.

    from tprobe.torch import PrecisionDebugger, module_dump, module_dump_end
    from tprobe.torch import seed_all

msprobe's other public names are here too and raise NotImplementedError
saying what tprobe does instead (docs/msprobe-api.md).
"""

from tprobe._common.unsupported import unsupported
from tprobe.torch.debugger import (PrecisionDebugger, module_dump,
                                   module_dump_end)
from tprobe.torch.seed import seed_all

random_save = unsupported(
    "random_save", "make two runs comparable with seed_all(seed, mode=True) "
    "and compare their dumps with `tprobe compare`")
set_fx_dump_config = unsupported(
    "set_fx_dump_config", "torchair graph dumps (Ascend) are not supported; "
    "dump the eager model with PrecisionDebugger")
set_ge_dump_config = unsupported(
    "set_ge_dump_config", "torchair graph dumps (Ascend) are not supported; "
    "dump the eager model with PrecisionDebugger")
TrainerMon = unsupported(
    "TrainerMon", "msprobe's training monitor is not part of tprobe; "
    "PrecisionDebugger dumps statistics of every call")
acl_save = unsupported(
    "acl_save", "ACL graph dumps (Ascend) are not supported; dump the eager "
    "model with PrecisionDebugger")
AclGraphDumper = unsupported(
    "AclGraphDumper", "ACL graph dumps (Ascend) are not supported; dump the "
    "eager model with PrecisionDebugger")

__all__ = ["PrecisionDebugger", "module_dump", "module_dump_end",
           "seed_all", "random_save", "set_fx_dump_config",
           "set_ge_dump_config", "TrainerMon", "acl_save", "AclGraphDumper"]
