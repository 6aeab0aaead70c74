"""Fidelity against msprobe 26.x: examples/train_tiny_gpt.py --tool tprobe
on PyTorch 2.13 against the trees mindstudio-probe 26.2.0 wrote for the
same run (tests/data/golden26/), at L0, L1 and mix, through a real tprobed.

Checked as for the 8.3.3 trees (golden_compare.py): entry names and order,
keys, dtypes, shapes, Max/Min equal, Mean/Norm within float32 rounding,
construct.json parents, stack.json groups; here the module backward entries
are in the golden trees too, so they are compared like every other entry.

KNOWN_GAPS lists what tprobe does not match yet, each with its cause (see
tests/data/golden26/README.md); it is empty now. A difference outside these
patterns fails, and so does a gap that no longer occurs (remove it from the
list).
"""

import importlib.metadata
import os
import re
import sys
import unittest
from typing import List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_compare  # noqa: E402
from golden_test import run_tiny_gpt  # noqa: E402
from tprobed_fixture import ROOT, fresh_dir  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "data", "golden26")
TORCH_2_13 = importlib.metadata.version("torch").startswith("2.13")

# (pattern of a difference message, levels where it occurs, cause).
KNOWN_GAPS = [
]


def differences(golden_dir: str, mine_dir: str) -> List[str]:
    """golden_compare's differences."""
    errors = golden_compare.compare_dump(
        golden_compare.load(golden_dir, "dump.json"),
        golden_compare.load(mine_dir, "dump.json"))
    construct_errors, _ = golden_compare.compare_construct(
        golden_compare.load(golden_dir, "construct.json"),
        golden_compare.load(mine_dir, "construct.json"))
    errors += construct_errors
    errors += golden_compare.compare_stack(
        golden_compare.load(golden_dir, "stack.json"),
        golden_compare.load(mine_dir, "stack.json"))
    return errors


@unittest.skipUnless(TORCH_2_13, "the 26.x golden trees come from "
                     "PyTorch 2.13")
class Golden26Test(unittest.TestCase):
    def check_level(self, level: str) -> None:
        out = run_tiny_gpt(level, fresh_dir("tp-golden26-"), GOLDEN)
        hit = set()
        for step in (0, 1):
            errors = differences(
                os.path.join(GOLDEN, level, f"step{step}", "proc"),
                os.path.join(out, f"step{step}", "rank"))
            unexplained = []
            for error in errors:
                gaps = [i for i, (pattern, levels, _) in enumerate(KNOWN_GAPS)
                        if level in levels and re.search(pattern, error)]
                hit.update(gaps)
                if not gaps:
                    unexplained.append(error)
            self.assertEqual(unexplained, [], f"{level} step{step}")
            data = golden_compare.load(os.path.join(out, f"step{step}",
                                                    "rank"), "dump.json")
            if level != "L1":
                # Module backward entries, compared above like the rest.
                self.assertIn("Module.blocks.0.Block.backward.0",
                              data["data"])
        stale = [KNOWN_GAPS[i][2] for i, (_, levels, _) in
                 enumerate(KNOWN_GAPS) if level in levels and i not in hit]
        self.assertEqual(stale, [], f"{level}: gaps that no longer occur")

    def test_l0(self) -> None:
        self.check_level("L0")

    def test_l1(self) -> None:
        self.check_level("L1")

    def test_mix(self) -> None:
        self.check_level("mix")


if __name__ == "__main__":
    unittest.main()
