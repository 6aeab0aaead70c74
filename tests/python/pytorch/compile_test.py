"""tprobe at L0 under torch.compile (Inductor, CPU) against a real tprobed,
on examples/compiled_transformer.py: two transformer blocks (SDPA
attention, GELU MLP, a tied head), a module with in-place ops called twice
in one forward. Each run is its own process with its own daemon:

- with tprobe on the compiled model, Dynamo counts no graph break and as
  many graphs as the compiled model without tprobe, for the model compiled
  whole and for each block compiled alone (`blocks[i] =
  torch.compile(block)`, whose own hooks run outside its graph);
- the compiled run's dump.json has the eager run's entries (no
  `_orig_mod`) in eager's order, the backward's and the parameters_grad
  entries included (torch accumulates a compiled backward's parameter
  gradients when it ends; their places are held where eager's come),
  each entry the same rows, and every statistic (Max, Min, Mean, Norm)
  within compile's float rounding of eager's (1e-5 + 1e-3 relative), the
  in-place module's output as eager saw it included; the same with blocks
  compiled alone; `tprobe compare` of the two trees pairs every row;
- each forward entry's stack in stack.json shows the model's own lines as
  eager's does (the traced code's frames, not Inductor's generated code);
- with statistics_on framework, the compiled graphs compute the
  statistics of the module calls' float tensors and gradients themselves
  (the binding's hook takes them), within compile's rounding of an eager
  run's;
- selecting steps 0, 2 and 4 of 6 (hooks in, out, in, ...) compiles at most
  3 times, not once a step, and a step that is not dumped runs a graph
  without tprobe's ops (none of their kernels is called);
- with --plant (blocks.1's GELU in bfloat16, its output left so, under
  compile only), `tprobe compare COMPILED EAGER` names that module as the
  first divergence, in step 0;
- at mix (module and API hooks, the API calls run eagerly) the compiled
  model, in-place ops on module outputs included, trains to the end and
  every step is dumped.

Registered for the venv only: torch 1.13 has no torch.compile.
"""

import json
import os
import re
import subprocess
import sys
import unittest
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "compiled_transformer.py")
CONFIG = os.path.join(ROOT, "examples", "config_l0.json")
STEPS = 2
STATS = ("Max", "Min", "Mean", "Norm")
# compile's float rounding, float32: |compiled - eager| <= ABS + REL * |eager|
REL, ABS = 1e-3, 1e-5
PLANTED = "Module.blocks.1.mlp.act.Gelu.forward.0"
EXIT_FOUND = 4


# Trains the example compiled with config.json argv[2], dumping steps 1 and
# 3 of 5, and prints how many times tprobe's forward ops' kernels ran in
# each step, and how many tensors' statistics the graph computed.
COUNT_OPS = f"""
import json, sys
sys.path.insert(0, {os.path.join(ROOT, "examples")!r})
import torch, torch.nn.functional as F
import compiled_transformer as ct
from tprobe.torch import PrecisionDebugger, compiled_hooks, stats
calls, given = [0], [0]
for name in ("_open", "_close"):
    def counted(*args, real=getattr(compiled_hooks, name)):
        calls[0] += 1
        return real(*args)
    setattr(compiled_hooks, name, counted)
def reduce(t, real=stats.reduce):
    given[0] += id(t) in stats.given
    return real(t)
stats.reduce = reduce
torch.manual_seed(0)
debugger = PrecisionDebugger(config_path=sys.argv[2], dump_path=sys.argv[1],
                             step=[1, 3])
net = ct.Transformer()
model = torch.compile(net)
data = ct.batches(torch.Generator().manual_seed(1))
counts = []
for step in range(5):
    inputs, targets = next(data)
    debugger.start(model)
    loss = F.cross_entropy(model(inputs).reshape(-1, ct.VOCAB),
                           targets.reshape(-1))
    loss.backward()
    debugger.stop()
    debugger.step()
    counts.append((calls[0], given[0]))
    calls[0] = given[0] = 0
print("OPS " + json.dumps(counts))
"""


# The ops' names call the kernels directly at run time, and go through
# the dispatcher under a dispatch mode (as when AOT autograd traces).
DIRECT = """
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from tprobe.torch import compiled_hooks
seen = []
class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seen.append(func)
        return func(*args, **(kwargs or {}))
name = torch.ops.tprobe.backward_end.default
kernel_calls = []
class Calls(dict):  # the kernel's first step: _calls.pop
    def pop(self, *args):
        kernel_calls.append(1)
        return super().pop(*args)
compiled_hooks._calls = Calls()
args = (torch.zeros(1), torch.zeros((), dtype=torch.int64), [], [], [])
name(*args)
direct = (len(kernel_calls), len(seen))
with Mode():
    name(*args)
print("DIRECT", type(name).__name__, direct, len(kernel_calls),
      seen == [compiled_hooks._OPS["backward_end"]])
"""


def framework_config(tmp: str) -> str:
    """CONFIG with tprobe.statistics_on framework, written into tmp."""
    with open(CONFIG) as f:
        config = json.load(f)
    config["tprobe"] = {"statistics_on": "framework"}
    path = os.path.join(tmp, "config_framework.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def tprobe_cli() -> str:
    return os.path.abspath(os.environ.get("TPROBE_CLI")
                           or os.path.join(ROOT, "build", "bin", "tprobe"))


class Run:
    """One run of the example: its dump root and Dynamo's counts."""

    def __init__(self, tmp: str, name: str, *flags: str,
                 env: Optional[Dict[str, str]] = None) -> None:
        self.dump = os.path.join(tmp, name)
        cmd = [sys.executable, SCRIPT, "--out", self.dump, *flags]
        if "--steps" not in flags:
            cmd += ["--steps", str(STEPS)]
        with Tprobed(tprobed_binary(), fresh_dir("tp-comp-")) as daemon:
            run = subprocess.run(cmd, env=daemon.env(**(env or {})),
                                 timeout=600,
                                 text=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            if run.returncode != 0:
                raise AssertionError(f"{cmd} failed:\n{run.stdout[-6000:]}")
            if daemon.stop() != 0:
                raise AssertionError("tprobed failed: " + daemon.log())
        self.stdout = run.stdout
        counts = re.search(r"dynamo: (\d+) graph breaks, (\d+) graphs, "
                           r"(\d+) compiled frames", run.stdout)
        self.breaks, self.graphs, self.frames = (
            tuple(int(n) for n in counts.groups()) if counts else (None,) * 3)

    def stacks(self, step: int) -> Dict[str, List[str]]:
        """stack.json's lines by entry name."""
        with open(os.path.join(self.dump, f"step{step}", "rank",
                               "stack.json")) as f:
            return {name: lines for names, lines in json.load(f).values()
                    for name in names}

    def entries(self, step: int) -> Dict[str, dict]:
        with open(os.path.join(self.dump, f"step{step}", "rank",
                               "dump.json")) as f:
            return json.load(f)["data"]


def stat_rows(value, name: str = "") -> Dict[str, dict]:
    """Every tensor's statistics in `value` (a dump.json entry), by row
    name (.output.0, .parameters.weight, ...)."""
    rows = {}
    if isinstance(value, dict) and "Max" in value:
        rows[name] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            rows.update(stat_rows(item, f"{name}.{key}"))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            rows.update(stat_rows(item, f"{name}.{i}"))
    return rows


def compare(target: str, baseline: str, out: str) -> Tuple[int, str]:
    run = subprocess.run([tprobe_cli(), "compare", target, baseline, "-o",
                          out], timeout=600, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return run.returncode, run.stdout


class CompileTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-compile-")
        cls.eager = Run(cls.tmp, "eager")
        cls.bare = Run(cls.tmp, "bare", "--compile", "--no-tool")
        cls.compiled = Run(cls.tmp, "compiled", "--compile")
        cls.bare_blocks = Run(cls.tmp, "bare-blocks", "--compile-blocks",
                              "--no-tool")
        cls.blocks = Run(cls.tmp, "blocks", "--compile-blocks")

    def test_no_graph_break_and_as_many_graphs(self) -> None:
        for bare, run in ((self.bare, self.compiled),
                          (self.bare_blocks, self.blocks)):
            self.assertEqual(bare.breaks, 0, bare.stdout)
            self.assertEqual(run.breaks, 0, run.stdout)
            self.assertEqual(run.graphs, bare.graphs, run.stdout)

    def test_names_in_eager_order_values_within_rounding(self) -> None:
        self.assert_as_eager(self.compiled)

    def test_blocks_compiled_alone_as_eager(self) -> None:
        self.assert_as_eager(self.blocks)

    def assert_as_eager(self, run: Run, eager_run: Optional[Run] = None
                        ) -> None:
        """The run's entries are eager's (eager_run's, else the eager
        run's), in eager's order, with every statistic within compile's
        rounding."""
        eager_run = eager_run or self.eager
        for step in range(STEPS):
            eager, compiled = eager_run.entries(step), run.entries(step)
            # The model has a module called twice and one with in-place ops.
            self.assertIn("Module.gate.Gate.forward.1", eager)
            self.assertIn("Module.gate.proj.Linear.forward.0", eager)
            # The same entries in the same order: the backward of the
            # token and position embeddings (branches that do not depend on
            # each other) and the parameters_grad entries included.
            self.assertEqual(list(compiled), list(eager), f"step {step}")
            for entry, value in eager.items():
                want, got = stat_rows(value), stat_rows(compiled[entry])
                self.assertEqual(sorted(got), sorted(want), entry)
                for row, stats in want.items():
                    for stat in STATS:
                        e, c = stats.get(stat), got[row].get(stat)
                        if e is None or c is None:
                            self.assertEqual(c, e, entry + row + stat)
                            continue
                        self.assertLessEqual(
                            abs(c - e), ABS + REL * abs(e),
                            f"step {step} {entry}{row} {stat}: "
                            f"compiled {c} eager {e}")

    def test_stacks_show_the_models_lines(self) -> None:
        def model_lines(lines: List[str]) -> List[str]:
            return [line for line in lines
                    if line.startswith(f"File {SCRIPT}, ")]

        for run, step in ((run, step) for run in (self.compiled, self.blocks)
                          for step in range(STEPS)):
            eager, compiled = self.eager.stacks(step), run.stacks(step)
            self.assertEqual(sorted(compiled), sorted(eager), f"step {step}")
            for name, lines in eager.items():
                self.assertTrue(model_lines(lines), name)
                self.assertEqual(model_lines(compiled[name]),
                                 model_lines(lines), name)
                self.assertFalse([line for line in compiled[name]
                                  if "torchinductor" in line], name)

    def test_compare_pairs_every_row(self) -> None:
        rc, text = compare(self.compiled.dump, self.eager.dump,
                           os.path.join(self.tmp, "cmp"))
        self.assertIn(rc, (0, EXIT_FOUND), text)
        total = [line for line in text.splitlines()
                 if line.strip().startswith("total")]
        self.assertEqual(len(total), 1, text)
        self.assertRegex(total[0], r" 0 missing +0 extra", text)

    def test_selected_steps_do_not_recompile_each_step(self) -> None:
        run = Run(self.tmp, "stepped", "--compile", "--steps", "6",
                  "--dump-steps", "0", "2", "4")
        self.assertEqual(run.breaks, 0, run.stdout)
        self.assertLessEqual(run.frames, 3, run.stdout)
        self.assertLessEqual(run.graphs, 3, run.stdout)
        self.assertEqual(sorted(os.listdir(run.dump)),
                         ["step0", "step2", "step4"])

    def count_ops(self, name: str, config: str,
                  env: Optional[Dict[str, str]] = None) -> List[List[int]]:
        """COUNT_OPS's counts, per step."""
        with Tprobed(tprobed_binary(), fresh_dir("tp-comp-")) as daemon:
            run = subprocess.run(
                [sys.executable, "-c", COUNT_OPS,
                 os.path.join(self.tmp, name), config],
                env=daemon.env(**(env or {})), timeout=600, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(run.returncode, 0, run.stdout)
        return json.loads(run.stdout.rsplit("OPS ", 1)[1])

    def test_ops_skip_the_dispatcher_only_at_run_time(self) -> None:
        for dispatched, kind in (("0", "_Direct"), ("1", "OpOverload")):
            out = subprocess.run(
                [sys.executable, "-c", DIRECT], timeout=300, text=True,
                env=dict(os.environ, TPROBE_OPS_DISPATCHED=dispatched),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
            self.assertIn(f"DIRECT {kind} (1, 0) 2 True", out)

    def test_undumped_steps_run_no_tprobe_op(self) -> None:
        counts = self.count_ops("counted", CONFIG)
        self.assertEqual([ops > 0 for ops, _ in counts],
                         [False, True, False, True, False], counts)
        # The daemon computes every statistic (statistics_on auto, host
        # tensors): the graph computes none.
        self.assertEqual([given for _, given in counts], [0] * 5, counts)

    def test_graph_computes_framework_statistics(self) -> None:
        # statistics_on framework: the graph computes the statistics of
        # device tensors; host tensors' only when asked (on the CPU the
        # eager reductions are the cheaper). Asked, each dumped step's
        # float tensors of the module calls (58 inputs and outputs, 54 of
        # their gradients in this model) get the statistics the graph
        # computed, and the values are those of an eager run with the
        # same config within compile's rounding.
        config = framework_config(self.tmp)
        counts = self.count_ops("counted-host", config)
        self.assertEqual([given for _, given in counts], [0] * 5, counts)
        on_host = {"TPROBE_GRAPH_STATS_ON_HOST": "1"}
        counts = self.count_ops("counted-framework", config, on_host)
        self.assertEqual([given for _, given in counts],
                         [0, 112, 0, 112, 0], counts)
        eager = Run(self.tmp, "eager-framework", "--config", config)
        compiled = Run(self.tmp, "compiled-framework", "--compile",
                       "--config", config, env=on_host)
        self.assert_as_eager(compiled, eager)

    def test_planted_divergence_is_found_in_its_module(self) -> None:
        run = Run(self.tmp, "planted", "--compile", "--plant")
        self.assertIn("planted: blocks.1.mlp.act", run.stdout)
        rc, text = compare(run.dump, self.eager.dump,
                           os.path.join(self.tmp, "cmp-planted"))
        self.assertEqual(rc, EXIT_FOUND, text)
        calls: List[str] = [line.split(":", 1)[1].strip()
                            for line in text.splitlines()
                            if line.strip().startswith("call:")]
        self.assertEqual(calls, [PLANTED], text)
        self.assertIn("first divergence: " + PLANTED + ".", text)
        self.assertIn("(step0/rank)", text)

    def test_mix_trains_to_the_end(self) -> None:
        run = Run(self.tmp, "mix", "--compile", "--level", "mix")
        self.assertEqual(sorted(os.listdir(run.dump)),
                         [f"step{n}" for n in range(STEPS)], run.stdout)
        self.assertIn("Module.gate.Gate.forward.1", run.entries(0))


if __name__ == "__main__":
    unittest.main()
