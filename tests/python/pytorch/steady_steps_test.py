"""The boundaries of a step like the last one (tprobe._C.SteadySteps,
client/python/binding/steady_steps.h), on a real training against a real
tprobed and the real tprobe CLI:

- after a start() whose step records nothing, or records, the next
  start(model), stop() and step() of a step like it skip the debugger's own
  path (its _start() is not called);
- a step unlike the last (selected by the config or by a live `tprobe
  start`, or no longer selected), another model, set_init_step() and the
  end of the configured steps each take the debugger's path again;
- the tree holds exactly the selected steps, under their own numbers, with
  what the same steps hold when every boundary takes the debugger's path;
- SteadySteps refuses what it cannot arm with, a model that is gone
  matches nothing, a Runtime whose session changed takes nothing, and a
  watched dict that changed size sends step() to the debugger;
- a cycle through the dicts an armed SteadySteps watches is collected.
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

# argv: the tprobe CLI, the config, "steady" or "slow" (SteadySteps never
# armed). Prints, for each start(), whether it took the debugger's path
# ("full"), whether SteadySteps was armed after it and for a step that
# records.
_SCENARIO = textwrap.dedent("""
    import json, subprocess, sys, torch, torch.nn as nn
    from tprobe import _C
    from tprobe.torch import PrecisionDebugger
    cli, config, mode = sys.argv[1:4]
    if mode == "slow":
        PrecisionDebugger._steady_boundaries = lambda self, records: False
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
    for step in range(13):
        if step == 6:
            PrecisionDebugger.set_init_step(20)
        del full[:]
        net = other if step in (5, 6) else model
        d.start(net)
        print("STEP", json.dumps({"step": step, "full": bool(full),
                                  "armed": d._steady.armed,
                                  "records": d._steady.records}))
        net.zero_grad()
        torch.relu(net(x)).sum().backward()
        d.stop()
        if step == 8:  # from now on the directive, not the config
            run = subprocess.run([cli, "start", "--steps", "23-24",
                                  "--json"], stdout=subprocess.PIPE,
                                 text=True)
            print("DIRECTIVE", run.returncode, run.stdout.strip())
        d.step()
    print("FLUSHED", d.session.flush(30000))

    # What SteadySteps refuses.
    s = _C.SteadySteps()
    rt = d._rt
    print("NOWEAKREF", s.arm(rt, [model]), s.armed)
    try:
        s.arm(d.session, None)
    except TypeError:
        print("NOTRUNTIME")
    gone = nn.Linear(1, 1)
    print("ARMED", s.arm(rt, gone), s.armed)
    del gone
    print("GONE", s.start(None), s.start(model))
    from tprobe._common.runtime import Runtime
    other_rt = Runtime(d.session, rt.level)
    print("OTHER", s.arm(other_rt, None), s.armed)
    other_rt.session = None  # its session gone: nothing more to take
    print("SESSIONLESS", s.armed, s.start(None), s.stop(), s.step())
    watched = {}
    print("WATCHING", s.arm(rt, None, (watched,)))
    watched["grew"] = 1  # step() is the debugger's now, nothing done
    print("WATCHED", s.step(), d.session.current_step)
    try:
        s.arm(rt, None, [watched])
    except TypeError:
        print("NOTTUPLE", s.armed)
    s.disarm()
    print("DISARMED", s.armed, s.start(), s.stop(), s.step())

    # A cycle through what an armed SteadySteps holds is collected.
    import gc, weakref
    class Marker:
        pass
    cyclic, holder, marker = _C.SteadySteps(), {}, Marker()
    holder.update(steady=cyclic, marker=marker)
    print("CYCLE", cyclic.arm(rt, None, (holder,)))
    marker_ref = weakref.ref(marker)
    del cyclic, holder, marker
    gc.collect()
    print("COLLECTED", marker_ref() is None)
""")

# The thirteen start()s, numbered 0-5, then 20-26 after set_init_step(20)
# at the seventh. The config selects 2, 3 and 21, the directive (given in
# step 22) 23 and 24. start() takes the debugger's path at: the first; 2,
# 21 and 23, each a selected step after one that was not; 4 and 25, not
# selected after one that was; the fifth (another model); the seventh
# (set_init_step); 22 (after the last configured step: the hooks go, and
# the directive puts them back at 23). The rest are SteadySteps': 1 and 26
# not selected, 3 and 24 recorded.
_FULL = [True, False, True, False, True, True, True, True, True, True,
         False, True, False]
# Armed after each start() but 22's; for a recorded step after 2, 3, 21,
# 23 and 24.
_ARMED = [True] * 8 + [False] + [True] * 4
_RECORDS = [False, False, True, True, False, False, False, True, False,
            True, True, False, False]


class SteadyStepsTest(unittest.TestCase):
    def run_scenario(self, mode: str) -> tuple:
        tmp = fresh_dir("tp-steady-")
        dump = os.path.join(tmp, "dump")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "mix",
                       "dump_path": dump, "step": [2, 3, 21]}, f)
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

    def test_only_steps_like_the_last_skip_the_debugger(self) -> None:
        out, steps, trees = self.run_scenario("steady")
        self.assertEqual([s["full"] for s in steps], _FULL)
        self.assertEqual([s["armed"] for s in steps], _ARMED)
        self.assertEqual([s["records"] for s in steps], _RECORDS)
        self.assertIn("NOWEAKREF False False", out)
        self.assertIn("NOTRUNTIME", out)
        self.assertIn("ARMED True True", out)
        self.assertIn("GONE False False", out)
        self.assertIn("OTHER True True", out)
        self.assertIn("SESSIONLESS False False False False", out)
        self.assertIn("WATCHING True", out)
        self.assertIn("WATCHED False 27", out)
        self.assertIn("NOTTUPLE False", out)
        self.assertIn("DISARMED False False False False", out)
        self.assertIn("CYCLE True", out)
        self.assertIn("COLLECTED True", out)
        # The selected steps, under their own numbers.
        self.assertEqual(sorted(trees), ["step2", "step21", "step23",
                                         "step24", "step3"])
        for name, tree in trees.items():
            self.assertIn("Module.0.Linear.forward.0", tree, name)
            self.assertIn("Module.0.Linear.backward.0", tree, name)
            self.assertIn("Torch.relu.0.forward", tree, name)
        # The same as when every boundary takes the debugger's path.
        _, slow_steps, slow_trees = self.run_scenario("slow")
        self.assertFalse(any(s["armed"] for s in slow_steps))
        self.assertTrue(all(s["full"] for s in slow_steps))
        self.assertEqual(trees, slow_trees)


if __name__ == "__main__":
    unittest.main()
