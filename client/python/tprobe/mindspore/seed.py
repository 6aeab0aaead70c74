"""seed_all for MindSpore: msprobe.mindspore's reproducibility helper.

    seed_all(seed=1234, mode=False, rm_dropout=False)

seeds Python's ``random``, ``PYTHONHASHSEED`` and MindSpore
(``mindspore.set_seed``), as msprobe's does (numpy is not seeded);
``mode=True`` turns MindSpore's deterministic computing on
(``set_context(deterministic="ON")``, and ``HCCL_DETERMINISTIC`` for the
collectives), ``False`` off. ``rm_dropout=True`` raises
NotImplementedError: tprobe does not replace MindSpore's dropout classes.
"""

import os
import random

import mindspore as ms

from tprobe._common.seed_args import check_seed_args


def seed_all(seed: int = 1234, mode: bool = False,
             rm_dropout: bool = False) -> None:
    """Seeds every generator msprobe's seed_all seeds; raises ValueError
    naming a bad argument."""
    check_seed_args(seed, mode, rm_dropout)
    if rm_dropout:
        raise NotImplementedError(
            "seed_all: rm_dropout is not supported by tprobe.mindspore; set "
            "the networks' dropout probability to 0 (nn.Dropout(p=0.0)) for "
            "a run without dropout")
    os.environ["PYTHONHASHSEED"] = str(seed)
    ms.set_seed(seed)
    random.seed(seed)
    ms.set_context(deterministic="ON" if mode else "OFF")
    os.environ["HCCL_DETERMINISTIC"] = str(mode)
