"""`tprobe configure FILE` on a real PyTorch training: the real tprobe CLI
and tprobed, the PrecisionDebugger in its own process. A config given while
step 0 runs is what step 1 is recorded under (level and list, checked in
the written tree against torch's own values); bad ones are refused naming
the key, and nothing changes.
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

# argv: the tprobe CLI, the starting config, then the configs to give at
# the end of step 0 and of step 1 ("a,b": several, in order).
_SCENARIO = textwrap.dedent("""
    import json, subprocess, sys, torch, torch.nn as nn
    from tprobe.torch import PrecisionDebugger
    cli, first, at_step = sys.argv[1], sys.argv[2], sys.argv[3:]
    d = PrecisionDebugger(config_path=first)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    for step in range(3):
        d.start(model)
        y = model(torch.randn(3, 4))
        y.sum().backward()
        d.stop()
        print("MAX", step, y.max().item())
        for path in (at_step[step].split(",") if step < len(at_step) else []):
            run = subprocess.run([cli, "configure", path, "--json"],
                                 stdout=subprocess.PIPE, text=True)
            print("CONFIGURE", step, run.returncode, run.stdout.strip())
        d.step()
    print("FLUSHED", d.session.flush(30000))
""")


class LiveConfigureTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = fresh_dir("tp-configure-")
        self.dump = os.path.join(self.tmp, "dump")
        self.cli = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")

    def config(self, name: str, body: dict) -> str:
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(dict({"dump_path": self.dump}, **body), f)
        return path

    def dump_json(self, step: int) -> dict:
        with open(os.path.join(self.dump, f"step{step}", "rank",
                               "dump.json")) as f:
            return json.load(f)

    def test_level_and_list_change_at_the_next_step_and_bad_ones_do_not(
            self) -> None:
        first = self.config("l0", {"task": "statistics", "level": "L0"})
        mix = self.config("mix", {"task": "statistics", "level": "mix",
                                  "statistics": {"list": ["relu"]}})
        bad_level = self.config("bad-level", {"level": "L5"})
        # A new dump_path may change live; the rings' geometry may not, and
        # the config is refused as a whole.
        bad_path = self.config("bad-path", {
            "level": "L0", "dump_path": os.path.join(self.tmp, "other"),
            "tprobe": {"ring_count": 2}})
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            run = subprocess.run(
                [sys.executable, "-c", _SCENARIO, self.cli, first, mix,
                 bad_level + "," + bad_path],
                env=daemon.env(), timeout=300, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("FLUSHED True", run.stdout)
        self.assertIn("[tprobe] step 1 on: the config from 'tprobe "
                      "configure' (task statistics, level mix)", run.stderr)
        lines = run.stdout.splitlines()
        maxima = {int(w[1]): float(w[2]) for w in map(str.split, lines)
                  if w[0] == "MAX"}
        replies = [(int(w[1]), int(w[2]), json.loads(w[3]))
                   for w in (line.split(" ", 3) for line in lines)
                   if w[0] == "CONFIGURE"]
        self.assertEqual(replies[0], (0, 0, {
            "command": "configure", "ok": True, "ranks": 1, "error": None}))
        (_, level_status, level_reply), (_, path_status, path_reply) = \
            replies[1:]
        self.assertEqual(level_status, 2)
        self.assertIn("level is invalid", level_reply["error"])
        self.assertEqual(path_status, 2)
        self.assertIn("config: tprobe.ring_count cannot change while the "
                      "training runs", path_reply["error"])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "other")))

        # Step 0: the starting config, modules only.
        step0 = self.dump_json(0)
        self.assertEqual(step0["level"], "L0")
        self.assertTrue(step0["data"])
        self.assertTrue(all(n.startswith("Module.") for n in step0["data"]),
                        list(step0["data"]))
        # Steps 1 and 2: mix, only the names holding "relu"; the refused
        # configs changed nothing.
        for step in (1, 2):
            data = self.dump_json(step)["data"]
            self.assertEqual(self.dump_json(step)["level"], "mix")
            self.assertTrue(all("relu" in n for n in data), list(data))
            relu = data["Functional.relu.0.forward"]
            self.assertAlmostEqual(relu["output"][0]["Max"], maxima[step],
                                   places=5)


if __name__ == "__main__":
    unittest.main()
