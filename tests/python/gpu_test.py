"""A model on a CUDA device through a real tprobed at level mix: tensors that
live on the device are copied to the host by the binding, and the dumped
statistics match torch's own. Skipped where torch has no CUDA device.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


if __name__ == "__main__":
    unittest.main()
