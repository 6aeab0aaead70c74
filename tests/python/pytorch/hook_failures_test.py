"""A failure inside tprobe's module and parameter hooks (their C++,
client/python/binding/module_hook.h and param_grad_hook.h), on a real model
through a real tprobed: an Exception costs the entry and is said once on
stderr, while training goes on with the values it would have without
tprobe; an error that is not an Exception (KeyboardInterrupt) reaches the
trainer, as it would from the trainer's own code. And the hooks' types
refuse bad arguments.
"""

import contextlib
import io
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


class Halves(nn.Module):
    """Returns a dict (the hooks' Python walk) and a lone tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> dict:
        y = self.lin(x)
        return {"a": y[:, :2], "b": y[:, 2:]}


def model() -> nn.Module:
    torch.manual_seed(3)
    return nn.ModuleDict({"first": nn.Linear(4, 4), "halves": Halves()})


def step(net: nn.Module, x: torch.Tensor) -> tuple:
    """One forward and backward: the loss and the parameters' gradients."""
    out = net["halves"](torch.tanh(net["first"](x)))
    loss = (out["a"] * 2).sum() + out["b"].square().sum()
    loss.backward()
    return loss.item(), [p.grad.clone() for p in net.parameters()]


class HookFailuresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-hook-failures-")
        cls.config = os.path.join(cls.tmp, "config.json")
        with open(cls.config, "w") as f:
            json.dump({"task": "statistics", "level": "L0",
                       "dump_path": os.path.join(cls.tmp, "dump")}, f)
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp)
        cls.daemon.__enter__()
        os.environ.update(cls.daemon.env())
        from tprobe.torch import PrecisionDebugger
        cls.debugger = PrecisionDebugger(config_path=cls.config)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.__exit__(None, None, None)

    def test_an_internal_failure_costs_the_entry_not_the_training(
            self) -> None:
        x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4))
        expected = step(model(), x)
        grads = self.debugger._grads

        def ensure(module, base):
            raise RuntimeError("a failure inside tprobe")

        grads.ensure = ensure
        stderr = io.StringIO()
        try:
            net = model()
            with contextlib.redirect_stderr(stderr):
                self.debugger.start(net)
                got = step(net, x)
                self.debugger.stop()
                self.debugger.step()
        finally:
            del grads.ensure
        self.assertEqual(got[0], expected[0])
        for have, want in zip(got[1], expected[1]):
            self.assertTrue(torch.equal(have, want))
        said = stderr.getvalue()
        self.assertIn("internal error in a module forward hook", said)
        self.assertIn("a failure inside tprobe", said)
        self.assertEqual(said.count("internal error"), 1, said)

    def test_keyboard_interrupt_reaches_the_trainer(self) -> None:
        grads = self.debugger._grads

        def ensure(module, base):
            raise KeyboardInterrupt

        grads.ensure = ensure
        try:
            net = model()
            self.debugger.start(net)
            with self.assertRaises(KeyboardInterrupt):
                net["first"](torch.randn(3, 4, requires_grad=True))
        finally:
            del grads.ensure
            self.debugger.stop()
            self.debugger.step()

    def test_bad_arguments_are_refused(self) -> None:
        from tprobe import _C
        with self.assertRaises(TypeError):
            _C.ParamGradHook(object(), "Module.a.Linear", "weight", True)
        hook = _C.ParamGradHook(self.debugger._rt, "Module.a.Linear",
                                "weight", False)
        with self.assertRaises(TypeError):
            hook()
        self.assertIsNone(hook(None))  # no gradient: nothing reported
        base = _C.ModuleHookBase()
        with self.assertRaises(TypeError):
            base.eager_pre(None, ())
        with self.assertRaises(TypeError):
            base.end(object(), None, None)
        # No runtime: a hook records nothing and leaves the call alone.
        self.assertFalse(base.records())
        self.assertIsNone(base.eager_pre(nn.Linear(1, 1), (), {}))


if __name__ == "__main__":
    unittest.main()
