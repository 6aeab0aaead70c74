"""Modules that return containers, as third-party models do
(container_model.py: a dict with a bool mask among its values, a
HuggingFace-style ModelOutput, a plain dataclass), under the installed
msprobe 26.x and under tprobe with the same config, 2 steps, at L0 and mix,
on this machine in this run. The trees must agree: entry names in order,
keys, every value (statistics within float32 rounding), construct.json
parents and stack.json groups. That covers msprobe's rules for containers:

- a ModelOutput is a dataclass first: every field in declaration order,
  the unset ones null (not only the dict's items);
- a module whose output is a dict (a ModelOutput included) has a backward
  entry, its input the gradients of the dict's tensors that need one, in
  order; a plain dataclass output gives none;
- a backward entry lists only the tensors that need a gradient: the bool
  mask beside them has no slot (not ``[grad, null]``);
- summary_mode xor: msprobe's checksum under "md5", bit for bit, in place of
  the statistics;
- task structure: dump.json's data is {}, construct.json and stack.json as
  msprobe writes them.

It runs the project's virtual environment (torch 2.13, mindstudio-probe
26.x).
"""

import importlib.util
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import golden_compare  # noqa: E402
from parity import rank_dir, write_config  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

MODEL = os.path.join(HERE,
                     "container_model.py")
HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None


def run_model(tool: str, config: str, out: str, env: dict) -> None:
    proc = subprocess.run(
        [sys.executable, MODEL, "--tool", tool, "--config", config,
         "--dump-path", out, "--steps", "2"],
        env=env, timeout=600, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{tool} failed: {proc.stdout[-3000:]}")


def tensors(value, path: str):
    """(path, tensor dict) of every tensor in an entry's value."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            yield path, value
        else:
            for key, item in value.items():
                yield from tensors(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from tensors(item, f"{path}[{i}]")


@unittest.skipUnless(HAVE_MSPROBE, "needs mindstudio-probe 26.x (the "
                     "project's virtual environment)")
class ContainerParityTest(unittest.TestCase):
    def trees(self, level: str, summary_mode: str = "statistics",
              task: str = "statistics") -> tuple:
        """(msprobe's dump path, tprobe's) for ``level``."""
        tmp = fresh_dir("tp-containers-")
        settings = {"task": task, "level": level, "rank": [], "step": []}
        if task == "statistics":
            settings["statistics"] = {"summary_mode": summary_mode}
        config = write_config(os.path.join(tmp, "config.json"), settings)
        reference = os.path.join(tmp, "msprobe")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run_model("msprobe", config, reference, env)
        mine = os.path.join(tmp, "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run_model("tprobe", config, mine, daemon.env())
            if daemon.stop() != 0:
                raise AssertionError("tprobed failed: " + daemon.log())
        return reference, mine

    def check_level(self, level: str) -> None:
        reference, mine = self.trees(level)
        for step in (0, 1):
            ref_dir = rank_dir(os.path.join(reference, f"step{step}"))
            my_dir = os.path.join(mine, f"step{step}", "rank")
            self.assertEqual(golden_compare.compare_live_tree(ref_dir, my_dir),
                             [], f"{level} step{step}")
            data = golden_compare.load(my_dir, "dump.json")
            # What the comparison stands on, named: it must not pass
            # because both trees lack these.
            entries = data["data"]
            block = entries["Module.head.block.Block.forward.0"]
            self.assertEqual(list(block["output"][0]),
                             ["last_hidden_state", "hidden_states",
                              "attentions"])
            self.assertIsNone(block["output"][0]["attentions"])
            encoder = entries["Module.head.block.encoder.Encoder.backward.0"]
            self.assertEqual(len(encoder["input"]), 2)
            self.assertEqual(len(encoder["output"]), 1, "the mask's slot")
            self.assertIn("Module.head.block.Block.backward.0", entries)
            self.assertNotIn("Module.head.Head.backward.0", entries)

    def test_xor_checksums_are_msprobes_bit_for_bit(self) -> None:
        reference, mine = self.trees("mix", "xor")
        for step in (0, 1):
            ref = golden_compare.load(
                rank_dir(os.path.join(reference, f"step{step}")), "dump.json")
            data = golden_compare.load(
                os.path.join(mine, f"step{step}", "rank"), "dump.json")
            self.assertEqual(
                golden_compare.compare_dump(ref, data, values=False), [],
                f"step{step}")
            sums = {}
            for name, entry in ref["data"].items():
                for path, tensor in tensors(entry, name):
                    sums[path] = tensor.get("md5")
            mine_sums = {}
            for name, entry in data["data"].items():
                for path, tensor in tensors(entry, name):
                    mine_sums[path] = tensor.get("md5")
            self.assertEqual(mine_sums, sums, f"step{step}")
            # Checksums of every shape were compared: hex words and the
            # value of a 0-d tensor (the loss).
            self.assertTrue(any(isinstance(v, str) and v.startswith("0x")
                                for v in sums.values()), sums)
            self.assertTrue(any(isinstance(v, float) for v in sums.values()),
                            sums)

    def test_task_structure_writes_the_hierarchy_and_no_data(self) -> None:
        reference, mine = self.trees("mix", task="structure")
        for step in (0, 1):
            ref_dir = rank_dir(os.path.join(reference, f"step{step}"))
            my_dir = os.path.join(mine, f"step{step}", "rank")
            ref = golden_compare.load(ref_dir, "dump.json")
            data = golden_compare.load(my_dir, "dump.json")
            self.assertEqual(data, ref)
            self.assertEqual(data["data"], {})
            construct, _ = golden_compare.compare_construct(
                golden_compare.load(ref_dir, "construct.json"),
                golden_compare.load(my_dir, "construct.json"))
            self.assertEqual(construct, [], f"step{step}")
            self.assertEqual(golden_compare.compare_stack(
                golden_compare.load(ref_dir, "stack.json"),
                golden_compare.load(my_dir, "stack.json")), [])
            self.assertIn("Module.head.block.Block.forward.0",
                          golden_compare.load(my_dir, "construct.json"))

    def test_l0(self) -> None:
        self.check_level("L0")

    def test_mix(self) -> None:
        self.check_level("mix")


if __name__ == "__main__":
    unittest.main()
