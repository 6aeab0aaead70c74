"""A real model through forward, backward and optimizer steps at level mix,
dumped through a real tprobed: the statistics tprobe writes are checked
against torch's own max/min/mean/norm of the same tensors, and the model
exercises in-place ops (an API, an in-place add on a module's output, an
inplace=True module), a module called twice, kwargs, and tuple and dict
outputs. Training with tprobe must give the losses it gives without it.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

STEPS = 3


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc(x)
        out += x  # in place on a module's output
        return self.act(out)  # an inplace=True module


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 8)
        self.b = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor):
        return self.a(x), self.b(x)


class DictOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor):
        return {"y": self.lin(x), "aux": x.mean()}


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.block = Residual()
        self.shared = nn.Linear(16, 16)
        self.heads = TwoHeads()
        self.dict_out = DictOut()
        self.snapshots = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.block(self.inp(x))
        h = self.shared(torch.tanh(self.shared(h)))  # one module, two calls
        a, b = self.heads(h)
        d = self.dict_out(a + b)
        z = torch.cat([F.softmax(d["y"], dim=-1), b], dim=1)
        before = z.detach().clone()
        z.mul_(2.0)  # an in-place API
        self.snapshots.append((before, z.detach().clone()))
        return z.square().sum() + d["aux"]


def stats(t: torch.Tensor):
    t = t.detach()
    return {"Max": t.max().item(), "Min": t.min().item(),
            "Mean": t.float().mean().item(), "Norm": t.float().norm().item()}


def train(debugger=None):
    """STEPS steps; returns (model, losses, per-step snapshots)."""
    torch.manual_seed(7)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(3)
    losses, steps = [], []
    for _ in range(STEPS):
        x = torch.randn(4, 8, generator=gen).requires_grad_(True)
        weight = model.inp.weight.detach().clone()
        grads = {}

        def keep_output_grad(module, inputs, output, grads=grads):
            output.register_hook(
                lambda g: grads.__setitem__("inp_out", g.clone()))

        hook = model.inp.register_forward_hook(keep_output_grad)
        opt.zero_grad(set_to_none=True)
        if debugger:
            debugger.start(model)
        loss = model(x)
        loss.backward()
        grads["inp_weight"] = model.inp.weight.grad.clone()
        grads["x"] = x.grad.clone()
        opt.step()
        if debugger:
            debugger.stop()
            debugger.step()
        hook.remove()
        losses.append(loss.item())
        steps.append({"weight": weight, "grads": grads,
                      "z": model.snapshots[-1]})
    return model, losses, steps


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-model-")
        config = os.path.join(cls.tmp, "config.json")
        with open(config, "w") as f:
            # risk_level ALL: the low-risk APIs (Torch.cat) are checked too.
            json.dump({"task": "statistics", "level": "mix",
                       "risk_level": "ALL",
                       "dump_path": os.path.join(cls.tmp, "dump")}, f)
        _, cls.plain_losses, _ = train()
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            os.environ.update(daemon.env())
            from tprobe.torch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path=config)
            _, cls.losses, cls.steps = train(debugger)
            cls.flushed = debugger.session.flush(30000)
            cls.counters = debugger.session.counters()
        cls.trees = []
        for step in range(STEPS):
            where = os.path.join(cls.tmp, "dump", f"step{step}", "rank")
            with open(os.path.join(where, "dump.json")) as f:
                data = json.load(f)["data"]
            with open(os.path.join(where, "construct.json")) as f:
                construct = json.load(f)
            cls.trees.append((data, construct))

    def assertStats(self, entry_tensor: dict, tensor: torch.Tensor,
                    what: str) -> None:
        expected = stats(tensor)
        self.assertEqual(entry_tensor["shape"], list(tensor.shape), what)
        self.assertEqual(entry_tensor["dtype"], str(tensor.dtype), what)
        self.assertEqual(entry_tensor["Max"], expected["Max"], what)
        self.assertEqual(entry_tensor["Min"], expected["Min"], what)
        for key in ("Mean", "Norm"):
            self.assertAlmostEqual(entry_tensor[key], expected[key],
                                   delta=1e-5 * max(1.0, abs(expected[key])),
                                   msg=f"{what} {key}")

    def test_training_is_unchanged(self) -> None:
        self.assertTrue(self.flushed)
        self.assertEqual(self.counters["dropped_no_daemon"], 0)
        self.assertEqual(self.counters["dropped_ring_full"], 0)
        for plain, dumped in zip(self.plain_losses, self.losses):
            self.assertAlmostEqual(plain, dumped, delta=1e-6 * abs(plain))

    def test_every_step_is_complete(self) -> None:
        for step in range(STEPS):
            path = os.path.join(self.tmp, "dump", f"step{step}", "rank",
                                "tprobe.json")
            with open(path) as f:
                self.assertTrue(json.load(f)["complete"], path)
        names = [list(data) for data, _ in self.trees]
        self.assertEqual(names[0], names[1])
        self.assertEqual(names[1], names[2])

    def test_statistics_match_torch(self) -> None:
        for step, (data, _) in enumerate(self.trees):
            ref = self.steps[step]
            fwd = data["Module.inp.Linear.forward.0"]
            self.assertStats(fwd["parameters"]["weight"], ref["weight"],
                             f"step {step} inp weight")
            self.assertTrue(fwd["parameters"]["weight"]["requires_grad"])
            grad = data["Module.inp.Linear.parameters_grad.0"]["weight"][0]
            self.assertStats(grad, ref["grads"]["inp_weight"],
                             f"step {step} inp weight grad")
            self.assertFalse(grad["requires_grad"])
            bwd = data["Module.inp.Linear.backward.0"]
            self.assertStats(bwd["input"][0], ref["grads"]["inp_out"],
                             f"step {step} grad of inp's output")
            self.assertStats(bwd["output"][0], ref["grads"]["x"],
                             f"step {step} grad of inp's input")

    def test_inplace_api_reads_inputs_before_and_outputs_after(self) -> None:
        for step, (data, _) in enumerate(self.trees):
            before, after = self.steps[step]["z"]
            entry = data["Tensor.mul_.0.forward"]
            self.assertStats(entry["input_args"][0], before, "mul_ input")
            self.assertEqual(entry["input_args"][1],
                             {"type": "float", "value": 2.0})
            self.assertStats(entry["output"][0], after, "mul_ output")
            self.assertEqual(list(entry),
                             ["input_args", "input_kwargs", "output"])

    def test_inplace_add_on_module_output(self) -> None:
        data, construct = self.trees[0]
        fc_out = data["Module.block.fc.Linear.forward.0"]["output"][0]
        iadd = data["Tensor.__iadd__.0.forward"]
        self.assertEqual(iadd["input_args"][0]["Max"], fc_out["Max"])
        self.assertEqual(construct["Tensor.__iadd__.0.forward"],
                         "Module.block.Residual.forward.0")
        self.assertTrue("Module.block.act.ReLU.forward.0" in data)
        # An inplace=True module gets no backward entry (nor in msprobe).
        self.assertFalse("Module.block.act.ReLU.backward.0" in data)
        self.assertTrue("Module.block.fc.Linear.backward.0" in data)

    def test_reused_module_gets_two_indices(self) -> None:
        data, construct = self.trees[1]
        for i in (0, 1):
            self.assertTrue(f"Module.shared.Linear.forward.{i}" in data)
            self.assertTrue(f"Module.shared.Linear.backward.{i}" in data)
            self.assertIsNone(construct[f"Module.shared.Linear.forward.{i}"])
        self.assertEqual(construct["Functional.linear.3.forward"],
                         "Module.shared.Linear.forward.1")
        # Autograd sums a parameter's two gradients before its hook runs, so
        # one parameters_grad entry (K = 0), as in msprobe.
        self.assertTrue("Module.shared.Linear.parameters_grad.0" in data)
        self.assertFalse("Module.shared.Linear.parameters_grad.1" in data)

    def test_kwargs_and_containers(self) -> None:
        data, construct = self.trees[0]
        softmax = data["Functional.softmax.0.forward"]
        self.assertEqual(softmax["input_kwargs"]["dim"],
                         {"type": "int", "value": -1})
        cat = data["Torch.cat.0.forward"]
        self.assertEqual(len(cat["input_args"][0]), 2)
        self.assertEqual(cat["input_kwargs"], {"dim": {"type": "int",
                                                       "value": 1}})
        heads = data["Module.heads.TwoHeads.forward.0"]
        self.assertEqual([t["shape"] for t in heads["output"]],
                         [[4, 8], [4, 8]])
        backward = data["Module.heads.TwoHeads.backward.0"]
        self.assertEqual(len(backward["input"]), 2)
        dict_out = data["Module.dict_out.DictOut.forward.0"]["output"]
        self.assertEqual(list(dict_out[0]), ["y", "aux"])
        self.assertEqual(dict_out[0]["aux"]["shape"], [])
        self.assertEqual(construct["Module.heads.a.Linear.forward.0"],
                         "Module.heads.TwoHeads.forward.0")
        linear = data["Module.heads.a.Linear.forward.0"]
        self.assertEqual(linear["input_kwargs"], {})


if __name__ == "__main__":
    unittest.main()
