"""tprobe.mindspore against the installed msprobe, on a real network.

examples/mindspore_train.py trains a small MindSpore network (a Cell used
twice, a primitive, mint and Tensor methods, a jit function, int and bool
values) for 2 steps on the CPU: once with no tool, then with tprobe and
with msprobe at L0, L1 and mix. The losses must be bit-identical, and each
step's tree must match msprobe's (mindspore_compare.py), apart from the
differences docs/configuration.md lists:
- msprobe names the directory proc{pid}, tprobe rank (no rank set);
- msprobe's jit dump also writes ``Jit.{grad target}.N.backward`` (the
  whole backward pass of a value_and_grad target once a jit function ran);
  tprobe writes no jit backward entries.
A second test checks the control surface in-process: L2 and non-Cell
models are refused, the step filter holds, and after the last step every
patched function is the original again.
"""

import glob
import inspect
import json
import os
import re
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from mindspore_compare import compare_dirs  # noqa: E402
from tprobed_fixture import (ROOT, Tprobed, fresh_dir,  # noqa: E402
                             python_path, tprobed_binary)

TRAIN = os.path.join(ROOT, "examples", "mindspore_train.py")
_JIT_BACKWARD = re.compile(r"^Jit\..*\.backward$")


def run_train(tool: str, level: str, dump: str, env: dict) -> list:
    out = subprocess.run(
        [sys.executable, TRAIN, "--tool", tool, "--level", level,
         "--dump-path", dump, "--steps", "2"],
        env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise AssertionError(f"{tool} {level} failed:\n{out.stderr[-4000:]}")
    return [line for line in out.stdout.splitlines()
            if line.startswith("loss ")]


def without_jit_backward(directory: str, out_dir: str) -> str:
    """A copy of a tree without msprobe's jit backward entries."""
    os.makedirs(out_dir, exist_ok=True)
    for name in ("dump.json", "construct.json", "stack.json"):
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            doc = json.load(f)
        if name == "dump.json":
            doc["data"] = {k: v for k, v in doc["data"].items()
                           if not _JIT_BACKWARD.match(k)}
        elif name == "construct.json":
            doc = {k: v for k, v in doc.items() if not _JIT_BACKWARD.match(k)}
        else:
            doc = {i: [[n for n in g[0] if not _JIT_BACKWARD.match(n)],
                       g[1]] for i, g in doc.items()}
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(doc, f)
    return out_dir


class MindSporeVsMsprobeTest(unittest.TestCase):
    def test_trees_match_msprobe_and_losses_are_unchanged(self) -> None:
        work = fresh_dir("tpms-")
        env = dict(os.environ, GLOG_v="3")
        baseline = run_train("none", "L0", os.path.join(work, "none"), env)
        self.assertEqual(len(baseline), 2)
        with Tprobed(tprobed_binary(), work) as daemon:
            tp_env = daemon.env(GLOG_v="3")
            for level in ("L0", "L1", "mix"):
                with self.subTest(level=level):
                    ms_dump = os.path.join(work, f"ms_{level}")
                    tp_dump = os.path.join(work, f"tp_{level}")
                    self.assertEqual(run_train("msprobe", level, ms_dump,
                                               env), baseline)
                    self.assertEqual(run_train("tprobe", level, tp_dump,
                                               tp_env), baseline)
                    daemon_flush(daemon, tp_dump)
                    for step in (0, 1):
                        ms_dirs = glob.glob(f"{ms_dump}/step{step}/proc*")
                        self.assertEqual(len(ms_dirs), 1, ms_dirs)
                        tp_dir = f"{tp_dump}/step{step}/rank"
                        problems = compare_dirs(
                            without_jit_backward(
                                ms_dirs[0], f"{work}/n/ms{level}{step}"),
                            tp_dir)
                        self.assertEqual(problems, [], "\n".join(problems))
                        with open(f"{tp_dir}/dump.json") as f:
                            data = json.load(f)["data"]
                        if level != "L0":
                            self.assertIn("Jit.scale.0.forward", data)


def daemon_flush(daemon: Tprobed, dump: str) -> None:
    """Waits until the daemon wrote both steps (the client flushed at exit,
    so the files are there or come within a moment)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(os.path.exists(f"{dump}/step{s}/rank/dump.json")
               for s in (0, 1)):
            return
        time.sleep(0.05)
    raise AssertionError(f"no tree under {dump}: {daemon.log()[-2000:]}")


class ControlTest(unittest.TestCase):
    """In-process: refusals, the step filter and the clean end."""

    def test_refusals_filter_and_clean_end(self) -> None:
        work = fresh_dir("tpmc-")
        with Tprobed(tprobed_binary(), work) as daemon:
            os.environ.update(daemon.env())
            sys.path.insert(0, python_path())
            import numpy as np
            import mindspore as ms
            from mindspore import Tensor, nn, ops
            from tprobe.mindspore import PrecisionDebugger
            from tprobe.mindspore.debugger import PrecisionDebugger as P
            config = os.path.join(work, "config.json")

            def write(level: str, step: list) -> None:
                with open(config, "w") as f:
                    json.dump({"task": "statistics", "level": level,
                               "dump_path": os.path.join(work, "dump"),
                               "step": step}, f)

            write("L2", [])
            with self.assertRaisesRegex(ValueError, "L2"):
                PrecisionDebugger(config_path=config)
            write("mix", [1])
            square, add = ops.square, Tensor.__add__
            from_numpy = inspect.getattr_static(Tensor, "from_numpy")
            debugger = PrecisionDebugger(config_path=config)
            self.assertIs(P._instance, debugger)
            self.assertIsNot(ops.square, square)
            with self.assertRaisesRegex(TypeError, "nn.Cell"):
                debugger.start("not a cell")
            ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
            net = nn.SequentialCell([nn.Dense(3, 2)])
            dense = net[0]
            primitive_class = type(dense.bias_add)
            x = Tensor(np.ones((2, 3), np.float32))
            for _ in range(3):
                debugger.start([net])
                ops.square(net(x)).sum()
                debugger.stop()
                debugger.step()
            debugger.start([net])  # step 3 > last step 1: the end
            self.assertIs(ops.square, square)
            self.assertIs(Tensor.__add__, add)
            # A staticmethod is put back as one: callable on an instance.
            self.assertIs(inspect.getattr_static(Tensor, "from_numpy"),
                          from_numpy)
            self.assertEqual(x.from_numpy(np.ones(2, np.float32)).shape,
                             (2,))
            self.assertIs(type(dense.bias_add), primitive_class)
            self.assertFalse(dense._forward_pre_hook)
            debugger.session.flush()
            dump = os.path.join(work, "dump")
            deadline = time.monotonic() + 30
            while not os.path.exists(f"{dump}/step1/rank/dump.json"):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            self.assertEqual(sorted(os.listdir(dump)), ["step1"])
            with open(f"{dump}/step1/rank/dump.json") as f:
                names = list(json.load(f)["data"])
            self.assertIn("Cell.0.0.Dense.forward.0", names)
            self.assertIn("Functional.square.0.forward", names)


if __name__ == "__main__":
    unittest.main()
