"""A model on a CUDA device through a real tprobed at level mix, and the
device path of tprobe.statistics_on (auto: device tensors reduced by torch
on the device, results through pinned memory behind an event): the dumped
statistics match torch's own and msprobe's, bit for bit for Max and Min;
no call that waits for the device runs on the training thread while hooks
run; under task tensor the bytes copied to pinned memory without waiting
make the same .npy files as the synchronous copy. Skipped where torch has
no CUDA device.
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support"),
                os.path.join(HERE, os.pardir, "both")]  # statistics_on_test
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

CUDA = torch.cuda.is_available()


@unittest.skipUnless(CUDA, "no CUDA device")
class GpuTest(unittest.TestCase):
    def test_device_tensors_are_dumped(self) -> None:
        tmp = fresh_dir("tp-gpu-")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "mix",
                       "dump_path": os.path.join(tmp, "dump")}, f)
        with Tprobed(tprobed_binary(), tmp) as daemon:
            os.environ.update(daemon.env())
            from tprobe.torch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path=config)
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(64, 256), nn.GELU(),
                                  nn.Linear(256, 8)).cuda()
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x = torch.randn(32, 64, device="cuda")
            half = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
            for _ in range(2):
                opt.zero_grad(set_to_none=True)
                debugger.start(model)
                hidden = model[0](x)
                loss = model[2](model[1](hidden)).square().mean()
                loss.backward()
                opt.step()
                doubled = half * 2
                debugger.stop()
                debugger.step()
            self.assertTrue(debugger.session.flush(30000))
            counters = debugger.session.counters()
        self.assertEqual(counters["dropped_ring_full"], 0)
        where = os.path.join(tmp, "dump", "step1", "rank")
        with open(os.path.join(where, "dump.json")) as f:
            data = json.load(f)["data"]
        with open(os.path.join(where, "tprobe.json")) as f:
            self.assertTrue(json.load(f)["complete"])
        out = data["Module.0.Linear.forward.0"]["output"][0]
        ref = hidden.detach()
        self.assertEqual(out["Max"], ref.max().item())
        self.assertEqual(out["Min"], ref.min().item())
        self.assertAlmostEqual(out["Norm"], ref.norm().item(),
                               delta=1e-4 * ref.norm().item())
        mul = data["Tensor.__mul__.0.forward"]["output"][0]
        self.assertEqual(mul["dtype"], "torch.bfloat16")
        self.assertEqual(mul["Max"], doubled.max().item())
        self.assertIn("Module.2.Linear.backward.0", data)
        self.assertIn("Functional.linear.1.backward", data)


MODEL = os.path.join(HERE, os.pardir, "both", "statistics_on_model.py")


@unittest.skipUnless(CUDA, "no CUDA device")
class GpuStatisticsOnTest(unittest.TestCase):
    """statistics_on_model.py on CUDA: every dtype msprobe treats apart."""

    def run_model(self, daemon, tool: str, on: str, *extra: str,
                  summary: str = "statistics") -> str:
        from statistics_on_test import config
        dump = os.path.join(self.tmp, f"{tool}_{on}_{summary}")
        out = subprocess.run(
            [sys.executable, MODEL, "--tool", tool, "--device", "cuda",
             "--config", config(self.tmp, on, "mix", dump, summary),
             "--dump-path", dump, *extra],
            env=daemon.env(), capture_output=True, text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr[-4000:])
        return dump

    def setUp(self) -> None:
        self.tmp = fresh_dir("tp-gpu-on-")

    def test_device_statistics_equal_the_daemons_and_msprobes(self) -> None:
        from statistics_on_test import compare_trees
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            device = self.run_model(daemon, "tprobe", "auto")
            host = self.run_model(daemon, "tprobe", "daemon")
            try:
                import msprobe  # noqa: F401
                reference = self.run_model(daemon, "msprobe", "auto")
            except ImportError:
                reference = None
        self.assertGreater(compare_trees(self, device, host, 2), 400)
        if reference is None:
            return
        # msprobe reduces with the same torch ops on the same device: Max,
        # Min, Mean and Norm equal bit for bit.
        for step in range(2):
            rel = os.path.join(f"step{step}", "rank", "dump.json")
            with open(os.path.join(device, rel)) as f:
                got = json.load(f)["data"]
            with open(os.path.join(reference, rel)) as f:
                want = json.load(f)["data"]
            for name in want:
                self.assertIn(name, got)
                self.assertEqual(_stats(got[name]), _stats(want[name]), name)

    def test_no_synchronisation_per_tensor_in_the_hooks(self) -> None:
        for summary in ("statistics", "tensor"):
            trace = os.path.join(self.tmp, f"syncs_{summary}.json")
            with Tprobed(tprobed_binary(), self.tmp) as daemon:
                self.run_model(daemon, "tprobe", "auto", "--trace-syncs",
                               trace, summary=summary)
            with open(trace) as f:
                self.assertEqual(json.load(f)["count"], 0, summary)

    def test_task_tensor_through_pinned_memory(self) -> None:
        """Task tensor: device tensors copied to pinned memory without
        waiting give the .npy files the synchronous copy gives."""
        from statistics_on_test import compare_tensor_files, compare_trees
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            device = self.run_model(daemon, "tprobe", "auto",
                                    summary="tensor")
            host = self.run_model(daemon, "tprobe", "daemon",
                                  summary="tensor")
        self.assertGreater(compare_trees(self, device, host, 2), 400)
        self.assertGreater(compare_tensor_files(self, device, host, 2), 200)


def _stats(value):
    """The statistics of a value tree, NaN spelt as text."""
    if isinstance(value, dict):
        return {k: (repr(v) if k in ("Max", "Min", "Mean", "Norm")
                    else _stats(v)) for k, v in value.items()
                if k in ("Max", "Min", "Mean", "Norm") or
                isinstance(v, (dict, list))}
    if isinstance(value, list):
        return [_stats(v) for v in value]
    return None


if __name__ == "__main__":
    unittest.main()
