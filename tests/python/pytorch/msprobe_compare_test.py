"""msprobe's own compare on a tprobe tree and an msprobe tree of the same
run (examples/train_tiny_gpt.py, 2 steps) at L0, L1 and mix: with msprobe's
tree as the target, every row finds its tprobe row and passes; with tprobe's
tree as the target, every row of an entry msprobe also wrote does.

Runs where msprobe is installed (the project venv); msprobe makes its tree
in the same test, with the same config.
"""

import csv
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import unittest
from typing import List, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from golden_test import SCRIPT, run_tiny_gpt  # noqa: E402
from tprobed_fixture import ROOT, fresh_dir  # noqa: E402

CONFIGS = os.path.join(ROOT, "tests", "data", "golden26")
HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None


def run_msprobe(level: str, tmp: str) -> str:
    out = os.path.join(tmp, "msprobe")
    subprocess.run([sys.executable, SCRIPT, "--tool", "msprobe", "--config",
                    os.path.join(CONFIGS, level, "config.json"),
                    "--dump-path", out, "--steps", "2"],
                   check=True, timeout=600, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return out


def as_rank_dir(tree: str, step: int, dest: str) -> str:
    """dest/step{step}/rank holding the tree's only process directory
    (msprobe 26.x writes proc{pid}, tprobe rank): compare pairs equal
    names."""
    [source] = glob.glob(os.path.join(tree, f"step{step}", "*"))
    shutil.copytree(source, os.path.join(dest, f"step{step}", "rank"))
    return os.path.join(dest, f"step{step}")


def compare(target: str, golden: str, out: str) -> List[Dict[str, str]]:
    """Runs `msprobe compare`; returns its result rows."""
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                       "msprobe"), "compare", "-tp", target,
                          "-gp", golden, "-o", out], timeout=600, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    files = glob.glob(os.path.join(out, "compare_result_*.csv"))
    if run.returncode != 0 or len(files) != 1:
        raise AssertionError(f"msprobe compare failed:\n{run.stdout[-4000:]}")
    with open(files[0], newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def entry_of(row_name: str, entries: set) -> str:
    """The dump.json entry a compare row belongs to."""
    parts = row_name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in entries:
            return ".".join(parts[:end])
    return ""


@unittest.skipUnless(HAVE_MSPROBE, "msprobe is not installed")
class MsprobeCompareTest(unittest.TestCase):
    def check_level(self, level: str) -> None:
        tmp = fresh_dir("tp-compare-")
        tprobe = run_tiny_gpt(level, fresh_dir("tp-compare-t-"), CONFIGS)
        msprobe = run_msprobe(level, tmp)
        for step in (0, 1):
            with self.subTest(step=step):
                work = os.path.join(tmp, f"pairs{step}")
                mine = as_rank_dir(tprobe, step, os.path.join(work, "t"))
                theirs = as_rank_dir(msprobe, step, os.path.join(work, "m"))
                rows = compare(theirs, mine, os.path.join(work, "out1"))
                self.assertGreater(len(rows), 50)
                bad = [(r["NPU Name"], r["Bench Name"], r["Result"])
                       for r in rows if r["Bench Name"] != r["NPU Name"]
                       or r["Result"] != "pass"]
                self.assertEqual(bad, [], "msprobe's rows vs tprobe")
                with open(os.path.join(theirs, "rank", "dump.json")) as f:
                    entries = set(json.load(f)["data"])
                rows = compare(mine, theirs, os.path.join(work, "out2"))
                bad = [(r["NPU Name"], r["Bench Name"], r["Result"])
                       for r in rows if entry_of(r["NPU Name"], entries)
                       and (r["Bench Name"] != r["NPU Name"]
                            or r["Result"] != "pass")]
                self.assertEqual(bad, [], "tprobe's rows vs msprobe")

    def test_l0(self) -> None:
        self.check_level("L0")

    def test_l1(self) -> None:
        self.check_level("L1")

    def test_mix(self) -> None:
        self.check_level("mix")


if __name__ == "__main__":
    unittest.main()
