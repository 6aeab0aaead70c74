"""A MindSpore model zoo network for mindcv_test.py: mindcv's
MobileNetV3-Small (width 0.75; depthwise convolutions, BatchNorm,
hard-swish, squeeze-and-excitation blocks), built with random weights
(pretrained=False: nothing is downloaded) and trained for a few steps in
PyNative mode on the CPU, with tprobe, with msprobe or with no tool, at
one level. Each step's loss is printed as its float32 bits in hex, so that
runs can be compared exactly.

    python mindcv_model.py --tool tprobe --level mix --dump-path DIR

With ``--poison VALUE`` (and ``--tool none``) it shows what the CPU
BatchNorm primitive writes: before each call, freed memory is left holding
VALUE (tensors of the size of its outputs 1 and 2, batch mean and
variance, made and dropped), and at the end it prints how many calls
returned exactly VALUE in output[1] and in output[2]. A kernel that wrote
them could not return a value none of its inputs holds.
"""

import argparse
import json
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, os.pardir,
                                "examples"))
# The debugger of either tool, with msprobe's work-arounds for MindSpore's
# CPU build (mindspore_train.py says which).
from mindspore_train import make_debugger  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", choices=("none", "tprobe", "msprobe"),
                        required=True)
    parser.add_argument("--level", choices=("L0", "L1", "mix"),
                        required=True)
    parser.add_argument("--dump-path", required=True)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--poison", type=float)
    args = parser.parse_args()
    if args.poison is not None:
        poisoned = poison_batchnorm(args.poison)

    from mindcv.models import create_model
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    net = create_model("mobilenet_v3_small_075", pretrained=False,
                       num_classes=10)
    net.set_train()  # BatchNorm then normalises by the batch's statistics
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.01)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    debugger = None
    if args.tool != "none":
        config = args.dump_path.rstrip("/") + ".json"
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"task": "statistics", "dump_path": args.dump_path,
                       "rank": [], "step": [], "level": args.level}, f)
        debugger = make_debugger(args.tool, config)
    for _ in range(args.steps):
        x = Tensor(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
        y = Tensor(rng.integers(0, 10, (2,)).astype(np.int32))
        if debugger:
            debugger.start(net)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        if debugger:
            debugger.stop()
            debugger.step()
        print("loss", loss.asnumpy().astype(np.float32).tobytes().hex(),
              flush=True)
    if args.poison is not None:
        print("poisoned", *poisoned, flush=True)
    return 0


def poison_batchnorm(value: float) -> list:
    """Wraps ops.BatchNorm's calls as --poison says; returns [calls,
    output[1] equal to value, output[2] equal to value], counted as the
    calls run."""
    from mindspore import ops
    counts = [0, 0, 0]
    original = ops.BatchNorm.__call__

    def call(prim, *args):
        # Eight blocks, so that the pool holds some VALUE where the outputs
        # go; dropped before the call.
        junk = [ops.fill(ms.float32, args[1].shape, value) * 1.0
                for _ in range(8)]
        del junk
        out = original(prim, *args)
        counts[0] += 1
        for k in (1, 2):
            counts[k] += bool(np.all(out[k].asnumpy() == value))
        return out
    ops.BatchNorm.__call__ = call
    return counts


if __name__ == "__main__":
    sys.exit(main())
