"""The argument check of seed_all, msprobe's reproducibility helper, which
tprobe.torch and tprobe.mindspore both provide."""

from typing import Any

MAX_SEED = 2 ** 32 - 1


def check_seed_args(seed: Any, mode: Any, rm_dropout: Any) -> None:
    """Raises ValueError naming the first bad argument."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed_all: seed must be an integer, got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed_all: seed must be between 0 and {MAX_SEED}, "
                         f"got {seed}")
    if not isinstance(mode, bool):
        raise ValueError(f"seed_all: mode must be a bool, got {mode!r}")
    if not isinstance(rm_dropout, bool):
        raise ValueError(f"seed_all: rm_dropout must be a bool, got "
                         f"{rm_dropout!r}")
