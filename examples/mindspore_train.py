#!/usr/bin/env python3
"""Trains a small MindSpore network in PyNative mode on the CPU, with
tprobe, with msprobe or with no tool, and prints each step's loss (its
float32 bits in hex, so runs can be compared exactly).

    python examples/mindspore_train.py --tool tprobe --level mix \\
        --dump-path /tmp/ms_dump --steps 2

The network has what a precision dump must handle: a Cell used twice, a
primitive held by a Cell (ops.Mul), mint and Tensor methods, a function
compiled with mindspore.jit, an int (a shape) and a bool (a mask, a
keyword). tests/python/mindspore/mindspore_test.py runs it with both tools and
compares the trees.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import mindspore as ms
from mindspore import Tensor, mint, nn, ops


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(8, 8)
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(self.fc(x)) + x


@ms.jit
def scale(x):
    return ops.mul(x, 0.5) + 1.0


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()          # called twice per step
        self.head = nn.Dense(8, 2)
        self.mul = ops.Mul()          # a primitive held by the Cell

    def construct(self, x):
        x = self.block(x)
        x = self.block(x)
        x = mint.tanh(self.mul(x, 2.0))
        x = x.sum(axis=1, keepdims=True) * 0.1 + x
        x = scale(self.head(x))
        mask = x > 0                              # a Bool tensor
        rows = x.shape[0]                         # an int
        picked = ops.argmax(x, 1, keepdim=True)  # an int tensor
        return x * mask.to(ms.float32) + picked.to(ms.float32) / rows


def make_debugger(tool: str, config_path: str):
    if tool == "tprobe":
        from tprobe.mindspore import PrecisionDebugger
        return PrecisionDebugger(config_path=config_path)
    # msprobe 26.2 on MindSpore 2.10's CPU build needs two work-arounds:
    # its statistics use mint.norm, whose kernel (LinalgVectorNorm) the CPU
    # build lacks, and it falls back to ops.norm only when mint has no
    # norm; and its jit dump patches mindspore.common.api._JitExecutor
    # while mindspore.jit looks the class up in mindspore.graph.api, so
    # without the second line jit compilation sees msprobe's API wrappers
    # and fails ("Unsupported statement 'Try'").
    if hasattr(mint, "norm"):
        delattr(mint, "norm")
    from msprobe.mindspore import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=config_path)
    import mindspore.common.api as common_api
    import mindspore.graph.api as graph_api
    graph_api._JitExecutor = common_api._JitExecutor
    return debugger


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", choices=("none", "tprobe", "msprobe"),
                        default="tprobe")
    parser.add_argument("--level", choices=("L0", "L1", "mix"), default="L0")
    parser.add_argument("--config", help="a config.json (overrides --level)")
    parser.add_argument("--dump-path", default="./ms_dump")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    net = Net()
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    debugger = None
    if args.tool != "none":
        config = args.config
        if config is None:
            fd, config = tempfile.mkstemp(suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({"task": "statistics", "dump_path": args.dump_path,
                           "rank": [], "step": [], "level": args.level,
                           "statistics": {"scope": [], "list": [],
                                          "data_mode": ["all"],
                                          "summary_mode": "statistics"}}, f)
        debugger = make_debugger(args.tool, config)

    for _ in range(args.steps):
        x = Tensor(rng.standard_normal((4, 8)).astype(np.float32))
        y = Tensor(rng.standard_normal((4, 2)).astype(np.float32))
        if debugger:
            debugger.start(net)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        if debugger:
            debugger.stop()
            debugger.step()
        print("loss", loss.asnumpy().astype(np.float32).tobytes().hex(),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
