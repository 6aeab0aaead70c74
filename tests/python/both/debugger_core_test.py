"""The debugger lifecycle both adapters share (tprobe._common.debugger),
checked the same way for PyTorch and MindSpore: each case of
debugger_core_scenario.py runs a small real model in its own process
against a real tprobed (and, for live configs, the real tprobe CLI), and
the test reads what the process saw and the tree the daemon wrote:

- a rank known only after the debugger was made is followed (rank0/ for
  torch.distributed, rank5/ for $RANK_ID), nothing is left in rank/;
- a child forked inside a recorded step records nothing: its hooks are
  off, its session's counters do not move, no entry of its call is in the
  tree (a MindSpore child runs no kernel, see the scenario);
- after the last configured step every hook is removed and every patched
  function put back; a live config naming a later step puts them back
  and that step is recorded;
- a live level change installs the API hooks at the step boundary;
- level L2 is refused at construction with no instance left.

The MindSpore cases are skipped where mindspore does not import (Debian's
python3).
"""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, tprobed_binary)

SCENARIO = os.path.join(HERE,
                        "debugger_core_scenario.py")
CLI = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")


class Lifecycle:
    """The cases, for the framework named by FRAMEWORK."""

    FRAMEWORK = ""
    API = ""  # the name base of the scenario's sin() call

    def scenario(self, case: str) -> dict:
        """Runs one case; returns what it printed and keeps the dump root
        in self.dump."""
        work = fresh_dir("tp-core-")
        self.dump = os.path.join(work, "dump")
        with Tprobed(tprobed_binary(), work) as daemon:
            env = daemon.env(OMP_NUM_THREADS="1", GLOG_v="3")
            for name in ("RANK", "RANK_ID", "LOCAL_RANK", "WORLD_SIZE"):
                env.pop(name, None)  # the rank is set only where asked
            run = subprocess.run(
                [sys.executable, SCENARIO, self.FRAMEWORK, case, work, CLI],
                env=env, timeout=300, text=True, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
            self.daemon_rc = daemon.stop()
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])
        self.assertEqual(self.daemon_rc, 0)
        self.stderr = run.stderr
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertTrue(seen["flushed"])
        return seen

    def steps(self) -> list:
        return sorted(os.listdir(self.dump))

    def names(self, step: int, rank: str = "rank") -> list:
        with open(os.path.join(self.dump, f"step{step}", rank,
                               "dump.json")) as f:
            return list(json.load(f)["data"])

    def test_a_late_rank_is_followed(self) -> None:
        seen = self.scenario("rank")
        rank = 0 if self.FRAMEWORK == "torch" else 5
        self.assertEqual((seen["rank_before"], seen["rank_after"]),
                         (-1, rank))
        self.assertEqual(os.listdir(os.path.join(self.dump, "step0")),
                         [f"rank{rank}"])
        self.assertIn(f"{self.API}.0.forward",
                      self.names(0, f"rank{rank}"))

    def test_a_forked_child_records_nothing(self) -> None:
        seen = self.scenario("fork")
        self.assertEqual(seen["child_status"], 0)
        child = seen["child"]
        self.assertFalse(child["on"])
        self.assertEqual(child["before"], child["after"])
        self.assertEqual(self.steps(), ["step0", "step1"])
        for step in (0, 1):
            names = self.names(step)
            self.assertIn(f"{self.API}.0.forward", names)
            self.assertFalse([n for n in names if ".cos." in n], names)

    def test_hooks_go_after_the_last_step_and_come_back(self) -> None:
        seen = self.scenario("end")
        untouched = seen["untouched"]
        self.assertFalse(any(untouched.values()), untouched)
        self.assertTrue(all(seen["step0"].values()), seen["step0"])
        self.assertEqual(seen["ended"], untouched)
        self.assertEqual(seen["configure"], 0)
        back = dict(seen["back"])
        back.pop("grads", None)  # added only by a recorded backward
        self.assertTrue(all(back.values()), seen["back"])
        self.assertIn("the configured steps are done", self.stderr)
        self.assertEqual(self.steps(), ["step0", "step3"])
        for step in (0, 3):
            self.assertIn(f"{self.API}.0.forward", self.names(step))

    def test_a_live_level_installs_api_hooks(self) -> None:
        seen = self.scenario("level")
        self.assertFalse(seen["l0"]["api"])
        self.assertEqual(seen["configure"], 0)
        self.assertTrue(seen["mix"]["api"])
        self.assertFalse([n for n in self.names(0)
                          if n.startswith(self.API)])
        self.assertIn(f"{self.API}.0.forward", self.names(1))

    def test_level_l2_is_refused(self) -> None:
        seen = self.scenario("l2")
        first, gone1, second, gone2 = seen["refused"]
        for message in (first, second):
            self.assertIsNotNone(message)
            self.assertIn("level is invalid", message)
            self.assertIn("L2", message)
        self.assertTrue(gone1 and gone2)
        self.assertTrue(seen["made"])
        self.assertFalse(any(seen["untouched"].values()))
        self.assertTrue(seen["after"]["api"])
        self.assertIn(f"{self.API}.0.forward", self.names(0))


class TorchLifecycleTest(Lifecycle, unittest.TestCase):
    FRAMEWORK = "torch"
    API = "Torch.sin"


@unittest.skipIf(importlib.util.find_spec("mindspore") is None,
                 "mindspore is not installed in this Python")
class MindSporeLifecycleTest(Lifecycle, unittest.TestCase):
    FRAMEWORK = "mindspore"
    API = "Functional.sin"


if __name__ == "__main__":
    unittest.main()
