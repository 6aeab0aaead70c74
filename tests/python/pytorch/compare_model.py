#!/usr/bin/env python3
"""A small torch model for tests/python/pytorch/compare_test.py, run under tprobe
or msprobe:

    compare_model.py --tool tprobe --task tensor --level mix \
        --dump-path DIR [--perturb] [--steps N] [--md5]
    torchrun --nproc_per_node=2 compare_model.py --tool tprobe \
        --task statistics --level mix --dump-path DIR --nan-rank 1

--perturb adds 0.5 to every weight of the module fc2 before training: the
first call that differs from an unperturbed run is fc2's. --nan-rank R
(under torchrun, gloo) makes rank R's Shift module take the square root of
a negative number: a NaN made from finite inputs, which the gradient
all_reduce then brings to the other rank.
"""

import argparse
import json
import os

import torch
import torch.nn as nn


class Shift(nn.Module):
    """sqrt(relu(x) + shift): finite for shift >= 0."""

    def __init__(self) -> None:
        super().__init__()
        self.shift = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(torch.relu(x) + self.shift)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.mid = Shift()
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.tanh(self.fc2(self.mid(self.fc1(x)))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=["tprobe", "msprobe"], required=True)
    ap.add_argument("--task", choices=["tensor", "statistics"],
                    required=True)
    ap.add_argument("--level", default="mix", choices=["L0", "L1", "mix"])
    ap.add_argument("--dump-path", required=True)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--perturb", action="store_true")
    ap.add_argument("--md5", action="store_true",
                    help="statistics task with summary_mode md5")
    ap.add_argument("--nan-rank", type=int)
    args = ap.parse_args()

    torch.set_num_threads(1)
    distributed = args.nan_rank is not None
    rank, world = 0, 1
    if distributed:
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    config = os.path.join(args.dump_path + f".config{rank}.json")
    os.makedirs(os.path.dirname(os.path.abspath(config)), exist_ok=True)
    with open(config, "w") as f:
        section = {"scope": [], "list": [], "data_mode": ["all"]}
        if args.task == "statistics":
            section["summary_mode"] = "md5" if args.md5 else "statistics"
        json.dump({"task": args.task, "level": args.level, "rank": [],
                   "step": [], "risk_level": "ALL",
                   "dump_path": args.dump_path, args.task: section}, f)
    if args.tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=config)

    torch.manual_seed(0)
    model = Net()
    if args.perturb:
        with torch.no_grad():
            model.fc2.weight.add_(0.5)
    if distributed and rank == args.nan_rank:
        model.mid.shift = -1e3
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(100 + rank)
    for _ in range(args.steps):
        x = torch.randn(8, 16, generator=data)
        y = torch.randn(8, 4, generator=data)
        opt.zero_grad(set_to_none=True)
        debugger.start(model)
        loss = (model(x) - y).square().mean()
        loss.backward()
        if distributed:
            for param in model.parameters():
                dist.all_reduce(param.grad)
                param.grad.div_(world)
        opt.step()
        debugger.stop()
        debugger.step()
    if args.tool == "tprobe":
        assert debugger.session.flush(30000), "tprobed did not write the dump"
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
