"""Level "debug": PrecisionDebugger.save() into step{N}/rank{R}/debug.json.

One script saves a tensor (twice: counts per name), a list with scalars and
a nested tuple, a dict without its backward, and a scalar (and makes four
calls that both tools skip with a warning), over three steps
of which the config takes 0 and 2, for task statistics (summary_mode
statistics, md5) and task tensor (tprobe's .npy files against msprobe's
.pt files by content). tprobe's debug.json is checked for
itself (keys and order, the "_grad" entry right after its forward one,
statistics against torch, no stack.json or construct.json) and, where
msprobe 26.x is installed, against msprobe's on the same script: the same
keys in the same order, the same values (statistics to float32, md5
exact), for summary_mode statistics and md5.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from debug_json import (STATS, assert_same_debug, f32_close,  # noqa: E402
                        read_debug_trees)
from tprobed_fixture import (Tprobed, fresh_dir, python_path,  # noqa: E402
                             tprobed_binary)

HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None

# argv: tool, config path. Prints the torch statistics of y per step.
SCRIPT = textwrap.dedent("""
    import json, sys, torch
    tool, config_path = sys.argv[1:3]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    d = PrecisionDebugger(config_path=config_path)
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    stats = []
    for step in range(3):
        x = torch.randn(2, 4, requires_grad=True)
        y = lin(x)
        d.save(y, "y")
        d.save([x, 3, 2.5, (x * 2, True)], "lst")
        d.save({"a": y, "b": 7}, "d", save_backward=False)
        d.save(y * 3, "y")
        d.save(5, "scalar")
        # Skipped with a warning by both (msprobe's check_save_param).
        d.save(None, "none")
        d.save({1: y}, "intkey")
        d.save(y, 3)
        d.save(y, "y", save_backward=1)
        y.sum().backward()
        stats.append([y.max().item(), y.min().item(), y.mean().item(),
                      y.norm().item()])
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
    print("STATS", json.dumps(stats))
""")

KEYS = ["y.0.debug", "y_grad.0.debug", "lst.0.debug", "lst_grad.0.debug",
        "d.0.debug", "y.1.debug", "y_grad.1.debug", "scalar.0.debug",
        "scalar_grad.0.debug"]
class DebugSaveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-dbgsave-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.__exit__(None, None, None)

    def run_tool(self, tool: str, mode: str) -> tuple:
        """{step dir: (rank dir, debug.json)}, torch's stats of y. Mode
        "tensor" is task tensor, else task statistics with that
        summary_mode."""
        dump = os.path.join(self.tmp, f"{tool}-{mode}")
        config = os.path.join(self.tmp, f"{tool}-{mode}.json")
        task = "tensor" if mode == "tensor" else "statistics"
        with open(config, "w") as f:
            json.dump({"task": task, "dump_path": dump, "rank": [],
                       "step": [0, 2], "level": "debug",
                       task: {} if mode == "tensor" else {
                           "summary_mode": mode}}, f)
        run = subprocess.run([sys.executable, "-c", SCRIPT, tool, config],
                             env=self.daemon.env(), timeout=600, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        if tool == "tprobe":
            skipped = [line for line in run.stderr.splitlines()
                       if line.startswith("[tprobe] PrecisionDebugger.save: ")]
            # Four refused calls in each of the three steps: msprobe checks
            # the arguments before the step list.
            self.assertEqual(len(skipped), 12, run.stderr[-3000:])
            self.assertIn("save_backward must be a bool, got 1; this save "
                          "is skipped", skipped[-1])
        stats = json.loads(run.stdout.split("STATS ", 1)[1])
        return read_debug_trees(dump), stats

    def assert_same(self, mine, theirs, path: str) -> None:
        def data_name(a, b, where):
            # tprobe writes .npy where msprobe writes .pt.
            self.assertEqual(a[:-len(".npy")], b[:-len(".pt")], where)
        assert_same_debug(self, mine, theirs, path, data_name)

    def check_mode(self, mode: str) -> None:
        mine, stats = self.run_tool("tprobe", mode)
        self.assertEqual(list(mine), ["step0", "step2"])
        for step, (rank, doc) in mine.items():
            self.assertEqual(sorted(os.listdir(rank)),
                             sorted(["debug.json", "tprobe.json"]
                                    + (["dump_tensor_data"]
                                       if mode == "tensor" else [])))
            self.assertEqual(list(doc)[:5], ["task", "level", "framework",
                                             "dump_data_dir", "data"])
            self.assertEqual(doc["level"], "debug")
            if mode == "tensor":
                self.assertEqual(doc["dump_data_dir"],
                                 os.path.join(rank, "dump_tensor_data"))
                self.check_files(rank, doc["data"])
            else:
                self.assertIsNone(doc["dump_data_dir"])
            data = doc["data"]
            self.assertEqual(list(data), KEYS, step)
            y = data["y.0.debug"]
            want = stats[int(step[4:])]
            for key, value in zip(STATS, want):
                self.assertTrue(f32_close(y[key], value), (key, y[key]))
            self.assertEqual(y["requires_grad"], True)
            self.assertEqual(data["y_grad.0.debug"]["Max"], 1.0)
            self.assertEqual(data["y_grad.0.debug"]["requires_grad"], False)
            self.assertEqual(data["lst.0.debug"][1], {"type": "int",
                                                      "value": 3})
            self.assertEqual(data["lst_grad.0.debug"][1:], [None, None,
                                                            [None, None]])
            self.assertEqual(data["scalar_grad.0.debug"], None)
            self.assertEqual(("md5" in y), mode == "md5")
        if HAS_MSPROBE:
            theirs, _ = self.run_tool("msprobe", mode)
            self.assertEqual(list(theirs), list(mine))
            for step in mine:
                ours, reference = mine[step][1], theirs[step][1]
                if mode == "tensor":
                    ours, reference = dict(ours), dict(reference)
                    ours.pop("dump_data_dir")
                    reference.pop("dump_data_dir")
                    self.same_files(mine[step][0], theirs[step][0])
                self.assert_same(ours, reference, step)

    def check_files(self, rank: str, data: dict) -> None:
        """Every data_name is a file whose content has the entry's Max."""
        import numpy as np

        def walk(value) -> None:
            if isinstance(value, dict) and "data_name" in value:
                array = np.load(os.path.join(rank, "dump_tensor_data",
                                             value["data_name"]))
                self.assertTrue(f32_close(float(array.max()),
                                          value["Max"]))
            elif isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        walk(data)

    def same_files(self, mine: str, theirs: str) -> None:
        """The same tensor files by name (.npy for .pt) and content."""
        import numpy as np
        import torch
        ours = sorted(os.listdir(os.path.join(mine, "dump_tensor_data")))
        reference = sorted(os.listdir(os.path.join(theirs,
                                                   "dump_tensor_data")))
        self.assertEqual([n[:-len(".npy")] for n in ours],
                         [n[:-len(".pt")] for n in reference])
        for a, b in zip(ours, reference):
            array = np.load(os.path.join(mine, "dump_tensor_data", a))
            tensor = torch.load(os.path.join(theirs, "dump_tensor_data", b))
            self.assertEqual(array.tobytes(), tensor.numpy().tobytes(), a)

    def test_statistics(self) -> None:
        self.check_mode("statistics")

    def test_md5(self) -> None:
        self.check_mode("md5")

    def test_tensor(self) -> None:
        self.check_mode("tensor")

    def test_overflow_check_refused(self) -> None:
        sys.path.insert(0, python_path())
        from tprobe import _C
        config = os.path.join(self.tmp, "overflow.json")
        with open(config, "w") as f:
            json.dump({"task": "overflow_check", "dump_path": self.tmp,
                       "level": "debug"}, f)
        with self.assertRaises(ValueError) as raised:
            _C.config_warnings(config)
        self.assertIn("level debug is invalid with task overflow_check",
                      str(raised.exception))


if __name__ == "__main__":
    unittest.main()
