"""The fault-injection suite: real tprobed, real trainer processes, real
faults. Each test_* is one ctest test (tests/faults/CMakeLists.txt) and
proves one guarantee of docs/failure.md.

After every fault the same checks run over everything left on disk
(check_rank_tree):
- every JSON file parses and every .npy file loads with numpy; no journal
  and no temporary file is left behind;
- tprobe.json balances exactly: records.produced = records.written + every
  records.dropped count, with dropped.unread = 0 (the daemon found every
  record the rank committed), and a step with any loss says complete: false;
- dump.json holds as many entries as tprobe.json's "entries" says.
Training never stalls beyond the bound: the trainer reports its longest
step, and the bounds are generous multiples of the configured timeouts (a
loaded machine cannot fail them; a hang or a timeout paid per record does).

Set TPROBE_FAULT_SEED to replay a run of the random kill points.
"""

import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import unittest
from typing import Dict, List, Optional

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "support"))
from tprobed_fixture import (ROOT, Tprobed, fresh_dir, python_path,  # noqa
                             tprobed_binary, wait_until)

TRAINER = os.path.abspath(os.environ.get("FAULT_TRAINER") or os.path.join(
    ROOT, "build", "tests", "faults", "fault_trainer"))
CLI = os.path.abspath(os.environ.get("TPROBE_CLI") or os.path.join(
    ROOT, "build", "bin", "tprobe"))
SEED = int(os.environ.get("TPROBE_FAULT_SEED") or time.time_ns() % 100000)
# Generous: no step of these trainers takes more than milliseconds of work;
# a stall is a timeout paid per record or a hang (tens of seconds).
STALL_BOUND_MS = 15000


def write_config(path: str, **tprobe: object) -> str:
    # A full ring waits up to 5 s for a live daemon, so that a loaded
    # machine never drops where a test expects no drop; the faults that
    # stall the daemon set their own timeouts.
    section = {"ring_bytes": 65536, "ring_count": 4, "policy": "block",
               "block_timeout_ms": 5000}
    section.update(tprobe)
    task = section.pop("task", "statistics")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"task": task, "level": "L0", "tprobe": section}, f)
    return path


def status(socket_path: str) -> Dict:
    out = subprocess.run([CLI, "status", "--json", "--socket", socket_path,
                          "--timeout", "30"], check=True, text=True,
                         stdout=subprocess.PIPE, timeout=60).stdout
    return json.loads(out)


def wait_rank_gone(socket_path: str, pid: int) -> None:
    wait_until(lambda: all(r["pid"] != pid
                           for r in status(socket_path)["ranks"]),
               60, f"tprobed to finalise pid {pid}")


class Trainer:
    """fault_trainer as a child process; lines() follows its stdout."""

    def __init__(self, *args: str, env: Optional[Dict] = None) -> None:
        self.proc = subprocess.Popen([TRAINER, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.seen: List[str] = []

    def wait_line(self, line: str) -> None:
        while line not in self.seen:
            got = self.proc.stdout.readline()
            if not got:
                raise AssertionError(
                    f"trainer ended before {line!r}: {self.seen[-5:]} "
                    f"{self.proc.stderr.read()}")
            self.seen.append(got.strip())

    def finish(self) -> str:
        out, err = self.proc.communicate(timeout=240)
        self.seen += out.splitlines()
        if self.proc.returncode != 0:
            raise AssertionError(f"trainer exit {self.proc.returncode}: {err}")
        return err


def load_json(path: str) -> object:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def balance(records: Dict) -> int:
    """produced - written - every dropped count: 0 when it balances."""
    return (records["produced"] - records["written"]
            - sum(records["dropped"].values()))


def check_rank_tree(test: unittest.TestCase, dump: str, rank: int,
                    journals: bool = False, unwritten=()) -> Dict:
    """The checks every fault ends with (module docstring). Returns
    {step: tprobe.json} for the rank. With `journals` (a full disk), a step
    whose files could not be written may be left as its journal; the steps
    in `unwritten` (named lost by the daemon's log) may lack their files."""
    steps = {}
    for path in glob.glob(os.path.join(dump, "**"), recursive=True):
        name = os.path.basename(path)
        test.assertFalse(".tmp" in name or name.startswith("."),
                         f"left behind: {path}")
        if name == "tprobe.journal":
            step = int(path.split("/step")[-1].split("/")[0])
            test.assertTrue(journals or step in unwritten,
                            f"left behind: {path}")
            continue
        if name.endswith(".json"):
            load_json(path)
        elif name.endswith(".npy"):
            numpy.load(path)
    for d in glob.glob(os.path.join(dump, "step*", f"rank{rank}")):
        step = int(os.path.basename(os.path.dirname(d))[4:])
        if not os.path.exists(os.path.join(d, "tprobe.json")):
            # tprobe.json is written last: without it the step is not known
            # to be whole (a daemon killed while writing it, a full disk).
            test.assertTrue(journals or step in unwritten, d)
            continue
        acc = load_json(os.path.join(d, "tprobe.json"))
        dump_json = load_json(os.path.join(d, "dump.json"))
        test.assertEqual(len(dump_json["data"]), acc["entries"], d)
        records = acc.get("records")
        if records is not None:
            test.assertEqual(balance(records), 0, f"{d}: {acc}")
            test.assertEqual(records["dropped"]["unread"], 0, f"{d}: {acc}")
            lost = records["produced"] != records["written"]
            if lost:
                test.assertFalse(acc["complete"], f"{d}: {acc}")
        steps[step] = acc
    return steps


def totals(steps: Dict) -> Dict:
    """The per-step rank counts summed (a rank that exited cleanly)."""
    sums = {"produced": 0, "written": 0}
    for acc in steps.values():
        records = acc.get("records")
        if records is None:
            continue
        sums["produced"] += records["produced"]
        sums["written"] += records["written"]
    return sums


class FaultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        print(f"TPROBE_FAULT_SEED={SEED}", flush=True)
        cls.rng = random.Random(SEED)

    def setUp(self) -> None:
        self.tmp = fresh_dir("tp-fault-")

    def run_clean(self, daemon: Tprobed, config: str, dump: str,
                  *args: str) -> Dict:
        """Runs the trainer to its end; returns its report."""
        report = os.path.join(self.tmp, "report.json")
        t = Trainer("--config", config, "--socket", daemon.socket, "--dump",
                    dump, "--report", report, *args)
        t.finish()
        rep = load_json(report)
        self.assertLess(rep["longest_step_ms"], STALL_BOUND_MS, rep)
        return rep

    def run_stalled(self, daemon: Tprobed, config: str, dump: str,
                    stalled_until: int, *args: str) -> Dict:
        """Runs the trainer to its end with the daemon stopped (SIGSTOP)
        from after step 0 until the trainer reports step `stalled_until`:
        the trainer waits at a gate until the daemon is stopped, so the
        rings fill for certain however fast the daemon is. Returns the
        trainer's report, its steps bounded as ever."""
        report = os.path.join(self.tmp, "report.json")
        gate = os.path.join(self.tmp, "gate")
        for stale in (report, gate):
            if os.path.exists(stale):
                os.remove(stale)
        t = Trainer("--config", config, "--socket", daemon.socket, "--dump",
                    dump, "--report", report, "--gate", gate, *args)
        t.wait_line("step 0")
        daemon.proc.send_signal(signal.SIGSTOP)
        open(gate, "w").close()
        try:
            t.wait_line(f"step {stalled_until}")
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        t.finish()
        rep = load_json(report)
        # One block_timeout_ms per ring and stop, not one per record.
        self.assertLess(rep["longest_step_ms"], STALL_BOUND_MS, rep)
        self.assertGreater(rep["dropped_ring_full"], 0, rep)
        return rep

    def assert_totals_match(self, steps: Dict, rep: Dict) -> None:
        """The daemon's per-step counts add up to the rank's own counters."""
        sums = totals(steps)
        produced = (rep["records_written"] + rep["dropped_no_daemon"]
                    + rep["dropped_ring_full"] + rep["dropped_too_large"])
        self.assertEqual(sums["produced"], produced, (sums, rep))
        self.assertEqual(sums["written"], rep["records_written"], (sums, rep))

    # kill -9 of a rank at a random point, many times.
    def test_rank_kill(self) -> None:
        config = write_config(os.path.join(self.tmp, "c.json"))
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            for i in range(12):
                dump = os.path.join(self.tmp, f"dump{i}")
                t = Trainer("--config", config, "--socket", daemon.socket,
                            "--dump", dump, "--rank", str(i), "--steps",
                            "100000", "--entries", "6", "--threads", "1")
                kill_after = self.rng.randint(0, 5)
                t.wait_line(f"step {kill_after}")
                time.sleep(self.rng.uniform(0, 0.02))
                t.proc.kill()
                t.proc.communicate()
                wait_rank_gone(daemon.socket, t.proc.pid)
                steps = check_rank_tree(self, dump, i)
                self.assertTrue(steps, "no step was written")
                self.assertEqual(sorted(steps), list(range(len(steps))))
                died = [s for s, acc in steps.items() if acc["producer_died"]]
                for s, acc in steps.items():
                    # A step is complete, or it was cut short by the death.
                    self.assertTrue(acc["complete"] or s in died, (s, acc))
                    if s in died:
                        self.assertFalse(acc["complete"])
                # The daemon's own count covers the steps cut short.
                if died:
                    last = steps[max(died)].get("records")
                    self.assertIsNotNone(last, steps[max(died)])
                    self.assertEqual(last["counted_by"], "daemon")
                # Every step up to the kill point was seen whole.
                for s in range(kill_after):
                    self.assertIn(s, steps)

    # kill -9 of the daemon mid-run, a gap without one, then a new daemon.
    def test_daemon_kill(self) -> None:
        config = write_config(os.path.join(self.tmp, "c.json"))
        dump = os.path.join(self.tmp, "dump")
        report = os.path.join(self.tmp, "report.json")
        hold = os.path.join(self.tmp, "hold")
        gate = os.path.join(self.tmp, "gate")
        first = Tprobed(tprobed_binary(), self.tmp).__enter__()
        self.addCleanup(first.stop)
        kill_at = self.rng.randint(5, 15)
        # It steps until `hold` exists: as long as the test needs; it waits
        # after step kill_at until `gate` exists, so that the kill falls
        # there however late this process runs.
        t = Trainer("--config", config, "--socket", first.socket, "--dump",
                    dump, "--report", report, "--hold", hold, "--steps",
                    "0", "--entries", "6", "--pause-ms", "5", "--gate", gate,
                    "--gate-step", str(kill_at))
        t.wait_line(f"step {kill_at}")
        time.sleep(self.rng.uniform(0, 0.02))  # the daemon at a random point
        first.proc.kill()
        first.proc.wait()
        open(gate, "w").close()
        t.wait_line(f"step {kill_at + 20}")  # steps without a daemon
        with Tprobed(tprobed_binary(), self.tmp) as second:
            def outage_shown() -> bool:
                ranks = status(second.socket)["ranks"]
                return bool(ranks) and ranks[0]["outage"] is not None
            wait_until(outage_shown, 60, "the outage in tprobe status")
            outage = status(second.socket)["ranks"][0]["outage"]
            t.wait_line(f"step {outage['last_step'] + 3}")
            open(hold, "w").close()
            t.finish()
        rep = load_json(report)
        self.assertLess(rep["longest_step_ms"], STALL_BOUND_MS, rep)
        last = max(int(line.split()[1]) for line in t.seen
                   if line.startswith("step "))
        # A step the dead daemon was writing may lack its tprobe.json.
        steps = check_rank_tree(
            self, dump, 0,
            unwritten=range(outage["first_step"], outage["last_step"] + 1))
        reported = [acc["daemon_outage"] for acc in steps.values()
                    if "daemon_outage" in acc]
        self.assertEqual(len(reported), 1, steps)
        o = reported[0]
        first_step, last_step = o["steps"]
        self.assertEqual([first_step, last_step],
                         [outage["first_step"], outage["last_step"]])
        self.assertLessEqual(first_step, kill_at + 1)
        self.assertGreaterEqual(last_step, kill_at + 20)
        self.assertEqual(o["produced"], sum(o["dropped"].values())
                         + o["read_by_lost_daemon"], o)
        self.assertGreater(o["dropped"]["no_daemon"], 0, o)
        for s in range(last + 1):
            acc = steps.get(s)
            if first_step <= s <= last_step:
                # Inside the outage: written before the death (but not
                # known to be), rebuilt from the journal (recovered), or
                # nothing; never a complete step that is not whole.
                if acc is not None and acc["complete"]:
                    self.assertEqual(acc.get("records", {}).get("counted_by"),
                                     "rank", (s, acc))
                continue
            self.assertIsNotNone(acc, f"step {s} outside the outage")
            self.assertTrue(acc["complete"], (s, acc))
            self.assertEqual(acc.get("records", {}).get("counted_by"), "rank",
                             (s, acc))

    # SIGSTOP of the daemon: rings fill, the rank drops (counted) and goes
    # on; SIGCONT: the daemon catches up and every step is written.
    def test_daemon_stop(self) -> None:
        config = write_config(os.path.join(self.tmp, "c.json"),
                              block_timeout_ms=200)
        dump = os.path.join(self.tmp, "dump")
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            rep = self.run_stalled(daemon, config, dump, 25, "--steps", "60",
                                   "--entries", "20", "--floats", "1024",
                                   "--threads", "1")
        steps = check_rank_tree(self, dump, 0)
        self.assertEqual(sorted(steps), list(range(60)))
        for s, acc in steps.items():
            self.assertEqual(acc["records"]["counted_by"], "rank", (s, acc))
            lossy = acc["records"]["dropped"]["ring_full"] > 0
            self.assertEqual(acc["complete"], not lossy, (s, acc))
        self.assert_totals_match(steps, rep)

    # SIGSTOP of the daemon for longer than any write bound, while the rank
    # makes more steps than its control socket holds (a few hundred small
    # requests): a daemon that reads slowly is not a lost one. The rank keeps
    # its connection (one registration, its Goodbye heard, no step marked
    # producer_died) and every step is written once the daemon runs again.
    def test_daemon_long_stop(self) -> None:
        # At exit the rank waits for the daemon's last answer as long as it
        # takes to write the backlog, so that every step is on disk.
        config = write_config(os.path.join(self.tmp, "c.json"),
                              policy="drop", block_timeout_ms=1,
                              exit_timeout_ms=120000)
        dump = os.path.join(self.tmp, "dump")
        report = os.path.join(self.tmp, "report.json")
        hold = os.path.join(self.tmp, "hold")
        gate = os.path.join(self.tmp, "gate")
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            t = Trainer("--config", config, "--socket", daemon.socket,
                        "--dump", dump, "--report", report, "--hold", hold,
                        "--gate", gate, "--steps", "1200", "--entries", "1",
                        "--floats", "4", "--pause-ms", "5")
            t.wait_line("step 0")
            daemon.proc.send_signal(signal.SIGSTOP)
            open(gate, "w").close()
            try:
                t.wait_line("step 1000")
                time.sleep(7)  # past the 5 s a write once waited at most
            finally:
                daemon.proc.send_signal(signal.SIGCONT)
            open(hold, "w").close()
            t.finish()
            wait_rank_gone(daemon.socket, t.proc.pid)
            log = daemon.log()
        rep = load_json(report)
        self.assertLess(rep["longest_step_ms"], STALL_BOUND_MS, rep)
        last = max(int(line.split()[1]) for line in t.seen
                   if line.startswith("step "))
        steps = check_rank_tree(self, dump, 0)
        self.assertEqual(sorted(steps), list(range(last + 1)))
        for s, acc in steps.items():
            self.assertFalse(acc["producer_died"], (s, acc))
        self.assertEqual(log.count("registered: pid"), 1, log)
        self.assertIn("said goodbye", log)
        self.assertNotIn("hung up", log)

    # A full ring under both policies: drops are counted, balanced, and the
    # entries and tensors they cut short are named.
    def test_ring_full(self) -> None:
        for policy in ("drop", "block"):
            with self.subTest(policy=policy):
                config = write_config(
                    os.path.join(self.tmp, f"{policy}.json"), policy=policy,
                    block_timeout_ms=1, ring_count=2)
                dump = os.path.join(self.tmp, policy)
                with Tprobed(tprobed_binary(),
                             fresh_dir("tp-fault-d-")) as daemon:
                    rep = self.run_stalled(daemon, config, dump, 4, "--steps",
                                           "8", "--entries", "40", "--floats",
                                           "4096", "--threads", "1")
                steps = check_rank_tree(self, dump, 0)
                self.assertEqual(sorted(steps), list(range(8)))
                named = 0
                for s, acc in steps.items():
                    lossy = acc["records"]["produced"] != \
                        acc["records"]["written"]
                    self.assertEqual(acc["complete"], not lossy, (s, acc))
                    if lossy:
                        named += len(acc.get("incomplete_entries", []))
                        named += len(acc.get("incomplete_tensors", []))
                self.assertGreater(named, 0, steps)
                self.assert_totals_match(steps, rep)

    # A full disk, then a read-only one: training goes on, what is written
    # is valid, what could not be written stays as a journal that `tprobe
    # recover` turns into its step once there is room, and a read-only
    # dump path is refused with the reason.
    def test_disk(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        mount = os.path.join(self.tmp, "mnt")
        os.mkdir(mount)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs",
                        mount], check=True)
        try:
            config = write_config(os.path.join(self.tmp, "c.json"),
                                  task="tensor")
            dump = os.path.join(mount, "dump")
            with Tprobed(tprobed_binary(), self.tmp) as daemon:
                self.run_clean(daemon, config, dump, "--steps", "20",
                               "--entries", "8", "--floats", "2048")
                log = daemon.log()
            self.assertIn("No space left on device", log)
            steps = check_rank_tree(self, dump, 0, journals=True)
            self.assertLess(len(steps), 20, "the disk never filled")
            # Room again: every step that was kept as a journal comes back.
            subprocess.run(["mount", "-o", "remount,size=64m", mount],
                           check=True)
            rec = subprocess.run([CLI, "recover", dump], text=True,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=120)
            del rec  # exit 1 when a journal was cut short by the full disk
            # A step missing now is one whose journal could not be written
            # either: the daemon's log names it.
            lost = re.findall(r"steps ([0-9, ]+) could not be written", log)
            named = {int(n) for group in lost for n in group.split(",")}
            steps = check_rank_tree(self, dump, 0, unwritten=named)
            for s in range(20):
                self.assertTrue(s in steps or s in named, (s, lost))
            for acc in steps.values():
                self.assertTrue(acc["complete"] or acc["recovered"]
                                or acc.get("tensor_files_lost", 0) > 0, acc)
        finally:
            subprocess.run(["umount", "-l", mount], check=False)

        ro = os.path.join(self.tmp, "ro")
        os.mkdir(ro)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs",
                        ro], check=True)
        try:
            with Tprobed(tprobed_binary(), fresh_dir("tp-fault-r-")) as d:
                t = Trainer("--config", config, "--socket", d.socket,
                            "--dump", os.path.join(ro, "dump"))
                out, _ = t.proc.communicate(timeout=120)
            self.assertEqual(t.proc.returncode, 3, out)
            self.assertIn("refused", out)
            self.assertIn("Read-only file system", out)
        finally:
            subprocess.run(["umount", "-l", ro], check=False)

    # A C++ and a Python trainer fork without exec: the child exits at once
    # (no Goodbye wait, no join of a thread it does not have), writes
    # nothing into its parent's rings, and the parent's steps balance.
    def test_fork(self) -> None:
        config = write_config(os.path.join(self.tmp, "c.json"))
        dump = os.path.join(self.tmp, "cxx")
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            start = time.monotonic()
            rep = self.run_clean(daemon, config, dump, "--steps", "6",
                                 "--entries", "5", "--fork", "2")
            # The child's wait would be ~35 s without the fork check.
            self.assertLess(time.monotonic() - start, 30)
        steps = check_rank_tree(self, dump, 0)
        self.assertEqual(sorted(steps), list(range(6)))
        for s, acc in steps.items():
            self.assertTrue(acc["complete"], (s, acc))
            self.assertFalse(any(k.startswith("Module.child")
                                 for k in load_json(os.path.join(
                                     dump, f"step{s}", "rank0",
                                     "dump.json"))["data"]))
        self.assert_totals_match(steps, rep)

        pydump = os.path.join(self.tmp, "py")
        script = os.path.join(HERE, "fork_trainer.py")
        with Tprobed(tprobed_binary(), fresh_dir("tp-fault-p-")) as daemon:
            out = subprocess.run(
                [sys.executable, script, config, pydump],
                env=daemon.env(RANK="0"), check=True, text=True, timeout=240,
                stdout=subprocess.PIPE).stdout
        self.assertIn("child exited 0", out)
        child_s = float(out.split("child seconds ")[1].split()[0])
        self.assertLess(child_s, 30, out)
        steps = check_rank_tree(self, pydump, 0)
        self.assertEqual(sorted(steps), [0, 1, 2])
        for s, acc in steps.items():
            self.assertTrue(acc["complete"], (s, acc))

    # Autograd-like threads hook while the forward thread does: each has its
    # own ring; every entry of every thread is written, and counts balance.
    def test_threads(self) -> None:
        config = write_config(os.path.join(self.tmp, "c.json"),
                              ring_count=8, ring_bytes=1 << 20)
        dump = os.path.join(self.tmp, "dump")
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            rep = self.run_clean(daemon, config, dump, "--steps", "10",
                                 "--entries", "25", "--threads", "6")
        steps = check_rank_tree(self, dump, 0)
        self.assertEqual(sorted(steps), list(range(10)))
        for s, acc in steps.items():
            self.assertTrue(acc["complete"], (s, acc))
            self.assertEqual(acc["entries"], 7 * 25, (s, acc))
        self.assert_totals_match(steps, rep)


if __name__ == "__main__":
    unittest.main()
