"""`tprobe compare` renumbers backward calls as msprobe 26.2's `msprobe
compare` does (its update_backward_call), without any mapping, checked
against msprobe run live on the same pair of trees.

backward_order_model.py dumps one model twice under tprobe: in the "cut"
tree (the target) the last relu, fc3's linear and the second square run
no backward, in the "full" tree (the baseline) they do. msprobe numbers
each backward call by its place among its API's backward calls in dump
order on both sides, so the target's relu.1 backward (its first) pairs
with the baseline's relu.2 backward (its first), not with relu.1's. The
(NPU Name, Bench Name) pairs of both tools must be the same set, at least
three of them across call numbers, and the target rows left unpaired the
same, but for a None gradient against a tensor, which msprobe blanks for
its dtype and tprobe keeps as an error.
"""

import csv
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import unittest
from typing import Dict, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None
MODEL = os.path.join(HERE, "backward_order_model.py")
Rows = List[Dict[str, str]]


def tprobe_cli() -> str:
    return os.environ.get("TPROBE_CLI") or "tprobe"


def read_csv(pattern: str, log: str) -> Rows:
    files = glob.glob(pattern)
    if len(files) != 1:
        raise AssertionError(f"no single CSV at {pattern}:\n{log[-4000:]}")
    with open(files[0], newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def pairs_of(rows: Rows) -> Set[Tuple[str, str]]:
    return {(r["NPU Name"], r["Bench Name"]) for r in rows
            if r["NPU Name"] != "N/A" and r["Bench Name"] != "N/A"}


def unpaired_of(rows: Rows) -> Set[str]:
    return {r["NPU Name"] for r in rows
            if r["NPU Name"] != "N/A" and r["Bench Name"] == "N/A"}


@unittest.skipUnless(HAVE_MSPROBE, "needs msprobe")
class BackwardRenumberingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-bworder-")
        steps = {}
        with Tprobed(tprobed_binary(), fresh_dir("tp-bworder-d-")) as daemon:
            for variant in ("cut", "full"):
                dump = os.path.join(cls.tmp, variant)
                run = subprocess.run(
                    [sys.executable, MODEL, "--variant", variant,
                     "--dump-path", dump], env=daemon.env(),
                    capture_output=True, text=True, timeout=600)
                assert run.returncode == 0, run.stderr[-4000:]
                # msprobe compare wants step{N}/{rank folder}: one copy
                # that both tools read.
                [rank] = glob.glob(os.path.join(dump, "step0", "*"))
                steps[variant] = os.path.join(cls.tmp, variant + "-tree",
                                              "step0")
                shutil.copytree(rank, os.path.join(steps[variant], "rank"))
            assert daemon.stop() == 0, daemon.log()
        cls.target, cls.baseline = steps["cut"], steps["full"]

    def msprobe(self) -> Rows:
        out = os.path.join(self.tmp, "msprobe-out")
        run = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "msprobe"),
             "compare", "-tp", self.target, "-gp", self.baseline, "-o", out],
            timeout=600, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        self.assertEqual(run.returncode, 0, run.stdout[-4000:])
        return read_csv(os.path.join(out, "compare_result_*.csv"),
                        run.stdout)

    def tprobe(self, label: str, *flags: str) -> Rows:
        out = os.path.join(self.tmp, "tprobe-" + label)
        run = subprocess.run(
            [tprobe_cli(), "compare", self.target, self.baseline, "-o", out,
             *flags], timeout=600, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        self.assertIn(run.returncode, (0, 4), run.stdout[-4000:])
        return read_csv(os.path.join(out, "compare_result*.csv"), run.stdout)

    def test_backward_calls_pair_as_msprobes(self) -> None:
        theirs, mine = self.msprobe(), self.tprobe("plain")
        # A gradient that is None on one side (the cut branch's) and a
        # tensor on the other: msprobe finds the pair by name, then blanks
        # its Bench side for the dtypes (None against torch.float32);
        # tprobe keeps the pair, as an error. Those pairs aside, the sets
        # are the same.
        dtypes = {(r["NPU Name"], r["Bench Name"]):
                  (r["NPU Dtype"], r["Bench Dtype"]) for r in mine}
        blanked = {p for p in pairs_of(mine) - pairs_of(theirs)
                   if "None" in dtypes[p] and p[0] in unpaired_of(theirs)}
        self.assertEqual(sorted(pairs_of(mine) - pairs_of(theirs) - blanked),
                         [], "paired by tprobe only")
        self.assertEqual(sorted(pairs_of(theirs) - pairs_of(mine)), [],
                         "paired by msprobe only")
        self.assertEqual(unpaired_of(mine) | {a for a, _ in blanked},
                         unpaired_of(theirs))
        # The first backward of relu in each tree pairs with the other's
        # first: relu.1 (cut) with relu.2 (full).
        self.assertIn(("Torch.relu.1.backward.input.0",
                       "Torch.relu.2.backward.input.0"), pairs_of(mine))
        across = {(a, b) for a, b in pairs_of(mine) if a != b}
        apis = {a.split(".backward")[0].rsplit(".", 1)[0] for a, _ in across}
        self.assertLessEqual({"Torch.relu", "Functional.linear",
                              "Tensor.square"}, apis, sorted(across))
        print(f"{len(pairs_of(mine))} pairs, {len(across)} across call "
              f"numbers, the same as msprobe's ({len(blanked)} that msprobe "
              "blanks for a None gradient)", file=sys.stderr)

    def test_fuzzy_pairs_the_nth_call_with_the_nth(self) -> None:
        # --fuzzy drops the numbers: the n-th backward of an API pairs with
        # the n-th there too.
        fuzzy = pairs_of(self.tprobe("fuzzy", "--fuzzy"))
        self.assertIn(("Torch.relu.1.backward.input.0",
                       "Torch.relu.2.backward.input.0"), fuzzy)


if __name__ == "__main__":
    unittest.main()
