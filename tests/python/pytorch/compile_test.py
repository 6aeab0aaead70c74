"""tprobe at L0 under torch.compile (Inductor, CPU) against a real tprobed,
on examples/compiled_transformer.py: two transformer blocks (SDPA
attention, GELU MLP, a tied head), a module with in-place ops called twice
in one forward. Each run is its own process with its own daemon:

- with tprobe on the compiled model, Dynamo counts no graph break and as
  many graphs as the compiled model without tprobe;
- the compiled run's dump.json has the eager run's entries (no
  `_orig_mod`), the forward entries in eager's order (the backward ones of
  independent branches may swap, and the parameters_grad entries come
  last: AOT autograd accumulates every parameter's gradient when its
  compiled backward ends), each entry the same rows, and every statistic
  (Max, Min, Mean, Norm) within compile's float rounding of eager's
  (1e-5 + 1e-3 relative), the in-place module's output as eager saw it
  included; `tprobe compare` of the two trees pairs every row;
- selecting steps 0, 2 and 4 of 6 (hooks in, out, in, ...) compiles at most
  3 times, not once a step;
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
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "compiled_transformer.py")
STEPS = 2
STATS = ("Max", "Min", "Mean", "Norm")
# compile's float rounding, float32: |compiled - eager| <= ABS + REL * |eager|
REL, ABS = 1e-3, 1e-5
PLANTED = "Module.blocks.1.mlp.act.Gelu.forward.0"
EXIT_FOUND = 4


def forward(tree: Dict[str, dict]) -> List[str]:
    """The forward entries' names of a dump.json's data, in order."""
    return [name for name in tree if ".forward." in name]


def tprobe_cli() -> str:
    return os.path.abspath(os.environ.get("TPROBE_CLI")
                           or os.path.join(ROOT, "build", "bin", "tprobe"))


class Run:
    """One run of the example: its dump root and Dynamo's counts."""

    def __init__(self, tmp: str, name: str, *flags: str) -> None:
        self.dump = os.path.join(tmp, name)
        cmd = [sys.executable, SCRIPT, "--out", self.dump, *flags]
        if "--steps" not in flags:
            cmd += ["--steps", str(STEPS)]
        with Tprobed(tprobed_binary(), fresh_dir("tp-comp-")) as daemon:
            run = subprocess.run(cmd, env=daemon.env(), timeout=600,
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

    def test_no_graph_break_and_as_many_graphs(self) -> None:
        self.assertEqual(self.bare.breaks, 0, self.bare.stdout)
        self.assertEqual(self.compiled.breaks, 0, self.compiled.stdout)
        self.assertEqual(self.compiled.graphs, self.bare.graphs,
                         self.compiled.stdout)

    def test_names_in_eager_order_values_within_rounding(self) -> None:
        for step in range(STEPS):
            eager, compiled = (self.eager.entries(step),
                               self.compiled.entries(step))
            # The model has a module called twice and one with in-place ops.
            self.assertIn("Module.gate.Gate.forward.1", eager)
            self.assertIn("Module.gate.proj.Linear.forward.0", eager)
            # The same entries; the forward calls in eager's order. The
            # backward calls of branches that do not depend on each other
            # (the token and position embeddings) may run in another order
            # in the compiled backward graph, and the parameters_grad
            # entries come last: AOT autograd accumulates the parameters'
            # gradients when its compiled backward ends (docs/pytorch.md).
            self.assertEqual(sorted(compiled), sorted(eager), f"step {step}")
            self.assertEqual(forward(compiled), forward(eager),
                             f"step {step}")
            grads = [name for name in compiled if ".parameters_grad." in name]
            self.assertEqual(list(compiled)[len(compiled) - len(grads):],
                             grads, f"step {step}")
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
