"""bench/instructions.py in brief (the --small model, 1 step counted after
1), so that it cannot rot: no tool, tprobe L1 dumped and undumped, and L1
from a --baseline package (this build's), with the simulated caches and
branch predictor. Dumped L1 executes more instructions than no tool, and
undumped L1 fewer than dumped; the baseline, the same build, counts what
the dumped row counts; every ratio column is filled. Bad arguments are
refused before anything runs.
"""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "support"))
from tprobed_fixture import ROOT, python_path, tprobed_binary  # noqa: E402

BENCH = os.path.join(ROOT, "bench", "instructions.py")


def run_bench(*options: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, BENCH, "--tprobed", tprobed_binary(), "--small",
           *options]
    return subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=python_path()),
                          capture_output=True, text=True, timeout=900)


class InstructionsTest(unittest.TestCase):
    def test_rows_and_ratios(self) -> None:
        run = run_bench("--levels", "L1", "--undumped", "--baseline",
                        python_path(), "--warmup", "1", "--steps", "1",
                        "--cache", "--branch")
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])
        lines = run.stdout.splitlines()
        self.assertEqual(lines[0].split()[1:], [
            "M", "instr/step", "x", "I1", "miss", "x", "D1", "miss", "x",
            "LL", "miss", "x", "mispredict", "x"])
        rows = {line[:30].strip(): [float(x) for x in line[30:].split()]
                for line in lines[1:]}
        self.assertEqual(list(rows), ["none", "tprobe L1",
                                      "tprobe L1 undumped",
                                      "tprobe L1 baseline"])
        for label, numbers in rows.items():
            self.assertEqual(len(numbers), 6, label)
        self.assertEqual(rows["none"][1:], [1.0] * 5)
        none, dumped = rows["none"][0], rows["tprobe L1"][0]
        undumped, baseline = (rows["tprobe L1 undumped"][0],
                              rows["tprobe L1 baseline"][0])
        self.assertGreater(dumped, 1.05 * none)
        self.assertLess(undumped, dumped)
        self.assertAlmostEqual(baseline / dumped, 1.0, delta=0.03)
        self.assertIn("[instructions] tprobe L1 undumped:", run.stderr)

    def test_bad_arguments_are_refused(self) -> None:
        for options, message in (
                (["--steps", "0"], "--steps 0: give at least 1"),
                (["--warmup", "0"], "--warmup 0: give at least 1"),
                (["--jobs", "0"], "--jobs 0: give at least 1"),
                (["--baseline", HERE], "no tprobe package there")):
            run = run_bench(*options)
            self.assertEqual(run.returncode, 2, options)
            self.assertIn(message, run.stderr)


if __name__ == "__main__":
    unittest.main()
