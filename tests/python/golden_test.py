"""examples/train_tiny_gpt.py --tool tprobe against msprobe 8.3.3's golden
trees (tests/data/golden/), at L0, L1 and mix, through a real tprobed.

golden_compare.py states what must match and which differences are accepted
(module backward entries as additions, parameters_grad index reset).
"""

import importlib.metadata
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_compare  # noqa: E402
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
# msprobe 8.3.3's API names: tprobe hooks what made the golden trees.
API_LIST = os.path.join(GOLDEN, "support_wrap_ops.yaml")
# The golden trees are PyTorch 1.13's: other versions run other kernels (the
# last bits of Max/Min differ) and AdamW makes other calls (lerp_).
TORCH_1_13 = importlib.metadata.version("torch").startswith("1.13")


def run_tiny_gpt(level: str, tmp: str, golden: str = GOLDEN,
                 **env: str) -> str:
    """Runs the golden script with tprobe for 2 steps, with the config of
    ``golden``/level; returns the dump path once tprobed has written
    everything. ``env``: extra environment for the script.

    msprobe 8.3.3 had no risk_level and dumped every API: its trees are
    compared with a run at risk_level "ALL" (26.x's default is "FOCUS")."""
    out = os.path.join(tmp, "dump")
    config = os.path.join(golden, level, "config.json")
    if golden == GOLDEN:
        with open(config) as f:
            settings = json.load(f)
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump(dict(settings, risk_level="ALL"), f)
    with Tprobed(tprobed_binary(), tmp) as daemon:
        subprocess.run(
            [sys.executable, SCRIPT, "--tool", "tprobe", "--config",
             config, "--dump-path", out, "--steps", "2"],
            env=daemon.env(**env), check=True, timeout=600,
            stdout=subprocess.DEVNULL)
        if daemon.stop() != 0:
            raise AssertionError("tprobed failed: " + daemon.log())
    return out


@unittest.skipUnless(TORCH_1_13, "the golden trees come from PyTorch 1.13")
class GoldenTest(unittest.TestCase):
    trees = {}

    @classmethod
    def tree(cls, level: str) -> str:
        if level not in cls.trees:
            tmp = fresh_dir("tp-golden-")
            cls.trees[level] = run_tiny_gpt(level, tmp,
                                            TPROBE_API_LIST=API_LIST)
        return cls.trees[level]

    def check_level(self, level: str) -> None:
        out = self.tree(level)
        for step in (0, 1):
            with self.subTest(step=step):
                mine = os.path.join(out, f"step{step}", "rank")
                golden = os.path.join(GOLDEN, level, f"step{step}", "rank")
                errors, _ = golden_compare.compare_tree(golden, mine)
                self.assertEqual(errors, [], f"{level} step{step}")
                with open(os.path.join(mine, "tprobe.json")) as f:
                    self.assertTrue(json.load(f)["complete"])
                data = golden_compare.load(mine, "dump.json")["data"]
                additions = [n for n in data if golden_compare.is_addition(n)]
                if level == "L1":
                    self.assertEqual(additions, [])
                    construct = golden_compare.load(mine, "construct.json")
                    self.assertEqual(construct, {})
                else:
                    # One backward entry per module call (18 calls per step).
                    self.assertEqual(len(additions), 18, additions)
                    self.assertIn("Module.blocks.0.Block.backward.0",
                                  additions)

    def test_l0(self) -> None:
        self.check_level("L0")

    def test_l1(self) -> None:
        self.check_level("L1")

    def test_mix(self) -> None:
        self.check_level("mix")

    def construct_order_notes(self, level: str) -> list:
        notes = []
        for step in (0, 1):
            where = os.path.join(f"step{step}", "rank")
            notes += golden_compare.compare_construct(
                golden_compare.load(os.path.join(GOLDEN, level, where),
                                    "construct.json"),
                golden_compare.load(os.path.join(self.tree(level), where),
                                    "construct.json"))[1]
        return notes

    def test_l0_construct_key_order(self) -> None:
        self.assertEqual(self.construct_order_notes("L0"), [])

    def test_mix_construct_key_order(self) -> None:
        """msprobe inserts a module's construct node only after the next
        API node of its thread (or at its data); tprobed holds module nodes
        back the same way (daemon/drain.h)."""
        self.assertEqual(self.construct_order_notes("mix"), [])

if __name__ == "__main__":
    unittest.main()
