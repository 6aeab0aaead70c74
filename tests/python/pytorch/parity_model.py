#!/usr/bin/env python3
"""The small model of the msprobe parity tests (parity_test.py), trained for a
few steps on CPU under msprobe or tprobe:

    python parity_model.py --tool msprobe|tprobe --config CONFIG \
        --dump-path DIR [--steps N] [--overflow-from STEP] [--half]
        [--whole-step]

The two tools run exactly the same script; only the import differs. With
--overflow-from, the input of every step from STEP on holds an inf, so each
call downstream of it overflows (task overflow_check). With --half the
model and its data are float16. With --whole-step the dump also covers
integer, bool and float64 tensors, gradient clipping and the optimizer step
(msprobe's "clip_grad" and "optimizer" construct nodes).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x)) + x


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.out = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.tanh(self.inp(x))
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=["msprobe", "tprobe"], required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--dump-path", required=True)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--overflow-from", type=int, default=-1)
    ap.add_argument("--half", action="store_true")
    ap.add_argument("--whole-step", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=args.config,
                                 dump_path=args.dump_path)
    torch.manual_seed(0)
    model = Net()
    dtype = torch.float16 if args.half else torch.float32
    model.to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    one = torch.tensor(1.0, dtype=dtype)
    for step in range(args.steps):
        x = torch.randn(3, 4, generator=g).to(dtype)
        y = torch.randn(3, 2, generator=g).to(dtype)
        if 0 <= args.overflow_from <= step:
            x[0, 0] = float("inf")
        opt.zero_grad(set_to_none=True)
        debugger.start(model)
        loss = F.mse_loss(model(x), y)
        if args.whole_step:
            labels = torch.argmax(y, dim=1)  # int64
            torch.sum(x > 0, dim=0)  # bool in, int64 out
            torch.mul(x.double(), labels[0] + 2)  # float64, 0-d int64
        # An explicit gradient: without it autograd calls torch.ones_like,
        # which msprobe 8.3.3 hooks and 26.x does not.
        loss.backward(one)
        if args.whole_step:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        debugger.stop()
        debugger.step()
        if not args.whole_step:
            with torch.no_grad():
                opt.step()


if __name__ == "__main__":
    main()
