#!/usr/bin/env python3
"""tprobe.statistics_on end to end (a real tprobed, real rings): the
statistics the framework computes (framework) against the daemon's
(daemon), both made in this test on this machine.

- PyTorch (statistics_on_model.py, every dtype msprobe treats apart, level
  mix) and MindSpore (examples/mindspore_train.py, when MindSpore imports):
  the same dump.json entries, in the same order; Max and Min bit-equal,
  Mean and Norm within the dtype's rounding, every other byte equal.
- summary_mode xor and md5: the checksums the framework computes equal
  the daemon's byte for byte (xor for MindSpore too).
- Task tensor and overflow_check: the bytes the framework copies to the
  host without waiting make the same .npy files as the daemon's path, byte
  for byte.
- No call that waits for a device (Tensor.item/.cpu/.numpy/.tolist,
  torch.cuda.synchronize) on the training thread while hooks run.
- A rank killed (SIGKILL) with statistics in flight: its entries still
  written in call order, the step marked incomplete, never complete.
"""
import json
import math
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (ROOT, Tprobed, fresh_dir,  # noqa: E402
                             tprobed_binary, wait_until)

MODEL = os.path.join(HERE,
                     "statistics_on_model.py")
MS_TRAIN = os.path.join(ROOT, "examples", "mindspore_train.py")

# Relative rounding of a Mean or Norm in the tensor's dtype (torch reduces
# in the dtype, the daemon in double then rounds): a few units in the last
# place.
ULPS = {"torch.float16": 2.0 ** -9, "torch.bfloat16": 2.0 ** -6,
        "Float16": 2.0 ** -9, "BFloat16": 2.0 ** -6}
DEFAULT_ULPS = 2.0 ** -20


def config(directory: str, on: str, level: str = "mix",
           dump_path: str = "./dump_path",
           summary: str = "statistics") -> str:
    """A config.json for task statistics with `summary`; summary "tensor"
    or "overflow_check": that task (whose summary is always statistics;
    every overflow kept)."""
    path = os.path.join(directory, f"config_{on}_{level}_{summary}.json")
    task = summary if summary in ("tensor", "overflow_check") \
        else "statistics"
    section = {"scope": [], "list": [], "data_mode": ["all"]}
    if task == "statistics":
        section["summary_mode"] = summary
    if task == "overflow_check":
        section["overflow_nums"] = -1
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"task": task, "level": level, "dump_path": dump_path,
                   task: section, "tprobe": {"statistics_on": on}}, f)
    return path


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def same_stat(key: str, got, want, dtype: str) -> bool:
    if type(got) is not type(want):
        return False
    if isinstance(got, float) and math.isnan(got) and math.isnan(want):
        return True
    if key in ("Max", "Min") or not isinstance(got, float) or got == want:
        return got == want
    tolerance = ULPS.get(dtype, DEFAULT_ULPS)
    return abs(got - want) <= tolerance * max(abs(want), 1e-30)


def compare(test: unittest.TestCase, got, want, path: str,
            dtype: str = "") -> int:
    """Asserts the two values equal as said above; returns the number of
    statistics compared."""
    if isinstance(want, dict):
        test.assertIsInstance(got, dict, path)
        test.assertEqual(list(got), list(want), path)
        dtype = want.get("dtype", dtype)
        n = 0
        for key in want:
            if key in ("Max", "Min", "Mean", "Norm"):
                test.assertTrue(same_stat(key, got[key], want[key], dtype),
                                f"{path}.{key}: {got[key]!r} (framework) vs "
                                f"{want[key]!r} (daemon), {dtype}")
                n += 1
            else:
                n += compare(test, got[key], want[key], f"{path}.{key}",
                             dtype)
        return n
    if isinstance(want, list):
        test.assertIsInstance(got, list, path)
        test.assertEqual(len(got), len(want), path)
        return sum(compare(test, g, w, f"{path}.{i}", dtype)
                   for i, (g, w) in enumerate(zip(got, want)))
    test.assertEqual(got, want, path)
    return 0


def compare_trees(test: unittest.TestCase, framework: str, daemon: str,
                  steps: int) -> int:
    n = 0
    for step in range(steps):
        rel = os.path.join(f"step{step}", "rank", "dump.json")
        got = load(os.path.join(framework, rel))["data"]
        want = load(os.path.join(daemon, rel))["data"]
        test.assertEqual(list(got), list(want), "entries in call order")
        n += compare(test, got, want, f"step{step}")
        status = load(os.path.join(framework, f"step{step}", "rank",
                                   "tprobe.json"))
        test.assertTrue(status["complete"], status)
    return n


def compare_tensor_files(test: unittest.TestCase, got: str, want: str,
                         steps: int) -> int:
    """Asserts the two trees hold the same .npy files, byte for byte;
    returns how many."""
    files = 0
    for step in range(steps):
        rel = os.path.join(f"step{step}", "rank", "dump_tensor_data")
        names = sorted(os.listdir(os.path.join(want, rel)))
        test.assertEqual(sorted(os.listdir(os.path.join(got, rel))), names)
        for name in names:
            with open(os.path.join(got, rel, name), "rb") as f, \
                    open(os.path.join(want, rel, name), "rb") as g:
                test.assertEqual(f.read(), g.read(), name)
            files += 1
    return files


class StatisticsOnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tprobe-stats-on-")

    def run_model(self, daemon: Tprobed, on: str, *extra: str,
                  check: bool = True,
                  summary: str = "statistics") -> subprocess.CompletedProcess:
        dump = os.path.join(self.tmp, f"{on}{summary}{'_'.join(extra)}"
                            .replace("-", "").replace("/", "_"))
        out = subprocess.run(
            [sys.executable, MODEL, "--config",
             config(self.tmp, on, summary=summary),
             "--dump-path", dump, *extra],
            env=daemon.env(), capture_output=True, text=True, timeout=600)
        if check:
            self.assertEqual(out.returncode, 0, out.stderr[-4000:])
        out.dump = dump
        return out

    def test_torch_framework_equals_daemon(self) -> None:
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            framework = self.run_model(daemon, "framework").dump
            reference = self.run_model(daemon, "daemon").dump
        n = compare_trees(self, framework, reference, 2)
        self.assertGreater(n, 400)

    def check_checksums_by_the_framework(self, summary: str) -> None:
        """summary_mode `summary` (xor or md5): the checksums the framework
        computes (xor folded where the tensor lives, md5 from a copy made
        without waiting) equal the daemon's to the byte, and they do come
        from the framework: a rank killed with them in flight has tensors
        incomplete."""
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            framework = self.run_model(daemon, "framework",
                                       summary=summary).dump
            reference = self.run_model(daemon, "daemon", summary=summary).dump
            killed = self.run_model(daemon, "framework", "--kill-in-flight",
                                    check=False, summary=summary)
            self.assertEqual(killed.returncode, -9, killed.stderr[-4000:])
            status_path = os.path.join(killed.dump, "step1", "rank",
                                       "tprobe.json")
            wait_until(lambda: os.path.exists(status_path), 30,
                       "the killed rank's step to be written")
        compare_trees(self, framework, reference, 2)
        checksums = 0
        for step in range(2):
            with open(os.path.join(framework, f"step{step}", "rank",
                                   "dump.json"), encoding="utf-8") as f:
                checksums += f.read().count('"md5": ')
        self.assertGreater(checksums, 200)
        self.assertGreater(load(status_path)["tensors_incomplete"], 0)

    def test_torch_xor_checksums_by_the_framework(self) -> None:
        self.check_checksums_by_the_framework("xor")

    def test_torch_md5_checksums_by_the_framework(self) -> None:
        self.check_checksums_by_the_framework("md5")

    def test_no_synchronisation_in_the_hooks(self) -> None:
        for summary in ("statistics", "tensor"):
            with self.subTest(summary), \
                    Tprobed(tprobed_binary(), self.tmp) as daemon:
                trace = os.path.join(self.tmp, f"syncs_{summary}.json")
                self.run_model(daemon, "framework", "--trace-syncs", trace,
                               summary=summary)
            self.assertEqual(load(trace)["count"], 0, load(trace))

    def test_torch_task_tensor_by_the_framework(self) -> None:
        """Task tensor: the bytes the framework copies to the host without
        waiting (and its statistics) make the same tree as the daemon's
        path: the same .npy files byte for byte, the same entries; a rank
        killed with copies in flight has its tensors incomplete, without
        their files."""
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            framework = self.run_model(daemon, "framework",
                                       summary="tensor").dump
            reference = self.run_model(daemon, "daemon",
                                       summary="tensor").dump
            killed = self.run_model(daemon, "framework", "--kill-in-flight",
                                    check=False, summary="tensor")
            self.assertEqual(killed.returncode, -9, killed.stderr[-4000:])
            status_path = os.path.join(killed.dump, "step1", "rank",
                                       "tprobe.json")
            wait_until(lambda: os.path.exists(status_path), 30,
                       "the killed rank's step to be written")
        self.assertGreater(compare_trees(self, framework, reference, 2), 400)
        self.assertGreater(compare_tensor_files(self, framework, reference, 2),
                           200)
        status = load(status_path)
        self.assertFalse(status["complete"], status)
        self.assertGreater(status["tensors_incomplete"], 0, status)
        # Every entry still written, in call order; no file for a tensor
        # whose bytes never came (here: none of the step's came).
        rel = os.path.join("step1", "rank")
        self.assertEqual(
            list(load(os.path.join(killed.dump, rel, "dump.json"))["data"]),
            list(load(os.path.join(reference, rel, "dump.json"))["data"]))
        data = os.path.join(killed.dump, rel, "dump_tensor_data")
        written = os.listdir(data) if os.path.isdir(data) else []
        for name in status["incomplete_tensors"]:
            self.assertNotIn(f"{name}.npy", written)

    def test_a_rank_killed_with_statistics_in_flight_is_incomplete(
            self) -> None:
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            reference = self.run_model(daemon, "daemon").dump
            killed = self.run_model(daemon, "framework", "--kill-in-flight",
                                    check=False)
            self.assertEqual(killed.returncode, -9, killed.stderr[-4000:])
            status_path = os.path.join(killed.dump, "step1", "rank",
                                       "tprobe.json")
            wait_until(lambda: os.path.exists(status_path), 30,
                       "the killed rank's step to be written")
        status = load(status_path)
        self.assertFalse(status["complete"], status)
        self.assertTrue(status["producer_died"], status)
        self.assertGreater(status["tensors_incomplete"], 0, status)
        # The step before it had its statistics: complete and equal.
        compare_trees(self, killed.dump, reference, 1)
        # The held entries were still written, in call order.
        got = load(os.path.join(killed.dump, "step1", "rank", "dump.json"))
        want = load(os.path.join(reference, "step1", "rank", "dump.json"))
        self.assertEqual(list(got["data"]), list(want["data"]))

    def test_failed_reductions_are_counted_and_incomplete(self) -> None:
        """A reduction that raises in the hook, and a batch the statistics
        thread fails to read: each tensor is counted in
        producer_stats_failures, named once on stderr, and written
        incomplete; every entry is still written, in call order."""
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            reference = self.run_model(daemon, "daemon").dump
            report = os.path.join(self.tmp, "failures.json")
            out = self.run_model(daemon, "framework", "--fail", report)
        failed = load(report)
        self.assertGreater(failed["failed_tensors"], 2, failed)
        self.assertEqual(failed["counters"]["producer_stats_failures"],
                         failed["failed_tensors"], failed)
        self.assertEqual(out.stderr.count("producer_stats_failures"), 1,
                         out.stderr[-4000:])
        incomplete = 0
        for step in range(2):
            rel = os.path.join(f"step{step}", "rank")
            status = load(os.path.join(out.dump, rel, "tprobe.json"))
            incomplete += status["tensors_incomplete"]
            self.assertFalse(status["complete"], status)
            got = load(os.path.join(out.dump, rel, "dump.json"))["data"]
            want = load(os.path.join(reference, rel, "dump.json"))["data"]
            self.assertEqual(list(got), list(want), "entries in call order")
        self.assertEqual(incomplete, failed["failed_tensors"])

    def test_torch_overflow_check_by_the_framework(self) -> None:
        """Task overflow_check: the calls the framework's Max and Min find
        overflowing, and their .npy files, equal the daemon's."""
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            framework = self.run_model(daemon, "framework", "--overflow",
                                       summary="overflow_check").dump
            reference = self.run_model(daemon, "daemon", "--overflow",
                                       summary="overflow_check").dump
        compare_trees(self, framework, reference, 2)
        self.assertGreater(compare_tensor_files(self, framework, reference, 2),
                           0)
        data = load(os.path.join(framework, "step0", "rank", "dump.json"))
        self.assertTrue(any("log" in name for name in data["data"]),
                        list(data["data"]))

    def test_mindspore_framework_equals_daemon(self) -> None:
        """MindSpore's example at L1: the statistics, and summary_mode
        xor's checksums, by MindSpore's ops against the daemon's."""
        try:
            import mindspore  # noqa: F401
        except ImportError:
            self.skipTest("MindSpore is not installed")
        for summary in ("statistics", "xor"):
            with self.subTest(summary):
                self.check_mindspore(summary)

    def check_mindspore(self, summary: str) -> None:
        dumps = {}
        with Tprobed(tprobed_binary(), self.tmp) as daemon:
            for on in ("framework", "daemon"):
                dumps[on] = os.path.join(self.tmp, f"ms_{on}_{summary}")
                out = subprocess.run(
                    [sys.executable, MS_TRAIN, "--tool", "tprobe",
                     "--config",
                     config(self.tmp, on, "L1", dumps[on], summary),
                     "--dump-path", dumps[on], "--steps", "2"],
                    env=daemon.env(GLOG_v="3"), capture_output=True,
                    text=True, timeout=600)
                self.assertEqual(out.returncode, 0, out.stderr[-4000:])
        n = checksums = 0
        for step in range(2):
            step_dir = f"step{step}"
            ranks = os.listdir(os.path.join(dumps["daemon"], step_dir))
            for rank in ranks:
                rel = os.path.join(step_dir, rank, "dump.json")
                got = load(os.path.join(dumps["framework"], rel))["data"]
                want = load(os.path.join(dumps["daemon"], rel))["data"]
                self.assertEqual(list(got), list(want))
                n += compare(self, got, want, rel)
                checksums += json.dumps(got).count('"md5": "0x')
                status = load(os.path.join(dumps["framework"], step_dir, rank,
                                           "tprobe.json"))
                self.assertTrue(status["complete"], status)
        if summary == "xor":
            self.assertGreater(checksums, 20)
        else:
            self.assertGreater(n, 20)


if __name__ == "__main__":
    unittest.main()
