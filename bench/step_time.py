#!/usr/bin/env python3
"""Step-time overhead of examples/train_tiny_gpt.py: tool none vs tprobe at
L0, L1 and mix (task statistics, or tensor), every step dumped and no step
dumped, measured in one invocation.

    PYTHONPATH=build/python /usr/bin/python3 bench/step_time.py \
        --tprobed build/bin/tprobed [--steps 30] [--rounds 3] \
        [--small [--varied] | --data-bound] [--device cuda] [--task tensor] \
        [--statistics-on daemon framework] [--msprobe DIR|installed] \
        [--no-undumped] [--no-tensor-shim] [--no-module-wrapper] \
        [--baseline DIR] [--compile [--warmup N]]

Each configuration runs as its own process; a step's time is the gap between
two consecutive "step N loss" prints (forward, backward, optimizer step and
the debugger's stop/step), as wall time and as the trainer's CPU time, so
every dumped step after step 0 is measured. The last column gives what the
debugger's start(), stop() and step() took in the loop (train_tiny_gpt.py
--boundaries, medians in us), the part of a step that is the debugger's
own bookkeeping: each runs cold, after the training's own work. The
rounds are interleaved so that a noisy machine hurts every configuration
alike; medians over all measured steps are reported, with the daemon's CPU
time per step beside them. "x by round" gives the lowest and highest of
the rounds' own ratios (a round's median step over no tool's in the same
round): the run's own spread, which says how far apart two rows must be
to differ; on the no-tool row, its rounds' medians over its overall
median, how much the machine itself moved during the run.

Each tool runs twice per level: dumped (every step selected) and undumped
(the same config with `"step": [100000]`, a step never reached, which
msprobe's config takes too: the tool is loaded and its hooks run, but no
step is dumped: what a training that selects a few steps pays on all the
others). --no-undumped leaves the undumped rows out.

--small shrinks the model until the hooks dominate its step time;
--data-bound grows it until reading the tensors does (2 MB activations).
--varied gives the model's blocks tuple and dict outputs, an in-place op
and a LayerNorm called twice a step (VariedBlock), the shape issue 49's
targets are set on.
--device cuda trains on the GPU (tprobe's default statistics_on, auto,
then reduces device tensors on the device); --device npu imports torch_npu
first. deploy/gpu_check.sh runs it so on a machine with a device.
--task tensor dumps every tensor as a .npy file (msprobe's task tensor)
in place of statistics.
--statistics-on runs tprobe once per value of tprobe.statistics_on given
(auto, framework, daemon), side by side.
--no-tensor-shim adds tprobe dumped at each level reading tensors through
their Python attributes (TPROBE_TENSOR_SHIM=0) in place of torch's C shim
(tprobe/torch/tensor_shim.py), rows "tprobe L1 no-shim", side by side;
--no-module-wrapper so with modules called through torch's hooks
(TPROBE_MODULE_WRAPPER=0) in place of tprobe._C.ModuleWrapper
(tprobe/torch/module_hooks.py), rows "tprobe L0 no-wrapper".
--baseline DIR adds tprobe dumped at each level from another build's
Python package (DIR: that build's python folder, e.g. a worktree of an
earlier commit, built), rows "tprobe L1 baseline": two builds weighed side
by side in one run (both talk to this run's tprobed).
--msprobe DIR adds msprobe at L0, L1 and mix, dumped and undumped, to
every round, run from DIR (a `pip install --no-deps --target DIR
mindstudio-probe==8.3.3`) on this interpreter, for context; --msprobe
installed runs the msprobe this interpreter imports (26.x in the project's
venv).

--compile (torch 2.x, CPU) adds a second table, measured in the same
rounds: examples/compiled_transformer.py eager and under torch.compile
(Inductor), with no tool and with tprobe at L0, every step dumped and no
step dumped (and dumped once per --statistics-on value: the compiled
graphs compute a device's tensors' statistics themselves), and the compiled
step with tprobe relative to the eager step with tprobe (issue 50: it
must be the faster). Those runs train --warmup more steps first
(default 2), unmeasured: compilation happens in them.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "python", "support"))
import bench_args  # noqa: E402
import tprobed_fixture  # noqa: E402

_SCRIPT = os.path.join(tprobed_fixture.ROOT, "examples", "train_tiny_gpt.py")
_COMPILED_SCRIPT = os.path.join(tprobed_fixture.ROOT, "examples",
                                "compiled_transformer.py")
# The --compile table's rows, label: (compiled, tprobe at L0: None, every
# step dumped or no step dumped).
_COMPILE_ROWS = {"eager none": (False, None),
                 "compiled none": (True, None),
                 "eager tprobe L0": (False, "dumped"),
                 "compiled tprobe L0": (True, "dumped"),
                 "eager tprobe L0 undumped": (False, "undumped"),
                 "compiled tprobe L0 undumped": (True, "undumped")}
_LEVELS = ("L0", "L1", "mix")
# msprobe 8.3.3 uses numpy.unicode_, which numpy 2 no longer has.
_SHIM_833 = "import numpy; numpy.unicode_ = numpy.str_\n"
# The fast paths of tprobe that a run can weigh side by side: option (with
# its "no-"), the rows' tag, the environment switch that turns it off.
_WITHOUT = (("tensor_shim", "no-shim", "TPROBE_TENSOR_SHIM"),
            ("module_wrapper", "no-wrapper", "TPROBE_MODULE_WRAPPER"))


# Runs the script with print() patched to note wall and CPU time at each
# "step N" line (and the line), then prints the notes as one JSON line.
_RUNNER = """
import builtins, json, runpy, sys, time
notes, real_print = [], builtins.print
def noting_print(*args, **kwargs):
    if args and str(args[0]).startswith("step "):
        notes.append((time.perf_counter(), time.process_time(),
                      str(args[0])))
    real_print(*args, **kwargs)
builtins.print = noting_print
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    real_print("NOTES " + json.dumps(notes), flush=True)
"""


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def step_times(cmd, env, daemon_pid, prelude=""):
    daemon_before = _cpu_seconds(daemon_pid)
    out = subprocess.run([sys.executable, "-c", prelude + _RUNNER] + cmd,
                         env=env, stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    daemon_cpu = _cpu_seconds(daemon_pid) - daemon_before
    notes = json.loads(out.rsplit("NOTES ", 1)[1])
    wall = [b[0] - a[0] for a, b in zip(notes, notes[1:])]
    cpu = [b[1] - a[1] for a, b in zip(notes, notes[1:])]
    # train_tiny_gpt.py --boundaries: the tool's start(), stop() and step()
    # in microseconds, at the end of each measured step's line.
    bounds = [tuple(float(x) for x in note[2].split(" boundaries_us ")[1]
                    .split()) for note in notes[1:]
              if " boundaries_us " in note[2]]
    return wall, cpu, daemon_cpu / max(1, len(notes)), bounds


def entries_per_step(dump: str) -> int:
    """The entries in step 1's dump.json under `dump` (0: none written; the
    folder is rank*, or msprobe 26's proc<pid> without a rank)."""
    for path in glob.glob(os.path.join(dump, "step1", "*", "dump.json")):
        with open(path) as f:
            return len(json.load(f).get("data", {}))
    return 0


def print_table(title, rows, wall, cpu, daemon, entries, base, bounds,
                rounds) -> None:
    """The medians of `rows`, times relative to row `base`'s."""
    wall_base = statistics.median(wall[base])
    cpu_base = statistics.median(cpu[base])
    # x by round: the lowest and highest of the rounds' own ratios (a
    # round's median wall time over row `base`'s in the same round), the
    # run's own spread; on row `base`, its rounds' medians over its median,
    # the machine's own. us/entry: the trainer's CPU time a step costs over
    # no tool, per entry of its dump.json (a module call at L0, an API call
    # at L1). The boundaries: the medians of the tool's start(), stop() and
    # step() in the loop, in us (with no tool, of the same points of the
    # loop).
    print(f"{title:30s} {'wall ms':>9s} {'x':>6s} {'x by round':>11s} "
          f"{'cpu ms':>9s} {'x':>6s} {'daemon cpu ms':>14s} {'entries':>8s} "
          f"{'us/entry':>9s} {'start/stop/step us':>19s}")
    for row in rows:
        w, c = statistics.median(wall[row]), statistics.median(cpu[row])
        d = statistics.median(daemon[row]) * 1e3
        n = entries[row]
        per = f"{(c - cpu_base) * 1e6 / n:9.1f}" if n else f"{'':9s}"
        b = "/".join(f"{statistics.median(x):.0f}"
                     for x in zip(*bounds[row])) if bounds[row] else ""
        ratios = ([a / wall_base for a in rounds[row]] if row == base else
                  [a / z for a, z in zip(rounds[row], rounds[base])])
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
        print(f"{row:30s} {w * 1e3:9.2f} {w / wall_base:6.2f} {spread:>11s} "
              f"{c * 1e3:9.2f} {c / cpu_base:6.2f} {d:14.2f} {n:8d} {per} "
              f"{b:>19s}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Step time of examples/train_tiny_gpt.py with no tool "
        "and with tprobe (and msprobe) at L0, L1 and mix, every step dumped "
        "and no step dumped, in interleaved rounds; with --compile also "
        "examples/compiled_transformer.py eager and compiled.")
    ap.add_argument("--tprobed", required=True, help="the tprobed binary")
    ap.add_argument("--steps", type=int, default=30,
                    help="training steps per run (default 30; every step "
                    "after the first is measured)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of every configuration, interleaved "
                    "(default 3)")
    bench_args.add_model_options(ap)
    ap.add_argument("--device", default="cpu",
                    help="cpu, cuda or npu (imports torch_npu)")
    ap.add_argument("--statistics-on", nargs="+", default=[],
                    choices=("auto", "framework", "daemon"),
                    help="tprobe once per value of tprobe.statistics_on")
    ap.add_argument("--task", choices=("statistics", "tensor"),
                    default="statistics",
                    help="the dump task of every tool (tensor: every "
                    "tensor as a .npy file; with --device cuda, tprobe's "
                    "copies go through pinned memory without waiting)")
    ap.add_argument("--msprobe", metavar="DIR",
                    help="also msprobe 8.3.3 installed in DIR, or "
                    "'installed': the msprobe this interpreter imports")
    ap.add_argument("--no-undumped", action="store_true",
                    help="leave out the undumped rows (each tool with "
                    '"step": [100000], loaded but dumping no step)')
    ap.add_argument("--no-tensor-shim", action="store_true",
                    help="also tprobe dumped at each level reading tensors "
                    "through Python's attributes (TPROBE_TENSOR_SHIM=0), "
                    "rows 'tprobe L1 no-shim': the C shim weighed side by "
                    "side")
    ap.add_argument("--no-module-wrapper", action="store_true",
                    help="also tprobe dumped at each level with modules "
                    "called through torch's hooks (TPROBE_MODULE_WRAPPER=0), "
                    "rows 'tprobe L0 no-wrapper': the module call wrapper "
                    "weighed side by side")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also tprobe dumped at each level from the build "
                    "whose Python package is in DIR (its build/python), "
                    "rows 'tprobe L1 baseline': two builds side by side")
    ap.add_argument("--compile", action="store_true",
                    help="also examples/compiled_transformer.py eager and "
                    "under torch.compile, with no tool and tprobe L0 (dumped "
                    "and undumped) "
                    "(torch 2.x, --device cpu)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="with --compile: steps trained first and not "
                    "measured, where compilation happens (default 2)")
    args = ap.parse_args()
    if args.compile and args.device != "cpu":
        ap.error("--compile trains on the CPU only")
    # A step is measured from the end of the one before it.
    if args.steps < 2:
        ap.error(f"--steps {args.steps}: give at least 2 (every step after "
                 "the first is measured)")
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: give at least 1")
    if args.warmup < 0:
        ap.error(f"--warmup {args.warmup}: give 0 or more")
    bench_args.check_baseline(ap, args.baseline)
    # label: (tool, level, statistics_on or None, dumped)
    tools = {"none": ("none", None, None, True)}
    dumped = (True,) if args.no_undumped else (True, False)
    for name in ("tprobe", "msprobe") if args.msprobe else ("tprobe",):
        for dump in dumped:
            for lv in _LEVELS:
                ons = args.statistics_on if name == "tprobe" and dump else []
                for on in ons or [None]:
                    label = " ".join([name, lv] + ([on] if on else []) +
                                     ([] if dump else ["undumped"]))
                    tools[label] = (name, lv, on, dump)
    # The rows dumped at each level with an environment of their own (one
    # fast path off, or another build's package): tag -> what they add.
    variants = {tag: {switch: "0"} for option, tag, switch in _WITHOUT
                if getattr(args, "no_" + option)}
    if args.baseline:
        variants["baseline"] = {"PYTHONPATH": args.baseline}
    env_of = {}  # label -> what its row adds to the environment
    for tag, changes in variants.items():
        for lv in _LEVELS:
            env_of[f"tprobe {lv} {tag}"] = changes
            tools[f"tprobe {lv} {tag}"] = ("tprobe", lv, None, True)
    # label: (compiled, tprobe at L0: None, "dumped" or "undumped";
    # statistics_on or None)
    compile_rows = {} if not args.compile else {
        row: how + (None,) for row, how in _COMPILE_ROWS.items()
        if how[1] != "undumped" or not args.no_undumped}
    for on in (args.statistics_on or []) if args.compile else []:
        for compiled in (False, True):
            label = f"{'compiled' if compiled else 'eager'} tprobe L0 {on}"
            compile_rows[label] = (compiled, "dumped", on)
    rows = list(tools) + list(compile_rows)
    wall = {t: [] for t in rows}
    cpu = {t: [] for t in rows}
    daemon = {t: [] for t in rows}
    entries = {t: 0 for t in rows}
    bounds = {t: [] for t in rows}
    rounds = {t: [] for t in rows}  # each round's median wall time
    with tempfile.TemporaryDirectory(prefix="tprobe-overhead-") as tmp:
        with tprobed_fixture.Tprobed(args.tprobed, tmp) as tprobed:
            env = tprobed.env()
            for r in range(args.rounds):
                for tool, (name, level, on, dump) in tools.items():
                    cmd = [_SCRIPT, "--steps", str(args.steps),
                           "--device", args.device, "--boundaries",
                           *bench_args.model_flags(args)]
                    run_env = dict(env, **env_of.get(tool, {}))
                    prelude = ""
                    if args.device.startswith("npu"):
                        prelude = "import torch_npu\n"
                    if name != "none":
                        config = bench_args.level_config(level)
                        if on or not dump or args.task != "statistics":
                            config = bench_args.tuned_config(
                                config, on, args.task, dump, tmp)
                        cmd += ["--tool", name, "--config", config,
                                "--dump-path",
                                os.path.join(tmp, "dump", *tool.split(),
                                             str(r))]
                        if name == "msprobe" and args.msprobe != "installed":
                            run_env = dict(env, PYTHONPATH=args.msprobe)
                            prelude += _SHIM_833
                    w, c, d, b = step_times(cmd, run_env, tprobed.proc.pid,
                                            prelude)
                    wall[tool] += w
                    rounds[tool].append(statistics.median(w))
                    cpu[tool] += c
                    bounds[tool] += b
                    daemon[tool].append(d)
                    if tool != "none" and r == 0:
                        entries[tool] = entries_per_step(cmd[-1])
                for row, (compiled, tool, on) in compile_rows.items():
                    cmd = [_COMPILED_SCRIPT, "--steps",
                           str(args.warmup + args.steps)]
                    if compiled:
                        cmd.append("--compile")
                    if tool:
                        config = bench_args.level_config("L0")
                        dumped = tool == "dumped"
                        if on or args.task != "statistics" or not dumped:
                            config = bench_args.tuned_config(
                                config, on, args.task, dumped, tmp)
                        cmd += ["--config", config, "--out",
                                os.path.join(tmp, "dump", *row.split(),
                                             str(r))]
                    else:
                        cmd.append("--no-tool")
                    w, c, d, _ = step_times(cmd, env, tprobed.proc.pid)
                    wall[row] += w[args.warmup:]
                    rounds[row].append(statistics.median(w[args.warmup:]))
                    cpu[row] += c[args.warmup:]
                    daemon[row].append(d)
                    if tool and r == 0:
                        entries[row] = entries_per_step(cmd[-1])
    print_table("tool", tools, wall, cpu, daemon, entries, "none", bounds,
                rounds)
    if args.compile:
        print()
        print_table("compiled_transformer.py", compile_rows, wall, cpu,
                    daemon, entries, "eager none", bounds, rounds)
        for on in [""] + [" " + on for on in args.statistics_on or []]:
            ratio = [statistics.median(m["compiled tprobe L0" + on]) /
                     statistics.median(m["eager tprobe L0" + on])
                     for m in (wall, cpu)]
            print(f"compiled tprobe L0{on} / eager tprobe L0{on}: wall "
                  f"{ratio[0]:.2f}, cpu {ratio[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
