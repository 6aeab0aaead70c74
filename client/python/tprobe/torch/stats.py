"""Max, Min, Mean and Norm of a tensor by torch's own reductions, on the
tensor's device, by msprobe 26.x's rules (get_stat_info of its PyTorch
processor, docs/format.md 2.4), for _common/producer_stats.py. Nothing here
waits for the device: no .item(), .cpu(), .numpy() or synchronize.

The hook issues the fewest ops that give msprobe's values bit for bit: a
float tensor's Max and Min come from one aminmax (its kernels combine as
max's and min's do, in the same order, on the CPU and CUDA; elsewhere, and
for a dtype without an aminmax kernel here such as float16 on torch 1.13's
CPU, max and min), then mean and norm: 3 ops; an integer, float64 or bool
tensor takes 1, a 0-d tensor 1 (its copy). A result is a tuple of 0-d
tensors in the tensor's dtype (or its modulus's, for complex), one per
statistic, with the 4 record::StatKind bytes beside it.

A batch's results are stacked once per dtype and cast once to float64 (an
integer or a bool to int64), as 4 8-byte values per tensor (a float64's
bits, an int64, 0 for null): on a device, a stack per dtype copied into
pinned memory behind an event; on the host, the statistics thread stacks
and casts them, so the hook issues nothing per batch. torch's own casts
make the same bits as a cast per tensor would.

Under summary_mode xor the result is msprobe's checksum (reduce_xor): the
XOR of the tensor's bytes as 64-bit words, folded pairwise on the device
as msprobe folds them.
"""

import functools
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import torch

from tprobe._common.host_memory import host_bytes

_N, _B, _I, _F, _X = 0, 1, 2, 3, 4
_INTEGER = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
_KINDS = {k: bytes(k) for k in [
    (_B, _B, _N, _N), (_F, _F, _F, _N), (_I, _I, _I, _I), (_F, _F, _F, _F),
    (_I, _I, _N, _N), (_F, _F, _N, _N), (_X, _N, _N, _N), (_F, _N, _N, _N)]}

# The device types whose aminmax kernel gives max's and min's values bit for
# bit, signed zeros and NaN included: the same combine over the same
# reduction order (stats_ops_test checks it on the CPU, and on CUDA where
# there is a device). Per (device type, dtype): whether aminmax serves,
# found by its first call (torch 1.13's CPU has no kernel for float16).
_AMINMAX_DEVICES = ("cpu", "cuda")
_aminmax: Dict[Tuple[str, torch.dtype], bool] = {}


def _aminmax_serves(t: torch.Tensor) -> bool:
    if t.device.type not in _AMINMAX_DEVICES:
        return False
    try:
        torch.aminmax(t)
    except RuntimeError:  # no kernel for this dtype here
        return False
    return True


def _max_min(t: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Max and Min of `t` (with elements; any and all for bool) as 0-d
    tensors in its dtype."""
    key = (t.device.type, t.dtype)
    serves = _aminmax.get(key)
    if serves is None:
        serves = _aminmax[key] = _aminmax_serves(t)
    if serves:
        low, high = torch.aminmax(t)
        return high, low
    if t.dtype == torch.bool:
        return t.any(), t.all()
    return t.max(), t.min()


# Where Tensor.norm() is torch.linalg.vector_norm(t, 2) (torch 2's
# torch/functional.py, for CPU and CUDA tensors): called directly there,
# without norm's Python layer.
_VECTOR_NORM_DEVICES = ("cpu", "cuda") \
    if int(torch.__version__.split(".")[0]) >= 2 else ()


def _norm(t: torch.Tensor) -> torch.Tensor:
    if t.device.type in _VECTOR_NORM_DEVICES:
        return torch.linalg.vector_norm(t)
    return t.norm()


def _reduce(t: torch.Tensor) -> Tuple[Tuple[torch.Tensor, ...], bytes]:
    dtype = t.dtype
    if dtype == torch.bool:
        return _max_min(t), _KINDS[(_B, _B, _N, _N)]
    if t.is_complex():
        a = t.resolve_conj().abs()
        return _max_min(a) + (a.mean(),), _KINDS[(_F, _F, _F, _N)]
    if t.dim() == 0:  # the value itself, four times
        value = t.clone()
        kinds = (_I, _I, _I, _I) if dtype in _INTEGER else (_F, _F, _F, _F)
        return (value,) * 4, _KINDS[kinds]
    if dtype in _INTEGER:
        return _max_min(t), _KINDS[(_I, _I, _N, _N)]
    if dtype == torch.float64:
        return _max_min(t), _KINDS[(_F, _F, _N, _N)]
    return _max_min(t) + (t.mean(), _norm(t)), _KINDS[(_F, _F, _F, _F)]


# Statistics a compiled graph computed for the tensors of the call being
# handed to the binding (tprobe.torch.compiled_hooks.give), by id(tensor):
# a float tensor's (Max, Min, Mean, Norm) as a 4-element tensor of its
# dtype, which serves as the 4 0-d results.
given: Dict[int, torch.Tensor] = {}
GIVEN_KINDS = _KINDS[(_F, _F, _F, _F)]


def reduce(t: torch.Tensor) -> Tuple[Tuple[torch.Tensor, ...], bytes]:
    """The statistics of `t` (with elements), each a 0-d tensor, and their
    kinds. No autograd graph is recorded."""
    if given:
        values = given.get(id(t))
        if values is not None:
            return values, GIVEN_KINDS
    if t.requires_grad:
        with torch.no_grad():
            return _reduce(t)
    return _reduce(t)


def raw_bytes(t: torch.Tensor) -> torch.Tensor:
    """The bytes of `t` (with elements), in row-major order, as a flat
    uint8 tensor where `t` lives (a view when `t` is contiguous)."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj())
    return t.contiguous().reshape(-1).view(torch.uint8)


def _words(t: torch.Tensor) -> torch.Tensor:
    """The bytes of `t` (with elements) as int64 words, the last one padded
    with zero bytes."""
    raw = raw_bytes(t)
    pad = -raw.numel() % 8
    if pad:
        raw = torch.cat([raw, raw.new_zeros(pad)])
    return raw.view(torch.int64)


def reduce_xor(t: torch.Tensor) -> Tuple[Tuple[torch.Tensor], bytes]:
    """msprobe 26.x's xor checksum of `t` (with elements) and its kinds: a
    0-d tensor's value (an integer or bool as a word, a float as a number),
    else the XOR of its words, as a 0-d tensor."""
    t = t.detach()
    if t.dim() == 0:
        if t.dtype == torch.bool or t.dtype in _INTEGER:
            return (t.clone(),), _KINDS[(_X, _N, _N, _N)]
        return (t.abs() if t.is_complex() else t.clone(),), \
            _KINDS[(_F, _N, _N, _N)]
    words = _words(t)
    while words.numel() > 1:
        if words.numel() % 2:
            words = torch.cat([words, words.new_zeros(1)])
        half = words.numel() // 2
        words = torch.bitwise_xor(words[:half], words[half:])
    return (words.reshape(()),), _KINDS[(_X, _N, _N, _N)]


@functools.lru_cache(maxsize=None)
def device_module(device_type: str) -> Any:
    """torch's module for a device type with streams and events (torch.cuda,
    and torch.npu or torch.xpu where their backend is loaded), or None.
    Looked up once per device type: every device tensor's hook asks."""
    module = getattr(torch, device_type, None)
    if all(hasattr(module, name)
           for name in ("current_stream", "stream", "Event")):
        return module
    return None


def stream_key(t: torch.Tensor) -> Any:
    """Where the tensor's reductions were queued: None for the host, the
    device's current stream, or the tensor's device when its backend has no
    streams and events here (its batches are then copied to the host with
    one wait per dtype of a batch)."""
    if t.device.type == "cpu":
        return None
    module = device_module(t.device.type)
    if module is None:
        return t.device
    return module.current_stream(t.device)


# A batch's results grouped by dtype: each tensor's place (its group, its
# first value's index there, how many values it has), and each group's
# values (0-d tensors, or their stack in host memory).
_Groups = Tuple[List[Tuple[int, int, int]], List[Any]]


def _group(results: List[Tuple[torch.Tensor, ...]]) -> _Groups:
    places: List[Tuple[int, int, int]] = []
    index: Dict[torch.dtype, int] = {}
    groups: List[List[torch.Tensor]] = []
    for values in results:
        dtype = values[0].dtype
        g = index.get(dtype)
        if g is None:
            g = index[dtype] = len(groups)
            groups.append([])
        places.append((g, len(groups[g]), len(values)))
        groups[g].extend(values)
    return places, groups


def to_host(results: List[Tuple[torch.Tensor, ...]],
            key: Any) -> Tuple[Any, Optional[Any]]:
    """The batch on its way to host memory, and what to wait on before
    reading it: on a device with streams, an event behind a stack per dtype
    and its non-blocking copy into pinned memory, all on the stream that
    computed the results. Host results go as they are: the statistics
    thread stacks them (fetch)."""
    if key is None:
        return results, None
    places, groups = _group(results)
    if isinstance(key, torch.device):
        return (places, [torch.stack(g).cpu() for g in groups]), None
    module = device_module(key.device.type)
    hosts = []
    with module.stream(key):  # behind the reductions, whoever flushes
        for g in groups:
            stacked = torch.stack(g)
            host = torch.empty(stacked.shape, dtype=stacked.dtype,
                               pin_memory=True)
            host.copy_(stacked, non_blocking=True)
            hosts.append(host)
        event = module.Event()
        event.record(key)
    return (places, hosts), event.synchronize


def _words_of(values: torch.Tensor) -> bytes:
    """Host values as 8-byte words: a float as a float64, an integer or a
    bool as an int64."""
    words = values.to(torch.float64 if values.is_floating_point()
                      else torch.int64)
    return host_bytes(words.data_ptr(), words.numel() * 8)


_NULLS = [bytes(8 * n) for n in range(4)]


def fetch(host: Any) -> bytes:
    """4 little-endian 8-byte values per tensor (0 for null), once the
    batch's event completed (host memory)."""
    if isinstance(host, list):  # host results, stacked here
        places, groups = _group(host)
        groups = [torch.stack(g) for g in groups]
    else:
        places, groups = host
    words = [_words_of(g) for g in groups]
    out = []
    for g, first, count in places:
        out.append(words[g][first * 8:(first + count) * 8])
        if count < 4:
            out.append(_NULLS[4 - count])
    return b"".join(out)


# summary_mode xor: the checksum word in place of the four statistics, on
# the same road.
XOR = SimpleNamespace(reduce=reduce_xor, stream_key=stream_key,
                      to_host=to_host, fetch=fetch)
