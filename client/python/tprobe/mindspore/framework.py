"""MindSpore's descriptor for the framework-neutral core
(tprobe._common.framework). Importing it imports neither MindSpore's
reducers nor anything of torch's."""

import os
from typing import Any, Dict

from tprobe import _C
from tprobe._common.framework import Framework


def current_rank() -> int:
    """mindspore.communication's rank when initialised, else $RANK_ID or
    $RANK, else -1 (the dump directory is then "rank")."""
    try:
        from mindspore.communication import GlobalComm, get_rank
        if GlobalComm.INITED:
            return int(get_rank())
    except Exception:  # noqa: BLE001
        pass
    for key in ("RANK_ID", "RANK"):
        try:
            return int(os.environ[key])
        except (KeyError, ValueError):
            pass
    return -1


def load_reducers() -> Dict[str, Any]:
    """MindSpore's reducers: the statistics and the xor checksum
    (ImportError when they cannot load)."""
    from tprobe.mindspore import stats
    return {"statistics": stats, "xor": stats.XOR}


def tensors_on_host() -> bool:
    """Whether MindSpore's tensors live on the host (device_target CPU)."""
    from tprobe.mindspore import stats
    return stats.on_host()


FRAMEWORK = Framework(
    name="mindspore",
    encoding=_C.ValueEncoding.MINDSPORE,
    risk_level_applies=False,
    load_reducers=load_reducers,
    tensors_on_host=tensors_on_host,
    current_rank=current_rank,
)
