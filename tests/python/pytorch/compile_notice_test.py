"""The torch.compile notice (tprobe.torch.compile_notice) on real compiled
models against a real tprobed: at L1 and mix with a compiled model, start()
says once that API-level capture makes Dynamo run the hooked calls eagerly,
and the first step() after the compile says once how many graph breaks the
API wrappers made, as many as Dynamo's counters counted over that step; a
model whose call is compiled only as a submodule is seen too, and a model
compiled behind start()'s back is named at step(). At L0, or at L1 with a
model that is not compiled, nothing is said; on a torch without
torch.compile (1.13) nothing either.
"""

import json
import os
import subprocess
import sys
import textwrap
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

HAS_COMPILE = hasattr(torch, "compile")

# argv: config, how the model is compiled (none, torch: torch.compile(net),
# submodule: net.attn.compile() inside a Sequential, behind: start(net)
# while torch.compile(net) runs, with the eager backend). Prints, after each
# step(), the graph breaks Dynamo counted over the step: those at tprobe's
# API wrappers and all of them.
_SCENARIO = textwrap.dedent("""
    import json, sys, torch, torch.nn as nn, torch.nn.functional as F
    from tprobe.torch import PrecisionDebugger
    config, how = sys.argv[1:3]
    sdpa = hasattr(F, "scaled_dot_product_attention")

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(16, 48)
            self.out = nn.Linear(16, 16)
            self.norm = nn.LayerNorm(16)
        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v)
            else:  # torch 1.13
                y = torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v
            return self.norm(x + self.out(F.gelu(y)))

    d = PrecisionDebugger(config_path=config)
    torch.manual_seed(0)
    net = Attention()
    run = given = net
    if how == "torch":
        run = given = torch.compile(net)
    elif how == "submodule":
        run = given = nn.Sequential(net)
        net.compile()
    elif how == "behind":
        run = torch.compile(net, backend="eager")
    x = torch.randn(2, 4, 16)

    def counted():
        if not hasattr(torch, "compile"):
            return 0, 0
        from torch._dynamo.utils import counters
        breaks = counters["graph_break"]
        return (sum(n for why, n in breaks.items() if "ApiWrapper" in why),
                sum(breaks.values()))

    for step in range(3):
        before = counted()
        d.start(given)
        run(x).sum().backward()
        d.stop()
        d.step()
        print("BREAKS", json.dumps([a - b for a, b in zip(counted(), before)]),
              flush=True)
""")

_START = "on a compiled model: torch.compile cannot trace"
_STEP = "under torch.compile: Dynamo broke the graph"


class CompileNoticeTest(unittest.TestCase):
    def run_case(self, level: str, how: str):
        """(the notice lines on stderr, BREAKS of each step)."""
        tmp = fresh_dir("tp-cnotice-")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": level,
                       "dump_path": os.path.join(tmp, "dump"),
                       "step": [0, 1, 2]}, f)
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run = subprocess.run(
                [sys.executable, "-c", _SCENARIO, config, how],
                env=daemon.env(), timeout=600, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("internal error", run.stderr)
        notices = [line for line in run.stderr.splitlines()
                   if _START in line or _STEP in line]
        breaks = [json.loads(line.split(" ", 1)[1])
                  for line in run.stdout.splitlines()
                  if line.startswith("BREAKS ")]
        self.assertEqual(len(breaks), 3)
        return notices, breaks

    def check_said(self, level: str, how: str, at_start: bool) -> None:
        notices, breaks = self.run_case(level, how)
        # The first step compiles, with breaks at the API wrappers: the line
        # gives the counters' delta over that step (later steps' breaks,
        # a recompilation's, are not said).
        ours, total = breaks[0]
        self.assertGreater(ours, 0)
        step_line = (f"[tprobe] level {level} under torch.compile: Dynamo "
                     f"broke the graph {ours} times at tprobe's API wrappers "
                     f"in the last step ({total} graph breaks in all, ")
        if at_start:
            self.assertEqual(len(notices), 2, notices)
            self.assertTrue(notices[0].startswith(
                f"[tprobe] level {level} {_START}"), notices)
            self.assertTrue(notices[1].startswith(step_line), notices)
        else:
            self.assertEqual(len(notices), 1, notices)
            self.assertTrue(notices[0].startswith(step_line), notices)
            self.assertIn("torch.compile cannot trace", notices[0])

    @unittest.skipUnless(HAS_COMPILE, "this torch has no torch.compile")
    def test_l1_compiled_model_said_once_with_the_breaks(self) -> None:
        self.check_said("L1", "torch", at_start=True)

    @unittest.skipUnless(HAS_COMPILE, "this torch has no torch.compile")
    def test_mix_compiled_submodule_said_once_with_the_breaks(self) -> None:
        self.check_said("mix", "submodule", at_start=True)

    @unittest.skipUnless(HAS_COMPILE, "this torch has no torch.compile")
    def test_compiled_behind_start_said_at_step(self) -> None:
        self.check_said("L1", "behind", at_start=False)

    @unittest.skipUnless(HAS_COMPILE, "this torch has no torch.compile")
    def test_l0_compiled_model_says_nothing(self) -> None:
        notices, _ = self.run_case("L0", "torch")
        self.assertEqual(notices, [])

    def test_l1_model_not_compiled_says_nothing(self) -> None:
        notices, breaks = self.run_case("L1", "none")
        self.assertEqual(notices, [])
        self.assertEqual(breaks, [[0, 0]] * 3)


if __name__ == "__main__":
    unittest.main()
