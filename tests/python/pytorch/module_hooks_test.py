"""Module hooks at level L0, on a real model through a real tprobed: a
module called twice in one forward, a module with no tensor input, a
module whose forward raises (the training loop catches it), modules whose
output their caller changes in place (a plain tensor and a view), and
routers that use their output themselves (an auxiliary loss). The backward
entries are checked against the gradients torch itself computes, and every
step must come out alike: an exception must leave nothing open behind it.
"""

import inspect
import json
import os
import sys
import unittest
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

STEPS = 3


class Fails(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("this forward fails")


class Constant(nn.Module):
    """No tensor argument: its output comes from its own parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1.0, 1.0, 4))

    def forward(self, scale: float) -> torch.Tensor:
        return self.w * scale


class Router(nn.Module):
    """Uses its output itself too: an auxiliary loss of it, which the caller
    adds to the loss (as a mixture of experts' router does); returns it as
    it is, or a view of it (``view``)."""

    def __init__(self, view: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.view = view
        self.aux: Optional[torch.Tensor] = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.proj(x)
        self.aux = logits.square().sum()
        return logits.unsqueeze(0) if self.view else logits


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fails = Fails()
        self.lin = nn.Linear(4, 4)
        self.const = Constant()
        self.out = nn.Linear(4, 4)
        self.router = Router(view=False)
        self.router_view = Router(view=True)
        self.wide = nn.Linear(4, 4)
        self.wide_grad: Optional[torch.Tensor] = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            self.fails(x)
        except ValueError:
            pass
        h = self.lin(torch.tanh(self.lin(x)))  # one module, two calls
        # An output its caller changes in place, after a hook of its own
        # that it takes off again (it would zero the gradient).
        y = self.out(h)
        dropped = y.register_hook(lambda grad: grad * 0)
        y.mul_(2.0)
        dropped.remove()
        # A view (a Linear's output on a 3-d input) changed in place; a
        # hook on it would be lost (its grad_fn changes), so its gradient
        # is worked out here: that of z.square().sum().
        z = self.wide(h.unsqueeze(0))
        z.add_(1.0)
        self.wide_grad = 2.0 * z.detach()
        # The routers' outputs go on only through the sums: their gradient
        # from there is 3.0 everywhere.
        routed = (self.router(h) * 3.0).sum() + self.router.aux + \
            (self.router_view(h) * 3.0).sum() + self.router_view.aux
        return (y * self.const(3.0)).square().sum() + routed + \
            z.square().sum()


def train(debugger):
    """STEPS steps; returns, per step, the gradients torch computed for the
    outputs of lin's two calls, const, out and router.proj, by tensor hooks,
    and that of wide's output, worked out by the model."""
    torch.manual_seed(5)
    model = Net()
    gen = torch.Generator().manual_seed(6)
    grads = []
    for _ in range(STEPS):
        seen = {}

        def keep(name):
            def hook(module, inputs, output):
                key = f"{name}.{sum(k.startswith(name) for k in seen)}"
                seen[key] = None
                output.register_hook(
                    lambda g: seen.__setitem__(key, g.detach().clone()))
            return hook

        hooks = [model.lin.register_forward_hook(keep("lin")),
                 model.const.register_forward_hook(keep("const")),
                 model.out.register_forward_hook(keep("out")),
                 model.router.proj.register_forward_hook(keep("proj"))]
        debugger.start(model)
        model(torch.randn(2, 4, generator=gen)).backward()
        seen["wide.0"] = model.wide_grad
        debugger.stop()
        debugger.step()
        for hook in hooks:
            hook.remove()
        grads.append(seen)
    return grads


class ModuleHooksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-module-hooks-")
        config = os.path.join(cls.tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L0",
                       "dump_path": os.path.join(cls.tmp, "dump")}, f)
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            os.environ.update(daemon.env())
            from tprobe.torch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path=config)
            cls.grads = train(debugger)
            cls.flushed = debugger.session.flush(30000)
        cls.trees = []
        for step in range(STEPS):
            where = os.path.join(cls.tmp, "dump", f"step{step}", "rank")
            with open(os.path.join(where, "dump.json")) as f:
                data = json.load(f)["data"]
            with open(os.path.join(where, "construct.json")) as f:
                construct = json.load(f)
            cls.trees.append((data, construct))

    def assertGrad(self, entry_tensor: dict, grad: torch.Tensor,
                   what: str) -> None:
        self.assertEqual(entry_tensor["shape"], list(grad.shape), what)
        self.assertEqual(entry_tensor["Max"], grad.max().item(), what)
        self.assertEqual(entry_tensor["Min"], grad.min().item(), what)
        self.assertAlmostEqual(entry_tensor["Norm"], grad.norm().item(),
                               delta=1e-5 * max(1.0, grad.norm().item()),
                               msg=what)

    def test_every_step_is_alike(self) -> None:
        self.assertTrue(self.flushed)
        names = [sorted(data) for data, _ in self.trees]
        constructs = [construct for _, construct in self.trees]
        for step in range(1, STEPS):
            self.assertEqual(names[step], names[0], f"step {step}")
            self.assertEqual(constructs[step], constructs[0], f"step {step}")

    @unittest.skipUnless(
        "always_call" in inspect.signature(
            nn.Module.register_forward_hook).parameters,
        "PyTorch < 2.1 runs no forward hook when a forward raises: the "
        "failed call stays open until the step ends")
    def test_a_failed_forward_leaves_nothing_open(self) -> None:
        for data, construct in self.trees:
            # The calls after the failure are nobody's children.
            for name in ("Module.lin.Linear.forward.0",
                         "Module.lin.Linear.forward.1",
                         "Module.const.Constant.forward.0",
                         "Module.lin.Linear.backward.0",
                         "Module.const.Constant.backward.0"):
                self.assertIn(name, construct)
                self.assertIsNone(construct[name], name)
            self.assertFalse(any(name.startswith("Module.fails.")
                                 and ".backward." in name for name in data))

    def test_reused_module_gets_two_entries_each_way(self) -> None:
        for step, (data, _) in enumerate(self.trees):
            grads = self.grads[step]
            for i in (0, 1):
                backward = data[f"Module.lin.Linear.backward.{i}"]
                # input: the gradient w.r.t. that call's output, as torch
                # computed it; output: one item per tensor argument.
                self.assertEqual(len(backward["input"]), 1)
                self.assertGrad(backward["input"][0], grads[f"lin.{i}"],
                                f"step {step} lin call {i}")
            # output: one item per tensor argument, none when no argument
            # needs a gradient (the first call's x).
            self.assertEqual(data["Module.lin.Linear.backward.0"]["output"],
                             [])
            self.assertEqual(
                len(data["Module.lin.Linear.backward.1"]["output"]), 1)
            # Autograd sums a parameter's gradients over both calls before
            # its hook runs: one parameters_grad entry.
            self.assertIn("Module.lin.Linear.parameters_grad.0", data)
            self.assertNotIn("Module.lin.Linear.parameters_grad.1", data)

    def test_module_without_tensor_input(self) -> None:
        for step, (data, _) in enumerate(self.trees):
            forward = data["Module.const.Constant.forward.0"]
            self.assertEqual(forward["input_args"],
                             [{"type": "float", "value": 3.0}])
            backward = data["Module.const.Constant.backward.0"]
            self.assertGrad(backward["input"][0], self.grads[step]["const.0"],
                            f"step {step} const")
            # No argument needs a gradient: the entry's output is empty.
            self.assertEqual(backward["output"], [])
            self.assertIn("Module.const.Constant.parameters_grad.0", data)

    def test_output_changed_in_place_by_its_caller(self) -> None:
        for step, (data, _) in enumerate(self.trees):
            # input: the gradient w.r.t. the value the module returned (a
            # hook taken before the change gets that one), not w.r.t. the
            # value after the change, and not zeroed by the hook taken off.
            backward = data["Module.out.Linear.backward.0"]
            self.assertEqual(len(backward["input"]), 1)
            self.assertGrad(backward["input"][0], self.grads[step]["out.0"],
                            f"step {step} out")
            self.assertNotEqual(backward["input"][0]["Norm"], 0.0)
            self.assertEqual(len(backward["output"]), 1)
            # The same for a view (changed in place, a view gets a new
            # grad_fn).
            backward = data["Module.wide.Linear.backward.0"]
            self.assertGrad(backward["input"][0], self.grads[step]["wide.0"],
                            f"step {step} wide")

    def test_output_the_module_uses_itself(self) -> None:
        for step, (data, construct) in enumerate(self.trees):
            # As msprobe: a router's entry has the gradient from the uses
            # of what it returned alone, not from its own auxiliary loss.
            for router in ("router", "router_view"):
                backward = data[f"Module.{router}.Router.backward.0"]["input"]
                self.assertEqual(len(backward), 1)
                self.assertEqual((backward[0]["Max"], backward[0]["Min"]),
                                 (3.0, 3.0), f"step {step} {router}")
            # Its child returned the same tensor: the child's entry has
            # every use of it, and its backward is inside the router's.
            self.assertGrad(
                data["Module.router.proj.Linear.backward.0"]["input"][0],
                self.grads[step]["proj.0"], f"step {step} proj")
            self.assertEqual(construct["Module.router.proj.Linear.backward.0"],
                             "Module.router.Router.backward.0")


if __name__ == "__main__":
    unittest.main()
