"""The commands a wheel puts on the environment's PATH (pyproject.toml's
project.scripts): tprobe, tprobed and tprobe-run, each replaced by the
program of that name inside the package (tprobe/bin/), as torch keeps
torch/bin/torch_shm_manager. exec keeps the process: a tprobed under
systemd (Type=notify) is the process systemd started."""

import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _run(name: str) -> None:
    program = os.path.join(_BIN, name)
    if not os.access(program, os.X_OK):
        sys.exit(f"{name}: {program} is missing; this tprobe installation "
                 "has no programs (a build tree's are in build/bin/)")
    os.execv(program, [program] + sys.argv[1:])


def tprobe() -> None:
    _run("tprobe")


def tprobed() -> None:
    _run("tprobed")


def tprobe_run() -> None:
    _run("tprobe-run")
