#!/usr/bin/env python3
"""One small network in MindSpore or in PyTorch, with the same weights and
inputs, dumped by tprobe (task statistics, level mix, one step): the pair
of trees msprobe_mapping_test.py compares across frameworks.

    python tests/python/both/mapping_model.py --framework mindspore \\
        --dump-path /tmp/ms_dump

The network: fc1 (Dense / Linear 8 -> 8), mint / torch tanh, mint's /
torch's functional relu, fc2 (8 -> 2), an MSE loss and its backward;
in PyTorch also the loss's squared difference (torch.square), forward
only, as MindSpore's MSELoss computes it.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

IN, HIDDEN, OUT = 8, 8, 2


def arrays() -> dict:
    rng = np.random.default_rng(0)
    f32 = np.float32
    return {"w1": rng.standard_normal((HIDDEN, IN)).astype(f32) * 0.3,
            "b1": rng.standard_normal(HIDDEN).astype(f32) * 0.1,
            "w2": rng.standard_normal((OUT, HIDDEN)).astype(f32) * 0.3,
            "b2": rng.standard_normal(OUT).astype(f32) * 0.1,
            "x": rng.standard_normal((4, IN)).astype(f32),
            "y": rng.standard_normal((4, OUT)).astype(f32)}


def write_config(dump_path: str) -> str:
    fd, config = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump_path, "rank": [],
                   "step": [], "level": "mix",
                   "statistics": {"scope": [], "list": [],
                                  "data_mode": ["all"],
                                  "summary_mode": "statistics"}}, f)
    return config


def run_mindspore(config: str, a: dict) -> None:
    import mindspore as ms
    from mindspore import Parameter, Tensor, mint, nn
    from tprobe.mindspore import PrecisionDebugger

    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Dense(IN, HIDDEN)
            self.fc2 = nn.Dense(HIDDEN, OUT)

        def construct(self, x):
            x = mint.tanh(self.fc1(x))
            return self.fc2(mint.nn.functional.relu(x))

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    net = Net()
    for cell, w, b in ((net.fc1, "w1", "b1"), (net.fc2, "w2", "b2")):
        cell.weight = Parameter(Tensor(a[w]), name=cell.weight.name)
        cell.bias = Parameter(Tensor(a[b]), name=cell.bias.name)
    loss_fn = nn.MSELoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, net.trainable_params())
    debugger = PrecisionDebugger(config_path=config)
    debugger.start(net)
    grad_fn(Tensor(a["x"]), Tensor(a["y"]))
    debugger.stop()
    debugger.step()


def run_pytorch(config: str, a: dict) -> None:
    import torch
    from tprobe.torch import PrecisionDebugger

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(IN, HIDDEN)
            self.fc2 = torch.nn.Linear(HIDDEN, OUT)

        def forward(self, x):
            x = torch.tanh(self.fc1(x))
            return self.fc2(torch.nn.functional.relu(x))

    net = Net()
    with torch.no_grad():
        for layer, w, b in ((net.fc1, "w1", "b1"), (net.fc2, "w2", "b2")):
            layer.weight.copy_(torch.from_numpy(a[w]))
            layer.bias.copy_(torch.from_numpy(a[b]))
    debugger = PrecisionDebugger(config_path=config)
    debugger.start(net)
    pred, y = net(torch.from_numpy(a["x"])), torch.from_numpy(a["y"])
    loss = torch.nn.functional.mse_loss(pred, y)
    # MindSpore's MSELoss squares the difference with Functional.square,
    # which msprobe's built-in -am table pairs with Torch.square: the
    # same square, forward only.
    torch.square(torch.sub(pred, y))
    loss.backward()
    debugger.stop()
    debugger.step()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--framework", choices=("mindspore", "pytorch"),
                        required=True)
    parser.add_argument("--dump-path", required=True)
    args = parser.parse_args()
    config = write_config(args.dump_path)
    if args.framework == "mindspore":
        run_mindspore(config, arrays())
    else:
        run_pytorch(config, arrays())
    return 0


if __name__ == "__main__":
    sys.exit(main())
