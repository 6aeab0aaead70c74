"""What the third-party model scripts (container_model.py, hf_model.py)
share: the command line of a run under msprobe or tprobe, and the debugger
of that tool with the run's config.json and dump path."""

import argparse
import json
import os
from typing import Any, Sequence, Tuple


def parse_args(description: str, tools: Sequence[str] = ("msprobe", "tprobe"),
               **extra: Any) -> argparse.Namespace:
    """--tool (one of ``tools``), --config, --dump-path and --steps, and
    each ``extra`` option: name -> choices (a required choice)."""
    parser = argparse.ArgumentParser(description=description)
    for name, choices in extra.items():
        parser.add_argument(f"--{name}", choices=choices, required=True)
    parser.add_argument("--tool", choices=tools, required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--dump-path", required=True)
    parser.add_argument("--steps", type=int, default=2)
    return parser.parse_args()


def debugger(args: argparse.Namespace, tag: str = "") -> Tuple[Any, Any]:
    """(the tool's PrecisionDebugger with args.config, dump_path set to
    args.dump_path, a function that waits until the dump is written)."""
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    config["dump_path"] = args.dump_path
    path = os.path.join(os.path.dirname(args.config),
                        f"{args.tool}{tag}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    if args.tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    d = PrecisionDebugger(config_path=path)

    def finish() -> None:
        if args.tool == "tprobe":
            assert d.session.flush(30000), "tprobed did not write the dump"
    return d, finish
