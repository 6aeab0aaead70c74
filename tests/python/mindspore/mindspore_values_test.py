"""tprobe.mindspore's values: every MindSpore dtype reaches the ring and is
written as msprobe writes it (str(dtype), "mindspore.Tensor"), with
msprobe's MindSpore statistics rules, checked against numpy: integers and
float64 as float32, bool Max/Min as any/all with null Mean/Norm, a 0-d
tensor as its value. Also a positional dtype and Python scalars."""

import json
import os
import sys
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import Tprobed, fresh_dir, python_path, \
    tprobed_binary  # noqa: E402


class ValuesTest(unittest.TestCase):
    def test_dtypes_statistics_and_scalars(self) -> None:
        work = fresh_dir("tpmv-")
        with Tprobed(tprobed_binary(), work) as daemon:
            os.environ.update(daemon.env())
            sys.path.insert(0, python_path())
            import mindspore as ms
            from mindspore import Tensor, ops
            from tprobe.mindspore import PrecisionDebugger
            config = os.path.join(work, "config.json")
            dump = os.path.join(work, "dump")
            with open(config, "w") as f:
                json.dump({"task": "statistics", "level": "L1",
                           "dump_path": dump}, f)
            ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
            debugger = PrecisionDebugger(config_path=config)
            rng = np.random.default_rng(1)
            data = rng.standard_normal((3, 5)) * 40
            dtypes = [ms.float16, ms.bfloat16, ms.float32, ms.float64,
                      ms.int8, ms.uint8, ms.int16, ms.int32, ms.int64,
                      ms.bool_]
            tensors = [Tensor(data.astype(np.float32)).astype(d)
                       for d in dtypes]
            scalar = Tensor(np.array(7, np.int64))
            debugger.start()
            for t in tensors:
                ops.reshape(t, (5, 3))
            ops.cast(tensors[2], ms.float16)
            ops.flatten(scalar.reshape((1,)), start_dim=0)
            ops.zeros_like(scalar)
            debugger.stop()
            debugger.step()
            debugger.session.flush()
            path = os.path.join(dump, "step0", "rank", "dump.json")
            deadline = time.monotonic() + 30
            while not os.path.exists(path):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            with open(path) as f:
                entries = json.load(f)["data"]

        for i, (d, t) in enumerate(zip(dtypes, tensors)):
            got = entries[f"Functional.reshape.{i}.forward"]["input_args"]
            tensor, shape = got
            self.assertEqual(list(tensor), ["type", "dtype", "shape", "Max",
                                            "Min", "Mean", "Norm"])
            self.assertEqual(tensor["type"], "mindspore.Tensor")
            self.assertEqual(tensor["dtype"], str(d))
            self.assertEqual(tensor["shape"], [3, 5])
            self.assertEqual(shape, [{"type": "int", "value": 5},
                                     {"type": "int", "value": 3}])
            values = t.astype(ms.float32).asnumpy()
            if d == ms.bool_:
                self.assertEqual((tensor["Max"], tensor["Min"]),
                                 (bool(values.any()), bool(values.all())))
                self.assertIsNone(tensor["Mean"])
                self.assertIsNone(tensor["Norm"])
                continue
            self.assertEqual(tensor["Max"], float(values.max()), str(d))
            self.assertEqual(tensor["Min"], float(values.min()), str(d))
            exact = values.astype(np.float64)
            self.assertAlmostEqual(tensor["Mean"], exact.mean(),
                                   delta=abs(exact.mean()) * 1e-2 + 1e-2)
            self.assertAlmostEqual(tensor["Norm"], np.linalg.norm(exact),
                                   delta=np.linalg.norm(exact) * 1e-2)
        cast = entries["Functional.cast.0.forward"]["input_args"]
        self.assertEqual(cast[1], {"type": "mindspore.dtype",
                                   "value": "Float16"})
        flat = entries["Functional.flatten.0.forward"]
        self.assertEqual(flat["input_kwargs"],
                         {"start_dim": {"type": "int", "value": 0}})
        zero_d = entries["Functional.zeros_like.0.forward"]["input_args"][0]
        self.assertEqual(zero_d["shape"], [])
        self.assertEqual([zero_d[k] for k in ("Max", "Min", "Mean", "Norm")],
                         [7, 7, 7, 7])


if __name__ == "__main__":
    unittest.main()
