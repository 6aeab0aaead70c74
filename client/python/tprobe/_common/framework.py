"""What a framework adapter hands the core: its descriptor.

Each adapter (tprobe.torch, tprobe.mindspore) defines one Framework in its
framework.py and sets it as its PrecisionDebugger.FRAMEWORK. The core reads
what differs between frameworks from it alone, so it never imports an
adapter and never tests a framework's name.
"""

import dataclasses
from typing import Any, Callable, Dict

from tprobe import _C


@dataclasses.dataclass(frozen=True)
class Framework:
    """One framework's descriptor.

    name: msprobe's name of the framework ("pytorch", "mindspore"), written
        into the entries and sent to the daemon at registration. Data only:
        the core never compares it.
    encoding: how the binding encodes the framework's values
        (tprobe._C.ValueEncoding).
    risk_level_applies: whether msprobe's risk_level filters the
        framework's API calls (it does for PyTorch only).
    load_reducers: imports and returns the framework's reducers by part
        ("statistics", "xor", and "crc" and "bytes" where it has them;
        tprobe._common.producer_stats says what each is). Raises ImportError
        when they cannot be loaded; the daemon then computes every
        statistic.
    tensors_on_host: whether the framework's tensors that carry no device
        of their own live on the host (MindSpore's device_target CPU). The
        binding reads a torch tensor's device itself, so it is True there.
        Called after load_reducers succeeded.
    current_rank: the framework's rank when its communication is
        initialised, else the environment's, else -1 (the dump directory is
        then "rank").
    """

    name: str
    encoding: _C.ValueEncoding
    risk_level_applies: bool
    load_reducers: Callable[[], Dict[str, Any]]
    tensors_on_host: Callable[[], bool]
    current_rank: Callable[[], int]
