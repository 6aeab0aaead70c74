#!/usr/bin/env python3
"""The tensors msprobe 26.x handles apart (parity_test.py), passed through
hooked APIs under msprobe or tprobe at level L1, one step:

    python tensor_kinds_model.py --tool msprobe|tprobe --config CONFIG \
        --dump-path DIR

float8 tensors (no statistics), a meta tensor, a FakeTensor and DTensors of
a one-process gloo group (the statistics of the local shard).
"""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=["msprobe", "tprobe"], required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--dump-path", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=args.config,
                                 dump_path=args.dump_path)
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0,
                            world_size=1)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch._subclasses.fake_tensor import FakeTensorMode
    mesh = init_device_mesh("cpu", (1,))
    torch.manual_seed(0)
    with FakeTensorMode():
        fake = torch.empty(4, 5)
    sharded = distribute_tensor(torch.randn(4, 3), mesh, [Shard(0)])
    replicated = distribute_tensor(torch.randn(4, 3), mesh, [Replicate()])
    floats = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    float8 = [floats.to(dtype) for dtype in (
        torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e8m0fnu)]
    meta = torch.empty(2, 3, device="meta")
    debugger.start()
    for tensor in float8:
        torch.flatten(tensor)
    torch.abs(meta)
    torch.abs(fake)
    torch.abs(sharded)
    torch.neg(replicated)
    debugger.stop()
    debugger.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
