"""torchrun --nproc_per_node=2 (gloo, CPU) of examples/torchrun_example.py
with one real tprobed: each rank writes its own rank{R}/ directory, and the
Distributed.* calls are recorded with their inputs before and outputs after
the collective.
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "torchrun_example.py")


def torchrun() -> list:
    launcher = shutil.which("torchrun")
    base = [launcher] if launcher else [sys.executable, "-m",
                                        "torch.distributed.run"]
    # PyTorch 1.13's launcher cannot parse --redirects/--tee 0 (its default)
    # on Python 3.11 (enum iteration skips Std.NONE), so ask for 2 (stderr).
    return base + ["--standalone", "--nproc_per_node=2", "--redirects", "2",
                   "--tee", "2"]


class TorchrunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-dist-")
        cls.dump = os.path.join(cls.tmp, "dump")
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            cls.proc = subprocess.run(
                torchrun() + [SCRIPT, "--level", "mix", "--dump-path",
                              cls.dump, "--steps", "2"],
                env=daemon.env(OMP_NUM_THREADS="1"), cwd=cls.tmp, timeout=600,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            cls.daemon_rc = daemon.stop()
            cls.daemon_log = daemon.log()

    def load(self, step: int, rank: int, name: str):
        path = os.path.join(self.dump, f"step{step}", f"rank{rank}", name)
        with open(path) as f:
            return json.load(f)

    def test_every_rank_writes_its_own_tree(self) -> None:
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout)
        self.assertEqual(self.daemon_rc, 0, self.daemon_log)
        for step in (0, 1):
            ranks = os.listdir(os.path.join(self.dump, f"step{step}"))
            self.assertEqual(sorted(ranks), ["rank0", "rank1"])
            for rank in (0, 1):
                accounting = self.load(step, rank, "tprobe.json")
                self.assertTrue(accounting["complete"])
                dump = self.load(step, rank, "dump.json")
                self.assertEqual(dump["level"], "mix")

    def test_collectives_are_recorded(self) -> None:
        for step in (0, 1):
            data = [self.load(step, rank, "dump.json")["data"]
                    for rank in (0, 1)]
            for i in range(4):  # one all_reduce per parameter
                name = f"Distributed.all_reduce.{i}.forward"
                mine, theirs = data[0][name], data[1][name]
                self.assertEqual(list(mine), ["input_args", "input_kwargs",
                                              "output"])
                # Each rank's own gradient goes in; the sum comes out.
                self.assertNotEqual(mine["input_args"][0]["Max"],
                                    theirs["input_args"][0]["Max"])
                self.assertEqual(mine["output"][0]["Max"],
                                 theirs["output"][0]["Max"])
                self.assertEqual(mine["output"][0]["Norm"],
                                 theirs["output"][0]["Norm"])
            gather = data[0]["Distributed.all_gather.0.forward"]
            self.assertEqual([t["shape"] for t in gather["output"][0]],
                             [[1], [1]])
            construct = self.load(step, 0, "construct.json")
            self.assertIsNone(construct["Distributed.all_reduce.0.forward"])
            self.assertEqual(construct["Functional.linear.0.forward"],
                             "Module.0.Linear.forward.0")


if __name__ == "__main__":
    unittest.main()
