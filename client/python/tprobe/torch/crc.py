"""summary_mode md5 of a tensor, and the bytes of tasks tensor and
overflow_check, without a synchronous copy, for _common/producer_stats.py
(msprobe's "md5" is the CRC-32 of the tensor's bytes, docs/format.md). The
hook queues a copy of the bytes into host memory and returns: a device
tensor's goes into pinned memory with a non-blocking copy behind an event
on its stream; a host tensor's is cloned, so that the training may change
it in place afterwards. The statistics thread waits for the event and
computes the CRC-32 there, off the training thread (zlib releases the
GIL), or, for the tasks' bytes (BYTES), writes the copies into its ring.
Nothing here waits for the device in the hook: no .item(), .cpu(),
.numpy() or synchronize (but on a backend without streams and events,
stats.device_module). stream_key is stats.stream_key: the copy is queued
on the tensor's current stream.
"""

import ctypes
import struct
import zlib
from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import torch

from tprobe.torch.stats import (device_module, raw_bytes,  # noqa: F401
                                stream_key)

_KINDS = bytes((5, 0, 0, 0))  # record::StatKind kCrc, then three nulls


def reduce(t: torch.Tensor) -> Tuple[torch.Tensor, bytes]:
    """A host copy of the bytes of `t` (with elements), queued, and its
    kinds."""
    raw = raw_bytes(t)
    if raw.device.type == "cpu":
        # A copy of its own (raw_bytes already made one when `t` was not
        # contiguous).
        own = raw.data_ptr() != t.data_ptr()
        return (raw if own else raw.clone()), _KINDS
    if device_module(raw.device.type) is None:
        # A backend without streams and events here: a copy that waits,
        # never a read of device memory from the host.
        return raw.cpu(), _KINDS
    host = torch.empty(raw.shape, dtype=torch.uint8, pin_memory=True)
    host.copy_(raw, non_blocking=True)
    return host, _KINDS


def to_host(copies: List[torch.Tensor], key: Any) -> Tuple[List[torch.Tensor],
                                                           Optional[Any]]:
    """The copies, and what to wait on before reading them: on a device
    with streams, an event recorded behind them on their stream."""
    if key is None or isinstance(key, torch.device):
        return copies, None
    event = device_module(key.device.type).Event()
    event.record(key)
    return copies, event.synchronize


def fetch(copies: List[torch.Tensor]) -> bytes:
    """Each copy's CRC-32 as the first of 4 little-endian 8-byte values,
    read in place."""
    return b"".join(
        struct.pack("<QQQQ", zlib.crc32(
            (ctypes.c_ubyte * c.numel()).from_address(c.data_ptr())), 0, 0, 0)
        for c in copies)


def addresses(copies: List[torch.Tensor]) -> List[Tuple[int, int]]:
    """Each copy's host address and size, for Session.write_producer_bytes
    (the copies stay alive in the caller)."""
    return [(c.data_ptr(), c.numel()) for c in copies]


# Task tensor: the copies themselves go into the ring (the "bytes" part of
# _common/producer_stats.PARTS).
BYTES = SimpleNamespace(reduce=lambda t: (reduce(t)[0], bytes(4)),
                        stream_key=stream_key, to_host=to_host,
                        fetch=addresses, nbytes=lambda c: c.numel())
