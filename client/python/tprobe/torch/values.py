"""Encodings of the rarer value types, which the binding hands to Python
(``tprobe._C.set_fallback``): msprobe's JSON for numpy arrays, dataclasses
and torch.distributed objects (docs/format.md, section 2.3).

The binding itself encodes None, bool, int, float, str, list, tuple,
namedtuple, dict, slice, Ellipsis, torch.Tensor, torch.Size, torch.dtype,
torch.device, torch.memory_format and numpy scalars. Anything this module
does not know becomes null, as in msprobe.

Tensors come here when the binding cannot read their data (msprobe 26.x's
handling): a DTensor is its local shard (its statistics, dtype and shape;
msprobe also writes type DTensor, device_mesh and placements, which need a
field of the entry format: a difference the README lists); a FakeTensor,
a meta tensor and a float8 tensor are written without statistics.
"""

import dataclasses
import zlib
from typing import Any, Optional, Tuple

import torch

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional
    np = None


def _dist():
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover
        return None
    return dist if dist.is_available() else None


def _ndarray(value: Any) -> Tuple[str, Any]:
    info = {"type": "numpy.ndarray", "dtype": str(value.dtype),
            "shape": list(value.shape)}
    if value.size == 0 or value.dtype.kind not in "biuf":
        info.update(Max=None, Min=None, Mean=None, Norm=None)
    elif value.dtype.kind == "b":
        info.update(Max=bool(value.any()), Min=bool(value.all()), Mean=None,
                    Norm=None)
    else:
        data = value.astype(np.float64)
        info.update(Max=float(data.max()), Min=float(data.min()),
                    Mean=float(data.mean()),
                    Norm=float(np.linalg.norm(data.ravel())))
    return "raw", info


_FAKE_TENSOR = "torch._subclasses.fake_tensor.FakeTensor"


def _tensor(value: Any) -> Tuple[str, Any]:
    dist = _dist()
    dtensor = getattr(getattr(dist, "tensor", None), "DTensor", None)
    if dtensor is not None and isinstance(value, dtensor):
        return "value", value.to_local()
    cls = type(value)
    fake = f"{cls.__module__}.{cls.__qualname__}" == _FAKE_TENSOR
    return "raw", {"type": _FAKE_TENSOR if fake else "torch.Tensor",
                   "dtype": str(value.dtype), "shape": list(value.shape),
                   "Max": None, "Min": None, "Mean": None, "Norm": None,
                   "requires_grad": bool(value.requires_grad)}


def _group_id(ranks: list) -> str:
    return "%08x" % (zlib.crc32(str(ranks).encode()) & 0xFFFFFFFF)


def _process_group(dist: Any, group: Any) -> Tuple[str, Any]:
    ranks = list(dist.get_process_group_ranks(group))
    return "raw", {"type": "torch.ProcessGroup", "group_ranks": ranks,
                   "group_id": _group_id(ranks)}


def fallback(value: Any) -> Optional[Tuple[str, Any]]:
    """Returns ("raw", json_like), ("value", python_value) or None (null)."""
    try:
        if isinstance(value, torch.Tensor):
            return _tensor(value)
        if np is not None and isinstance(value, np.ndarray):
            return _ndarray(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return "value", {f.name: getattr(value, f.name)
                             for f in dataclasses.fields(value)}
        dist = _dist()
        if dist is not None:
            if isinstance(value, dist.ProcessGroup):
                return _process_group(dist, value)
            if isinstance(value, (dist.ReduceOp, dist.ReduceOp.RedOpType)):
                op = getattr(value, "op", value)
                return "raw", {"type": "torch.distributed.ReduceOp",
                               "value": str(op)}
            if isinstance(value, dist.P2POp):
                peer_group = value.group or dist.group.WORLD
                ranks = list(dist.get_process_group_ranks(peer_group))
                return "raw", {"class_type": "torch.distributed.P2POp",
                               "tensor": value.tensor,
                               "op": value.op.__name__,
                               "peer": value.peer, "tag": value.tag,
                               "group_id": _group_id(ranks)}
    except Exception:  # noqa: BLE001 - an odd value is null, never an error
        return None
    return None
