"""One client core per process: a Python process that uses tprobe._C and
also loads libtprobe through a C++ extension (tests/python/pytorch/
cpp_client_helper.cc, loaded with ctypes) holds one core, and dumps through
each. Before tprobe._C was built on libtprobe, each carried its own core and
the second one loaded aborted the process on duplicate registration of the
tprobe.v1 protobuf files.
"""

import ctypes
import json
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


def write_config(path: str, dump_path: str) -> str:
    with open(path, "w") as f:
        json.dump({"task": "statistics", "level": "L1",
                   "dump_path": dump_path}, f)
    return path


def loaded(name: str) -> set:
    """The files of this process's mappings whose name contains `name`."""
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f
                if name in line.split()[-1]}


class OneCoreTest(unittest.TestCase):
    def test_python_and_cpp_dump_through_one_core(self) -> None:
        tmp = fresh_dir("tp-one-core-")
        py_dump = os.path.join(tmp, "py")
        cpp_dump = os.path.join(tmp, "cpp")
        helper = ctypes.CDLL(os.environ["TPROBE_CPP_HELPER"])
        helper.tprobe_test_cpp_dump.restype = ctypes.c_int64
        helper.tprobe_test_cpp_dump.argtypes = [ctypes.c_char_p,
                                                ctypes.c_char_p]
        # tprobe._C and the helper map the same libtprobe.
        libs = loaded("libtprobe.so")
        self.assertEqual(len(libs), 1, libs)
        self.assertTrue(any("_C." in f for f in loaded("tprobe/_C")))

        with Tprobed(tprobed_binary(), tmp) as daemon:
            session = _C.Session(
                config_path=write_config(os.path.join(tmp, "py.json"),
                                         py_dump),
                socket_path=daemon.socket, autostart_daemon=False)
            self.assertTrue(session.connected)
            session.start()
            t = torch.tensor([1.0, -3.0])
            self.assertTrue(session.record_entry("py_entry", None,
                                                 {"output": [t]}))
            # The C++ client dumps while the Python session is open.
            written = helper.tprobe_test_cpp_dump(
                write_config(os.path.join(tmp, "cpp.json"),
                             cpp_dump).encode(),
                daemon.socket.encode())
            self.assertGreater(written, 0)
            session.stop()
            self.assertTrue(session.flush(30000))
            session.step()
            session.close()

        with open(os.path.join(py_dump, "step0", "rank", "dump.json")) as f:
            py_data = json.load(f)["data"]
        out = py_data["py_entry"]["output"][0]
        self.assertEqual((out["Max"], out["Min"], out["Mean"]),
                         (1.0, -3.0, -1.0))
        with open(os.path.join(cpp_dump, "step0", "rank", "dump.json")) as f:
            cpp_data = json.load(f)["data"]
        relu = cpp_data["Functional.relu.0.forward"]
        self.assertEqual(relu["input_args"][0]["Min"], -1.0)
        self.assertEqual(relu["output"][0]["Min"], 0.0)
        self.assertEqual(relu["output"][0]["Max"], 2.0)


if __name__ == "__main__":
    unittest.main()
