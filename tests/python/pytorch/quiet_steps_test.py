"""The boundaries of a step that records nothing (tprobe._C.QuietSteps,
client/python/binding/quiet_steps.h), on a real training against a real
tprobed and the real tprobe CLI:

- after a start() whose step records nothing, the next start(model), stop()
  and step() skip the debugger's own path (its _start() is not called);
- a step the config selects, one a live `tprobe start` selects, another
  model, and set_init_step() each take the debugger's path again;
- the tree holds exactly the selected steps, under their own numbers, with
  what the same steps hold when every boundary takes the debugger's path;
- QuietSteps refuses what it cannot arm with, and a model that is gone
  matches nothing.
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

# argv: the tprobe CLI, the config, "quiet" or "slow" (QuietSteps never
# armed). Prints, for each step, whether start() took the debugger's path
# ("FULL") and whether QuietSteps was armed after it.
_SCENARIO = textwrap.dedent("""
    import json, subprocess, sys, torch, torch.nn as nn
    from tprobe import _C
    from tprobe.torch import PrecisionDebugger
    cli, config, mode = sys.argv[1:4]
    if mode == "slow":
        PrecisionDebugger._quiet_boundaries = lambda self: False
    full = []
    plain_start = PrecisionDebugger._start
    def counted_start(self, model):
        full.append(True)
        plain_start(self, model)
    PrecisionDebugger._start = counted_start
    d = PrecisionDebugger(config_path=config)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    other = nn.Sequential(nn.Linear(4, 2))
    x = torch.randn(3, 4)
    for step in range(11):
        if step == 5:
            PrecisionDebugger.set_init_step(20)
        del full[:]
        net = other if step in (4, 5) else model
        d.start(net)
        print("STEP", json.dumps({"step": step, "full": bool(full),
                                  "armed": d._quiet.armed}))
        net.zero_grad()
        torch.relu(net(x)).sum().backward()
        d.stop()
        if step == 7:  # from now on the directive, not the config
            run = subprocess.run([cli, "start", "--steps", "23", "--json"],
                                 stdout=subprocess.PIPE, text=True)
            print("DIRECTIVE", run.returncode, run.stdout.strip())
        d.step()
    print("FLUSHED", d.session.flush(30000))

    # What QuietSteps refuses.
    q = _C.QuietSteps()
    print("NOWEAKREF", q.arm(d.session, 3), q.armed)
    try:
        q.arm("not a session", None)
    except TypeError:
        print("NOTSESSION")
    gone = nn.Linear(1, 1)
    print("ARMED", q.arm(d.session, gone), q.armed)
    del gone
    print("GONE", q.start(None), q.start(model))
    q.disarm()
    print("DISARMED", q.armed, q.start(), q.stop(), q.step())
""")

# The eleven start()s (numbered 0-4, then 20-25 after set_init_step(20) at
# the sixth) take the debugger's path at: the first; the selected steps 2,
# 21 (the config's) and 23 (the directive's), and the first start() after
# each; another model (the fifth); set_init_step (the sixth); and the model
# of the first four again (the seventh). The rest are QuietSteps'.
_FULL = {0: True, 1: False, 2: True, 3: True, 4: True, 5: True, 6: True,
         7: True, 8: True, 9: True, 10: False}


class QuietStepsTest(unittest.TestCase):
    def run_scenario(self, mode: str) -> tuple:
        tmp = fresh_dir("tp-quiet-")
        dump = os.path.join(tmp, "dump")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "mix",
                       "dump_path": dump, "step": [2, 21]}, f)
        cli = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run = subprocess.run(
                [sys.executable, "-c", _SCENARIO, cli, config, mode],
                env=daemon.env(), timeout=300, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("FLUSHED True", run.stdout)
        self.assertIn("DIRECTIVE 0", run.stdout)
        steps = [json.loads(line.split(" ", 1)[1])
                 for line in run.stdout.splitlines()
                 if line.startswith("STEP ")]
        trees = {}
        for name in sorted(os.listdir(dump)):
            if name.startswith("step"):
                with open(os.path.join(dump, name, "rank",
                                       "dump.json")) as f:
                    trees[name] = json.load(f)["data"]
        return run.stdout, steps, trees

    def test_only_steps_that_record_nothing_skip_the_debugger(self) -> None:
        out, steps, trees = self.run_scenario("quiet")
        self.assertEqual({s["step"]: s["full"] for s in steps}, _FULL)
        # Armed after every start() whose step records nothing, but for
        # the first after the last configured step (22), which removes the
        # hooks (the directive puts them back for step 23).
        self.assertEqual([s["step"] for s in steps if s["armed"]],
                         [0, 1, 3, 4, 5, 9, 10])
        self.assertIn("NOWEAKREF False False", out)
        self.assertIn("NOTSESSION", out)
        self.assertIn("ARMED True True", out)
        self.assertIn("GONE False False", out)
        self.assertIn("DISARMED False False False False", out)
        # The selected steps, under their own numbers.
        self.assertEqual(sorted(trees), ["step2", "step21", "step23"])
        for name, tree in trees.items():
            self.assertIn("Module.0.Linear.forward.0", tree, name)
            self.assertIn("Torch.relu.0.forward", tree, name)
        # The same as when every boundary takes the debugger's path.
        _, slow_steps, slow_trees = self.run_scenario("slow")
        self.assertFalse(any(s["armed"] for s in slow_steps))
        self.assertTrue(all(s["full"] for s in slow_steps))
        self.assertEqual(trees, slow_trees)


if __name__ == "__main__":
    unittest.main()
