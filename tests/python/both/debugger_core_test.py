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
- level L2 is refused at construction with no instance left;
- the adapter plugs in by its descriptor (PrecisionDebugger.FRAMEWORK):
  its name, value encoding, risk_level rule and reducers are its own, and
  importing it (or the core alone) loads no other adapter.

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
    Tprobed, fresh_dir, python_path, tprobed_binary)

SCENARIO = os.path.join(HERE,
                        "debugger_core_scenario.py")
CLI = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")


# Prints what a fresh process sees after importing argv[1]: the adapters
# loaded, and the descriptor of argv[1]'s PrecisionDebugger when it has one.
_PROBE = """
import json, sys
module = __import__(sys.argv[1], fromlist=["*"])
fw = getattr(getattr(module, "PrecisionDebugger", None), "FRAMEWORK", None)
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if m in (
        "torch", "mindspore", "tprobe.torch", "tprobe.mindspore")),
    "descriptor": fw and [fw.name, fw.encoding.name, fw.risk_level_applies,
                          sorted(fw.load_reducers())],
}))
"""


def probe(module: str) -> dict:
    """What importing `module` in a fresh process loads (_PROBE)."""
    env = dict(os.environ, PYTHONPATH=python_path(), GLOG_v="3")
    run = subprocess.run([sys.executable, "-c", _PROBE, module], env=env,
                         timeout=120, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if run.returncode != 0:
        raise AssertionError(run.stderr[-4000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


class Lifecycle:
    """The cases, for the framework named by FRAMEWORK."""

    FRAMEWORK = ""
    API = ""  # the name base of the scenario's sin() call
    # PrecisionDebugger.FRAMEWORK's name, encoding, risk_level rule and
    # reducers; and which of the frameworks and adapters importing the
    # adapter loads.
    DESCRIPTOR: list = []
    LOADED: list = []

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
        # Out of the unrecorded step 2 on PyTorch (tprobe.torch.hook_switch;
        # hook_suspension_test sees them back at a recorded step).
        back.pop("modules", None)
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

    def test_the_adapter_plugs_in_by_its_descriptor_alone(self) -> None:
        seen = probe(f"tprobe.{self.FRAMEWORK}")
        self.assertEqual(seen["descriptor"], self.DESCRIPTOR)
        self.assertEqual(seen["loaded"], self.LOADED)
        # The core, session set-up and statistics included, loads neither.
        for module in ("tprobe._common.debugger",
                       "tprobe._common.producer_stats"):
            self.assertEqual(probe(module),
                             {"loaded": [], "descriptor": None})


class TorchLifecycleTest(Lifecycle, unittest.TestCase):
    FRAMEWORK = "torch"
    API = "Torch.sin"
    DESCRIPTOR = ["pytorch", "TORCH", True,
                  ["bytes", "crc", "statistics", "xor"]]
    LOADED = ["torch", "tprobe.torch"]


@unittest.skipIf(importlib.util.find_spec("mindspore") is None,
                 "mindspore is not installed in this Python")
class MindSporeLifecycleTest(Lifecycle, unittest.TestCase):
    FRAMEWORK = "mindspore"
    API = "Functional.sin"
    DESCRIPTOR = ["mindspore", "MINDSPORE", False, ["statistics", "xor"]]
    LOADED = ["mindspore", "tprobe.mindspore"]


if __name__ == "__main__":
    unittest.main()
