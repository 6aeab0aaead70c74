"""Deployment end to end (issue 12): the systemd unit verifies and tprobed
speaks the Type=notify readiness protocol; deploy/tprobe-run wraps a
two-rank torchrun (torch 1.13, gloo) and exits with the job's status; two
daemons, each serving half the ranks of one job, write one dump tree; a
trainer whose dump_path is unusable fails at start-up with the reason.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python", "support"))
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, python_path, tprobed_binary)

RUN = os.path.join(ROOT, "deploy", "tprobe-run")
UNIT = os.path.join(ROOT, "deploy", "tprobed.service")
EXAMPLE = os.path.join(ROOT, "examples", "torchrun_example.py")


def torchrun(*extra: str) -> list:
    # As tests/python/pytorch/torchrun_test.py: 1.13's launcher needs --redirects.
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc_per_node=2", "--redirects", "2", "--tee", "2", *extra]


def job_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    env["TPROBE_AUTOSTART"] = "0"
    env["OMP_NUM_THREADS"] = "1"
    env.pop("TPROBE_SOCKET", None)
    env.update(extra)
    return env


def load(dump: str, step: int, rank: int, name: str) -> dict:
    folder = f"rank{rank}" if rank >= 0 else "rank"
    with open(os.path.join(dump, f"step{step}", folder, name)) as f:
        return json.load(f)


class SystemdUnitTest(unittest.TestCase):
    def test_the_unit_verifies_clean(self) -> None:
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            self.skipTest("systemd-analyze is not installed")
        tmp = fresh_dir("tp-unit-")
        unit = os.path.join(tmp, "tprobed.service")
        with open(UNIT) as f:
            text = f.read()
        for key in ("Type=notify", "RuntimeDirectory=tprobe",
                    "Restart=on-failure", "MemoryMax=", "CPUQuota="):
            self.assertIn(key, text)
        # verify checks that ExecStart's binary exists: point it at ours.
        with open(unit, "w") as f:
            f.write(text.replace("/usr/local/bin/tprobed", tprobed_binary()))
        proc = subprocess.run([analyze, "verify", unit], capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout + proc.stderr, "")

    def test_tprobed_sends_ready_to_notify_socket(self) -> None:
        tmp = fresh_dir("tp-ntf-")
        notify = os.path.join(tmp, "notify")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify)
        listener.settimeout(30)
        sock = os.path.join(tmp, "run", "tprobed.sock")
        env = dict(os.environ, NOTIFY_SOCKET=notify)
        proc = subprocess.Popen(
            [tprobed_binary(), "--foreground", "--socket", sock], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            message = listener.recv(4096).decode()
            self.assertEqual(message, f"READY=1\nMAINPID={proc.pid}")
            # READY comes once the socket listens.
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.connect(sock)
            probe.close()
        finally:
            proc.terminate()
            self.assertEqual(proc.wait(timeout=30), 0)
            listener.close()


class LauncherTest(unittest.TestCase):
    def test_wraps_a_two_rank_torchrun(self) -> None:
        tmp = fresh_dir("tp-run-")
        dump = os.path.join(tmp, "dump")
        proc = subprocess.run(
            [RUN, "--tprobed", tprobed_binary(), "--"] + torchrun(
                EXAMPLE, "--level", "L0", "--dump-path", dump, "--steps",
                "2"),
            env=job_env(TMPDIR=tmp), cwd=tmp, timeout=600, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        for step in (0, 1):
            for rank in (0, 1):
                self.assertTrue(load(dump, step, rank,
                                     "tprobe.json")["complete"])
                self.assertEqual(load(dump, step, rank, "dump.json")["level"],
                                 "L0")
        # The daemon and its temporary socket folder are gone.
        leftovers = [p for p in os.listdir(tmp) if p.startswith("tprobe-run")]
        self.assertEqual(leftovers, [])

    def test_exits_with_the_jobs_status(self) -> None:
        tmp = fresh_dir("tp-run-")
        sock = os.path.join(tmp, "s", "tprobed.sock")
        proc = subprocess.run(
            [RUN, "--tprobed", tprobed_binary(), "--socket", sock, "--",
             "sh", "-c", 'test -S "$TPROBE_SOCKET" && exit 7'],
            env=job_env(), timeout=120, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 7, proc.stderr)
        self.assertFalse(os.path.exists(sock), "the daemon was shut down")

    def test_a_daemon_that_cannot_start_is_reported(self) -> None:
        tmp = fresh_dir("tp-run-")
        bad = os.path.join(tmp, "open")
        os.mkdir(bad)
        os.chmod(bad, 0o777)
        proc = subprocess.run(
            [RUN, "--tprobed", tprobed_binary(), "--socket",
             os.path.join(bad, "tprobed.sock"), "--", "true"],
            env=job_env(), timeout=120, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 125, proc.stderr)
        self.assertIn("tprobed did not start", proc.stderr)
        self.assertIn("lets other users write to it", proc.stderr)


class TwoDaemonsOneTreeTest(unittest.TestCase):
    def test_each_daemon_serves_half_the_ranks_of_one_dump(self) -> None:
        tmp = fresh_dir("tp-two-")
        dump = os.path.join(tmp, "dump")
        a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        os.mkdir(a_dir)
        os.mkdir(b_dir)
        # Each rank picks its node's daemon, as on two nodes sharing a file
        # system.
        wrapper = os.path.join(tmp, "rank.sh")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nif [ "$RANK" = 0 ]; then '
                    f'export TPROBE_SOCKET={a_dir}/tprobed.sock; else '
                    f'export TPROBE_SOCKET={b_dir}/tprobed.sock; fi\n'
                    f'exec {sys.executable} "$@"\n')
        os.chmod(wrapper, 0o755)
        with Tprobed(tprobed_binary(), a_dir) as a, \
                Tprobed(tprobed_binary(), b_dir) as b:
            proc = subprocess.run(
                torchrun("--no_python", wrapper, EXAMPLE, "--level", "mix",
                         "--dump-path", dump, "--steps", "2"),
                env=job_env(), cwd=tmp, timeout=600, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True)
            self.assertEqual(a.stop(), 0, a.log())
            self.assertEqual(b.stop(), 0, b.log())
            logs = (a.log(), b.log())
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertIn("rank 0,", logs[0])
        self.assertNotIn("rank 1,", logs[0])
        self.assertIn("rank 1,", logs[1])
        self.assertNotIn("rank 0,", logs[1])
        for step in (0, 1):
            self.assertEqual(sorted(os.listdir(os.path.join(
                dump, f"step{step}"))), ["rank0", "rank1"])
            for rank in (0, 1):
                self.assertTrue(load(dump, step, rank,
                                     "tprobe.json")["complete"])
            # The collectives agree across the two daemons' trees.
            data = [load(dump, step, r, "dump.json")["data"] for r in (0, 1)]
            name = "Distributed.all_reduce.0.forward"
            self.assertEqual(data[0][name]["output"][0]["Max"],
                             data[1][name]["output"][0]["Max"])


class StartupErrorTest(unittest.TestCase):
    def test_an_unwritable_dump_path_fails_the_trainer_at_start(self) -> None:
        tmp = fresh_dir("tp-bad-")
        blocker = os.path.join(tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        code = ("from tprobe.torch import PrecisionDebugger\n"
                "try:\n"
                f"    PrecisionDebugger(dump_path={blocker + '/dump'!r},"
                " task='statistics', level='L0')\n"
                "except ValueError as e:\n"
                "    print('ERROR:', e)\n")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            proc = subprocess.run([sys.executable, "-c", code],
                                  env=daemon.env(), timeout=120,
                                  capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("ERROR: the daemon refused registration: dump_path "
                      f"{blocker}/dump cannot be used: {blocker}/dump: Not a "
                      "directory", proc.stdout)


FULL_DISK_TRAINER = r"""
import os, sys, torch, torch.nn as nn
from tprobe.torch import PrecisionDebugger
disk, dump = sys.argv[1], sys.argv[2]
debugger = PrecisionDebugger(dump_path=dump, task="statistics", level="L0")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
def train_step():
    debugger.start(model)
    model(torch.randn(2, 4)).sum().backward()
    debugger.stop()
    debugger.step()
train_step()                                  # step 0: written
debugger.session.flush(30000)
filler = os.path.join(disk, "filler")
with open(filler, "wb", buffering=0) as f:    # the disk fills up
    for size in (65536, 4096, 1):
        try:
            while True:
                f.write(b"\0" * size)
        except OSError:
            pass
for _ in range(3):                            # steps 1-3 cannot be written
    train_step()
debugger.session.flush(30000)
os.unlink(filler)                             # space returns
train_step()                                  # step 4
print("trainer done", flush=True)
"""


class FullDiskTest(unittest.TestCase):
    def test_reported_once_to_the_trainer_then_resumed(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a small tmpfs")
        tmp = fresh_dir("tp-full-")
        disk = os.path.join(tmp, "disk")
        os.mkdir(disk)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs",
                           disk]).returncode != 0:
            self.skipTest("root, but cannot mount a tmpfs here")
        try:
            dump = os.path.join(disk, "dump")
            with Tprobed(tprobed_binary(), tmp) as daemon:
                proc = subprocess.run(
                    [sys.executable, "-c", FULL_DISK_TRAINER, disk, dump],
                    env=daemon.env(), timeout=300, capture_output=True,
                    text=True)
                self.assertEqual(daemon.stop(), 0, daemon.log())
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("trainer done", proc.stdout)
            reports = [line for line in proc.stderr.splitlines()
                       if line.startswith("[tprobe] tprobed: ")]
            self.assertEqual(len(reports), 1, proc.stderr)
            self.assertIn("No space left on device", reports[0])
            failures = 0
            for step in range(5):
                accounting = load(dump, step, -1, "tprobe.json")
                self.assertTrue(accounting["complete"], (step, accounting))
                failures += accounting.get("write_failures", 0)
                self.assertIn("L0", load(dump, step, -1, "dump.json")["level"])
            self.assertGreaterEqual(failures, 3)
        finally:
            subprocess.run(["umount", disk])


LIVE_TRAINER = r"""
import json, os, subprocess, sys, torch, torch.nn as nn
from tprobe.torch import PrecisionDebugger
cli, sock, dump, config = sys.argv[1:5]
debugger = PrecisionDebugger(config_path=config, dump_path=dump)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
def tprobe(*args):
    p = subprocess.run([cli, *args, "--socket", sock], capture_output=True,
                       text=True)
    print(json.dumps([list(args), p.returncode, p.stdout + p.stderr]),
          flush=True)
for step in range(9):
    debugger.start(model)
    model(torch.randn(2, 4)).sum().backward()
    debugger.stop()
    debugger.step()
    if step == 1:                       # during step 2: capture 3-4
        tprobe("start", "--steps", "3-4", "--ranks", "0")
        tprobe("start", "--ranks", "1")            # matches no rank
        tprobe("start", "--steps", "0-1")          # already passed
    if step == 5:                       # from step 6 on, every step
        tprobe("start", "--steps", "6-")
    if step == 6:                       # from step 7 on, none
        tprobe("stop", "--json")
debugger.session.flush(30000)
"""


class LiveControlTest(unittest.TestCase):
    def test_start_and_stop_take_effect_within_one_step(self) -> None:
        tmp = fresh_dir("tp-live-")
        dump = os.path.join(tmp, "dump")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L0", "step": [0]}, f)
        cli = os.path.join(os.path.dirname(tprobed_binary()), "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            proc = subprocess.run(
                [sys.executable, "-c", LIVE_TRAINER, cli, daemon.socket, dump,
                 config], env=daemon.env(RANK="0"), timeout=300,
                capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        calls = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual([c[1] for c in calls], [0, 3, 3, 0, 0], calls)
        self.assertIn("no registered rank matches --ranks 1 (registered "
                      "ranks: 0)", calls[1][2])
        self.assertIn("step 1 has already passed on every matching rank",
                      calls[2][2])
        self.assertEqual(json.loads(calls[4][2]),
                         {"command": "stop", "ok": True, "ranks": 1,
                          "error": None})
        # The config's step 0, the live 3-4 and 6; each order took effect at
        # the next step.
        self.assertEqual(sorted(os.listdir(dump)),
                         ["step0", "step3", "step4", "step6"])
        for step in (0, 3, 4, 6):
            self.assertTrue(load(dump, step, 0, "tprobe.json")["complete"])
            self.assertTrue(load(dump, step, 0, "dump.json")["data"])


class ForeignDaemonTest(unittest.TestCase):
    def test_the_trainer_sends_nothing_to_a_daemon_of_another_user(
            self) -> None:
        if os.geteuid() != 0:
            self.skipTest("needs root to create a throwaway user")
        user = f"tpd{os.getpid()}"
        if subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin",
                           user]).returncode != 0:
            self.skipTest("useradd failed")
        try:
            import pwd
            entry = pwd.getpwnam(user)
            tmp = fresh_dir("tp-foreign-")
            os.chmod(tmp, 0o755)
            run = os.path.join(tmp, "run")
            os.mkdir(run, 0o700)
            os.chown(run, entry.pw_uid, entry.pw_gid)
            sock = os.path.join(run, "tprobed.sock")
            daemon = subprocess.Popen(
                ["setpriv", f"--reuid={entry.pw_uid}",
                 f"--regid={entry.pw_gid}", "--clear-groups",
                 tprobed_binary(), "--foreground", "--socket", sock],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = 200
                while not os.path.exists(sock) and deadline:
                    deadline -= 1
                    subprocess.run(["sleep", "0.05"])
                os.chmod(run, 0o755)  # reachable, as a planted socket is
                code = ("from tprobe.torch import PrecisionDebugger\n"
                        "try:\n"
                        f"    PrecisionDebugger(dump_path={tmp + '/d'!r},"
                        " task='statistics', level='L0')\n"
                        "except ValueError as e:\n"
                        "    print('ERROR:', e)\n")
                proc = subprocess.run(
                    [sys.executable, "-c", code],
                    env=job_env(TPROBE_SOCKET=sock), timeout=120,
                    capture_output=True, text=True)
            finally:
                daemon.terminate()
                daemon.wait(timeout=30)
            self.assertIn(f"ERROR: refusing the daemon on {sock}: it runs "
                          f"as uid {entry.pw_uid}", proc.stdout, proc.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "d")),
                             "nothing was registered")
        finally:
            subprocess.run(["userdel", user])


if __name__ == "__main__":
    unittest.main()
