#!/usr/bin/env python3
"""`tprobe compare` against msprobe's compare on the same trees, in one run:

    /work/main/.venv/bin/python bench/compare_bench.py --tprobe build/bin/tprobe \
        [--copies 40] [--rounds 3] [--tensor-entries 300]

Statistics mode: the entries of the stored msprobe 26.x tree
tests/data/golden26/mix/step0 are repeated --copies times (call indices
renumbered) into a baseline dump.json, and a target whose every tenth
tensor's Max is changed; both tools compare target against baseline.
Tensor mode: --tensor-entries entries with one 256x256 float32 output each,
saved as .pt (torch.save), which both tools read (tprobe without
unpickling), and as .npy, which tprobe reads where torch is missing.

Each tool runs as its own process, interleaved for --rounds rounds; the
median wall time gives rows/s (the rows tprobe's CSV holds) and the ratio.
msprobe runs where it is installed (the venv); without it only tprobe's
figures are printed.
"""

import argparse
import copy
import glob
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "tests", "data", "golden26", "mix", "step0",
                      "proc", "dump.json")


def renumber(name: str, copy_index: int, calls: int) -> str:
    """name with its call index moved past `copy_index` earlier copies."""
    parts = name.split(".")
    for i, p in enumerate(parts):
        if p in ("forward", "backward") or p.startswith("parameters_grad"):
            for j in (i - 1, i + 1):
                if 0 <= j < len(parts) and parts[j].isdigit():
                    parts[j] = str(int(parts[j]) + copy_index * calls)
                    return ".".join(parts)
    return f"{name}.{copy_index}"


def write_tree(root: str, data: dict, task: str) -> str:
    rank = os.path.join(root, "step0", "rank")
    os.makedirs(rank, exist_ok=True)
    with open(os.path.join(rank, "dump.json"), "w") as f:
        json.dump({"task": task, "level": "mix", "framework": "pytorch",
                   "dump_data_dir": None, "data": data}, f, indent=1)
    return os.path.join(root, "step0")


def statistics_trees(work: str, copies: int):
    with open(SOURCE) as f:
        source = json.load(f)["data"]
    baseline, target = {}, {}
    changed = 0
    for c in range(copies):
        for name, entry in source.items():
            new = renumber(name, c, 1000)
            baseline[new] = entry
            entry = copy.deepcopy(entry)
            for tensors in entry.values():
                if isinstance(tensors, list):
                    for t in tensors:
                        if (isinstance(t, dict) and isinstance(t.get("Max"),
                                                               float)):
                            changed += 1
                            if changed % 10 == 0:
                                t["Max"] *= 3.0
            target[new] = entry
    return (write_tree(os.path.join(work, "st-target"), target, "statistics"),
            write_tree(os.path.join(work, "st-baseline"), baseline,
                       "statistics"))


def tensor_trees(work: str, entries: int):
    import numpy as np
    have_torch = importlib.util.find_spec("torch") is not None
    trees = []
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((256, 256), dtype=np.float32)
              for _ in range(entries)]
    for side, scale in (("target", 1.0001), ("baseline", 1.0)):
        root = os.path.join(work, "t-" + side)
        rank = os.path.join(root, "step0", "rank")
        data_dir = os.path.join(rank, "dump_tensor_data")
        os.makedirs(data_dir)
        npy_data, pt_data = {}, {}
        for i, v in enumerate(values):
            name = f"Functional.gelu.{i}.forward"
            v = v * np.float32(scale)
            base = {"type": "torch.Tensor", "dtype": "torch.float32",
                    "shape": [256, 256], "Max": float(v.max()),
                    "Min": float(v.min()), "Mean": float(v.mean()),
                    "Norm": float(np.linalg.norm(v)), "requires_grad": False}
            np.save(os.path.join(data_dir, f"{name}.output.0.npy"), v)
            npy_data[name] = {"output": [dict(
                base, data_name=f"{name}.output.0.npy")]}
            pt_data[name] = {"output": [dict(
                base, data_name=f"{name}.output.0.pt")]}
            if have_torch:
                import torch
                torch.save(torch.from_numpy(v),
                           os.path.join(data_dir, f"{name}.output.0.pt"))
        for flavour, data in (("npy", npy_data), ("pt", pt_data)):
            with open(os.path.join(rank, f"dump.{flavour}.json"), "w") as f:
                json.dump({"task": "tensor", "level": "L1",
                           "framework": "pytorch", "data": data}, f)
        trees.append(root)
    return trees


def use(tree: str, flavour: str) -> str:
    rank = os.path.join(tree, "step0", "rank")
    shutil.copyfile(os.path.join(rank, f"dump.{flavour}.json"),
                    os.path.join(rank, "dump.json"))
    return os.path.join(tree, "step0")


def timed(cmd, out: str) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    elapsed = time.perf_counter() - start
    if run.returncode not in (0, 4) or not glob.glob(
            os.path.join(out, "compare_result*.csv")):
        raise SystemExit(f"{cmd[0]} failed:\n{run.stdout[-3000:]}")
    return elapsed


def rows_of(out: str) -> int:
    total = 0
    for path in glob.glob(os.path.join(out, "compare_result*.csv")):
        with open(path, encoding="utf-8") as f:
            total += sum(1 for _ in f) - 1
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tprobe", default=os.path.join(ROOT, "build", "bin",
                                                     "tprobe"))
    ap.add_argument("--copies", type=int, default=40)
    ap.add_argument("--tensor-entries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    msprobe = shutil.which("msprobe") or os.path.join(
        os.path.dirname(sys.executable), "msprobe")
    have_msprobe = os.path.exists(msprobe)
    work = tempfile.mkdtemp(prefix="tp-compare-bench-")
    try:
        cases = [("statistics",) + statistics_trees(work, args.copies)]
        t_target, t_baseline = tensor_trees(work, args.tensor_entries)
        cases.append(("tensor", t_target, t_baseline))
        for mode, target, baseline in cases:
            times = {"tprobe": [], "msprobe": []}
            rows = 0
            for _ in range(args.rounds):
                if mode == "tensor":
                    # The same .pt files msprobe reads (tprobe reads them
                    # without unpickling); .npy where torch is missing.
                    flavour = "pt" if glob.glob(os.path.join(
                        target, "step0", "rank", "dump_tensor_data",
                        "*.pt")) else "npy"
                    target_dir, baseline_dir = (use(target, flavour),
                                                use(baseline, flavour))
                else:
                    target_dir, baseline_dir = target, baseline
                out = os.path.join(work, "out-tprobe")
                times["tprobe"].append(timed(
                    [args.tprobe, "compare", target_dir, baseline_dir, "-o",
                     out], out))
                rows = rows_of(out)
                if have_msprobe:
                    if mode == "tensor":
                        target_dir, baseline_dir = (use(target, "pt"),
                                                    use(baseline, "pt"))
                    out = os.path.join(work, "out-msprobe")
                    times["msprobe"].append(timed(
                        [msprobe, "compare", "-tp", target_dir, "-gp",
                         baseline_dir, "-o", out], out))
            tp = statistics.median(times["tprobe"])
            line = (f"{mode:10s} {rows:7d} rows  tprobe {tp:7.3f} s "
                    f"({rows / tp:10.0f} rows/s, runs "
                    f"{min(times['tprobe']):.3f}-{max(times['tprobe']):.3f})")
            if times["msprobe"]:
                ms = statistics.median(times["msprobe"])
                line += (f"  msprobe {ms:7.3f} s ({rows / ms:8.0f} rows/s, "
                         f"runs {min(times['msprobe']):.3f}-"
                         f"{max(times['msprobe']):.3f})  ratio {ms / tp:6.1f}x")
            print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    random.seed(0)
    main()
