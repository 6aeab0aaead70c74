#!/usr/bin/env python3
"""Instructions a training step executes, with no tool and with tprobe at
L0, L1 and mix, counted by valgrind's callgrind: numbers a busy machine does
not move, where bench/step_time.py's wall times spread by tens of percent.

    PYTHONPATH=build/python .venv/bin/python bench/instructions.py \
        --tprobed build/bin/tprobed [--small [--varied] | --data-bound] \
        [--levels L0 L1 mix] [--undumped] [--baseline DIR] \
        [--warmup 20] [--steps 30] [--cache] [--branch] [--jobs 2]

Each row is examples/train_tiny_gpt.py in a process of its own under
`valgrind --tool=callgrind`, counted only over --steps steps after
--warmup steps (callgrind_control switches the count on and off at the
"step N" prints), so the interpreter's start, torch's import and the
first steps' caches are left out. Rows: no tool, then tprobe at each of
--levels with every step dumped (task statistics, the configs of
tests/data/golden); --undumped adds each level with "step": [100000]
(loaded, dumping no step); --baseline DIR adds each level dumped from
another build's Python package (DIR: that build's python folder), two
builds side by side. Every tprobe row talks to one tprobed, which runs
outside valgrind.

The table gives instructions per step and their ratio to no tool's. --cache
simulates the caches (32 KiB first-level instruction and data caches, and
a 512 KiB last level, about one core's L2 on the machines this was written
on) and adds each miss count's ratio to no tool's: instruction fetches,
first-level data, and the last level's; --branch simulates the branch
predictor and adds the mispredictions' ratio. A simulated count is a
model, not the hardware's: it tells where a tool's misses grow, not their
cycles. Rows run --jobs at a time (default 2): a count does not depend on
what else the machine runs. Needs valgrind (deploy/setup.sh installs it).
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "python", "support"))
import bench_args  # noqa: E402
import tprobed_fixture  # noqa: E402

_SCRIPT = os.path.join(tprobed_fixture.ROOT, "examples", "train_tiny_gpt.py")
# --cache's geometry (size, associativity, line), valgrind's --I1/--D1/--LL.
_L1 = "32768,8,64"
_LL = "524288,8,64"
# The ratio columns: header, callgrind's events summed, the option adding it.
_MISSES = (("I1 miss x", ("I1mr",), "cache"),
           ("D1 miss x", ("D1mr", "D1mw"), "cache"),
           ("LL miss x", ("ILmr", "DLmr", "DLmw"), "cache"),
           ("mispredict x", ("Bcm", "Bim"), "branch"))

# Runs the script with print() patched: at the --warmup'th "step N" print
# callgrind starts counting, --steps prints later it stops.
_RUNNER = """
import builtins, os, runpy, subprocess, sys
first, last = int(sys.argv[1]), int(sys.argv[1]) + int(sys.argv[2])
seen, real_print = [0], builtins.print
def switch(on):
    subprocess.run(["callgrind_control", "--instr=" + on, str(os.getpid())],
                   check=True, stdout=subprocess.DEVNULL)
def counting_print(*args, **kwargs):
    real_print(*args, **kwargs)
    if args and str(args[0]).startswith("step "):
        seen[0] += 1
        if seen[0] in (first, last):
            switch("on" if seen[0] == first else "off")
builtins.print = counting_print
sys.argv = sys.argv[3:]
runpy.run_path(sys.argv[0], run_name="__main__")
if seen[0] < last:
    sys.exit(f"only {seen[0]} steps printed, {last} needed")
"""


def callgrind_totals(path: str) -> dict:
    """event -> count, from a callgrind output file's events and totals."""
    events = totals = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = [int(x) for x in line.split()[1:]]
    if not events or not totals or len(events) != len(totals):
        raise RuntimeError(f"{path}: no events and totals lines")
    return dict(zip(events, totals))


def count(label, model, tool, args, env, tmp) -> dict:
    """The callgrind totals of one row; raises with its output on failure."""
    out = os.path.join(tmp, label.replace(" ", "_") + ".callgrind")
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={out}"]
    if args.cache:
        valgrind += ["--cache-sim=yes", f"--I1={_L1}", f"--D1={_L1}",
                     f"--LL={_LL}"]
    if args.branch:
        valgrind.append("--branch-sim=yes")
    cmd = valgrind + [sys.executable, "-c", _RUNNER, str(args.warmup),
                      str(args.steps), _SCRIPT,
                      "--steps", str(args.warmup + args.steps)] + model
    if tool:
        config, package = tool
        cmd += ["--tool", "tprobe", "--config", config, "--dump-path",
                os.path.join(tmp, "dump", label.replace(" ", "_"))]
        if package:
            env = dict(env, PYTHONPATH=package)
    started = time.monotonic()
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{label}: exited {run.returncode}:\n"
                           f"{run.stdout[-4000:]}")
    totals = callgrind_totals(out)
    if not totals.get("Ir"):
        raise RuntimeError(f"{label}: callgrind counted nothing (did "
                           "callgrind_control reach the process?)")
    print(f"[instructions] {label}: {totals['Ir'] / args.steps / 1e6:.2f} M "
          f"a step ({time.monotonic() - started:.0f} s)", file=sys.stderr,
          flush=True)
    return totals


def print_table(rows: dict, args) -> None:
    """Instructions per step of each row, and its ratios to no tool's."""
    base = rows["none"]
    columns = [(h, e) for h, e, option in _MISSES if getattr(args, option)]
    print(f"{'row':30s} {'M instr/step':>12s} {'x':>6s}" +
          "".join(f" {h:>12s}" for h, _ in columns))
    for label, totals in rows.items():
        line = (f"{label:30s} {totals['Ir'] / args.steps / 1e6:12.3f} "
                f"{totals['Ir'] / base['Ir']:6.3f}")
        for _, events in columns:
            mine = sum(totals[e] for e in events)
            theirs = sum(base[e] for e in events)
            line += f" {mine / theirs:12.3f}" if theirs else f" {'':>12s}"
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Instructions per training step of "
        "examples/train_tiny_gpt.py with no tool and with tprobe at each "
        "level, counted by callgrind over a window of steps (optionally "
        "with simulated cache misses and branch mispredictions), side by "
        "side.")
    ap.add_argument("--tprobed", required=True, help="the tprobed binary")
    ap.add_argument("--warmup", type=int, default=20,
                    help="steps trained before counting starts (default 20)")
    ap.add_argument("--steps", type=int, default=30,
                    help="steps counted (default 30)")
    ap.add_argument("--levels", nargs="+", default=["L0", "L1", "mix"],
                    choices=("L0", "L1", "mix"),
                    help="tprobe's levels (default L0 L1 mix)")
    ap.add_argument("--undumped", action="store_true",
                    help='also each level with "step": [100000]: loaded, '
                    "dumping no step")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also each level dumped from the build whose "
                    "Python package is in DIR (its build/python)")
    bench_args.add_model_options(ap)
    ap.add_argument("--cache", action="store_true",
                    help="simulate the caches; add the misses' ratios")
    ap.add_argument("--branch", action="store_true",
                    help="simulate branch prediction; add the "
                    "mispredictions' ratio")
    ap.add_argument("--jobs", type=int, default=2,
                    help="rows counted at once (default 2)")
    args = ap.parse_args()
    for name, least in (("warmup", 1), ("steps", 1), ("jobs", 1)):
        if getattr(args, name) < least:
            ap.error(f"--{name} {getattr(args, name)}: give at least {least}")
    bench_args.check_baseline(ap, args.baseline)
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} is not on PATH (deploy/setup.sh installs "
                     "valgrind)")
    model = bench_args.model_flags(args)
    with tempfile.TemporaryDirectory(prefix="tprobe-instructions-") as tmp:
        # label: None (no tool) or (config, package folder or None)
        rows = {"none": None}
        for lv in args.levels:
            rows[f"tprobe {lv}"] = (bench_args.level_config(lv), None)
        for lv in args.levels if args.undumped else ():
            undumped = bench_args.tuned_config(bench_args.level_config(lv),
                                               None, "statistics", False, tmp)
            rows[f"tprobe {lv} undumped"] = (undumped, None)
        for lv in args.levels if args.baseline else ():
            rows[f"tprobe {lv} baseline"] = (bench_args.level_config(lv),
                                             args.baseline)
        print(f"[instructions] {len(rows)} rows, {args.jobs} at a time, "
              f"each {args.warmup} + {args.steps} steps under callgrind",
              file=sys.stderr, flush=True)
        with tprobed_fixture.Tprobed(args.tprobed, tmp) as tprobed:
            env = tprobed.env()
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                futures = {label: pool.submit(count, label, model, tool,
                                              args, env, tmp)
                           for label, tool in rows.items()}
                try:
                    counted = {label: f.result()
                               for label, f in futures.items()}
                except RuntimeError as e:
                    for f in futures.values():
                        f.cancel()
                    print(f"bench/instructions.py: {e}", file=sys.stderr)
                    return 1
    print_table(counted, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
