"""Max, Min, Mean and Norm of a mindspore.Tensor by MindSpore's own ops
(mint), where the tensor lives, by msprobe 26.x's rules for MindSpore (its
MindSpore processor's get_stat_info, docs/format.md 2.4: integer and float64
tensors cast to float32 first), and summary_mode xor's checksum
(reduce_xor), for _common/producer_stats.py. The hook calls no asnumpy().

MindSpore has no event a thread can wait on from Python, so a batch is
read on the statistics thread with asnumpy() of its 4-value results: that
thread waits for the device, the hook never does. It costs one small
device-to-host read per tensor, off the training thread (the documented
fallback of docs/architecture.md).
"""

from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import mint, ops

_N, _B, _I, _F, _X = 0, 1, 2, 3, 4
_INTEGER = (ms.int8, ms.uint8, ms.int16, ms.int32, ms.int64)


_norm_op: Any = None


def _norm(t: Any) -> Any:
    """msprobe's norm: mint.norm, else ops.norm. MindSpore's CPU backend
    has no kernel for mint.norm, and says so only when the op runs, maybe
    at a later op (its pipeline is asynchronous), so on the CPU ops.norm is
    chosen without trying mint.norm."""
    global _norm_op
    if _norm_op is None:
        _norm_op = mint.norm if hasattr(mint, "norm") and not on_host() \
            else ops.norm
    return _norm_op(t)


def reduce(t: Any) -> Tuple[Tuple[Any, int], bytes]:
    """The statistics of `t` (with elements) and their kinds: (a tensor of
    4 float64 or int64 values, how many are set)."""
    dtype = t.dtype
    if dtype == ms.bool_:
        pair = ops.stack([mint.any(t), mint.all(t)]).astype(ms.int64)
        return (pair, 2), bytes((_B, _B, _N, _N))
    if dtype in (ms.complex64, ms.complex128):
        a = ops.abs(t)
        v = ops.stack([mint.max(a), mint.min(a), mint.mean(a)])
        return (v.astype(ms.float64), 3), bytes((_F, _F, _F, _N))
    if not t.shape:  # the value itself, four times
        if dtype in _INTEGER:
            return (ops.tile(t.astype(ms.int64).reshape(1), (4,)), 4), \
                bytes((_I, _I, _I, _I))
        return (ops.tile(t.astype(ms.float64).reshape(1), (4,)), 4), \
            bytes((_F, _F, _F, _F))
    if dtype in _INTEGER or dtype == ms.float64:
        t = t.astype(ms.float32)
    v = ops.stack([mint.max(t), mint.min(t), mint.mean(t), _norm(t)])
    return (v.astype(ms.float64), 4), bytes((_F, _F, _F, _F))


def reduce_xor(t: Any) -> Tuple[Tuple[Any, int], bytes]:
    """summary_mode xor (msprobe 26.x's checksum) of `t` (with elements)
    and its kinds, folded where the tensor lives: a 0-d tensor's value (an
    integer or bool as a word, a float as a number, a complex as its
    modulus), else the XOR of its bytes as little-endian 64-bit words, the
    last one padded with zero bytes."""
    dtype = t.dtype
    if not t.shape:
        if dtype == ms.bool_ or dtype in _INTEGER:
            return (t.astype(ms.int64).reshape(1), 1), bytes((_X, _N, _N, _N))
        if dtype in (ms.complex64, ms.complex128):
            t = ops.abs(t)
        return (t.astype(ms.float64).reshape(1), 1), bytes((_F, _N, _N, _N))
    raw = t.reshape(-1).view(ms.uint8)
    pad = -raw.shape[0] % 8
    if pad:
        raw = ops.cat([raw, mint.zeros(pad, dtype=ms.uint8)])
    words = raw.view(ms.int64)
    while words.shape[0] > 1:
        if words.shape[0] % 2:
            words = ops.cat([words, mint.zeros(1, dtype=ms.int64)])
        half = words.shape[0] // 2
        words = ops.bitwise_xor(words[:half], words[half:])
    return (words, 1), bytes((_X, _N, _N, _N))


def stream_key(t: Any) -> Any:
    return None


def to_host(results: List[Tuple[Any, int]], key: Any) -> Tuple[Any,
                                                              Optional[Any]]:
    return results, None


def fetch(host: List[Tuple[Any, int]]) -> bytes:
    """4 little-endian 8-byte values per tensor, read on this thread."""
    out = np.zeros((len(host), 4), dtype=np.int64)
    for i, (values, count) in enumerate(host):
        array = np.ascontiguousarray(values.asnumpy())
        if array.dtype == np.float64:
            array = array.view(np.int64)
        out[i, :count] = array[:count]
    return out.astype("<i8").tobytes()


def on_host() -> bool:
    """Whether MindSpore's tensors live on the host (device_target CPU)."""
    try:
        return ms.get_context("device_target") == "CPU"
    except Exception:
        return True


# summary_mode xor: the checksum word in place of the four statistics, on
# the same road.
XOR = SimpleNamespace(reduce=reduce_xor, stream_key=stream_key,
                      to_host=to_host, fetch=fetch)
