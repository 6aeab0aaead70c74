"""What bench/step_time.py and bench/instructions.py share: the options
that shape the model examples/train_tiny_gpt.py trains, the check of a
--baseline folder, and the configs each level runs with."""

import argparse
import json
import os

_CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "tests", "data", "golden")
# The step list of an undumped run: a step the training never reaches.
_NEVER = [100000]

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


def level_config(level: str) -> str:
    """tests/data/golden's config.json of `level` (L0, L1, mix)."""
    return os.path.join(_CONFIGS, level, "config.json")


def tuned_config(config: str, on: str, task: str, dumped: bool,
                 tmp: str) -> str:
    """A copy of `config` in `tmp` with tprobe.statistics_on set to `on`
    (None: as it is), its task `task` (its statistics section's scope, list
    and data_mode moved to the task's section) and, unless `dumped`, its
    step list a step never reached."""
    with open(config) as f:
        content = json.load(f)
    if not dumped:
        content["step"] = _NEVER
    if on:
        content.setdefault("tprobe", {})["statistics_on"] = on
    if task != content.get("task", "statistics"):
        section = content.pop(content.get("task", "statistics"), {})
        content["task"] = task
        content[task] = {k: v for k, v in section.items()
                         if k in ("scope", "list", "data_mode")}
    path = os.path.join(tmp, f"{os.path.basename(os.path.dirname(config))}"
                        f"_{on}_{task}_{'dumped' if dumped else 'undumped'}"
                        ".json")
    with open(path, "w") as f:
        json.dump(content, f)
    return path
