"""The rest of msprobe's PyTorch debugger API, each scenario in its own
process against one real tprobed: set_init_step, module_dump /
module_dump_end (at L1 too), seed_all, save, forward_backward_dump_end, and
the clear errors for what tprobe does not support (token_range, level debug
with task overflow_check). Where msprobe 26.x is installed, one script of
set_init_step, module_dump at L1, seed_all and gradients accumulated over
steps runs under both tools, and the trees are compared; so does a model
whose gradients Megatron's DDP accumulates into ``param.main_grad``.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from golden_compare import compare_live_tree  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

# A tiny model; SCENARIO_BODY runs with d (the debugger), model, x and
# config_path (argv[1]) defined.
_PRELUDE = textwrap.dedent("""
    import json, sys, torch, torch.nn as nn
    from tprobe.torch import (PrecisionDebugger, module_dump,
                              module_dump_end, seed_all)
    config_path = sys.argv[1]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
""")


# set_init_step, module_dump at level L1 (twice in a step, in two steps),
# seed_all and gradients that accumulate over steps (no zero_grad), run
# under msprobe 26.x and tprobe. argv: tool, config path, dump path.
_PARITY_SCRIPT = textwrap.dedent("""
    import json, random, sys, numpy, torch, torch.nn as nn
    tool, config_path, dump_path = sys.argv[1:4]
    if tool == "msprobe":
        from msprobe.pytorch import (PrecisionDebugger, module_dump,
                                     module_dump_end, seed_all)
    else:
        from tprobe.torch import (PrecisionDebugger, module_dump,
                                  module_dump_end, seed_all)
    with open(config_path, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump_path,
                   "level": "L1", "step": [5, 6]}, f)
    seed_all(7)
    print("SEEDED", json.dumps([random.random(), float(numpy.random.rand()),
                                torch.rand(1).item()]))
    d = PrecisionDebugger(config_path=config_path)
    d.set_init_step(5)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
    for step in range(3):
        d.start()
        module_dump(model[0], "lin")
        h = model[0](x)
        module_dump_end()
        module_dump(model[1], "relu")
        h = model[1](h)
        module_dump_end()
        model[2](h).sum().backward()
        d.stop()
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")


# Megatron's DDP as far as gradients go: a hook on each parameter's
# AccumulateGrad node adds param.grad into param.main_grad and clears
# param.grad. Written as megatron/core/distributed.py, so that the model's
# class comes from a megatron module, as in Megatron.
_MEGATRON_DDP = textwrap.dedent("""
    import torch


    class DistributedDataParallel(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            self.grad_accs = []
            for param in module.parameters():
                param.main_grad = torch.zeros_like(param)
                acc = param.expand_as(param).grad_fn.next_functions[0][0]
                acc.register_hook(self._hook(param))
                self.grad_accs.append(acc)

        @staticmethod
        def _hook(param):
            def hook(*_):
                param.main_grad.add_(param.grad)
                param.grad = None
            return hook

        def zero_grad_buffer(self):
            for param in self.module.parameters():
                param.main_grad.zero_()

        def forward(self, x):
            return self.module(x)
""")

# Two steps of two micro-batches each on the same batch, under msprobe 26.x
# or tprobe: main_grad after the second is twice that after the first.
# argv: tool, config path, dump path, the folder holding megatron/.
_MEGATRON_SCRIPT = textwrap.dedent("""
    import json, sys, torch, torch.nn as nn
    tool, config_path, dump_path, packages = sys.argv[1:5]
    sys.path.insert(0, packages)
    from megatron.core.distributed import DistributedDataParallel
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger, seed_all
    else:
        from tprobe.torch import PrecisionDebugger, seed_all
    with open(config_path, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump_path,
                   "level": "L0", "step": [0, 1]}, f)
    seed_all(3)
    d = PrecisionDebugger(config_path=config_path)
    model = DistributedDataParallel(
        nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)))
    x = torch.randn(3, 4)
    for step in range(2):
        model.zero_grad_buffer()
        d.start(model=[model])
        for _ in range(2):
            model(x).sum().backward()
        d.stop()
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")


class DebuggerApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-debugapi-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def run_scenario(self, name: str, config: dict, body: str,
                     ok: bool = True) -> subprocess.CompletedProcess:
        path = os.path.join(self.tmp, f"{name}.json")
        config = dict(config, dump_path=os.path.join(self.tmp, name))
        with open(path, "w") as f:
            json.dump(config, f)
        run = subprocess.run(
            [sys.executable, "-c", _PRELUDE + textwrap.dedent(body), path],
            env=self.daemon.env(), timeout=300, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if ok:
            self.assertEqual(run.returncode, 0, run.stderr)
        return run

    def dump(self, name: str, step: int) -> dict:
        with open(os.path.join(self.tmp, name, f"step{step}", "rank",
                               "dump.json")) as f:
            return json.load(f)["data"]

    def test_set_init_step_numbers_the_steps_from_it(self) -> None:
        self.run_scenario("init_step", {"task": "statistics", "level": "L0"},
                          """
            d = PrecisionDebugger(config_path=config_path)
            d.set_init_step(5)
            for _ in range(2):
                d.start(model); model(x).sum().backward(); d.stop(); d.step()
            assert d.session.flush(30000)
        """)
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp,
                                                        "init_step"))),
                         ["step5", "step6"])
        self.assertIn("Module.0.Linear.forward.0", self.dump("init_step", 6))

    def test_set_init_step_refuses_a_negative_step(self) -> None:
        run = self.run_scenario("bad_init", {"task": "statistics",
                                             "level": "L1"}, """
            d = PrecisionDebugger(config_path=config_path)
            d.set_init_step(-1)
        """, ok=False)
        self.assertIn("set_init_step: step must be an integer >= 0",
                      run.stderr)

    def test_module_dump_records_the_module_alone(self) -> None:
        self.run_scenario("module_dump", {"task": "statistics",
                                          "level": "mix"}, """
            d = PrecisionDebugger(config_path=config_path)
            d.start()
            torch.tanh(x)
            module_dump(model, "net")
            model(x).sum().backward()
            module_dump_end()
            torch.tanh(x)
            d.stop(); d.step()
            assert d.session.flush(30000)
        """)
        data = self.dump("module_dump", 0)
        forward = [n for n in data if "forward" in n]
        # The APIs outside the module dump, the module itself; nothing of
        # what runs inside it (Linear, ReLU, linear, relu).
        self.assertEqual(forward, ["Torch.tanh.0.forward",
                                   "Module.net.Sequential.forward.0",
                                   "Torch.tanh.1.forward"])
        self.assertIn("Module.net.Sequential.backward.0", data)
        self.assertEqual(data["Module.net.Sequential.forward.0"]["output"][0]
                         ["shape"], [3, 2])

    def test_module_dump_at_l1_records_the_module_without_a_node(
            self) -> None:
        self.run_scenario("module_dump_l1", {"task": "statistics",
                                             "level": "L1"}, """
            d = PrecisionDebugger(config_path=config_path)
            for _ in range(2):  # module_dump again in the next step
                d.start()
                module_dump(model[1], "act")
                h = model[1](model[0](x))
                module_dump_end()
                model[2](h).sum().backward()
                d.stop(); d.step()
            assert d.session.flush(30000)
        """)
        for step in (0, 1):
            data = self.dump("module_dump_l1", step)
            self.assertEqual([n for n in data if n.startswith("Module.")],
                             ["Module.act.ReLU.forward.0",
                              "Module.act.ReLU.backward.0"])
            # model[0] and model[1] ran inside module_dump: only model[2]'s
            # linear is recorded.
            self.assertNotIn("Functional.relu.0.forward", data)
            self.assertIn("Functional.linear.0.forward", data)
            self.assertNotIn("Functional.linear.1.forward", data)
            with open(os.path.join(self.tmp, "module_dump_l1",
                                   f"step{step}", "rank",
                                   "construct.json")) as f:
                self.assertEqual(json.load(f), {})

    def test_module_kwargs_are_input_kwargs_on_torch_2(self) -> None:
        self.run_scenario("kwargs", {"task": "statistics", "level": "L0"},
                          """
            class Scale(nn.Module):
                def forward(self, x, *, factor=1.0):
                    return x * factor
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = Scale()
                def forward(self, x):
                    return self.scale(x, factor=0.5)
            d = PrecisionDebugger(config_path=config_path)
            net = Net()
            d.start(net); net(x.requires_grad_()).sum().backward(); d.stop()
            d.step()
            assert d.session.flush(30000)
        """)
        entry = self.dump("kwargs", 0)["Module.scale.Scale.forward.0"]
        # PyTorch 1.13 hands module hooks no kwargs (msprobe writes {}).
        expected = ({} if torch.__version__.startswith("1.") else
                    {"factor": {"type": "float", "value": 0.5}})
        self.assertEqual(entry["input_kwargs"], expected)
        self.assertEqual(entry["input_args"][0]["shape"], [3, 4])

    @unittest.skipUnless(hasattr(torch, "compiler"), "no torch.compiler")
    def test_a_compiled_model_is_dumped_as_in_eager_mode(self) -> None:
        # Dynamo (the eager backend: no C++ compile in the test) breaks the
        # graph around every hooked call, and never traces tprobe's module
        # hooks, so the dump is the eager run's: the calls Dynamo makes
        # while compiling are not recorded, and no compiled hook's guards
        # call Tensor.stride (risk_level ALL would dump them). msprobe 26.x
        # raises on Dynamo at L0 and mix.
        config = {"task": "statistics", "level": "mix", "risk_level": "ALL"}
        for name, forward in (("eager", "model"),
                              ("compiled",
                               "torch.compile(model, backend='eager')")):
            self.run_scenario(name, config, f"""
                d = PrecisionDebugger(config_path=config_path)
                forward = {forward}
                for _ in range(2):
                    d.start(model); forward(x).sum().backward(); d.stop()
                    d.step()
                assert d.session.flush(30000)
            """)
        for step in (0, 1):
            eager = self.dump("eager", step)
            self.assertIn("Module.2.Linear.backward.0", eager)
            self.assertEqual(list(self.dump("compiled", step)), list(eager))
            construct = os.path.join(self.tmp, "compiled", f"step{step}",
                                     "rank", "construct.json")
            with open(construct) as f:
                self.assertNotIn("Tensor.stride", f.read())

    def test_seed_all_makes_runs_repeat(self) -> None:
        run = self.run_scenario("seed", {"task": "statistics",
                                         "level": "L1"}, """
            import random, numpy
            import torch.nn.functional as F
            seed_all(7, mode=True, rm_dropout=True)
            a = (random.random(), numpy.random.rand(), torch.rand(1).item())
            seed_all(7)
            b = (random.random(), numpy.random.rand(), torch.rand(1).item())
            print("SAME", a == b)
            print("DETERMINISTIC", torch.are_deterministic_algorithms_enabled())
            ones = torch.ones(1000)
            print("NO_DROPOUT", bool((F.dropout(ones, 0.9) == ones).all()))
            try:
                seed_all(-1)
            except ValueError as e:
                print("ERROR", e)
        """)
        self.assertIn("SAME True", run.stdout)
        self.assertIn("DETERMINISTIC False", run.stdout)  # the second call
        self.assertIn("NO_DROPOUT True", run.stdout)
        self.assertIn("ERROR seed_all: seed must be between 0 and 4294967295",
                      run.stdout)

    def test_save_is_ignored_outside_level_debug(self) -> None:
        run = self.run_scenario("save", {"task": "statistics",
                                         "level": "L1"}, """
            d = PrecisionDebugger(config_path=config_path)
            d.start(); d.save(x, "x"); d.forward_backward_dump_end(); d.step()
            assert d.session.flush(30000)
            d.save(x, 3)  # msprobe looks at nothing outside level debug
            print("IGNORED")
        """)
        self.assertIn("IGNORED", run.stdout)
        self.assertNotIn("PrecisionDebugger.save", run.stderr)
        self.assertEqual(self.dump("save", 0), {})

    @unittest.skipUnless(importlib.util.find_spec("msprobe"),
                         "needs an installed msprobe (the project's venv)")
    def test_msprobes_own_default_config_runs_unchanged(self) -> None:
        # The config.json inside the installed msprobe package, as it ships
        # (extra_info, async_dump, an acc_check section): only dump_path is
        # moved into the test's folder.
        spec = importlib.util.find_spec("msprobe")
        with open(os.path.join(os.path.dirname(spec.origin),
                               "config.json")) as f:
            config = json.load(f)
        self.assertIn("acc_check", config)
        self.run_scenario("msprobe_default", config, """
            d = PrecisionDebugger(config_path=config_path)
            d.start(model)
            model(x).sum().backward()
            d.stop()
            d.step()
            assert d.session.flush(30000)
        """)
        # Its level is L1: the API calls are dumped.
        self.assertIn("Functional.linear.0.forward",
                      self.dump("msprobe_default", 0))

    def test_token_range_is_refused_by_name(self) -> None:
        run = self.run_scenario("token", {"task": "statistics",
                                          "level": "L1"}, """
            d = PrecisionDebugger(config_path=config_path)
            d.start(token_range=[0, 4])
        """, ok=False)
        self.assertIn("token_range is not supported by tprobe", run.stderr)

    def test_level_debug_with_task_overflow_check_is_refused(self) -> None:
        run = self.run_scenario("debug", {"task": "overflow_check",
                                          "level": "debug"}, """
            PrecisionDebugger(config_path=config_path)
        """, ok=False)
        self.assertIn("level debug is invalid with task overflow_check",
                      run.stderr)



def run_script(test: unittest.TestCase, script: str, tool: str, tmp: str,
               env: dict, *args: str) -> tuple:
    """Runs a parity script under `tool` ("msprobe" or "tprobe"), with argv
    tool, its config path, its dump path (both in `tmp`) and `args`.
    Returns its stdout and {step folder: its rank folder}."""
    dump = os.path.join(tmp, tool)
    run = subprocess.run(
        [sys.executable, "-c", script, tool,
         os.path.join(tmp, f"{tool}.json"), dump, *args],
        env=env, timeout=300, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    test.assertEqual(run.returncode, 0, run.stderr[-3000:])
    steps = {step: os.path.join(dump, step, os.listdir(
                 os.path.join(dump, step))[0])
             for step in os.listdir(dump)}
    return run.stdout, steps


def assert_same_trees(test: unittest.TestCase, mine: dict, theirs: dict,
                      steps: list) -> None:
    """Both runs (run_script's folders) have `steps`, and each step's tree
    is msprobe's (compare_live_tree)."""
    test.assertEqual(sorted(mine), steps)
    test.assertEqual(sorted(theirs), steps)
    for step in steps:
        with test.subTest(step=step):
            test.assertEqual(compare_live_tree(theirs[step], mine[step]), [])


@unittest.skipUnless(importlib.util.find_spec("msprobe")
                     and torch.__version__ >= "2",
                     "needs msprobe 26.x (the project's venv)")
class MsprobeParityTest(unittest.TestCase):
    """_PARITY_SCRIPT under both tools: the same seeded numbers, the same
    step folders, and in each the same dump.json (names, order, values),
    construct.json and stack.json groups."""

    def run_tool(self, tool: str, tmp: str, env: dict) -> tuple:
        stdout, steps = run_script(self, _PARITY_SCRIPT, tool, tmp, env)
        seeded = json.loads(stdout.split("SEEDED ", 1)[1].splitlines()[0])
        return seeded, steps

    def test_same_trees_as_msprobe(self) -> None:
        tmp = fresh_dir("tp-apiparity-")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            mine_seeded, mine = self.run_tool("tprobe", tmp, daemon.env())
            theirs_seeded, theirs = self.run_tool("msprobe", tmp,
                                                  daemon.env())
        self.assertEqual(mine_seeded, theirs_seeded)
        assert_same_trees(self, mine, theirs, ["step5", "step6"])
        with open(os.path.join(mine["step6"], "dump.json")) as f:
            names = list(json.load(f)["data"])
        self.assertEqual([n for n in names if n.startswith("Module.")],
                         ["Module.lin.Linear.forward.0",
                          "Module.relu.ReLU.forward.0",
                          "Module.relu.ReLU.backward.0",
                          "Module.lin.Linear.backward.0",
                          "Module.lin.Linear.parameters_grad.0"])


@unittest.skipUnless(importlib.util.find_spec("msprobe")
                     and torch.__version__ >= "2.1",
                     "needs msprobe 26.x (the project's venv)")
class MegatronMainGradTest(unittest.TestCase):
    """_MEGATRON_SCRIPT under both tools: parameters_grad holds
    param.main_grad, read behind Megatron's hook, in the same trees."""

    def run_tool(self, tool: str, tmp: str, env: dict) -> dict:
        return run_script(self, _MEGATRON_SCRIPT, tool, tmp, env, tmp)[1]

    def test_parameter_gradients_are_main_grad_as_in_msprobe(self) -> None:
        tmp = fresh_dir("tp-megatron-")
        os.makedirs(os.path.join(tmp, "megatron", "core"))
        for init in ("megatron", os.path.join("megatron", "core")):
            open(os.path.join(tmp, init, "__init__.py"), "w").close()
        with open(os.path.join(tmp, "megatron", "core", "distributed.py"),
                  "w") as f:
            f.write(_MEGATRON_DDP)
        with Tprobed(tprobed_binary(), tmp) as daemon:
            mine = self.run_tool("tprobe", tmp, daemon.env())
            theirs = self.run_tool("msprobe", tmp, daemon.env())
        assert_same_trees(self, mine, theirs, ["step0", "step1"])
        with open(os.path.join(mine["step1"], "dump.json")) as f:
            data = json.load(f)["data"]
        grads = [data[f"Module.0.module.0.Linear.parameters_grad.{k}"]
                 ["weight"][0] for k in (0, 1)]
        # The second micro-batch's main_grad holds both: twice the first,
        # where param.grad would hold the second alone.
        self.assertAlmostEqual(grads[1]["Max"], 2 * grads[0]["Max"],
                               places=5)
        self.assertAlmostEqual(grads[1]["Norm"], 2 * grads[0]["Norm"],
                               places=5)


if __name__ == "__main__":
    unittest.main()
