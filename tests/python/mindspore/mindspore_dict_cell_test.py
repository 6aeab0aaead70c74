"""Cells whose construct returns a dict, or tensors nested in a tuple,
under tprobe.mindspore and the installed msprobe, at L0 on the same
network and input: the two trees must match (mindspore_compare.py), the
cell's backward entry included (``Cell.inner.Inner.backward.0``):

- a dict output: MindSpore reports no gradient for a dict, so its
  ``input`` is [null], and the gradient of the cell's input is ``output``;
- ``(y, (y * 2, y * 3))`` from ``(a, [b])``: MindSpore's CellBackwardHook
  takes the tensors at the top level of a tuple only (the nested ones
  never pass through it), so ``input`` holds y's gradient alone, and an
  argument with no tensor at its top level gets none (``output`` []),
  as msprobe writes them; unlike PyTorch's, where both tools walk the
  containers (tests/python/pytorch/nested_parity_test.py).
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

# argv: tool, dump path, "dict" or "nested" (what Inner takes and returns).
SCRIPT = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, mint, nn
    tool, dump, kind = sys.argv[1:4]
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
            if kind == "dict":
                y = self.d(x)
                return {"a": y, "b": y * 2}
            a, (b,) = x
            y = self.d(a + b)
            return y, (y * 2, y * 3)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pre = nn.Dense(3, 3)
            self.inner = Inner()

        def construct(self, x):
            h = self.pre(x)
            if kind == "dict":
                out = self.inner(h)
                return out["a"].sum() + out["b"].sum()
            out = self.inner((h, [h * 3]))
            return out[0].sum() + out[1][0].sum() * 2

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
    def run_tool(self, tool: str, dump: str, env: dict, kind: str) -> str:
        run = subprocess.run([sys.executable, "-c", SCRIPT, tool, dump, kind],
                             env=env, capture_output=True, text=True,
                             timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])
        (step,) = glob.glob(os.path.join(dump, "step0", "*"))
        return step

    def trees(self, kind: str) -> tuple:
        """(msprobe's step directory, tprobe's) for ``kind``."""
        tmp = fresh_dir("tp-msdict-")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            env = daemon.env()
            ref = self.run_tool("msprobe", os.path.join(tmp, "msprobe"), env,
                                kind)
            actual = self.run_tool("tprobe", os.path.join(tmp, "tprobe"),
                                   env, kind)
        self.assertEqual(compare_dirs(ref, actual), [])
        entry = load(actual, "dump.json")["data"].get(
            "Cell.inner.Inner.backward.0")
        self.assertIsNotNone(entry, f"no backward entry for the {kind} cell")
        return entry

    def test_dict_output_cell_has_msprobes_backward_entry(self) -> None:
        entry = self.trees("dict")
        self.assertEqual(entry["input"], [None])
        self.assertEqual(len(entry["output"]), 1)

    def test_nested_tensors_get_msprobes_items(self) -> None:
        entry = self.trees("nested")
        self.assertEqual(len(entry["input"]), 1, "y's gradient alone")
        self.assertEqual(entry["input"][0]["Max"], 1.0)
        self.assertEqual(entry["output"], [])


if __name__ == "__main__":
    unittest.main()
