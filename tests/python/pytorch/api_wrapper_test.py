"""The C++ API wrapper (tprobe._C.ApiWrapper, levels L1 and mix) in a real
training process against a real tprobed: an API that raises propagates its
own exception and leaves no entry while training goes on, APIs called inside
a hooked API are not recorded, the wrapper shows the original's metadata and
binds as a Tensor method, hooks the user puts on the grad_fn that tprobe
hooked run (and come off) as torch's own, and restore() puts the originals
back.
"""

import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

_SCENARIO = textwrap.dedent("""
    import json, sys, torch, torch.nn.functional as F
    from tprobe.torch import PrecisionDebugger
    orig = {"add": torch.add, "Tensor.add": torch.Tensor.add,
            "normalize": F.normalize, "matmul": torch.matmul}
    d = PrecisionDebugger(config_path=sys.argv[1])
    meta = {}
    for key, now in (("add", torch.add), ("Tensor.add", torch.Tensor.add),
                     ("normalize", F.normalize)):
        o = orig[key]
        meta[key] = [now is not o, now.__wrapped__ is o,
                     now.__name__ == o.__name__,
                     now.__qualname__ == o.__qualname__,
                     now.__doc__ == o.__doc__]
    torch.manual_seed(0)
    x = torch.randn(3, 4, requires_grad=True)
    d.start()
    y = torch.add(x, 1)
    error = None
    try:
        torch.matmul(torch.ones(2, 3), torch.ones(2, 3))
    except RuntimeError as e:
        error = str(e)
    w = torch.matmul(y, torch.ones(4, 2))
    # The user's own hooks on the node whose backward tprobe records.
    registrar = type(torch.autograd.Function._register_hook).__name__
    user_grads = []
    kept = w.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: user_grads.append(
            [list(g.shape) for g in grad_outputs]))
    removed = w.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: user_grads.append("removed"))
    removed.remove()
    z = F.normalize(w, dim=1)
    bound = x.add(2)  # Tensor.add bound as a method of x
    # Stacks: two calls from one running frame, then a generator resumed
    # from two callers (its own frame is the same object both times).
    def two_lines():
        torch.mul(x, 2)  # Torch.mul.0
        torch.mul(x, 3)  # Torch.mul.1
    two_lines()
    def generator():
        while True:
            yield torch.mul(x, 4)
    resumed = generator()
    def first_caller():
        return next(resumed)  # Torch.mul.2
    def second_caller():
        return next(resumed)  # Torch.mul.3
    first_caller()
    second_caller()
    with torch.no_grad():
        no_grad = torch.mul(x, 5)  # Torch.mul.4: no grad_fn to hook
    # While Dynamo compiles on a thread (its compile context set there),
    # that thread's calls are not recorded; another thread's are.
    try:
        import threading
        from torch import _guards
        tls = _guards._TLS
        tls.compile_context = object()
        torch.sub(x, 1)  # compiling: not recorded
        other = threading.Thread(target=lambda: torch.sub(x, 2))
        other.start()
        other.join()  # Torch.sub.0
        tls.compile_context = None
        torch.sub(x, 3)  # Torch.sub.1
        compiling = True
    except (ImportError, AttributeError):  # torch 1.13
        compiling = False
    z.sum().backward()
    d.stop()
    d.step()
    flushed = d.session.flush(30000)
    d._apis.restore()
    restored = (torch.add is orig["add"]
                and torch.Tensor.add is orig["Tensor.add"]
                and F.normalize is orig["normalize"]
                and torch.matmul is orig["matmul"]
                and "_register_hook" not in vars(torch.autograd.Function))
    print("RESULT " + json.dumps({
        "meta": meta, "error": error, "flushed": flushed,
        "restored": restored, "busy": d._rt.local.busy,
        "y_max": float(y.max()), "bound_ok": bool(torch.equal(bound, x + 2)),
        "registrar": registrar, "user_grads": user_grads,
        "handle": type(kept).__name__, "compiling": compiling,
        "x_max": float(x.max()), "no_grad_fn": no_grad.grad_fn is None,
    }))
""")


class ApiWrapperTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-apiwrap-")
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            config = os.path.join(cls.tmp, "config.json")
            cls.dump = os.path.join(cls.tmp, "dump")
            with open(config, "w") as f:
                json.dump({"task": "statistics", "level": "L1",
                           "dump_path": cls.dump}, f)
            # A file, so that the stacks have source lines.
            script = os.path.join(cls.tmp, "scenario.py")
            with open(script, "w") as f:
                f.write(_SCENARIO)
            run = subprocess.run([sys.executable, script, config],
                                 env=daemon.env(), timeout=300, text=True,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        if run.returncode != 0:
            raise AssertionError(run.stderr)
        cls.result = json.loads(run.stdout.rsplit("RESULT ", 1)[1])
        root = os.path.join(cls.dump, "step0", "rank")
        with open(os.path.join(root, "dump.json")) as f:
            cls.data = json.load(f)["data"]
        with open(os.path.join(root, "stack.json")) as f:
            cls.stacks = {name: lines
                          for names, lines in json.load(f).values()
                          for name in names}

    def test_an_api_that_raises_propagates_and_leaves_no_entry(self) -> None:
        self.assertIn("cannot be multiplied", self.result["error"])
        # Its call was counted and ended: the next matmul is call 1, and is
        # recorded (the busy flag went back to 0).
        self.assertNotIn("Torch.matmul.0.forward", self.data)
        self.assertNotIn("Torch.matmul.0.forward", self.stacks)
        self.assertIn("Torch.matmul.1.forward", self.data)
        self.assertIn("Torch.matmul.1.backward", self.data)
        self.assertEqual(self.result["busy"], 0)
        self.assertTrue(self.result["flushed"])

    def test_apis_inside_a_hooked_api_are_not_recorded(self) -> None:
        # F.normalize calls Tensor.norm, clamp_min, expand_as and a division.
        self.assertIn("Functional.normalize.0.forward", self.data)
        self.assertIn("Functional.normalize.0.backward", self.data)
        inner = [n for n in self.data
                 if n.split(".")[1] in ("norm", "clamp_min", "expand_as",
                                        "div", "__truediv__")]
        self.assertEqual(inner, [])

    def test_entries_hold_the_real_values(self) -> None:
        out = self.data["Torch.add.0.forward"]["output"][0]
        self.assertAlmostEqual(out["Max"], self.result["y_max"], places=5)
        self.assertEqual(out["shape"], [3, 4])
        self.assertIn("Tensor.add.0.forward", self.data)
        self.assertTrue(self.result["bound_ok"])
        self.assertIn("y = torch.add(x, 1)",
                      self.stacks["Torch.add.0.forward"][0])

    def test_stacks_follow_the_frames(self) -> None:
        # Two calls from one running frame: each its own line, the same
        # caller.
        for n, line in ((0, "torch.mul(x, 2)"), (1, "torch.mul(x, 3)")):
            lines = self.stacks[f"Torch.mul.{n}.forward"]
            self.assertIn(line, lines[0])
            self.assertIn("two_lines()", lines[1])
        # A generator's frame, resumed from two callers: each stack names
        # the caller that resumed it.
        for n, caller in ((2, "first_caller"), (3, "second_caller")):
            lines = self.stacks[f"Torch.mul.{n}.forward"]
            self.assertIn("yield torch.mul(x, 4)", lines[0])
            self.assertIn(f"in {caller}", lines[1])
        # A call made with grad mode off is recorded, with no backward.
        self.assertTrue(self.result["no_grad_fn"])
        self.assertIn("Torch.mul.4.forward", self.data)
        self.assertIn("torch.mul(x, 5)",
                      self.stacks["Torch.mul.4.forward"][0])

    def test_user_hooks_on_a_hooked_grad_fn(self) -> None:
        # tprobe's hook went in through its registrar, and the user's two
        # hooks on the same node through torch's own path: the kept one ran
        # once with the node's gradient, the removed one never.
        self.assertEqual(self.result["registrar"], "NodeHookRegistrar")
        self.assertEqual(self.result["handle"], "RemovableHandle")
        self.assertEqual(self.result["user_grads"], [[[3, 2]]])
        self.assertIn("Torch.matmul.1.backward", self.data)

    def test_calls_while_dynamo_compiles_are_not_recorded(self) -> None:
        if not self.result["compiling"]:
            self.skipTest("this torch has no compile context")
        subs = sorted(n for n in self.data if n.startswith("Torch.sub."))
        self.assertEqual(subs, ["Torch.sub.0.forward", "Torch.sub.1.forward"])
        for n, minus in ((0, 2), (1, 3)):
            out = self.data[f"Torch.sub.{n}.forward"]["output"][0]
            self.assertAlmostEqual(out["Max"], self.result["x_max"] - minus,
                                   places=5)

    def test_metadata_and_restore(self) -> None:
        for key, checks in self.result["meta"].items():
            self.assertEqual(checks, [True] * 5, key)
        self.assertTrue(self.result["restored"])


if __name__ == "__main__":
    unittest.main()
