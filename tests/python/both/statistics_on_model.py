#!/usr/bin/env python3
"""A small training run under tprobe with tprobe.statistics_on set, for
statistics_on_test.py:

    python statistics_on_model.py --config CONFIG --dump-path DIR \
        [--tool tprobe|msprobe] [--device cpu|cuda] [--steps N] \
        [--trace-syncs FILE] [--kill-in-flight] [--fail FILE] [--overflow]

A model with every dtype msprobe treats apart (bool, integer, float64,
float16, bfloat16, 0-d, complex) through module and API hooks at the
config's level. --trace-syncs patches the calls that wait for a device
(Tensor.item/.cpu/.numpy/.tolist, torch.cuda.synchronize) and writes how
many the training thread made while hooks ran. --kill-in-flight stops the
statistics thread before the last step's statistics are written, ends
that step's hooks and kills the process with SIGKILL. --fail makes the
framework's reductions raise for every 7th tensor and its statistics
thread's first read raise, and writes how many tensors that cost and the
session's counters into FILE. --overflow adds a call whose output holds
-inf and NaN (log of negatives and zero), for task overflow_check.
"""
import argparse
import json
import os
import signal
import threading

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.overflow = False

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        mask = h > 0.1                        # bool
        count = mask.sum()                    # 0-d int64
        idx = torch.argmax(h, dim=1)          # int64
        d = h.double().mean()                 # float64, 0-d
        half = h.half() * 2                   # float16
        bf = h.bfloat16() + 1                 # bfloat16
        c = torch.complex(h, h)               # complex64
        extra = c.abs().float().sum() + d.float() + half.float().sum() + \
            bf.float().sum() + idx.float().sum() + count.float()
        if self.overflow:  # an inf and a NaN for task overflow_check
            bad = torch.log(h - 0.5)
            extra = extra + torch.nan_to_num(bad).sum()
        return self.fc2(h) + extra * 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", required=True)
    ap.add_argument("--dump-path", required=True)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--tool", choices=("tprobe", "msprobe"), default="tprobe")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--trace-syncs")
    ap.add_argument("--kill-in-flight", action="store_true")
    ap.add_argument("--fail")
    ap.add_argument("--overflow", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if args.tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=args.config,
                                 dump_path=args.dump_path)
    net = Net().to(args.device)
    net.overflow = args.overflow
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(5, 8).to(args.device)
    syncs = {"count": 0}
    failed = {"tensors": 0, "reduced": 0}
    if args.fail:
        from tprobe.torch import stats

        def failing_reduce(t, reduce=stats.reduce):
            failed["reduced"] += 1
            if failed["reduced"] % 7 == 0:
                failed["tensors"] += 1
                raise RuntimeError("planted reduce failure")
            return reduce(t)

        def failing_fetch(host, fetch=stats.fetch):
            if not failed.get("fetch_failed"):
                failed["fetch_failed"] = True
                failed["tensors"] += len(host)
                raise RuntimeError("planted fetch failure")
            return fetch(host)
        stats.reduce, stats.fetch = failing_reduce, failing_fetch
    main_thread = threading.get_ident()
    if args.trace_syncs:
        def traced(name, original):
            def call(*a, **k):
                if threading.get_ident() == main_thread and tracing[0]:
                    syncs["count"] += 1
                    syncs.setdefault("calls", []).append(name)
                return original(*a, **k)
            return call
        tracing = [False]
        for name in ("item", "cpu", "numpy", "tolist"):
            setattr(torch.Tensor, name,
                    traced(name, getattr(torch.Tensor, name)))
        torch.cuda.synchronize = traced("synchronize",
                                        torch.cuda.synchronize)
        for cls in (torch.cuda.Stream, torch.cuda.Event):
            cls.synchronize = traced(f"{cls.__name__}.synchronize",
                                     cls.synchronize)
    for step in range(args.steps):
        if args.kill_in_flight and step == args.steps - 1:
            from tprobe._common import producer_stats
            producer_stats.kBatch = 1 << 30  # nothing leaves the batch
        debugger.start(model=net)
        if args.trace_syncs:
            tracing[0] = True
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        if args.trace_syncs:
            tracing[0] = False
        if args.kill_in_flight and step == args.steps - 1:
            # This step's results are still in flight: published records
            # first, so the daemon sees the entries that wait for them.
            debugger.session.flush(30000)
            os.kill(os.getpid(), signal.SIGKILL)
        debugger.stop()
        debugger.step()
    if args.trace_syncs:
        with open(args.trace_syncs, "w", encoding="utf-8") as f:
            json.dump(syncs, f)
    if args.tool == "tprobe":
        assert debugger.session.flush(30000), "tprobed did not write the dump"
    if args.fail:
        with open(args.fail, "w", encoding="utf-8") as f:
            json.dump({"failed_tensors": failed["tensors"],
                       "counters": debugger.session.counters()}, f)


if __name__ == "__main__":
    main()
