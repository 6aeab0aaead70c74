#!/usr/bin/env python3
"""MindSpore graph mode: msprobe's cell dump puts TensorDump operators into
the network's cells, MindSpore writes their raw .npy files, and
`tprobe import` turns them into msprobe's dump tree.

    python examples/mindspore_graph.py --dump-path /tmp/ms_graph \\
        [--tprobe build/bin/tprobe]

MindSpore's CPU build has no TensorDump kernel ("Unsupported op
[TensorDump] on CPU"): there the script stops with that message and exit
status 3. On an Ascend or GPU build it dumps one step, then imports it:
    tprobe import --task tensor DUMP_PATH/raw DUMP_PATH/tree
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn

EXIT_NO_TENSORDUMP = 3


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(self.fc(x))


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        return self.head(self.block(x))


def tensordump_supported(device: str) -> bool:
    """Whether this MindSpore build can run a TensorDump in graph mode."""
    class Probe(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.dump = ms.ops.TensorDump()

        def construct(self, x):
            self.dump(os.path.join(tempfile.gettempdir(), "tprobe_probe"), x)
            return x

    ms.set_context(mode=ms.GRAPH_MODE, device_target=device)
    try:
        Probe()(Tensor(np.ones((1,), np.float32)))
        return True
    except RuntimeError as error:
        if "Unsupported op [TensorDump]" in str(error):
            return False
        raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump-path", default="./ms_graph_dump")
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--tprobe", default=shutil.which("tprobe") or
                        os.path.join(os.path.dirname(__file__), "..",
                                     "build", "bin", "tprobe"))
    args = parser.parse_args()

    if not tensordump_supported(args.device):
        print(f"MindSpore {ms.__version__} has no TensorDump kernel for "
              f"{args.device} (\"Unsupported op [TensorDump] on "
              f"{args.device}\"): graph-mode TensorDump dumps need an "
              "Ascend or GPU build", file=sys.stderr)
        return EXIT_NO_TENSORDUMP

    raw = os.path.join(args.dump_path, "raw")
    config = os.path.join(args.dump_path, "config.json")
    os.makedirs(args.dump_path, exist_ok=True)
    with open(config, "w") as f:
        json.dump({"task": "tensor", "dump_path": raw, "level": "L0",
                   "step": [0], "tensor": {"data_mode": ["all"]}}, f)
    from msprobe.mindspore import PrecisionDebugger
    net = Net()
    debugger = PrecisionDebugger(config_path=config)
    debugger.start(net)
    net(Tensor(np.ones((2, 4), np.float32)))
    debugger.step()
    debugger.stop()
    tree = os.path.join(args.dump_path, "tree")
    return subprocess.call([args.tprobe, "import", "--task", "tensor",
                            "--wait", "2", raw, tree])


if __name__ == "__main__":
    sys.exit(main())
