"""deploy/gpu_check.sh on a machine without a device (every CUDA device
hidden): it says that no CUDA or NPU device is there and exits 77 within
seconds, having built, run and written nothing. What it checks on a device
runs only there (docs/performance.md, "GPU check").
"""

import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python", "support"))
from tprobed_fixture import ROOT  # noqa: E402

SCRIPT = os.path.join(ROOT, "deploy", "gpu_check.sh")


class GpuCheckTest(unittest.TestCase):
    def test_no_device_is_said_and_skips_everything(self) -> None:
        out = os.path.join(tempfile.mkdtemp(prefix="tp-gpu-check-"), "out")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        env.pop("PYTHON", None)
        start = time.monotonic()
        run = subprocess.run([SCRIPT, out], env=env, capture_output=True,
                             text=True, timeout=120)
        elapsed = time.monotonic() - start
        self.assertEqual(run.returncode, 77, run.stdout + run.stderr)
        self.assertIn("no CUDA or NPU device: nothing checked", run.stdout)
        self.assertLess(elapsed, 60)
        self.assertFalse(os.path.exists(out))

    def test_python_names_the_only_interpreter_tried(self) -> None:
        for python in ("/bin/true", "/bin/false"):  # no output, a failure
            run = subprocess.run(
                [SCRIPT, os.path.join(tempfile.mkdtemp(), "out")],
                env=dict(os.environ, PYTHON=python), capture_output=True,
                text=True, timeout=120)
            self.assertEqual(run.returncode, 77, run.stdout + run.stderr)
            self.assertIn(f"nothing checked ({python}: ", run.stdout)

if __name__ == "__main__":
    unittest.main()
