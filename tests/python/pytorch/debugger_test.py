"""PrecisionDebugger's msprobe semantics, each scenario in its own process
(the debugger is a process-wide singleton) against one real tprobed: a list
of models, the list filter with data_mode, configured steps, the singleton,
and a bad config.
"""

import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

# Trains two tiny models for 3 steps with the config given as argv[1] and
# prints the debugger's identity checks.
_SCENARIO = textwrap.dedent("""
    import json, sys, torch, torch.nn as nn
    from tprobe.torch import PrecisionDebugger
    d = PrecisionDebugger(config_path=sys.argv[1])
    print("SINGLETON", PrecisionDebugger(level="L1") is d)
    torch.manual_seed(0)
    m0 = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    m1 = nn.Sequential(nn.Linear(4, 2), nn.Tanh())
    for step in range(3):
        d.start([m0, m1])
        y = m1(torch.relu(m0(torch.randn(3, 4))))
        y.sum().backward()
        d.stop()
        d.step()
    print("FLUSHED", d.session.flush(30000))
""")


class DebuggerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-debugger-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def scenario(self, name: str, config: dict) -> str:
        path = os.path.join(self.tmp, f"{name}.json")
        config = dict(config, dump_path=os.path.join(self.tmp, name))
        with open(path, "w") as f:
            json.dump(config, f)
        run = subprocess.run([sys.executable, "-c", _SCENARIO, path],
                             env=self.daemon.env(), timeout=300, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("SINGLETON True", run.stdout)
        self.assertIn("FLUSHED True", run.stdout)
        return os.path.join(self.tmp, name)

    def load(self, root: str, step: int, name: str):
        with open(os.path.join(root, f"step{step}", "rank", name)) as f:
            return json.load(f)

    def test_a_list_of_models_is_numbered(self) -> None:
        root = self.scenario("models", {"task": "statistics", "level": "L0"})
        data = self.load(root, 2, "dump.json")["data"]
        self.assertEqual([n for n in data if ".forward." in n], [
            "Module.0.0.Linear.forward.0", "Module.0.1.ReLU.forward.0",
            "Module.1.0.Linear.forward.0", "Module.1.1.Tanh.forward.0"])
        self.assertIn("Module.1.0.Linear.parameters_grad.0", data)

    def test_list_and_data_mode_filter(self) -> None:
        root = self.scenario("filtered", {
            "task": "statistics", "level": "mix",
            "statistics": {"list": ["relu", "Module.1."],
                           "data_mode": ["forward"]}})
        data = self.load(root, 0, "dump.json")["data"]
        self.assertEqual(list(data), [
            "Functional.relu.0.forward", "Torch.relu.0.forward",
            "Functional.linear.1.forward", "Module.1.0.Linear.forward.0",
            "Torch.tanh.0.forward", "Module.1.1.Tanh.forward.0"])
        # Filtered calls still count, and still show in construct.json.
        construct = self.load(root, 0, "construct.json")
        self.assertEqual(construct["Functional.linear.0.forward"],
                         "Module.0.0.Linear.forward.0")

    def test_configured_steps_only(self) -> None:
        root = self.scenario("steps", {"task": "statistics", "level": "L1",
                                       "step": [1]})
        self.assertEqual(sorted(os.listdir(root)), ["step1"])

    def test_bad_config_raises_at_construction(self) -> None:
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "w") as f:
            json.dump({"task": "statistics", "level": "L3"}, f)
        run = subprocess.run(
            [sys.executable, "-c",
             "import sys\nfrom tprobe.torch import PrecisionDebugger\n"
             "try:\n    PrecisionDebugger(config_path=sys.argv[1])\n"
             "except ValueError as e:\n    print('VALUE ERROR', e)\n", path],
            env=self.daemon.env(), timeout=120, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertIn("VALUE ERROR config:", run.stdout, run.stderr)
        self.assertIn("level", run.stdout)


if __name__ == "__main__":
    unittest.main()
