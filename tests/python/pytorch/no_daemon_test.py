"""No daemon at all ($TPROBE_SOCKET names nothing, autostart off): training
runs to the end with the same results, nothing is written, the counters
report what was dropped, and the trainer says so on stderr: within a few
seconds (the socket, since when, how many lost so far) and at exit (the
total), so that nobody mistakes the empty folder for a dump.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (ROOT, Tprobed, fresh_dir,  # noqa: E402
                             python_path, tprobed_binary, wait_until)

# What the trainer says (client/outage_notice.cc).
OUTAGE = re.compile(r"\[tprobe\] no daemon is reached on (\S+) since "
                    r"(\d\d:\d\d:\d\d): (\d+) records lost so far, "
                    r"nothing is dumped; training goes on")
REACHED = re.compile(r"\[tprobe\] a daemon is reached on (\S+); (\d+) "
                     r"records were lost without one since "
                     r"(\d\d:\d\d:\d\d)")
AT_EXIT = re.compile(r"\[tprobe\] (\d+) records of this process were lost "
                     r"in all because no daemon received them "
                     r"\(socket (\S+)\)")

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
CONFIG = os.path.join(ROOT, "tests", "data", "golden", "mix", "config.json")

# Run in a child process: prints the losses (repr, so exact) and the
# session's counters as JSON.
_IN_PROCESS = """
import json, sys, torch
sys.argv = ["train_tiny_gpt.py"]
import importlib.util
spec = importlib.util.spec_from_file_location("tiny", {script!r})
tiny = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tiny)

def train(debugger):
    torch.manual_seed(1234)
    model = tiny.TinyGPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1235)
    losses = []
    for _ in range(3):
        batch = torch.randint(0, tiny.VOCAB, (tiny.BATCH, tiny.SEQ + 1),
                              generator=g)
        opt.zero_grad(set_to_none=True)
        if debugger:
            debugger.start(model)
        loss = model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        opt.step()
        if debugger:
            debugger.stop()
            debugger.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]

torch.set_num_threads(1)
plain, plain_params = train(None)
from tprobe.torch import PrecisionDebugger
debugger = PrecisionDebugger(config_path={config!r}, dump_path={dump!r})
dumped, dumped_params = train(debugger)
same_params = all(torch.equal(a, b)
                  for a, b in zip(plain_params, dumped_params))
print("RESULT " + json.dumps({{
    "plain": [repr(x) for x in plain], "dumped": [repr(x) for x in dumped],
    "same_params": same_params, "connected": debugger.session.connected,
    "flushed": debugger.session.flush(100),
    "counters": debugger.session.counters()}}), flush=True)
# The test lets it exit once it has seen the outage said on stderr.
sys.stdin.readline()
"""

# A training that waits for a daemon to come up on its socket: it steps
# until it has written three steps to one (120 s at most).
_LATE = """
import json, sys, time, torch, torch.nn as nn
from tprobe.torch import PrecisionDebugger
model = nn.Linear(4, 2)
d = PrecisionDebugger(config_path={config!r}, dump_path={dump!r})
x = torch.randn(3, 4)
connected_steps = 0
deadline = time.monotonic() + 120
while connected_steps < 3 and time.monotonic() < deadline:
    d.start(model)
    model(x).sum().backward()
    d.stop()
    d.step()
    connected_steps += d.session.connected
    time.sleep(0.05)
assert d.session.flush(30000)
print("RESULT " + json.dumps(d.session.counters()))
"""


class NoDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-nodaemon-")
        cls.env = dict(os.environ)
        cls.env.update(TPROBE_SOCKET=os.path.join(cls.tmp, "nobody.sock"),
                       TPROBE_AUTOSTART="0", PYTHONPATH=python_path())
        cls.dump = os.path.join(cls.tmp, "dump")

    def test_script_runs_unharmed(self) -> None:
        def losses(*tool):
            run = subprocess.run(
                [sys.executable, SCRIPT, "--steps", "3", *tool],
                env=self.env, check=True, timeout=600, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            return [line for line in run.stdout.splitlines()
                    if line.startswith("step")], run.stderr

        plain, quiet = losses()
        start = time.monotonic()
        dumped, said = losses("--tool", "tprobe", "--config", CONFIG,
                              "--dump-path", self.dump)
        self.assertEqual(dumped, plain)
        self.assertLess(time.monotonic() - start, 120)
        self.assertFalse(os.path.exists(self.dump))
        self.assertNotIn("[tprobe]", quiet)
        # The total at exit, always; the outage line only when the run
        # lasted past its delay (a short run may end first).
        self.assertEqual(len(AT_EXIT.findall(said)), 1, said)
        self.assertLessEqual(len(OUTAGE.findall(said)), 1, said)

    def test_counters_report_the_drops(self) -> None:
        code = _IN_PROCESS.format(script=SCRIPT, config=CONFIG,
                                  dump=self.dump + "2")
        child = subprocess.Popen([sys.executable, "-c", code], env=self.env,
                                 text=True, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(child.stderr))
        reader.start()
        try:
            # Said while the trainer runs, a few seconds into the outage.
            wait_until(lambda: any(OUTAGE.search(x) for x in lines)
                       or child.poll() is not None, 120,
                       "the trainer to say that no daemon is reached")
            child.stdin.write("\n")
            child.stdin.close()
            out = child.stdout.read()
            child.wait(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
            reader.join()
        stderr = "".join(lines)
        self.assertEqual(child.returncode, 0, stderr)
        result = json.loads(out.rsplit("RESULT ", 1)[1])
        self.assertEqual(result["dumped"], result["plain"])
        self.assertTrue(result["same_params"])
        self.assertFalse(result["connected"])
        self.assertFalse(result["flushed"])
        counters = result["counters"]
        self.assertEqual(counters["records_written"], 0)
        self.assertGreater(counters["dropped_no_daemon"], 1000, counters)
        self.assertFalse(os.path.exists(self.dump + "2"))
        socket = self.env["TPROBE_SOCKET"]
        (said,) = OUTAGE.findall(stderr)
        self.assertEqual(said[0], socket)
        self.assertGreater(int(said[2]), 0)
        self.assertLessEqual(int(said[2]), counters["dropped_no_daemon"])
        (total,) = AT_EXIT.findall(stderr)
        self.assertEqual(total, (str(counters["dropped_no_daemon"]), socket))

    def test_a_daemon_that_comes_up_is_taken_up_and_said(self) -> None:
        late = fresh_dir("tp-late-")
        dump = os.path.join(late, "dump")
        config = os.path.join(late, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1"}, f)
        daemon = Tprobed(tprobed_binary(), late)
        env = dict(self.env, TPROBE_SOCKET=daemon.socket)
        child = subprocess.Popen(
            [sys.executable, "-c", _LATE.format(config=config, dump=dump)],
            env=env, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(child.stderr))
        reader.start()
        try:
            wait_until(lambda: any(OUTAGE.search(x) for x in lines)
                       or child.poll() is not None, 120,
                       "the trainer to say that no daemon is reached")
            with daemon:
                out = child.stdout.read()
                child.wait(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
            reader.join()
        stderr = "".join(lines)
        self.assertEqual(child.returncode, 0, stderr)
        counters = json.loads(out.rsplit("RESULT ", 1)[1])
        (outage,) = OUTAGE.findall(stderr)
        (reached,) = REACHED.findall(stderr)
        (total,) = AT_EXIT.findall(stderr)
        self.assertEqual(reached[0], daemon.socket)
        self.assertEqual(reached[2], outage[1])  # the same outage
        self.assertGreaterEqual(int(reached[1]), int(outage[2]))
        self.assertEqual(int(total[0]), counters["dropped_no_daemon"])
        # The step under way when it came still counts as no_daemon (a
        # daemon that missed its beginning never writes it).
        self.assertLessEqual(int(reached[1]), int(total[0]))
        self.assertGreater(counters["records_written"], 0)
        self.assertTrue(os.path.isdir(dump))


if __name__ == "__main__":
    unittest.main()
