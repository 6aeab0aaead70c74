#!/usr/bin/env python3
"""The framework ops tprobe's statistics path (tprobe/torch/stats.py, under
tprobe.statistics_on framework) issues per dumped tensor, counted on the
CPU under a TorchDispatchMode:

- a batch of 64 tensors of every dtype and shape msprobe treats apart,
  non-contiguous, NaN, infinities and signed zeros among them: each
  tensor's reductions (a float tensor 3 ops, an integer, bool, float64 or
  0-d tensor 1; float16 takes 4 on torch 1.13, whose CPU has no aminmax
  for it), the batch's stack and cast (one of each per dtype), at most 3
  per tensor in all, and their values equal bit for bit one reduction per
  statistic, cast on its own (the rules of docs/format.md 2.4); on a CUDA
  device too, with large tensors of zeros of both signs (aminmax must
  reduce in max's and min's order), where there is one;
- the small model of statistics_on_test (every dtype, level mix) trained
  with a real tprobed: the ops the hooks issue per dumped tensor, at most
  3, on the training thread.
"""

import collections
import ctypes
import json
import os
import sys
import threading
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support"),
                os.path.join(HERE, os.pardir, "both")]  # statistics_on_model
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from tprobe.torch import stats  # noqa: E402

TORCH_1 = torch.__version__.startswith("1.")
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTEGERS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


class Counter(TorchDispatchMode):
    """Counts the aten ops dispatched while `counting` says so."""

    def __init__(self, counting=lambda: True) -> None:
        super().__init__()
        self.ops: collections.Counter = collections.Counter()
        self.counting = counting

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.counting():
            self.ops[str(func)] += 1
        return func(*args, **(kwargs or {}))

    def total(self) -> int:
        return sum(self.ops.values())


def batch_of_64() -> list:
    """Tensors of every dtype, shape and layout the statistics treat
    apart, floats the most (as in a model)."""
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(40):
        dtype = FLOATS[i % 3]
        t = torch.randn(3 + 97 * i, generator=g).to(dtype) * (i + 1)
        if i % 6 == 1:
            t[i] = float("nan")
        if i % 6 == 2:
            t[0], t[-1] = float("inf"), -float("inf")
        if i % 6 == 3:  # zeros of both signs only
            t = torch.where(torch.rand(t.shape, generator=g) < 0.5,
                            t * 0, -(t * 0).abs())
        if i % 6 == 4:
            t = t.reshape(-1)[: (t.numel() // 4) * 4].reshape(-1, 4).t()
        if i % 6 == 5:
            t = t[::3]
        out.append(t)
    for i, dtype in enumerate(INTEGERS * 2):
        info = torch.iinfo(dtype)
        out.append(torch.randint(info.min, info.max, (5 + 31 * i,),
                                 dtype=dtype, generator=g))
    out += [torch.randn(40, 3, generator=g).double(),
            torch.randn(7, generator=g).double().t(),
            torch.rand(100, generator=g) < 0.5,
            torch.zeros(9, dtype=torch.bool),
            torch.ones(3, 3, dtype=torch.bool),
            torch.randn(50, dtype=torch.complex64, generator=g),
            torch.randn(5, dtype=torch.complex128, generator=g).conj(),
            torch.tensor(2.5), torch.tensor(-7), torch.tensor(True),
            torch.tensor(1.5, dtype=torch.float16),
            torch.tensor(2 + 3j, dtype=torch.complex64),
            torch.randn(2, 2, generator=g, requires_grad=True),
            torch.tensor(float("nan"))]
    assert len(out) == 64, len(out)
    return out


def raw(t: torch.Tensor) -> bytes:
    t = t.cpu()
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())


def expected(t: torch.Tensor) -> bytes:
    """msprobe's four statistics of `t` as 4 8-byte values, one torch
    reduction per statistic, each cast on its own."""
    t = t.detach()

    def words(values, dtype):
        values = [v.to(dtype).reshape(1) for v in values]
        values += [torch.zeros(1, dtype=dtype, device=t.device)] * \
            (4 - len(values))
        return raw(torch.cat(values))

    if t.dtype == torch.bool:
        return words([t.any(), t.all()], torch.int64)
    if t.is_complex():
        a = t.resolve_conj().abs()
        return words([a.max(), a.min(), a.mean()], torch.float64)
    if t.dim() == 0:
        return words([t] * 4, torch.int64 if t.dtype in INTEGERS
                     else torch.float64)
    if t.dtype in INTEGERS:
        return words([t.max(), t.min()], torch.int64)
    if t.dtype == torch.float64:
        return words([t.max(), t.min()], torch.float64)
    return words([t.max(), t.min(), t.mean(), t.norm()], torch.float64)


def hook_ops(t: torch.Tensor) -> int:
    """The ops stats.reduce issues for a tensor like `t`."""
    if t.is_complex():  # abs (of its copy when conjugated), aminmax, mean
        return 4 if t.is_conj() else 3
    if t.dtype == torch.bool or t.dim() == 0 or t.dtype in INTEGERS or \
            t.dtype == torch.float64:
        return 1
    if TORCH_1 and t.dtype == torch.float16:
        return 4  # max and min: torch 1.13's CPU has no aminmax for it
    return 3


class StatsOpsTest(unittest.TestCase):
    def test_a_batch_of_64_costs_at_most_3_ops_a_tensor(self) -> None:
        tensors = batch_of_64()
        for t in tensors:  # aminmax's kernels found for each dtype
            stats.reduce(t)
        per_tensor = []
        results = []
        for t in tensors:
            with Counter() as counter:
                result, _ = stats.reduce(t)
            results.append(result)
            per_tensor.append(counter.total())
            self.assertEqual(counter.total(), hook_ops(t),
                             (t.dtype, t.shape, dict(counter.ops)))
        with Counter() as batch:
            host, waiter = stats.to_host(results, None)
            values = stats.fetch(host)
        self.assertIsNone(waiter)
        dtypes = {r[0].dtype for r in results}
        # A stack and a cast per dtype (none for float64 and int64).
        self.assertLessEqual(batch.total(), 2 * len(dtypes), dict(batch.ops))
        total = sum(per_tensor) + batch.total()
        by_dtype = collections.defaultdict(list)
        for t, n in zip(tensors, per_tensor):
            by_dtype[str(t.dtype).replace("torch.", "")].append(n)
        print(f"torch {torch.__version__}: {total} ops for 64 tensors "
              f"({total / 64:.2f} a tensor): the batch {batch.total()}, "
              + ", ".join(f"{k} {max(v)}"
                          for k, v in sorted(by_dtype.items())),
              file=sys.stderr)
        self.assertLessEqual(total / 64, 3.0)
        for i, t in enumerate(tensors):
            self.assertEqual(values[32 * i:32 * (i + 1)], expected(t),
                             (i, t.dtype, t.shape))

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_a_batch_on_cuda_equals_one_reduction_a_statistic(self) -> None:
        g = torch.Generator().manual_seed(1)
        tensors = [t.cuda() for t in batch_of_64()]
        for dtype in FLOATS + (torch.float64,):
            for n in (1 << 20, 3 << 18, 5000):
                zeros = torch.zeros(n, dtype=dtype)
                signs = torch.rand(n, generator=g) < 0.5
                tensors += [torch.where(signs, zeros, -zeros).cuda(),
                            torch.where(signs, zeros, -torch.rand(
                                n, generator=g).to(dtype)).cuda(),
                            torch.where(signs, zeros, torch.rand(
                                n, generator=g).to(dtype)).cuda()]
        results = [stats.reduce(t)[0] for t in tensors]
        host, waiter = stats.to_host(results,
                                     stats.stream_key(tensors[0]))
        waiter()
        values = stats.fetch(host)
        for i, t in enumerate(tensors):
            self.assertEqual(values[32 * i:32 * (i + 1)], expected(t),
                             (i, t.dtype, t.shape))

    def test_a_model_dumped_costs_at_most_3_ops_a_tensor(self) -> None:
        from statistics_on_model import Net
        tmp = fresh_dir("tp-stats-ops-")
        config = os.path.join(tmp, "config.json")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"task": "statistics", "level": "mix",
                       "dump_path": os.path.join(tmp, "dump"),
                       "statistics": {"scope": [], "list": [],
                                      "data_mode": ["all"]},
                       "tprobe": {"statistics_on": "framework"}}, f)
        inside = threading.local()
        tensors = []

        def counted(function, count_tensor=False):
            def call(*args):
                inside.depth = getattr(inside, "depth", 0) + 1
                try:
                    if count_tensor:
                        tensors.append(args[0].dtype)
                    return function(*args)
                finally:
                    inside.depth -= 1
            return call

        with Tprobed(tprobed_binary(), tmp) as daemon, \
                mock.patch.object(stats, "reduce",
                                  counted(stats.reduce, True)), \
                mock.patch.object(stats, "to_host", counted(stats.to_host)):
            os.environ.update(daemon.env())
            from tprobe.torch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path=config)
            torch.manual_seed(0)
            model = Net()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(4, 8)
            with Counter(lambda: getattr(inside, "depth", 0) > 0) as counter:
                for _ in range(2):
                    opt.zero_grad()
                    debugger.start(model)
                    model(x).square().mean().backward()
                    opt.step()
                    debugger.stop()
                    debugger.step()
            self.assertTrue(debugger.session.flush(30000))
        self.assertGreater(len(tensors), 100)
        ops = counter.total()
        print(f"torch {torch.__version__}: the model's {len(tensors)} "
              f"tensors cost {ops} ops on the training thread "
              f"({ops / len(tensors):.2f} a tensor): {dict(counter.ops)}",
              file=sys.stderr)
        self.assertLessEqual(ops / len(tensors), 3.0)


if __name__ == "__main__":
    unittest.main()
