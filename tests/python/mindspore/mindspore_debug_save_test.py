"""tprobe.mindspore at level "debug": PrecisionDebugger.save() into
step{N}/rank{R}/debug.json, against msprobe 26.x's on the same script.

One PyNative script saves, inside a value_and_grad forward, a tensor
(twice: counts per name), a list with scalars and a nested tuple, a dict
without its backward and a scalar, and outside it a float16 tensor, over
three steps of which the config takes 0 and 2, for task statistics
(summary_mode statistics, md5) and task tensor (the .npy files compared by
name and content). Only
the input x and y reach the backward, so of the "_grad" entries only
y_grad.0 and the list's x have a gradient, the rest is null. tprobe's
debug.json is checked for itself (keys and order, framework "mindspore",
statistics against numpy) and, where msprobe is installed, against
msprobe's: the same keys in the same order, the same values (statistics
to float32, md5 exact).
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
from debug_json import (STATS, assert_same_debug,  # noqa: E402
                        read_debug_trees)
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None

# argv: tool, config path. Prints numpy's statistics of y and of x's
# gradient per step.
SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, mint, nn, ops
    tool, config_path = sys.argv[1:3]
    if tool == "msprobe":
        # msprobe's statistics use mint.norm, whose kernel MindSpore's CPU
        # build lacks (examples/mindspore_train.py).
        if hasattr(mint, "norm"):
            delattr(mint, "norm")
        from msprobe.mindspore import PrecisionDebugger
    else:
        from tprobe.mindspore import PrecisionDebugger
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    d = PrecisionDebugger(config_path=config_path)
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    ys = []

    def forward(x):
        y = net(x)
        ys.append(y.asnumpy())
        d.save(y, "y")
        d.save([x, 3, 2.5, (x * 2, True)], "lst")
        d.save({"a": y, "b": 7}, "d", save_backward=False)
        d.save(y * 3, "y")
        d.save(5, "scalar")
        return y.sum()

    grad_fn = ms.value_and_grad(forward, grad_position=0)
    rng = np.random.default_rng(0)
    stats = []
    for step in range(3):
        x = Tensor(rng.standard_normal((2, 4)).astype(np.float32))
        loss, grad = grad_fn(x)
        d.save(ops.ones((2,), ms.float16), "half")
        # Skipped with a warning by both (msprobe's check_save_param).
        d.save(None, "none")
        d.save(x, 3)
        d.save(x, "half", save_backward="yes")
        d.step()
        stats.append([[float(a.max()), float(a.min()), float(a.mean()),
                       float(np.linalg.norm(a))]
                      for a in (ys[-1], grad.asnumpy())])
    if tool == "tprobe":
        assert d.session.flush(30000)
    print("STATS", json.dumps(stats))
""")

KEYS = ["y.0.debug", "y_grad.0.debug", "lst.0.debug", "lst_grad.0.debug",
        "d.0.debug", "y.1.debug", "y_grad.1.debug", "scalar.0.debug",
        "scalar_grad.0.debug", "half.0.debug", "half_grad.0.debug"]
def f32_near(a, b) -> bool:
    """numpy's float32 reductions may sum in another order than
    MindSpore's."""
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


class MindSporeDebugSaveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-msdbgsave-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.__exit__(None, None, None)

    def run_tool(self, tool: str, mode: str) -> tuple:
        """{step dir: (rank dir, debug.json)}, numpy's stats of y and of
        x's gradient per step. Mode "tensor" is task tensor, else task
        statistics with that summary_mode."""
        dump = os.path.join(self.tmp, f"{tool}-{mode}")
        config = os.path.join(self.tmp, f"{tool}-{mode}.json")
        task = "tensor" if mode == "tensor" else "statistics"
        with open(config, "w") as f:
            json.dump({"task": task, "dump_path": dump, "rank": [],
                       "step": [0, 2], "level": "debug",
                       task: {} if mode == "tensor" else {
                           "summary_mode": mode}}, f)
        run = subprocess.run([sys.executable, "-c", SCRIPT, tool, config],
                             env=self.daemon.env(GLOG_v="3"), timeout=600,
                             text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        if tool == "tprobe":
            skipped = [line for line in run.stderr.splitlines()
                       if line.startswith("[tprobe] PrecisionDebugger.save: ")]
            self.assertEqual(len(skipped), 9, run.stderr[-3000:])
        stats = json.loads(run.stdout.split("STATS ", 1)[1])
        return read_debug_trees(dump), stats

    def assert_same(self, mine, theirs, path: str) -> None:
        assert_same_debug(self, mine, theirs, path)

    def assert_stats(self, entry: dict, want: list, what: str) -> None:
        for key, value in zip(STATS, want):
            self.assertTrue(f32_near(entry[key], value),
                            (what, key, entry[key], value))

    def check_mode(self, mode: str) -> None:
        mine, stats = self.run_tool("tprobe", mode)
        self.assertEqual(list(mine), ["step0", "step2"])
        for step, (rank, doc) in mine.items():
            self.assertEqual(sorted(os.listdir(rank)),
                             sorted(["debug.json", "tprobe.json"]
                                    + (["dump_tensor_data"]
                                       if mode == "tensor" else [])))
            self.assertEqual(doc["dump_data_dir"],
                             os.path.join(rank, "dump_tensor_data")
                             if mode == "tensor" else None)
            self.assertEqual(list(doc)[:5], ["task", "level", "framework",
                                             "dump_data_dir", "data"])
            self.assertEqual((doc["level"], doc["framework"]),
                             ("debug", "mindspore"))
            data = doc["data"]
            self.assertEqual(list(data), KEYS, step)
            y_stats, x_grad_stats = stats[int(step[4:])]
            y = data["y.0.debug"]
            self.assertEqual((y["type"], y["dtype"], y["shape"]),
                             ("mindspore.Tensor", "Float32", [2, 3]))
            self.assertNotIn("requires_grad", y)
            self.assert_stats(y, y_stats, "y")
            y_grad = data["y_grad.0.debug"]
            self.assertEqual((y_grad["Max"], y_grad["Min"]), (1.0, 1.0))
            lst_grad = data["lst_grad.0.debug"]
            self.assert_stats(lst_grad[0], x_grad_stats, "x grad")
            self.assertEqual(lst_grad[1:], [None, None, [None, None]])
            self.assertEqual(data["lst.0.debug"][1],
                             {"type": "int", "value": 3})
            self.assertEqual(data["lst.0.debug"][3][1],
                             {"type": "bool", "value": True})
            self.assertEqual(data["d.0.debug"]["b"],
                             {"type": "int", "value": 7})
            self.assertIsNone(data["y_grad.1.debug"])
            self.assertIsNone(data["scalar_grad.0.debug"])
            self.assertEqual(data["half.0.debug"]["dtype"], "Float16")
            self.assertIsNone(data["half_grad.0.debug"])
            self.assertEqual("md5" in y, mode == "md5")
            self.assertEqual("data_name" in y, mode == "tensor")
        if not HAS_MSPROBE:
            return
        theirs, _ = self.run_tool("msprobe", mode)
        self.assertEqual(list(theirs), list(mine))
        for step in mine:
            ours, reference = dict(mine[step][1]), dict(theirs[step][1])
            if mode == "tensor":
                ours.pop("dump_data_dir")
                reference.pop("dump_data_dir")
                self.same_files(mine[step][0], theirs[step][0])
            self.assert_same(ours, reference, step)

    def same_files(self, mine: str, theirs: str) -> None:
        """The same .npy files by name and content."""
        import numpy as np
        ours = sorted(os.listdir(os.path.join(mine, "dump_tensor_data")))
        reference = sorted(os.listdir(os.path.join(theirs,
                                                   "dump_tensor_data")))
        self.assertEqual(ours, reference)
        self.assertTrue(ours)
        for name in ours:
            a = np.load(os.path.join(mine, "dump_tensor_data", name))
            b = np.load(os.path.join(theirs, "dump_tensor_data", name))
            self.assertEqual((a.dtype, a.shape, a.tobytes()),
                             (b.dtype, b.shape, b.tobytes()), name)

    def test_statistics(self) -> None:
        self.check_mode("statistics")

    def test_md5(self) -> None:
        self.check_mode("md5")

    def test_tensor(self) -> None:
        self.check_mode("tensor")


if __name__ == "__main__":
    unittest.main()
