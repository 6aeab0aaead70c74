"""Max, Min, Mean and Norm of a tensor by torch's own reductions, on the
tensor's device, by msprobe 26.x's rules (get_stat_info of its PyTorch
processor, docs/format.md 2.4), for _common/producer_stats.py. Nothing here
waits for the device: no .item(), .cpu(), .numpy() or synchronize.

A result is an int64 tensor of 4: each statistic's 8 bytes (a float64's
bits, an int64, a bool as 0 or 1, 0 for null), with the 4 record::StatKind
bytes beside it. Under summary_mode xor the result is msprobe's checksum
(reduce_xor): the XOR of the tensor's bytes as 64-bit words, folded
pairwise on the device as msprobe folds them.
"""

import functools
from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import torch

from tprobe._common.host_memory import host_bytes

_N, _B, _I, _F, _X = 0, 1, 2, 3, 4
_INTEGER = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
_KINDS = {k: bytes(k) for k in [
    (_B, _B, _N, _N), (_F, _F, _F, _N), (_I, _I, _I, _I), (_F, _F, _F, _F),
    (_I, _I, _N, _N), (_F, _F, _N, _N), (_X, _N, _N, _N), (_F, _N, _N, _N)]}


def _bits(values: torch.Tensor, count: int) -> torch.Tensor:
    """values (count float64 or int64 statistics) as 4 int64, nulls 0."""
    if values.dtype == torch.float64:
        values = values.view(torch.int64)
    if count < 4:
        values = torch.cat([values, values.new_zeros(4 - count)])
    return values


def reduce(t: torch.Tensor) -> Tuple[torch.Tensor, bytes]:
    """The statistics of `t` (with elements) and their kinds."""
    t = t.detach()
    dtype = t.dtype
    if dtype == torch.bool:
        pair = torch.stack([t.any(), t.all()]).to(torch.int64)
        return _bits(pair, 2), _KINDS[(_B, _B, _N, _N)]
    if t.is_complex():
        a = t.resolve_conj().abs()
        v = torch.stack([a.max(), a.min(), a.mean()]).to(torch.float64)
        return _bits(v, 3), _KINDS[(_F, _F, _F, _N)]
    if t.dim() == 0:  # the value itself, four times
        if dtype in _INTEGER:
            return t.to(torch.int64).reshape(1).repeat(4), \
                _KINDS[(_I, _I, _I, _I)]
        v = t.to(torch.float64).reshape(1).repeat(4)
        return _bits(v, 4), _KINDS[(_F, _F, _F, _F)]
    if dtype in _INTEGER:
        pair = torch.stack([t.max(), t.min()]).to(torch.int64)
        return _bits(pair, 2), _KINDS[(_I, _I, _N, _N)]
    if dtype == torch.float64:
        pair = torch.stack([t.max(), t.min()])
        return _bits(pair, 2), _KINDS[(_F, _F, _N, _N)]
    v = torch.stack([t.max(), t.min(), t.mean(), t.norm()]).to(torch.float64)
    return _bits(v, 4), _KINDS[(_F, _F, _F, _F)]


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


def reduce_xor(t: torch.Tensor) -> Tuple[torch.Tensor, bytes]:
    """msprobe 26.x's xor checksum of `t` (with elements) and its kinds: a
    0-d tensor's value (an integer or bool as a word, a float as a number),
    else the XOR of its words."""
    t = t.detach()
    if t.dim() == 0:
        if t.dtype == torch.bool or t.dtype in _INTEGER:
            return _bits(t.to(torch.int64).reshape(1), 1), \
                _KINDS[(_X, _N, _N, _N)]
        if t.is_complex():
            t = t.abs()
        return _bits(t.to(torch.float64).reshape(1), 1), \
            _KINDS[(_F, _N, _N, _N)]
    words = _words(t)
    while words.numel() > 1:
        if words.numel() % 2:
            words = torch.cat([words, words.new_zeros(1)])
        half = words.numel() // 2
        words = torch.bitwise_xor(words[:half], words[half:])
    return _bits(words, 1), _KINDS[(_X, _N, _N, _N)]


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
    one wait per batch)."""
    if t.device.type == "cpu":
        return None
    module = device_module(t.device.type)
    if module is None:
        return t.device
    return module.current_stream(t.device)


def to_host(results: List[torch.Tensor], key: Any) -> Tuple[torch.Tensor,
                                                            Optional[Any]]:
    """The batch in host memory, and what to wait on before reading it: on
    a device with streams, an event behind a non-blocking copy into pinned
    memory, both on the stream that computed the results."""
    if key is None:
        return torch.stack(results).contiguous(), None
    if isinstance(key, torch.device):
        return torch.stack(results).cpu(), None
    module = device_module(key.device.type)
    with module.stream(key):  # behind the reductions, whoever flushes
        stacked = torch.stack(results)
        host = torch.empty(stacked.shape, dtype=torch.int64, pin_memory=True)
        host.copy_(stacked, non_blocking=True)
        event = module.Event()
        event.record(key)
    return host, event.synchronize


def fetch(host: torch.Tensor) -> bytes:
    """The batch's bytes, once its event completed (host memory)."""
    return host_bytes(host.data_ptr(), host.numel() * 8)


# summary_mode xor: the checksum word in place of the four statistics, on
# the same road.
XOR = SimpleNamespace(reduce=reduce_xor, stream_key=stream_key,
                      to_host=to_host, fetch=fetch)
