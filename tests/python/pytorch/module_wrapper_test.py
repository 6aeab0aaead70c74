"""The module call wrapper (tprobe._C.ModuleWrapper, PyTorch >= 2.1): a
module's calls run tprobe's module hooks from its _compiled_call_impl,
without torch's hook loop, where nothing else hooks the module.

- The same models give the same trees through the wrapper as through
  torch's hooks (TPROBE_MODULE_WRAPPER=0): nested tuple, list and dict
  outputs, an LSTM, an MoE block with in-place index_add_, a module that
  appends to its list argument, a ModelOutput, a module reused in a step,
  and train_tiny_gpt.py, at L0 and mix, every entry's values included.
- Where it goes: on every module without a hook of its own, out of them
  for a step the config does not select and back for the next that is
  selected; a module with a user's hook keeps tprobe's hooks in torch's
  dict instead; a deepcopy or a pickle of the model carries no wrapper,
  and the copy runs; nn.DataParallel's replica of a module gets a wrapper
  of its own, and its calls are the module's entries.
- What it spares: a dump of an eager model whose modules are all wrapped,
  at L0 and mix, never imports torch._dynamo (about 0.9 s a process),
  which importing tprobe.torch did before.
(A forward that raises, through the wrapper: module_hooks_test; torch.
compile after start(): debugger_api_test's compiled model.)
"""

import copy
import json
import os
import pickle
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import golden_compare  # noqa: E402
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tprobe._C import ModuleWrapper  # noqa: E402
from tprobe.torch import module_hooks  # noqa: E402

# name: the script and its arguments (beside --config and --dump-path).
_MODELS = {
    "nested": [os.path.join(HERE, "nested_model.py"), "--tool", "tprobe"],
    "container": [os.path.join(HERE, "container_model.py"), "--tool",
                  "tprobe"],
    "tiny_gpt": [os.path.join(ROOT, "examples", "train_tiny_gpt.py"),
                 "--tool", "tprobe", "--steps", "2"],
}


def _tree(where: str) -> dict:
    tree = {}
    for step in sorted(os.listdir(where)):
        rank = os.path.join(where, step, "rank")
        tree[step] = {name: golden_compare.load(rank, name)
                      for name in ("dump.json", "construct.json",
                                   "stack.json")}
    return tree


@unittest.skipUnless(module_hooks._WRAPS, "PyTorch < 2.1: hooks only")
class ModuleWrapperTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-module-wrapper-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.__exit__(None, None, None)

    def run_model(self, name: str, level: str, wrapper: bool) -> dict:
        where = os.path.join(self.tmp, f"{name}-{level}-{int(wrapper)}")
        config = os.path.join(self.tmp, f"{name}-{level}-{int(wrapper)}.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": level,
                       "dump_path": where}, f)
        env = self.daemon.env(PYTHONPATH=python_path(),
                              TPROBE_MODULE_WRAPPER="1" if wrapper else "0")
        run = subprocess.run(
            [sys.executable] + _MODELS[name] +
            ["--config", config, "--dump-path", where],
            env=env, timeout=600, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.assertEqual(run.returncode, 0, run.stdout)
        return _tree(where)

    def test_the_same_trees_as_through_torchs_hooks(self) -> None:
        for name in _MODELS:
            for level in ("L0", "mix"):
                with self.subTest(model=name, level=level):
                    hooks = self.run_model(name, level, wrapper=False)
                    wrapped = self.run_model(name, level, wrapper=True)
                    self.assertEqual(sorted(wrapped), sorted(hooks))
                    self.assertTrue(hooks)
                    for step, tree in hooks.items():
                        mine = wrapped[step]
                        self.assertEqual(mine["dump.json"], tree["dump.json"])
                        self.assertEqual(mine["construct.json"],
                                         tree["construct.json"])
                        # The stacks differ in torch's own frames only.
                        self.assertEqual(golden_compare.compare_stack(
                            tree["stack.json"], mine["stack.json"]), [])

    def test_where_the_wrapper_goes(self) -> None:
        from tprobe.torch import PrecisionDebugger
        config = os.path.join(self.tmp, "where.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L0", "step": [0, 2],
                       "dump_path": os.path.join(self.tmp, "where")}, f)
        os.environ.update(self.daemon.env())
        debugger = PrecisionDebugger(config_path=config)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        model[0].register_forward_hook(lambda *_: None)
        x = torch.randn(3, 4)

        def wrapped():
            return [isinstance(vars(m).get("_compiled_call_impl"),
                               ModuleWrapper) for m in model.modules()]

        seen = []
        for step in range(3):
            debugger.start(model)
            seen.append(wrapped())
            if step < 2:
                out = model(x)
            else:
                # nn.DataParallel's replica of the last Linear in its place
                # (its parameters are the module's here, as the test has
                # no devices to broadcast to): wrapped for itself.
                last = model[2]._replicate_for_data_parallel()
                last._parameters = model[2]._parameters
                self.assertIs(vars(last)["_compiled_call_impl"].module, last)
                self.assertIs(vars(model[2])["_compiled_call_impl"].module,
                              model[2])
                out = last(model[1](model[0](x)))
            out.sum().backward()
            debugger.stop()
            if step == 0:
                self.assertEqual(len(model[0]._forward_hooks), 2)
                # (model[0]'s hooks, bound to tprobe's state, cannot be
                # copied: only wrapped modules here.)
                last = model[2]
                for twin in (copy.deepcopy(last),
                             pickle.loads(pickle.dumps(last))):
                    self.assertNotIn("_compiled_call_impl", vars(twin))
                    self.assertTrue(torch.equal(twin(x), last(x)))
            debugger.step()
        self.assertTrue(debugger.session.flush(30000))
        # ReLU and the last Linear (model[0] has the user's hook; the root
        # is not hooked, as in msprobe).
        self.assertEqual(seen, [[False, False, True, True],
                                [False] * 4,
                                [False, False, True, True]])
        dumped = os.path.join(self.tmp, "where")
        self.assertEqual(sorted(s for s in os.listdir(dumped)
                                if s.startswith("step")), ["step0", "step2"])
        trees = [golden_compare.load(os.path.join(dumped, s, "rank"),
                                     "dump.json")["data"]
                 for s in ("step0", "step2")]
        self.assertEqual(list(trees[0]), list(trees[1]))
        self.assertIn("Module.1.ReLU.backward.0", trees[1])

    def test_an_eager_dump_does_not_import_dynamo(self) -> None:
        for level in ("L0", "mix"):
            with self.subTest(level=level):
                where = os.path.join(self.tmp, f"no-dynamo-{level}")
                run = subprocess.run(
                    [sys.executable, "-c", _NO_DYNAMO, level, where],
                    env=self.daemon.env(PYTHONPATH=python_path()),
                    timeout=600, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)
                self.assertEqual(run.returncode, 0, run.stdout)
                self.assertEqual(run.stdout.splitlines()[-1],
                                 "dynamo imported: False", run.stdout)
                data = golden_compare.load(
                    os.path.join(where, "step0", "rank"), "dump.json")["data"]
                self.assertIn("Module.0.Linear.forward.0", data)
                self.assertIn("Module.0.Linear.backward.0", data)


# Dumps one step of a small model (argv: level, dump path) and says whether
# torch._dynamo was imported by then.
_NO_DYNAMO = """
import json, sys
import torch
from tprobe.torch import PrecisionDebugger
level, where = sys.argv[1:]
with open(where + ".json", "w") as f:
    json.dump({"task": "statistics", "level": level, "dump_path": where}, f)
debugger = PrecisionDebugger(config_path=where + ".json")
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(),
                            torch.nn.Linear(4, 2))
debugger.start(model)
model(torch.randn(3, 4)).sum().backward()
debugger.stop()
debugger.step()
assert debugger.session.flush(30000)
print("dynamo imported:", "torch._dynamo" in sys.modules)
"""


if __name__ == "__main__":
    unittest.main(verbosity=2)
