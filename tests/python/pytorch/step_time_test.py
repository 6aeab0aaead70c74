"""bench/step_time.py in brief (2 steps, 1 round, the --small model), so
that it cannot rot: every row is printed, no tool first, then tprobe at L0,
L1 and mix dumped and undumped ("step": [100000]), and msprobe likewise
where this interpreter imports it (--msprobe installed); the dumped rows
count step 1's entries, the undumped ones none; every row gives the range
of its rounds' ratios and its start/stop/step microseconds. Where torch has
torch.compile, --compile's table too: examples/compiled_transformer.py
eager and compiled, with no tool and tprobe L0, and the ratio line.
--baseline adds a row per level for another build's package (this one's,
here), and refuses a folder without a tprobe package. --varied trains
VariedBlock, whose entries at L0 are counted.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "support"))
from tprobed_fixture import ROOT, python_path, tprobed_binary  # noqa: E402

BENCH = os.path.join(ROOT, "bench", "step_time.py")
LEVELS = ("L0", "L1", "mix")
COMPILE_ROWS = ["eager none", "compiled none", "eager tprobe L0",
                "compiled tprobe L0"]


def run_bench(test: unittest.TestCase, *options: str,
              timeout: int = 600) -> str:
    """bench/step_time.py for 2 steps, 1 round of the --small model with
    ``options``; its output, once it exited 0."""
    cmd = [sys.executable, BENCH, "--tprobed", tprobed_binary(), "--small",
           "--steps", "2", "--rounds", "1", *options]
    run = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=python_path()),
                         capture_output=True, text=True, timeout=timeout)
    test.assertEqual(run.returncode, 0, run.stderr[-4000:])
    return run.stdout


def table_rows(lines: list) -> dict:
    """label -> the numbers of a table's rows (the header left out)."""
    return {line[:30].strip(): line[30:].split() for line in lines[1:]}


def has_msprobe() -> bool:
    try:
        import msprobe  # noqa: F401
        return True
    except ImportError:
        return False


class StepTimeTest(unittest.TestCase):
    def test_dumped_and_undumped_rows(self) -> None:
        tools = ["tprobe"] + (["msprobe"] if has_msprobe() else [])
        out = run_bench(self, *(["--msprobe", "installed"]
                                if "msprobe" in tools else []))
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("tool "), out)
        rows = table_rows(lines)
        want = ["none"] + [f"{tool} {lv}{suffix}" for tool in tools
                           for suffix in ("", " undumped") for lv in LEVELS]
        self.assertEqual(list(rows), want, out)
        for label, numbers in rows.items():
            # wall ms, x, x by round, cpu ms, x, daemon cpu ms, entries[,
            # us/entry], start/stop/step us
            self.assertRegex(numbers[-1], r"^\d+/\d+/\d+$", label)
            self.assertGreater(float(numbers[0]), 0, label)
            low, high = map(float, numbers[2].split("-"))
            self.assertLessEqual(low, high, label)
            if label == "none":  # one round: its median is the run's
                self.assertEqual(numbers[2], "1.00-1.00", label)
            self.assertGreater(float(numbers[3]), 0, label)
            entries = int(numbers[6])
            if label == "none" or label.endswith("undumped"):
                self.assertEqual(entries, 0, label)
            else:
                self.assertGreater(entries, 0, label)

    def test_baseline_rows(self) -> None:
        out = run_bench(self, "--no-undumped", "--baseline", python_path())
        rows = table_rows(out.splitlines())
        want = ["none"] + [f"tprobe {lv}{suffix}" for suffix in
                           ("", " baseline") for lv in LEVELS]
        self.assertEqual(list(rows), want, out)
        for label in want[1:]:
            self.assertGreater(int(rows[label][6]), 0, label)

    def test_varied_model(self) -> None:
        out = run_bench(self, "--varied", "--no-undumped")
        rows = table_rows(out.splitlines())
        # With VariedBlock (its LayerNorm called twice, an output unused):
        # 22 module forwards a step, their 22 backwards and 14 parameter
        # gradient entries, 58 in all, as msprobe 26.2 writes them for
        # this model (compared entry by entry on 2026-12-07); the plain
        # blocks give 52.
        self.assertEqual(int(rows["tprobe L0"][6]), 58, out)
        for lv in LEVELS[1:]:
            self.assertGreater(int(rows[f"tprobe {lv}"][6]), 58, out)

    def test_baseline_without_tprobe_is_refused(self) -> None:
        with tempfile.TemporaryDirectory() as empty:
            run = subprocess.run(
                [sys.executable, BENCH, "--tprobed", tprobed_binary(),
                 "--baseline", empty], capture_output=True, text=True,
                timeout=60)
        self.assertEqual(run.returncode, 2, run.stdout)
        self.assertIn("no tprobe package there", run.stderr)

    def test_too_few_steps_or_rounds_are_refused(self) -> None:
        for option, value, said in (("--steps", "1", "at least 2"),
                                    ("--rounds", "0", "at least 1")):
            run = subprocess.run(
                [sys.executable, BENCH, "--tprobed", tprobed_binary(),
                 option, value], capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 2, run.stdout)
            self.assertIn(f"{option} {value}: give {said}", run.stderr)

    @unittest.skipUnless(hasattr(torch, "compile"), "torch 1.x: no compile")
    def test_compile_rows(self) -> None:
        out = run_bench(self, "--no-undumped", "--compile", timeout=900)
        table = out.split("\n\n", 1)[1].splitlines()
        self.assertTrue(table[0].startswith("compiled_transformer.py "), out)
        rows = table_rows(table[:-1])
        self.assertEqual(list(rows), COMPILE_ROWS, out)
        for label, numbers in rows.items():
            self.assertGreater(float(numbers[0]), 0, out)
            self.assertEqual(int(numbers[6]) > 0, "tprobe" in label, out)
        self.assertRegex(table[-1], r"^compiled tprobe L0 / eager tprobe L0: "
                         r"wall \d+\.\d+, cpu \d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
