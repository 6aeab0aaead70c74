#!/usr/bin/env python3
"""Data-parallel training on CPU (gloo) with tprobe dumping every rank:

    torchrun --standalone --nproc_per_node=2 examples/torchrun_example.py \
        [--config CONFIG] [--level mix] [--dump-path DIR] [--steps N]

(or ``/usr/bin/python3 -m torch.distributed.run`` in place of torchrun).
The script runs unchanged under msprobe: change the import line to
``from msprobe.pytorch import PrecisionDebugger``.
Each rank writes DIR/step{N}/rank{R}/. Gradients are averaged with
torch.distributed.all_reduce by hand, so the dump holds Distributed.*
entries at levels L1 and mix. The default config is examples/config_l0.json
with the level overridden by --level (default mix).
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from tprobe.torch import PrecisionDebugger

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=os.path.join(HERE, "config_l0.json"))
    ap.add_argument("--level", default="mix", choices=["L0", "L1", "mix"])
    ap.add_argument("--dump-path")
    ap.add_argument("--steps", type=int, default=2)
    args = ap.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    debugger = PrecisionDebugger(config_path=args.config, level=args.level,
                                 dump_path=args.dump_path)
    torch.manual_seed(0)  # the same initial model on every rank
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.Generator().manual_seed(100 + rank)  # each rank its shard
    for step in range(args.steps):
        x = torch.randn(8, 16, generator=data)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad(set_to_none=True)
        debugger.start(model)
        loss = (model(x) - y).square().mean()
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)
            param.grad.div_(world)
        opt.step()
        losses = [torch.zeros(1) for _ in range(world)]
        dist.all_gather(losses, loss.detach().reshape(1))
        debugger.stop()
        debugger.step()
        if rank == 0:
            mean = torch.cat(losses).mean().item()
            print(f"step {step} mean loss {mean:.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
