"""examples/consumer as a user builds it: against an installed tprobe.

tprobe is installed (`cmake --install`) into a scratch prefix; the separate
consumer project is built from there three ways (find_package(tprobe),
pkg-config, and find_package with _GLIBCXX_USE_CXX11_ABI=0), and each
program runs against the installed tprobed. The trees they write are
checked against statistics computed here from the values the program uses.

Run by ctest (consumer_builds_from_install_and_runs), which sets
TPROBE_BUILD_DIR, TPROBE_SOURCE_DIR, TPROBE_VERSION, CMAKE, CMAKE_GENERATOR,
CMAKE_MAKE_PROGRAM and CXX.
"""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ["TPROBE_BUILD_DIR"]
SOURCE = os.environ["TPROBE_SOURCE_DIR"]
VERSION = os.environ["TPROBE_VERSION"]
CMAKE = os.environ.get("CMAKE", "cmake")
CXX = os.environ.get("CXX", "c++")
CONSUMER = os.path.join(SOURCE, "examples", "consumer")
MAX_LIBRARY_BYTES = 2 * 1024 * 1024


def run(cmd, **kwargs):
    """Runs cmd; fails the test with its output when it fails."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)
    if proc.returncode != 0:
        raise AssertionError("%s exited %d:\n%s" %
                             (" ".join(cmd), proc.returncode, proc.stdout))
    return proc.stdout


def stats(values, dtype):
    """msprobe 26.x's Max, Min, Mean, Norm of a tensor's values (a float64
    tensor has no Mean or Norm)."""
    if dtype == "torch.float64":
        return {"Max": max(values), "Min": min(values), "Mean": None,
                "Norm": None}
    return {"Max": max(values), "Min": min(values),
            "Mean": sum(values) / len(values),
            "Norm": math.sqrt(sum(v * v for v in values))}


class ConsumerTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tprobe-consumer-")
        cls.prefix = os.path.join(cls.tmp, "prefix")
        run([CMAKE, "--install", BUILD, "--prefix", cls.prefix])
        cls.socket = os.path.join(cls.tmp, "d.sock")
        cls.daemon = subprocess.Popen(
            [os.path.join(cls.prefix, "bin", "tprobed"), "--socket",
             cls.socket, "--foreground"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(cls.socket)
                break
            except OSError:
                time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.send_signal(signal.SIGTERM)
        cls.daemon.wait(timeout=30)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cmake_build(self, name, *extra):
        """Configures and builds the consumer project; returns the program."""
        build = os.path.join(self.tmp, name)
        cmd = [CMAKE, "-S", CONSUMER, "-B", build,
               "-DCMAKE_PREFIX_PATH=" + self.prefix,
               "-DCMAKE_CXX_COMPILER=" + CXX]
        if os.environ.get("CMAKE_GENERATOR"):
            cmd += ["-G", os.environ["CMAKE_GENERATOR"]]
        if os.environ.get("CMAKE_MAKE_PROGRAM"):
            cmd += ["-DCMAKE_MAKE_PROGRAM=" + os.environ["CMAKE_MAKE_PROGRAM"]]
        run(cmd + list(extra))
        run([CMAKE, "--build", build])
        return os.path.join(build, "tprobe-consumer")

    def run_consumer(self, program, name):
        """Runs the program against the daemon; returns its dump path."""
        dump = os.path.join(self.tmp, "dump-" + name)
        config = os.path.join(self.tmp, "config-%s.json" % name)
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_path": dump,
                       "level": "mix"}, f)
        out = run([program, "--config", config, "--socket", self.socket,
                   "--steps", "2"])
        self.assertIn("tprobe %s, daemon connected" % VERSION, out)
        self.assertIn("dropped 0, misused calls 0", out)
        return dump

    def check_tree(self, dump):
        x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
        w = [0.5] * 6
        y = [sum(x[r * 3 + k] * 0.5 for k in range(3))
             for r in range(2) for _ in range(2)]
        for step in (0, 1):
            tree = os.path.join(dump, "step%d" % step, "rank")
            with open(os.path.join(tree, "dump.json")) as f:
                data = json.load(f)["data"]
            self.assertEqual(sorted(data), [
                "Module.net.Net.backward.0", "Module.net.Net.forward.0",
                "Module.net.Net.parameters_grad.0", "Torch.matmul.0.forward"])
            net = data["Module.net.Net.forward.0"]
            expect = {"x": (net["input_args"][0], x, "torch.float32"),
                      "w": (net["parameters"]["weight"], w, "torch.float64"),
                      "y": (net["output"][0], y, "torch.float32")}
            for what, (tensor, values, dtype) in expect.items():
                self.assertEqual(tensor["dtype"], dtype, what)
                self.assertTrue(tensor["requires_grad"], what)
                for key, value in stats(values, dtype).items():
                    if value is None:
                        self.assertIsNone(tensor[key], what + " " + key)
                    else:
                        self.assertAlmostEqual(tensor[key], value, places=5,
                                               msg=what + " " + key)
            self.assertEqual(net["input_kwargs"],
                             {"scale": {"type": "float", "value": 1.0}})
            matmul = data["Torch.matmul.0.forward"]
            self.assertEqual([t["shape"] for t in matmul["input_args"]],
                             [[2, 3], [3, 2]])
            grad = data["Module.net.Net.parameters_grad.0"]["weight"][0]
            self.assertEqual((grad["Max"], grad["Min"]), (-1.0, -1.0))
            with open(os.path.join(tree, "construct.json")) as f:
                construct = json.load(f)
            self.assertIsNone(construct["Module.net.Net.forward.0"])
            self.assertEqual(construct["Torch.matmul.0.forward"],
                             "Module.net.Net.forward.0")
            with open(os.path.join(tree, "tprobe.json")) as f:
                accounting = json.load(f)
            self.assertTrue(accounting["complete"], accounting)
            self.assertEqual(accounting["calls_unclosed"], 0)

    def test_installed_library_is_versioned_stripped_and_small(self):
        lib = os.path.join(self.prefix, "lib")
        real = os.path.realpath(os.path.join(lib, "libtprobe.so"))
        size = os.path.getsize(real)
        print("installed %s: %d bytes" % (os.path.basename(real), size))
        self.assertLess(size, MAX_LIBRARY_BYTES)
        dynamic = run(["readelf", "-d", real])
        self.assertRegex(dynamic, r"Library soname: \[libtprobe\.so\.\d+\]")
        self.assertNotIn(".debug_info", run(["readelf", "-S", real]))
        with open(os.path.join(self.prefix, "include", "tprobe",
                               "version.h")) as f:
            self.assertIn('#define TPROBE_VERSION_STRING "%s"' % VERSION,
                          f.read())

    def test_find_package_build_runs_against_the_daemon(self):
        program = self.cmake_build("build-cmake")
        self.check_tree(self.run_consumer(program, "cmake"))

    def test_pkg_config_build_runs_against_the_daemon(self):
        env = dict(os.environ,
                   PKG_CONFIG_PATH=os.path.join(self.prefix, "lib",
                                                "pkgconfig"))
        self.assertEqual(run(["pkg-config", "--modversion", "tprobe"],
                             env=env).strip(), VERSION)
        flags = run(["pkg-config", "--cflags", "--libs", "tprobe"],
                    env=env).split()
        libdir = run(["pkg-config", "--variable=libdir", "tprobe"],
                     env=env).strip()
        program = os.path.join(self.tmp, "tprobe-consumer-pc")
        run([CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror",
             os.path.join(CONSUMER, "main.cc"), "-o", program] + flags +
            ["-Wl,-rpath," + libdir])
        self.check_tree(self.run_consumer(program, "pkgconfig"))

    def test_old_string_abi_build_runs_against_the_daemon(self):
        program = self.cmake_build(
            "build-old-abi", "-DCMAKE_CXX_FLAGS=-D_GLIBCXX_USE_CXX11_ABI=0")
        # It really is an old-ABI program: it uses the pre-C++11 std::string
        # (a new-ABI build of it uses std::__cxx11::basic_string).
        symbols = run(["nm", "-C", "--undefined-only", program])
        self.assertRegex(symbols, r"std::(basic_)?string")
        self.assertNotIn("__cxx11", symbols)
        self.check_tree(self.run_consumer(program, "old-abi"))


if __name__ == "__main__":
    unittest.main()
