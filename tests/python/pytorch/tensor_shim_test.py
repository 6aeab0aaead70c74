"""tprobe.torch.tensor_shim against a real tprobed: every kind of tensor
the encoder meets, recorded once read through Python's attributes and once
through torch's C shim, gives the same dump.json values, and those values
are torch's own statistics. Where this torch has no shim (1.13) the shim
stays off and both records are Python's.
"""

import json
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (  # noqa: E402
    Tprobed, fresh_dir, python_path, tprobed_binary)

sys.path.insert(0, python_path())

import torch  # noqa: E402

from tprobe import _C  # noqa: E402
from tprobe.torch import tensor_shim, values  # noqa: E402

TORCH_2 = int(torch.__version__.split(".")[0]) >= 2


class Subclass(torch.Tensor):
    """A tensor subclass: read through Python, whatever the shim."""


def kinds() -> dict:
    """name -> tensor: layouts, dtypes and types the encoder handles apart."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) - 7.5
    grad = torch.linspace(-1, 2, 6).requires_grad_(True)
    found = {
        "contiguous": base,
        "transposed": base.t(),
        "offset_rows": base[1:3],
        "offset_columns": base[:, 2:5],
        "strided": base[::2, ::3],
        "expanded": torch.tensor([1.0, -2.0, 3.0]).expand(2, 3),
        "size_one_odd_stride": torch.empty_strided((3, 1), (1, 7)).fill_(2.5),
        "zero_dim": torch.tensor(-4.25),
        "one_element": base[2:3, 4:5],
        "empty": torch.zeros(0, 3),
        "bool": base > 0,
        "int64": torch.arange(-3, 5),
        "uint8": torch.arange(0, 250, 7, dtype=torch.uint8),
        "int32_transposed":
            torch.arange(12, dtype=torch.int32).reshape(3, 4).t(),
        "float16": base.to(torch.float16),
        "bfloat16": base.to(torch.bfloat16),
        "float64": base.double().t(),
        "complex64": torch.complex(base, base.flip(0)),
        "complex_conj": torch.complex(base, base).conj(),
        "requires_grad_leaf": grad,
        "requires_grad_result": grad * 3,
        "parameter": torch.nn.Parameter(base.clone()),
        "subclass": base.clone().as_subclass(Subclass),
        "sparse": base.to_sparse(),
        "meta": torch.empty(2, 3, device="meta"),
        "channels_last": torch.arange(
            48, dtype=torch.float32).reshape(2, 3, 2, 4).contiguous(
                memory_format=torch.channels_last),
    }
    if hasattr(torch, "float8_e4m3fn"):
        found["float8"] = base.to(torch.float8_e4m3fn)
    return found


class TensorShimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-shim-")
        config = os.path.join(cls.tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1",
                       "dump_path": os.path.join(cls.tmp, "dump")}, f)
        _C.set_fallback(values.fallback)
        cls.tensors = kinds()
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            session = _C.Session(config_path=config, socket_path=daemon.socket,
                                 autostart_daemon=False)
            session.start()
            cls.off = _C.use_tensor_shim(None, ())
            session.record_entry("python", None, {"output": cls.tensors})
            cls.on = tensor_shim.use()
            session.record_entry("shim", None, {"output": cls.tensors})
            os.environ["TPROBE_TENSOR_SHIM"] = "0"
            try:
                cls.turned_off = tensor_shim.use()
            finally:
                del os.environ["TPROBE_TENSOR_SHIM"]
            session.stop()
            cls.flushed = session.flush(30000)
            session.step()
            cls.failures = session.counters()["hook_failures"]
            session.close()
        with open(os.path.join(cls.tmp, "dump", "step0", "rank",
                               "dump.json")) as f:
            cls.data = json.load(f)["data"]

    def test_the_shim_is_on_where_torch_has_it(self) -> None:
        self.assertFalse(self.off)
        self.assertFalse(self.turned_off)
        if torch.__version__.startswith(("2.13", "2.14")):
            self.assertTrue(self.on)
        if not TORCH_2:
            self.assertFalse(self.on)
        self.assertTrue(self.flushed)
        self.assertEqual(self.failures, 0)

    def test_bad_types_are_a_type_error(self) -> None:
        sample = torch.zeros(2)
        for types in ([torch.Tensor], (torch.Tensor, 1), 5):
            with self.subTest(types=types), self.assertRaises(TypeError):
                _C.use_tensor_shim(sample, types)
        self.assertFalse(_C.use_tensor_shim(3, (torch.Tensor,)))
        self.assertEqual(tensor_shim.use(), self.on)

    def test_both_reads_give_the_same_values(self) -> None:
        self.maxDiff = None
        python = self.data["python"]["output"]
        shim = self.data["shim"]["output"]
        self.assertEqual(sorted(python), sorted(self.tensors))
        for name in self.tensors:
            with self.subTest(name):
                self.assertEqual(shim[name], python[name])

    def test_the_values_are_torchs(self) -> None:
        """Max and Min of every real tensor, Mean and Norm where msprobe
        writes them (always for the float types the models train in; a
        zero-dim tensor's four are its value)."""
        shim = self.data["shim"]["output"]
        for name, t in self.tensors.items():
            if (t.is_sparse or t.is_meta or t.is_complex()
                    or t.dtype == torch.bool or "float8" in str(t.dtype)):
                continue
            with self.subTest(name):
                got = shim[name]
                self.assertEqual(got["dtype"], str(t.dtype))
                self.assertEqual(got["shape"], list(t.shape))
                self.assertEqual(got["requires_grad"], t.requires_grad)
                if t.numel() == 0:
                    self.assertIsNone(got["Max"])
                    continue
                x = t.detach().double()
                norm = x if t.dim() == 0 else x.norm()
                if t.dtype in (torch.float32, torch.float16, torch.bfloat16):
                    self.assertIsNotNone(got["Mean"])
                    self.assertIsNotNone(got["Norm"])
                for key, want in (("Max", x.max()), ("Min", x.min()),
                                  ("Mean", x.mean()), ("Norm", norm)):
                    if got[key] is None and key in ("Mean", "Norm"):
                        continue
                    self.assertTrue(
                        math.isclose(got[key], float(want), rel_tol=1e-2,
                                     abs_tol=1e-3),
                        f"{key}: {got[key]} != {float(want)}")

    def test_what_the_ring_cannot_take_goes_to_the_fallback(self) -> None:
        shim = self.data["shim"]["output"]
        self.assertIsNone(shim["meta"]["Max"])
        if "float8" in shim:
            self.assertEqual(shim["float8"]["dtype"], "torch.float8_e4m3fn")
            self.assertIsNone(shim["float8"]["Max"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
