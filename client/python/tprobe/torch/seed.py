"""seed_all: msprobe's reproducibility helper, for comparing two runs.

    seed_all(seed=1234, mode=False, rm_dropout=False)

seeds Python's ``random``, ``PYTHONHASHSEED``, numpy and torch (CPU and
every CUDA device); ``mode=True`` also makes torch use deterministic
algorithms only; ``rm_dropout=True`` makes every ``torch.nn.functional``
dropout act with p = 0, so that two runs drop nothing.
"""

import functools
import os
import random
from typing import Any, Callable

import torch

from tprobe._common.seed_args import check_seed_args

_DROPOUTS = ("dropout", "dropout1d", "dropout2d", "dropout3d",
             "alpha_dropout", "feature_alpha_dropout")


def _without_p(original: Callable) -> Callable:
    @functools.wraps(original)
    def dropout(input: torch.Tensor, p: float = 0.5, *args: Any,
                **kwargs: Any) -> torch.Tensor:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and "
                             f"1, but got {p}")
        return original(input, 0.0, *args, **kwargs)

    dropout.tprobe_no_dropout = True
    return dropout


def remove_dropout() -> None:
    """Makes torch.nn.functional's dropouts use p = 0 (once)."""
    functional = torch.nn.functional
    for name in _DROPOUTS:
        original = getattr(functional, name, None)
        if original is not None and not getattr(original, "tprobe_no_dropout",
                                                False):
            setattr(functional, name, _without_p(original))


def seed_all(seed: int = 1234, mode: bool = False,
             rm_dropout: bool = False) -> None:
    """Seeds every generator; raises ValueError naming a bad argument."""
    check_seed_args(seed, mode, rm_dropout)
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy is optional
        pass
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if mode:
        # cuBLAS is deterministic only with a fixed workspace.
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(mode)
    torch.backends.cudnn.deterministic = mode
    torch.backends.cudnn.benchmark = not mode
    if rm_dropout:
        remove_dropout()
