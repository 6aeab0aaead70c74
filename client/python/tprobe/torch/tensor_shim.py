"""Where the binding reads a tensor's dtype, device, shape, strides and data
pointer: through torch's stable C shim (client/python/binding/tensor_shim.h,
the aoti_torch_* functions libtorch exports for AOTInductor), a few C calls
a tensor, rather than one Python attribute call for each fact.

The binding turns the shim on only where this torch exports it (2.x; 1.13
has none) and a sample tensor reads the same through it as through Python;
else, and with ``TPROBE_TENSOR_SHIM=0``, it reads the Python attributes as
before. Only torch.Tensor and torch.nn.Parameter objects are read through
it: a subclass may answer those attributes itself.
"""

import os

import torch

from tprobe import _C


def use() -> bool:
    """Turns the shim on where it reads right (unless TPROBE_TENSOR_SHIM=0);
    whether it is on."""
    if os.environ.get("TPROBE_TENSOR_SHIM", "1") == "0":
        return _C.use_tensor_shim(None, ())
    # A storage offset and strides that are not row-major.
    sample = torch.arange(12, dtype=torch.float32).reshape(3, 4)[1:].t()
    return _C.use_tensor_shim(sample, (torch.Tensor, torch.nn.Parameter))
