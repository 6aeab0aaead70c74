"""PyTorch's descriptor for the framework-neutral core
(tprobe._common.framework). Importing it imports neither torch's reducers
nor anything of MindSpore's."""

import os
from typing import Any, Dict

from tprobe import _C
from tprobe._common.framework import Framework


def current_rank() -> int:
    """torch.distributed's rank when initialised, else $RANK, else -1 (the
    dump directory is then "rank", as msprobe names it)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # noqa: BLE001
        pass
    try:
        return int(os.environ["RANK"])
    except (KeyError, ValueError):
        return -1


def load_reducers() -> Dict[str, Any]:
    """torch's reducers: the statistics, the xor and CRC-32 checksums, and
    the host copies of the bytes (ImportError when they cannot load)."""
    from tprobe.torch import crc, stats
    return {"statistics": stats, "xor": stats.XOR, "crc": crc,
            "bytes": crc.BYTES}


FRAMEWORK = Framework(
    name="pytorch",
    encoding=_C.ValueEncoding.TORCH,
    risk_level_applies=True,
    load_reducers=load_reducers,
    # The binding reads each tensor's is_cpu.
    tensors_on_host=lambda: True,
    current_rank=current_rank,
)
