"""What bench/step_time.py and bench/instructions.py share: the options
that shape the model examples/train_tiny_gpt.py trains, and the check of a
--baseline folder."""

import argparse
import os

# option: train_tiny_gpt.py's help for it, in short.
_MODEL_OPTIONS = {
    "--small": "the model shrunk until hooks dominate",
    "--data-bound": "the model grown until reading tensors dominates",
    "--varied": "blocks with tuple and dict outputs, an in-place op and a "
                "module called twice",
}


def add_model_options(ap: argparse.ArgumentParser) -> None:
    """--small, --data-bound and --varied."""
    for option, text in _MODEL_OPTIONS.items():
        ap.add_argument(option, action="store_true", help=text)


def model_flags(args: argparse.Namespace) -> list:
    """The train_tiny_gpt.py flags of the model options given."""
    return [option for option in _MODEL_OPTIONS
            if getattr(args, option[2:].replace("-", "_"))]


def check_baseline(ap: argparse.ArgumentParser, folder: str) -> None:
    """Refuses a --baseline folder without a tprobe package: its rows would
    import whichever tprobe the interpreter has installed, and say
    nothing."""
    if folder and not os.path.isfile(
            os.path.join(folder, "tprobe", "__init__.py")):
        ap.error(f"--baseline {folder}: no tprobe package there (give a "
                 "build's python folder, e.g. build/python)")
