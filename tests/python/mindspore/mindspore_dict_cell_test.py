"""A Cell whose construct returns a dict, under tprobe.mindspore and the
installed msprobe, at L0 on the same network and input: the two trees must
match (mindspore_compare.py), the dict cell's backward entry included
(``Cell.inner.Inner.backward.0``: MindSpore reports no gradient for a dict
output, so its ``input`` is [null], and the gradient of the cell's input
as ``output``).
"""

import glob
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from mindspore_compare import compare_dirs, load  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

# argv: tool, dump path.
SCRIPT = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, mint, nn
    tool, dump = sys.argv[1:3]
    if tool == "msprobe":
        # msprobe's statistics use mint.norm, whose kernel MindSpore's CPU
        # build lacks (examples/mindspore_train.py).
        if hasattr(mint, "norm"):
            delattr(mint, "norm")
        from msprobe.mindspore import PrecisionDebugger
    else:
        from tprobe.mindspore import PrecisionDebugger
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    config = os.path.join(dump, "config.json")
    os.makedirs(dump)
    with open(config, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump, "level": "L0"},
                  f)

    class Inner(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(3, 2)

        def construct(self, x):
            y = self.d(x)
            return {"a": y, "b": y * 2}

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pre = nn.Dense(3, 3)
            self.inner = Inner()

        def construct(self, x):
            out = self.inner(self.pre(x))
            return out["a"].sum() + out["b"].sum()

    ms.set_seed(0)
    net = Net()
    debugger = PrecisionDebugger(config_path=config)
    grad_fn = ms.value_and_grad(net, None, net.trainable_params())
    x = Tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    debugger.start(net)
    grad_fn(x)
    debugger.stop()
    debugger.step()
    if tool == "tprobe":
        assert debugger.session.flush(30000)
""")


class DictCellTest(unittest.TestCase):
    def run_tool(self, tool: str, dump: str, env: dict) -> str:
        run = subprocess.run([sys.executable, "-c", SCRIPT, tool, dump],
                             env=env, capture_output=True, text=True,
                             timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])
        (step,) = glob.glob(os.path.join(dump, "step0", "*"))
        return step

    def test_dict_output_cell_has_msprobes_backward_entry(self) -> None:
        tmp = fresh_dir("tp-msdict-")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            env = daemon.env()
            ref = self.run_tool("msprobe", os.path.join(tmp, "msprobe"), env)
            actual = self.run_tool("tprobe", os.path.join(tmp, "tprobe"), env)
        entry = load(actual, "dump.json")["data"].get(
            "Cell.inner.Inner.backward.0")
        self.assertIsNotNone(entry, "no backward entry for the dict cell")
        self.assertEqual(entry["input"], [None])
        self.assertEqual(compare_dirs(ref, actual), [])


if __name__ == "__main__":
    unittest.main()
