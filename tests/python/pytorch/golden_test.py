"""examples/train_tiny_gpt.py --tool tprobe against msprobe 8.3.3, at L0,
L1 and mix, through a real tprobed:

- the structure against the stored golden trees (tests/data/golden/): entry
  names and order, keys, dtypes, shapes, construct.json, stack.json;
- the statistics against msprobe 8.3.3 itself, run on this machine in this
  run on the same script and seed (TPROBE_MSPROBE_833, which deploy/venv.sh
  fills): a stored Max is exact only on the processor that made it.

golden_compare.py states what must match and which differences are accepted
(module backward entries as additions, parameters_grad index reset).
"""

import copy
import importlib.metadata
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import golden_compare  # noqa: E402
from parity import rank_dir  # noqa: E402
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
# msprobe 8.3.3's API names: tprobe hooks what made the golden trees.
API_LIST = os.path.join(GOLDEN, "support_wrap_ops.yaml")
# The golden trees are PyTorch 1.13's: other versions run other kernels (the
# last bits of Max/Min differ) and AdamW makes other calls (lerp_).
TORCH_1_13 = importlib.metadata.version("torch").startswith("1.13")
# msprobe 8.3.3's package directory (`pip install --no-deps --target`, with
# einops; its other dependencies are Debian's, deploy/setup.sh).
MSPROBE_833 = os.environ.get("TPROBE_MSPROBE_833") or os.path.join(
    ROOT, ".venv", "msprobe833")


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


def run_msprobe(level: str, tmp: str, golden: str,
                package_dir: Optional[str] = None) -> str:
    """The same script, seed and config under msprobe, on this machine:
    the reference for the statistics. ``package_dir``: where msprobe is
    (8.3.3), else the installed one. Returns the dump path."""
    out = os.path.join(tmp, "msprobe")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if package_dir:
        env["PYTHONPATH"] = package_dir
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--tool", "msprobe", "--config",
         os.path.join(golden, level, "config.json"), "--dump-path", out,
         "--steps", "2"],
        env=env, timeout=600, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"msprobe failed: {proc.stdout[-3000:]}")
    return out


def first_statistic(data: dict) -> tuple:
    """(entry name, the tensor dict) of the first float tensor with a
    finite, nonzero Max in a dump.json's data."""
    def tensors(value):
        if isinstance(value, dict):
            if value.get("type") == "torch.Tensor":
                yield value
            else:
                for v in value.values():
                    yield from tensors(v)
        elif isinstance(value, list):
            for v in value:
                yield from tensors(v)
    for name, entry in data.items():
        for tensor in tensors(entry):
            if (tensor.get("dtype") == "torch.float32"
                    and isinstance(tensor.get("Max"), float)
                    and tensor["Max"] != 0.0):
                return name, tensor
    raise AssertionError("no float32 tensor with a nonzero Max")


class PlantedErrors:
    """The checks catch a wrong value: a statistic one float32 ulp off, a
    Mean far outside rounding, and a wrong shape. Mixed into the golden
    tests, which pass the (stored, live reference, tprobe) step
    directories."""

    def check_planted(self, stored: str, live: str, mine: str) -> None:
        reference = golden_compare.load(live, "dump.json")
        dump = golden_compare.load(mine, "dump.json")
        self.assertEqual(golden_compare.compare_values(reference, dump), [])
        bad = copy.deepcopy(dump)
        name, tensor = first_statistic(bad["data"])
        bits = struct.unpack("<I", struct.pack("<f", tensor["Max"]))[0]
        tensor["Max"] = struct.unpack("<f", struct.pack("<I", bits + 1))[0]
        tensor["Mean"] = tensor["Mean"] * 1.001 + 1e-3
        errors = golden_compare.compare_values(reference, bad)
        self.assertEqual(len(errors), 2, errors)
        self.assertTrue(errors[0].startswith(name) and ".Max:" in errors[0],
                        errors)
        self.assertIn(".Mean:", errors[1])
        # The structure check against the stored tree: a wrong shape.
        planted = os.path.join(fresh_dir("tp-planted-"), "rank")
        shutil.copytree(mine, planted)
        bad = copy.deepcopy(dump)
        first_statistic(bad["data"])[1]["shape"].append(1)
        with open(os.path.join(planted, "dump.json"), "w") as f:
            json.dump(bad, f, indent=1)
        errors, _ = golden_compare.compare_tree(stored, planted, values=False)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn(".shape:", errors[0])


@unittest.skipUnless(TORCH_1_13, "the golden trees come from PyTorch 1.13")
@unittest.skipUnless(os.path.isdir(os.path.join(MSPROBE_833, "msprobe")),
                     f"no msprobe 8.3.3 in {MSPROBE_833} (deploy/venv.sh "
                     f"installs it): the statistics need a live reference")
class GoldenTest(PlantedErrors, unittest.TestCase):
    trees = {}
    references = {}

    @classmethod
    def tree(cls, level: str) -> str:
        if level not in cls.trees:
            tmp = fresh_dir("tp-golden-")
            cls.trees[level] = run_tiny_gpt(level, tmp,
                                            TPROBE_API_LIST=API_LIST)
        return cls.trees[level]

    @classmethod
    def reference(cls, level: str) -> str:
        if level not in cls.references:
            cls.references[level] = run_msprobe(
                level, fresh_dir("tp-golden-ref-"), GOLDEN, MSPROBE_833)
        return cls.references[level]

    def check_level(self, level: str) -> None:
        out = self.tree(level)
        for step in (0, 1):
            with self.subTest(step=step):
                mine = os.path.join(out, f"step{step}", "rank")
                golden = os.path.join(GOLDEN, level, f"step{step}", "rank")
                errors, _ = golden_compare.compare_tree(golden, mine,
                                                        values=False)
                self.assertEqual(errors, [], f"{level} step{step}")
                live = rank_dir(os.path.join(self.reference(level),
                                             f"step{step}"))
                errors = golden_compare.compare_values(
                    golden_compare.load(live, "dump.json"),
                    golden_compare.load(mine, "dump.json"))
                self.assertEqual(errors, [], f"{level} step{step} values")
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

    def test_planted_wrong_statistic_is_caught(self) -> None:
        self.check_planted(os.path.join(GOLDEN, "mix", "step0", "rank"),
                           rank_dir(os.path.join(self.reference("mix"),
                                                 "step0")),
                           os.path.join(self.tree("mix"), "step0", "rank"))

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
        back the same way (daemon/ingest/drain.h)."""
        self.assertEqual(self.construct_order_notes("mix"), [])

if __name__ == "__main__":
    unittest.main()
