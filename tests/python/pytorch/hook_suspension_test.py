"""Hook suspension (tprobe.torch.hook_switch) on a real training against a
real tprobed: in a step the config does not select, tprobe's module and
parameter-gradient hooks are out of torch's hook dicts while the user's
stay and run; they are back, in their places among the user's (registered
before, after, and while suspended, appended or prepended), at the next
selected step, the config's or a live `tprobe configure`'s; and the
selected steps' trees are what they were before any suspension.
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

# argv: the tprobe CLI, the config (steps 0 and 2 of 0..2 selected, more
# later), the live config given at the end of step 3 (it selects step 4).
# Prints, after each start(), the hooks of model[0] in order ("user", "late",
# "front" or "tprobe") and how many gradient hooks its weight has.
_SCENARIO = textwrap.dedent("""
    import json, subprocess, sys, torch, torch.nn as nn
    from tprobe.torch import PrecisionDebugger
    cli, first, live = sys.argv[1:4]
    d = PrecisionDebugger(config_path=first)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
    calls = []
    def user(module, args, output): calls.append("user")
    def late(module, args, output): calls.append("late")
    def front(module, args, output): calls.append("front")
    def pre(module, args): calls.append("pre")
    names = {user: "user", late: "late", front: "front", pre: "user"}
    linear = model[0]
    linear.register_forward_hook(user)
    linear.register_forward_pre_hook(pre)
    def grad_hooks(p):
        hooks = (getattr(p, "_post_accumulate_grad_hooks", None)
                 or p._backward_hooks or {})
        return len(hooks)
    for step in range(5):
        d.start(model)
        if step == 1:  # registered while tprobe's hooks are out
            linear.register_forward_hook(late)
            if "prepend" in linear.register_forward_hook.__code__.co_varnames:
                linear.register_forward_hook(front, prepend=True)
        print("HOOKS", json.dumps({
            "step": step,
            "forward": [names.get(h, "tprobe")
                        for h in linear._forward_hooks.values()],
            "pre": [names.get(h, "tprobe")
                    for h in linear._forward_pre_hooks.values()],
            "grad": grad_hooks(linear.weight)}))
        del calls[:]
        model.zero_grad()
        model(x).sum().backward()
        print("CALLS", step, json.dumps(calls))
        d.stop()
        if step == 3:
            run = subprocess.run([cli, "configure", live, "--json"],
                                 stdout=subprocess.PIPE, text=True)
            print("CONFIGURE", run.returncode, run.stdout.strip())
        d.step()
    print("FLUSHED", d.session.flush(30000))
""")


class HookSuspensionTest(unittest.TestCase):
    def test_hooks_are_out_in_unselected_steps_and_back_in_place(
            self) -> None:
        tmp = fresh_dir("tp-suspend-")
        dump = os.path.join(tmp, "dump")
        paths = []
        for name, steps in (("first", [0, 2, 9]), ("live", [4, 9])):
            paths.append(os.path.join(tmp, name + ".json"))
            with open(paths[-1], "w") as f:
                json.dump({"task": "statistics", "level": "L0",
                           "dump_path": dump, "step": steps}, f)
        cli = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run = subprocess.run(
                [sys.executable, "-c", _SCENARIO, cli] + paths,
                env=daemon.env(), timeout=300, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("FLUSHED True", run.stdout)
        self.assertIn("CONFIGURE 0", run.stdout)
        hooks = [json.loads(line.split(" ", 1)[1])
                 for line in run.stdout.splitlines()
                 if line.startswith("HOOKS ")]
        calls = [json.loads(line.split(" ", 2)[2])
                 for line in run.stdout.splitlines()
                 if line.startswith("CALLS ")]
        prepend = "front" in hooks[1]["forward"]
        # Selected: tprobe's hooks in, behind the user's registered before
        # and in front of those registered after (appended).
        self.assertEqual(hooks[0], {"step": 0, "forward": ["user", "tprobe"],
                                    "pre": ["user", "tprobe"], "grad": 0})
        later = (["front"] if prepend else []) + ["user", "tprobe", "late"]
        for step in (2, 4):
            self.assertEqual(hooks[step], {"step": step, "forward": later,
                                           "pre": ["user", "tprobe"],
                                           "grad": 1})
        # Not selected: only the user's hooks, and they run.
        self.assertEqual(hooks[1], {
            "step": 1, "forward": later[:-2] + ["late"], "pre": ["user"],
            "grad": 0})
        self.assertEqual(hooks[3], dict(hooks[1], step=3))
        self.assertEqual(calls[1], ["pre", "user", "late"] if not prepend
                         else ["pre", "front", "user", "late"])
        self.assertEqual(calls[3], calls[1])
        # Only the selected steps are written, with the same tree (the
        # same model and input each step, no optimizer).
        written = sorted(os.listdir(dump))
        self.assertEqual([s for s in written if s.startswith("step")],
                         ["step0", "step2", "step4"])
        trees = []
        for step in (0, 2, 4):
            with open(os.path.join(dump, f"step{step}", "rank",
                                   "dump.json")) as f:
                trees.append(json.load(f)["data"])
        self.assertIn("Module.0.Linear.forward.0", trees[0])
        self.assertIn("Module.0.Linear.parameters_grad.0", trees[0])
        self.assertEqual(trees[1], trees[0])
        self.assertEqual(trees[2], trees[0])


if __name__ == "__main__":
    unittest.main()
