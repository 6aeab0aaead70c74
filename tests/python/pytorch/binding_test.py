"""tprobe._C.Session against a real tprobed: msprobe's encoding of every
value kind (docs/format.md, section 2.3), tensors of several
dtypes and layouts, and the constructor's error for a bad config.
"""

import collections
import dataclasses
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

import numpy as np  # noqa: E402
import torch  # noqa: E402

from tprobe import _C  # noqa: E402
from tprobe.torch import values  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Options:
    scale: float
    name: str


def typed(kind, value):
    return {"type": kind, "value": value}


def tensor(dtype, shape, mx, mn, mean, norm, requires_grad=False):
    return {"type": "torch.Tensor", "dtype": dtype, "shape": shape, "Max": mx,
            "Min": mn, "Mean": mean, "Norm": norm,
            "requires_grad": requires_grad}


class UnprintableKey:
    """A dict key whose str() raises: the binding's hook fails on it."""

    def __str__(self) -> str:
        raise RuntimeError("no name")


class BindingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-binding-")
        config = os.path.join(cls.tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1",
                       "dump_path": os.path.join(cls.tmp, "dump")}, f)
        _C.set_fallback(values.fallback)
        with Tprobed(tprobed_binary(), cls.tmp) as daemon:
            session = _C.Session(config_path=config, socket_path=daemon.socket,
                                 autostart_daemon=False)
            cls.connected = session.connected
            cls.call_before_start = session.api_begin("Torch.add")
            session.start()
            cls.bodies = cls.record(session)
            cls.calls = cls.record_calls(session)
            cls.failed_entry = session.record_entry(
                "bad_key", None, {UnprintableKey(): 1}, -1)
            session.stop()
            cls.flushed = session.flush(30000)
            session.step()
            cls.counters = session.counters()
            session.close()
        with open(os.path.join(cls.tmp, "dump", "step0", "rank",
                               "dump.json")) as f:
            cls.data = json.load(f)["data"]
        with open(os.path.join(cls.tmp, "dump", "step0", "rank",
                               "stack.json")) as f:
            cls.stack = json.load(f)

    @staticmethod
    def record(session):
        t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        bodies = {
            "scalars": {"input_args": [None, True, 3, -1.5, math.inf, "s"],
                        "is_recompute": False},
            "special": {"input_args": [slice(1, 10, 2), slice(None, -1),
                                       Ellipsis, torch.Size([3, 4]),
                                       torch.float16, torch.device("cpu")],
                        "input_kwargs": {"dtype": torch.bfloat16,
                                         "device": torch.device("cpu"),
                                         "memory_format":
                                             torch.channels_last}},
            "containers": {"input_args": [(1, [2, {"k": 3}]), Point(1, 2.0)],
                           "input_kwargs": {"opts": Options(0.5, "n")}},
            "numpy": {"input_args": [np.float32(0.25), np.bool_(True),
                                     np.int64(7), np.array([1.0, -3.0])]},
            "tensors": {"output": [t, t.t(), torch.tensor(5),
                                   torch.tensor([True, False]),
                                   torch.zeros(0, 3),
                                   t.to(torch.bfloat16).requires_grad_(True)]},
        }
        for name, body in bodies.items():
            session.record_entry(name, ["File a.py, line 1, in f, \n g()"],
                                 body)
        encoded = session.encode([t])
        t.add_(1)  # an encoded value keeps the bytes it saw
        session.record_entry("pre_encoded", None, {"input_args": encoded,
                                                   "output": [t]})
        return bodies

    @staticmethod
    def record_calls(session):
        """API calls through their handles; returns what the handles
        said."""
        t = torch.arange(4, dtype=torch.float32)
        first = session.api_begin("Torch.add")
        said = {"type": type(first).__name__, "entry": first.entry,
                "input": first.input, "index": first.index}
        session.api_inputs(first, [t], {})
        t.add_(1)  # the inputs were taken before
        session.api_end(first, t)
        # Ended already: neither a second entry nor a second close.
        session.api_end(first, torch.ones(1))
        second = session.api_begin("Torch.add")
        said["second_index"] = second.index
        session.api_end(second)  # no output: closed without an entry
        return said

    def test_call_handles(self) -> None:
        self.maxDiff = None
        self.assertIsNone(self.call_before_start)
        self.assertEqual(self.calls, {"type": "Call", "entry": True,
                                      "input": True, "index": 0,
                                      "second_index": 1})
        # torch's float32 norm of 0, 1, 2, 3: the second end's ones(1) is
        # not in the entry.
        before = torch.arange(4, dtype=torch.float32)
        after = before + 1
        self.assertEqual(self.data["Torch.add.0.forward"], {
            "input_args": [tensor("torch.float32", [4], 3.0, 0.0, 1.5,
                                  before.norm().item())],
            "input_kwargs": {},
            "output": [tensor("torch.float32", [4], 4.0, 1.0, 2.5,
                              after.norm().item())]})
        self.assertNotIn("Torch.add.1.forward", self.data)
        # The stack is the running code's: this file's record_calls
        # innermost.
        names, lines = self.stack["1"]
        self.assertEqual(names, ["Torch.add.0.forward"])
        self.assertRegex(lines[0], r"^File .*binding_test\.py, line \d+, in "
                         r"record_calls, \n session\.api_inputs\(first, ")

    def test_session_state(self) -> None:
        self.assertTrue(self.connected)
        self.assertTrue(self.flushed)
        self.assertEqual(self.counters["dropped_no_daemon"], 0)
        self.assertGreater(self.counters["records_written"], 0)

    def test_a_failed_call_is_counted(self) -> None:
        # No exception reaches the caller, nothing is written, and the
        # failure is counted (the first is also named on stderr).
        self.assertFalse(self.failed_entry)
        self.assertEqual(self.counters["hook_failures"], 1)
        self.assertNotIn("bad_key", self.data)

    def test_scalars(self) -> None:
        self.assertEqual(self.data["scalars"], {
            "input_args": [None, typed("bool", True), typed("int", 3),
                           typed("float", -1.5), typed("float", math.inf),
                           typed("str", "s")],
            "is_recompute": False})

    def test_special_types(self) -> None:
        self.assertEqual(self.data["special"], {
            "input_args": [typed("slice", [1, 10, 2]),
                           typed("slice", [None, -1, None]),
                           typed("ellipsis", "..."),
                           typed("torch.Size", [3, 4]),
                           {}, {}],
            "input_kwargs": {
                "dtype": typed("torch.dtype", "torch.bfloat16"),
                "device": typed("torch.device", "cpu:None"),
                "memory_format": {"type": "torch.memory_format",
                                  "format": "channels_last"}}})

    def test_containers(self) -> None:
        self.assertEqual(self.data["containers"], {
            "input_args": [[typed("int", 1), [typed("int", 2),
                                              {"k": typed("int", 3)}]],
                           {"x": typed("int", 1), "y": typed("float", 2.0)}],
            "input_kwargs": {"opts": {"scale": typed("float", 0.5),
                                      "name": typed("str", "n")}}})

    def test_numpy(self) -> None:
        self.assertEqual(self.data["numpy"], {"input_args": [
            # type(x).__name__: "bool_" in numpy 1.x, "bool" in numpy 2.
            typed("float32", 0.25), typed(type(np.bool_(True)).__name__, True),
            typed("int64", 7),
            {"type": "numpy.ndarray", "dtype": "float64", "shape": [2],
             "Max": 1.0, "Min": -3.0, "Mean": -1.0,
             "Norm": math.sqrt(10.0)}]})

    def test_tensors(self) -> None:
        out = self.data["tensors"]["output"]
        norm = math.sqrt(sum(i * i for i in range(6)))
        self.assertEqual(out[0], tensor("torch.float32", [2, 3], 5.0, 0.0, 2.5,
                                        out[0]["Norm"]))
        self.assertAlmostEqual(out[0]["Norm"], norm, places=5)
        self.assertEqual(out[1]["shape"], [3, 2])  # non-contiguous
        self.assertEqual(out[1]["Max"], 5.0)
        self.assertEqual(out[2], tensor("torch.int64", [], 5, 5, 5, 5))
        self.assertEqual(out[3], tensor("torch.bool", [2], True, False, None,
                                        None))
        self.assertEqual(out[4], tensor("torch.float32", [0, 3], None, None,
                                        None, None))
        self.assertEqual(out[5]["dtype"], "torch.bfloat16")
        self.assertTrue(out[5]["requires_grad"])
        self.assertEqual(out[5]["Max"], 5.0)

    def test_encoded_values_keep_the_bytes_they_saw(self) -> None:
        entry = self.data["pre_encoded"]
        self.assertEqual(entry["input_args"][0]["Max"], 5.0)
        self.assertEqual(entry["output"][0]["Max"], 6.0)

    def test_stack_groups_entries_with_one_stack(self) -> None:
        self.assertEqual(self.stack["0"][0], list(self.bodies))
        self.assertEqual(self.stack["0"][1],
                         ["File a.py, line 1, in f, \n g()"])

    def test_bad_config_raises_value_error(self) -> None:
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "w") as f:
            json.dump({"task": "statistics", "level": "L9"}, f)
        with self.assertRaises(ValueError) as caught:
            _C.Session(config_path=path, autostart_daemon=False,
                       socket_path=os.path.join(self.tmp, "none.sock"))
        self.assertIn("level", str(caught.exception))

    def test_module_methods_take_arguments_by_position(self) -> None:
        # module_methods.cc binds these outside pybind11: positions only,
        # TypeError for a wrong call, and otherwise nothing raises (this
        # session has no daemon and was never started: nothing records).
        session = _C.Session(
            config_path=os.path.join(self.tmp, "config.json"),
            autostart_daemon=False, connect_timeout_ms=100,
            socket_path=os.path.join(self.tmp, "none.sock"))
        base, t = "Module.fc.Linear", torch.ones(2, requires_grad=True)
        self.assertIsNone(session.module_open(base, (t,), {}))
        self.assertIsNone(session.module_open(base, (t,), {}, None))
        self.assertIsNone(session.module_end(None, t, {}))
        self.assertIsNone(session.module_backward_begin(base, 0))
        self.assertIsNone(session.module_backward_end(None))
        self.assertIsNone(session.module_backward_end(None, [t], [t]))
        self.assertFalse(session.param_grad(base, "weight", t))
        wrong = [lambda: session.module_end(None, t),
                 lambda: session.module_end(call=None, output=t,
                                            parameters={}),
                 lambda: session.module_open(base, (t,), {}, "no stack"),
                 lambda: session.module_backward_begin(base, "0"),
                 lambda: session.module_backward_end(),
                 lambda: session.param_grad(base, "weight", t, t),
                 lambda: _C.Session.module_end(object(), None, t, {})]
        for call in wrong:
            with self.assertRaises(TypeError):
                call()
        session.close()


if __name__ == "__main__":
    unittest.main()
