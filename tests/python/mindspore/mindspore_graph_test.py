"""Graph mode on MindSpore's CPU build: TensorDump cannot run there, and
its kernel-by-kernel dump writes no statistic.csv.

tprobe import (tools/import) turns MindSpore graph-mode TensorDump files
into msprobe's tree. MindSpore's CPU build has no TensorDump kernel, so no
real TensorDump output can be made on this machine: this test proves that
(examples/mindspore_graph.py stops with MindSpore's own "Unsupported op
[TensorDump] on CPU" and exit status 3). When a build that has the kernel
is installed, the test fails, as a reminder to compare `tprobe import` on
its real files with msprobe's post-processing. The importer itself is
tested on its fixtures (tests/tools/import/). The same holds for
`tprobe import --task statistics`: MindSpore refuses a statistics dump on
the CPU ("storing statistic dump is only supported on GPU and Ascend").
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import ROOT, fresh_dir  # noqa: E402


class GraphModeTest(unittest.TestCase):
    def test_cpu_build_has_no_tensordump_kernel(self) -> None:
        work = fresh_dir("tpmg-")
        out = subprocess.run(
            [sys.executable, os.path.join(ROOT, "examples",
                                          "mindspore_graph.py"),
             "--dump-path", work, "--device", "CPU"],
            capture_output=True, text=True, timeout=600,
            env=dict(os.environ, GLOG_v="3"))
        self.assertEqual(out.returncode, 3, out.stderr[-3000:])
        self.assertIn("Unsupported op [TensorDump] on CPU", out.stderr)
        self.assertFalse(os.path.exists(os.path.join(work, "raw")))

    def test_cpu_build_writes_no_statistic_csv(self) -> None:
        work = fresh_dir("tpmk-")
        config = os.path.join(work, "dump.json")
        with open(config, "w") as f:
            json.dump({"common_dump_settings": {
                "op_debug_mode": 0, "dump_mode": 0, "path": work,
                "net_name": "Net", "iteration": "all",
                "saved_data": "statistic", "input_output": 0,
                "kernels": [], "support_device": [0]},
                "e2e_dump_settings": {"enable": True,
                                      "trans_flag": True}}, f)
        script = (
            "import numpy as np, mindspore as ms\n"
            "ms.set_context(mode=ms.GRAPH_MODE, device_target='CPU')\n"
            "ms.nn.Dense(4, 2)(ms.Tensor(np.ones((2, 4), np.float32)))\n")
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True,
            timeout=600, env=dict(os.environ, GLOG_v="3",
                                  MINDSPORE_DUMP_CONFIG=config))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("storing statistic dump is only supported on GPU and "
                      "Ascend", out.stderr)
        found = [f for _, _, files in os.walk(work) for f in files
                 if f.endswith(".csv")]
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
