"""A selected step that writes no entry says why, once: one line on the
trainer's stderr per cause (not per step), and tprobe.json's why_empty in
the step's tree (docs/failure.md, "An empty dump"). Each cause runs a tiny
PyTorch model for three steps against a real tprobed, in a process of its
own (a cause is said once per process).

Where no tree is written (a rank not in "rank", dump_enable false) the
stderr line alone says it, and no step folder appears, as with msprobe
(run live in the same test where it is installed: it writes the same
folders, and says nothing).
"""

import glob
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (Tprobed, fresh_dir,  # noqa: E402
                             tprobed_binary, wait_until)

STEPS = 3
HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None

# argv: config path, dump path, how start() is called: "model" (start with
# the model, run it), "no_model" (start() alone, run it), "outside" (start
# and stop, then run the model outside them), "no_step" (one start() and
# stop(), and the process exits without step()); the tool.
SCRIPT = textwrap.dedent("""
    import sys, torch, torch.nn as nn
    config, dump, how, tool = sys.argv[1:5]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    d = PrecisionDebugger(config_path=config, dump_path=dump)
    x = torch.randn(5, 4)
    for _ in range(1 if how == "no_step" else {steps}):
        d.start(model if how != "no_model" else None)
        if how == "outside":
            d.stop()
        model(x).sum().backward()
        if how != "outside":
            d.stop()
        if how != "no_step":
            d.step()
    if tool == "tprobe" and how != "no_step":
        assert d.session.flush(30000)
""").format(steps=STEPS)

NO_ENTRY = "wrote no entry"


class EmptyDumpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-empty-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def run_case(self, name: str, config: dict, how: str = "model",
                 tool: str = "tprobe", **env: str) -> tuple:
        """Runs SCRIPT; returns (its stderr, the dump path)."""
        name = f"{tool}-{name}"
        dump = os.path.join(self.tmp, name)
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump({"task": "statistics", **config}, f)
        run = subprocess.run([sys.executable, "-c", SCRIPT, path, dump, how,
                              tool],
                             env=self.daemon.env(**env), timeout=600,
                             text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        return run.stderr, dump

    def accounting(self, dump: str) -> list:
        """tprobe.json of each step, in step order."""
        out = []
        for step in range(STEPS):
            with open(os.path.join(dump, f"step{step}", "rank",
                                   "tprobe.json")) as f:
                out.append(json.load(f))
        return out

    def assert_said_once(self, stderr: str, line: str) -> None:
        lines = [x for x in stderr.splitlines() if line in x]
        self.assertEqual(len(lines), 1, stderr)

    def assert_no_step_folder(self, dump: str) -> None:
        folders = os.listdir(dump) if os.path.exists(dump) else []
        self.assertEqual([f for f in folders if f.startswith("step")], [])

    def assert_why_empty(self, dump: str, why: str) -> None:
        for accounting in self.accounting(dump):
            self.assertEqual(accounting["entries"], 0, accounting)
            self.assertEqual(accounting["why_empty"], why, accounting)
            self.assertTrue(accounting["complete"], accounting)
        self.assertEqual(sorted(os.listdir(dump)),
                         [f"step{s}" for s in range(STEPS)])

    def test_a_step_with_entries_says_nothing(self) -> None:
        stderr, dump = self.run_case("clean", {"level": "L1"})
        self.assertNotIn(NO_ENTRY, stderr)
        for accounting in self.accounting(dump):
            self.assertGreater(accounting["entries"], 0)
            self.assertNotIn("why_empty", accounting)

    def test_scope_or_list_matching_nothing(self) -> None:
        stderr, dump = self.run_case(
            "list", {"level": "L1",
                     "statistics": {"list": ["no_such_api"]}})
        self.assert_said_once(
            stderr, "[tprobe] step 0 wrote no entry: config.json's "
            "\"scope\"/\"list\" matched none of the calls that ran")
        self.assertEqual(stderr.count(NO_ENTRY), 1, stderr)
        self.assert_why_empty(dump, "scope_list")
        if HAS_MSPROBE:
            # msprobe 26.2 writes the same steps, with no entry.
            _, theirs = self.run_case(
                "list", {"level": "L1",
                         "statistics": {"list": ["no_such_api"]}},
                tool="msprobe")
            self.assertEqual(sorted(os.listdir(theirs)),
                             sorted(os.listdir(dump)))
            for path in glob.glob(os.path.join(theirs, "step*", "*",
                                               "dump.json")):
                with open(path) as f:
                    self.assertEqual(json.load(f)["data"], {})

    def test_a_rank_that_never_calls_step_says_it_at_exit(self) -> None:
        stderr, dump = self.run_case(
            "no_step", {"level": "L1",
                        "statistics": {"list": ["no_such_api"]}},
            how="no_step")
        self.assert_said_once(stderr, "[tprobe] step 0 wrote no entry")
        path = os.path.join(dump, "step0", "rank", "tprobe.json")

        def closed() -> bool:
            # The goodbye is read within exit_timeout_ms of the exit.
            try:
                with open(path) as f:
                    return not json.load(f)["step_open"]
            except (OSError, ValueError):
                return False

        wait_until(closed, 30, "step0 written at the rank's exit")
        with open(path) as f:
            accounting = json.load(f)
        self.assertEqual(accounting["entries"], 0, accounting)
        self.assertEqual(accounting["why_empty"], "scope_list", accounting)

    def test_no_model_at_l0(self) -> None:
        stderr, dump = self.run_case("no_model", {"level": "L0"},
                                     how="no_model")
        self.assert_said_once(
            stderr, "[tprobe] level L0 needs a model: pass it to start(); "
            "no module or cell is dumped")
        self.assertNotIn(NO_ENTRY, stderr)  # the line above says it
        self.assert_why_empty(dump, "no_model")

    def test_no_api_called_at_l1(self) -> None:
        stderr, dump = self.run_case("no_api", {"level": "L1"},
                                     how="outside")
        self.assert_said_once(
            stderr, "[tprobe] step 0 wrote no entry: level L1 dumps API "
            "calls and none ran between start() and stop()")
        self.assertEqual(stderr.count(NO_ENTRY), 1, stderr)
        self.assert_why_empty(dump, "no_api")

    def test_no_module_called_at_l0(self) -> None:
        stderr, dump = self.run_case("no_calls", {"level": "L0"},
                                     how="outside")
        self.assert_said_once(
            stderr, "[tprobe] step 0 wrote no entry: no module call ran "
            "between start() and stop()")
        self.assert_why_empty(dump, "no_calls")

    def test_rank_not_in_rank(self) -> None:
        stderr, dump = self.run_case("rank", {"level": "L1", "rank": [1]},
                                     RANK="0")
        self.assert_said_once(
            stderr, "[tprobe] rank 0 is not in config.json's \"rank\" list: "
            "it dumps nothing and writes no step folder")
        self.assertNotIn(NO_ENTRY, stderr)
        self.assert_no_step_folder(dump)
        if HAS_MSPROBE:
            # msprobe 26.2 writes nothing either (its rank without
            # torch.distributed is None, in no list).
            _, theirs = self.run_case(
                "rank", {"level": "L1", "rank": [1]}, tool="msprobe",
                RANK="0")
            self.assert_no_step_folder(theirs)

    def test_dump_enable_off(self) -> None:
        stderr, dump = self.run_case(
            "disabled", {"level": "L1", "dump_enable": False})
        self.assert_said_once(
            stderr, "[tprobe] config.json's dump_enable is false: start() "
            "dumps nothing and no step folder is written until it turns "
            "true")
        self.assertNotIn(NO_ENTRY, stderr)
        self.assert_no_step_folder(dump)


if __name__ == "__main__":
    unittest.main()
