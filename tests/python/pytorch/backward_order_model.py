#!/usr/bin/env python3
"""A model whose two variants call the same APIs forward but not the same
backward, for msprobe_backward_test.py, dumped by tprobe (task statistics,
level mix, one step):

    backward_order_model.py --variant cut --dump-path DIR

    a = relu(fc1(x)); b = relu(fc2(a)); c = fc3(b); d = relu(c)
    loss = mean(square(b)) + mean(square(d))

In the "cut" variant c is detached before the last relu, so relu's third
call, fc3's linear and square's second call run no backward: the cut
tree's backward calls of relu are relu.1 and relu.0, the full tree's
relu.2, relu.1 and relu.0 (in dump order), and likewise for linear and
square.
"""

import argparse
import json
import os

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, cut: bool) -> torch.Tensor:
        b = torch.relu(self.fc2(torch.relu(self.fc1(x))))
        c = self.fc3(b)
        d = torch.relu(c.detach() if cut else c)
        return b.square().mean() + d.square().mean()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=["cut", "full"], required=True)
    ap.add_argument("--dump-path", required=True)
    args = ap.parse_args()

    torch.set_num_threads(1)
    config = args.dump_path + ".config.json"
    with open(config, "w", encoding="utf-8") as f:
        json.dump({"task": "statistics", "level": "mix", "rank": [],
                   "step": [], "dump_path": args.dump_path,
                   "statistics": {"scope": [], "list": [],
                                  "data_mode": ["all"],
                                  "summary_mode": "statistics"}}, f)
    from tprobe.torch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=config)
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    debugger.start(model)
    model(x, args.variant == "cut").backward()
    debugger.stop()
    debugger.step()
    assert debugger.session.flush(30000), "tprobed did not write the dump"
    os.remove(config)


if __name__ == "__main__":
    main()
