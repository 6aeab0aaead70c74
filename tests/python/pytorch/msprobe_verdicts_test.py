"""`tprobe compare`'s default verdicts and cells against msprobe 26.2's
`msprobe compare`, both run live in this test on the same pairs of trees:

- tests/python/pytorch/compare_model.py under tprobe, statistics and md5:
  a run with a planted divergence (fc2's weights moved) against a clean
  run, and step 1 against step 0 of one training;
- msprobe's own stored trees (tests/data/golden26, a tiny GPT, mix and L1),
  step 1 against step 0;
- examples/mindspore_train.py under tprobe (MindSpore, mix), step 1
  against step 0, where MindSpore is installed;
- compare_model.py under msprobe 26.2 itself, task tensor, the planted
  divergence against the clean run: its .pt tensors, which tprobe reads
  without unpickling (tools/compare/input/pt_file.h), compared as tensors, the
  metrics equal to msprobe's; a .pt whose pickle would run code is refused
  (the row falls back to its statistics) and runs nothing.

Both CSVs must have the same columns in the same order. On the rows both
tools pair, at least 99.5 % must get the same Result, and the cells
(dtype, shape, Requires_grad, the diffs and relative errors, the eight
statistics, the MD5s, Err_message, NPU_Stack_Info, Data_name) must read the
same on at least 99.5 % of them; every row that differs is printed. Rows only one side has
stay missing/extra in tprobe (msprobe passes them), so they are not
counted.
"""

import csv
import glob
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import unittest
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from compare_test import SCRIPT, run_model, tprobe_cli  # noqa: E402
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None
HAVE_MINDSPORE = importlib.util.find_spec("mindspore") is not None
MS_TRAIN = os.path.join(ROOT, "examples", "mindspore_train.py")
GOLDEN26 = os.path.join(ROOT, "tests", "data", "golden26")
STAT_CELLS = [
    "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape",
    "NPU Requires_grad", "Bench Requires_grad", "Max diff", "Min diff",
    "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
    "MeanRelativeErr", "NormRelativeErr", "NPU max", "NPU min", "NPU mean",
    "NPU l2norm", "Bench max", "Bench min", "Bench mean", "Bench l2norm",
    "Requires_grad Consistent", "Result", "Err_message", "NPU_Stack_Info"]
TENSOR_CELLS = [
    "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape",
    "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max",
    "Bench min", "Bench mean", "Bench l2norm", "Requires_grad Consistent",
    "Result", "Err_message", "NPU_Stack_Info", "Data_name"]
TENSOR_METRICS = ["Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                  "One Thousandth Err Ratio", "Five Thousandths Err Ratio"]
MD5_CELLS = ["NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
             "Bench Tensor Shape", "NPU MD5", "BENCH MD5",
             "Requires_grad Consistent", "Result", "Err_message",
             "NPU_Stack_Info"]


def run_msprobe(tmp: str, name: str, *flags: str) -> str:
    """compare_model.py under msprobe 26.2 (task tensor); its dump path."""
    dump = os.path.join(tmp, name)
    subprocess.run([sys.executable, SCRIPT, "--tool", "msprobe", "--task",
                    "tensor", "--dump-path", dump, *flags], check=True,
                   timeout=600, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return dump


def read_csv(path: str) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_step_dir(rank_dir: str, step: int, dest: str) -> str:
    """dest/step{step}/rank holding a copy of rank_dir: msprobe compare
    wants a step folder with one rank folder, and both tools then read the
    same files."""
    shutil.copytree(rank_dir, os.path.join(dest, f"step{step}", "rank"))
    return os.path.join(dest, f"step{step}")


def only_rank(tree: str, step: int) -> str:
    [rank] = glob.glob(os.path.join(tree, f"step{step}", "*"))
    return rank


def msprobe_compare(target: str, baseline: str, out: str
                    ) -> List[Dict[str, str]]:
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                       "msprobe"), "compare", "-tp", target,
                          "-gp", baseline, "-o", out], timeout=600,
                         text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    files = glob.glob(os.path.join(out, "compare_result_*.csv"))
    if run.returncode != 0 or len(files) != 1:
        raise AssertionError(f"msprobe compare failed:\n{run.stdout[-4000:]}")
    return read_csv(files[0])


def tprobe_compare(target: str, baseline: str, out: str, *options: str
                   ) -> List[Dict[str, str]]:
    run = subprocess.run([tprobe_cli(), "compare", target, baseline, "-o",
                          out, *options], timeout=600, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    files = glob.glob(os.path.join(out, "compare_result*.csv"))
    if run.returncode not in (0, 4) or len(files) != 1:
        raise AssertionError(f"tprobe compare failed:\n{run.stdout[-4000:]}")
    return read_csv(files[0])


def same_cell(mine: str, theirs: str) -> bool:
    """Equal texts; for numbers, equal but for the last digit or two.
    msprobe reads dump.json's numbers back through pandas' to_numeric,
    whose parser is not correctly rounded (0.5 - 0.0 comes out as
    0.4999999999999999); tprobe keeps the exact doubles, so a difference or
    relative error can differ in its last digits (more where a difference
    cancels most digits: 1e-6 relative). Integers, N/A, Nan, inf and the
    '%' must still be written alike."""
    if mine == theirs:
        return True
    if mine is None or theirs is None:
        return False
    percent = mine.endswith("%")
    if percent != theirs.endswith("%"):
        return False
    a, b = mine.rstrip("%"), theirs.rstrip("%")
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if ("." in a or "e" in a) != ("." in b or "e" in b):
        return False  # an integer against a float
    return math.isfinite(x) and math.isclose(x, y, rel_tol=1e-6,
                                             abs_tol=1e-300)


class Tally:
    """Rows both tools paired, and the ones whose cells differ."""

    def __init__(self) -> None:
        self.rows = 0
        self.verdicts_differ: List[str] = []
        self.cells_differ: List[str] = []
        self.unpaired = 0

    def add(self, label: str, mine: List[Dict[str, str]],
            theirs: List[Dict[str, str]], cells: List[str]) -> None:
        by_name = {r["NPU Name"]: r for r in theirs}
        for row in mine:
            if row["Result"] in ("missing", "extra"):
                self.unpaired += 1
                continue
            other = by_name.get(row["NPU Name"])
            if other is None or other["Bench Name"] == "N/A":
                self.unpaired += 1
                continue
            self.rows += 1
            name = f"{label}: {row['NPU Name']}"
            if row["Result"] != other["Result"]:
                self.verdicts_differ.append(
                    f"{name}: tprobe {row['Result']} {row['Err_message']}, "
                    f"msprobe {other['Result']} {other['Err_message']}")
            cells_differ = [(c, row.get(c), other.get(c)) for c in cells
                            if not same_cell(row.get(c), other.get(c))]
            if cells_differ:
                self.cells_differ.append(f"{name}: {cells_differ}")

    def share(self, bad: List[str]) -> float:
        return 1 - len(bad) / max(self.rows, 1)


@unittest.skipUnless(HAVE_MSPROBE, "msprobe is not installed")
class MsprobeVerdictsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-verd-")
        runs = {}
        for name, flags in (("clean", {"steps": 2}),
                            ("perturbed", {"perturb": True}),
                            ("clean_md5", {"steps": 2, "md5": True}),
                            ("perturbed_md5", {"perturb": True,
                                               "md5": True})):
            runs[name] = run_model(cls.tmp, name, "statistics", **flags)
        runs["ms_clean"] = run_msprobe(cls.tmp, "ms_clean")
        runs["ms_perturbed"] = run_msprobe(cls.tmp, "ms_perturbed",
                                           "--perturb")
        cls.runs = runs

    def pair(self, label: str, target: Tuple[str, int],
             baseline: Tuple[str, int], tally: Tally, cells: List[str]
             ) -> Tuple[List[Dict[str, str]], List[Dict[str, str]]]:
        work = os.path.join(self.tmp, label)
        t = as_step_dir(target[0], target[1], os.path.join(work, "t"))
        b = as_step_dir(baseline[0], baseline[1], os.path.join(work, "b"))
        mine = tprobe_compare(t, b, os.path.join(work, "tprobe"))
        theirs = msprobe_compare(t, b, os.path.join(work, "msprobe"))
        self.assertGreater(len(mine), 20, label)
        # The same columns in the same order.
        self.assertEqual(list(mine[0]), list(theirs[0]), label)
        tally.add(label, mine, theirs, cells)
        return mine, theirs

    def report(self, what: str, tally: Tally) -> None:
        print(f"\n{what}: {tally.rows} rows paired by both "
              f"({tally.unpaired} on one side only), verdicts agree on "
              f"{100 * tally.share(tally.verdicts_differ):.2f} %, cells on "
              f"{100 * tally.share(tally.cells_differ):.2f} %")
        for line in tally.verdicts_differ:
            print("  verdict differs:", line)
        for line in tally.cells_differ[:40]:
            print("  cells differ:", line)
        self.assertGreater(tally.rows, 100)
        self.assertGreaterEqual(tally.share(tally.verdicts_differ), 0.995,
                                "\n".join(tally.verdicts_differ))
        self.assertGreaterEqual(tally.share(tally.cells_differ), 0.995,
                                "\n".join(tally.cells_differ[:40]))

    def test_statistics_verdicts_and_cells_are_msprobes(self) -> None:
        tally = Tally()
        clean, perturbed = self.runs["clean"], self.runs["perturbed"]
        self.pair("planted", (only_rank(perturbed, 0), 0),
                  (only_rank(clean, 0), 0), tally, STAT_CELLS)
        self.pair("steps", (only_rank(clean, 1), 1),
                  (only_rank(clean, 0), 0), tally, STAT_CELLS)
        for level in ("mix", "L1"):
            self.pair(f"golden26-{level}",
                      (only_rank(os.path.join(GOLDEN26, level), 1), 1),
                      (only_rank(os.path.join(GOLDEN26, level), 0), 0),
                      tally, STAT_CELLS)
        self.report("statistics", tally)

    @unittest.skipUnless(HAVE_MINDSPORE, "MindSpore is not installed")
    def test_mindspore_statistics_verdicts_are_msprobes(self) -> None:
        dump = os.path.join(self.tmp, "mindspore")
        with Tprobed(tprobed_binary(), fresh_dir("tp-verd-ms-")) as daemon:
            run = subprocess.run(
                [sys.executable, MS_TRAIN, "--tool", "tprobe", "--level",
                 "mix", "--dump-path", dump, "--steps", "2"],
                env=dict(daemon.env(), GLOG_v="3"), capture_output=True,
                text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stderr[-4000:])
            self.assertEqual(daemon.stop(), 0, daemon.log())
        tally = Tally()
        self.pair("mindspore-steps", (only_rank(dump, 1), 1),
                  (only_rank(dump, 0), 0), tally, STAT_CELLS)
        self.report("MindSpore statistics", tally)

    def test_md5_verdicts_are_msprobes(self) -> None:
        tally = Tally()
        clean, perturbed = self.runs["clean_md5"], self.runs["perturbed_md5"]
        self.pair("md5-planted", (only_rank(perturbed, 0), 0),
                  (only_rank(clean, 0), 0), tally, MD5_CELLS)
        self.pair("md5-steps", (only_rank(clean, 1), 1),
                  (only_rank(clean, 0), 0), tally, MD5_CELLS)
        self.report("md5", tally)

    def test_tensor_verdicts_on_msprobes_pt_files(self) -> None:
        tally = Tally()
        mine, theirs = self.pair(
            "tensor-planted", (only_rank(self.runs["ms_perturbed"], 0), 0),
            (only_rank(self.runs["ms_clean"], 0), 0), tally, TENSOR_CELLS)
        self.report("tensor (msprobe's .pt files)", tally)
        by_name = {r["NPU Name"]: r for r in theirs}
        compared = 0
        for row in mine:
            self.assertNotIn("Compared by the statistics", row["Err_message"],
                             row["NPU Name"])
            other = by_name.get(row["NPU Name"])
            if other is None or other["Cosine"] in ("N/A", "unsupported",
                                                     "Nan", ""):
                continue
            for key in TENSOR_METRICS:
                self.assertTrue(
                    math.isclose(float(row[key]), float(other[key]),
                                 rel_tol=1e-6, abs_tol=1e-9),
                    f"{row['NPU Name']} {key}: tprobe {row[key]}, "
                    f"msprobe {other[key]}")
            compared += 1
        self.assertGreater(compared, 10)

    def test_a_pt_file_that_would_run_code_is_refused(self) -> None:
        import torch

        class Payload:
            def __reduce__(self):
                return (os.system, ("touch " + marker,))

        work = os.path.join(self.tmp, "evil")
        marker = os.path.join(work, "ran")
        t = as_step_dir(only_rank(self.runs["ms_perturbed"], 0), 0,
                        os.path.join(work, "t"))
        b = as_step_dir(only_rank(self.runs["ms_clean"], 0), 0,
                        os.path.join(work, "b"))
        data = os.path.join(t, "rank", "dump_tensor_data")
        victim = sorted(glob.glob(os.path.join(data, "*.output.0.pt")))[0]
        torch.save(Payload(), victim)
        rows = tprobe_compare(t, b, os.path.join(work, "out"))
        self.assertFalse(os.path.exists(marker))
        name = os.path.basename(victim)[:-len(".pt")]
        [row] = [r for r in rows if r["NPU Name"] == name]
        self.assertIn("refuses the global", row["Err_message"])
        self.assertIn("Compared by the statistics", row["Err_message"])


if __name__ == "__main__":
    unittest.main()
