"""`pip install .`: the wheel pyproject.toml builds (scikit-build-core over
the CMake project, linking Debian's shared libraries), installed into a new
virtual environment, runs the example, carries and auto-starts its own
tprobe/bin/tprobed, puts tprobe, tprobed and tprobe-run on the
environment's PATH, and writes nothing outside that environment.

Runs in the project venv (it has scikit-build-core, so the wheel builds
without a download). The new environment sees Debian's site packages
(torch 1.13, numpy) for the example run; tprobe itself must come from the
wheel. $TPROBE_WHEEL_BUILD_DIR keeps the wheel's CMake build between runs.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import ROOT, fresh_dir, wait_until  # noqa: E402

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
CONFIG = os.path.join(ROOT, "tests", "data", "golden", "L0", "config.json")


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    """Runs cmd; raises with its output when it fails."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=1800,
                          **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{cmd} exited {done.returncode}:\n"
                             f"{done.stdout[-6000:]}")
    return done


def daemons_on(socket_path: str) -> list:
    """(pid, executable) of every process started with --socket socket_path."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if socket_path.encode() in argv and b"--socket" in argv:
            found.append((int(pid), exe))
    return found


class WheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-wheel-")
        wheels = os.path.join(cls.tmp, "wheels")
        build_dir = os.environ.get("TPROBE_WHEEL_BUILD_DIR") or os.path.join(
            cls.tmp, "build")
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
               "--no-deps", "-w", wheels,
               f"--config-settings=build-dir={build_dir}", ROOT]
        if shutil.which("ccache"):
            cmd.append("--config-settings="
                       "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
        cls.build = run(cmd, cwd=cls.tmp)
        cls.wheel = glob.glob(os.path.join(wheels, "tprobe-*.whl"))[0]
        cls.env = os.path.join(cls.tmp, "env")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages",
             cls.env])
        cls.install = run([os.path.join(cls.env, "bin", "python"), "-m",
                           "pip", "install", "--no-deps", "--no-index",
                           cls.wheel])

    def env_python(self) -> str:
        return os.path.join(self.env, "bin", "python")

    def installed_files(self) -> list:
        out = run([self.env_python(), "-c", (
            "import importlib.metadata as m, os\n"
            "d = m.distribution('tprobe')\n"
            "for f in d.files: print(os.path.realpath(d.locate_file(f)))")])
        return out.stdout.split()

    def package_dir(self) -> str:
        out = run([self.env_python(), "-c",
                   "import tprobe, os; "
                   "print(os.path.dirname(os.path.realpath(tprobe.__file__)))"],
                  env=self.clean_env(), cwd=self.tmp)
        return out.stdout.strip()

    def clean_env(self) -> dict:
        return {k: v for k, v in os.environ.items()
                if k not in ("PYTHONPATH", "TPROBED")}

    def test_wheel_holds_extension_library_and_executables(self) -> None:
        # Everything inside the package, as torch keeps torch/bin/.
        files = self.installed_files()
        package = self.package_dir()
        rel = [os.path.relpath(f, package) for f in files]
        for expected in ("bin/tprobed", "bin/tprobe", "bin/tprobe-run",
                         "lib/libtprobe.so", "include/tprobe/client.h",
                         "include/tprobe/detail/client_inl.h"):
            self.assertIn(expected, rel)
        self.assertTrue(any(r.startswith("_C.") and r.endswith(".so")
                            for r in rel), rel)
        # The commands on the environment's PATH run the package's.
        for tool in ("tprobed", "tprobe", "tprobe-run"):
            self.assertTrue(os.access(os.path.join(self.env, "bin", tool),
                                      os.X_OK))
        helped = run([os.path.join(self.env, "bin", "tprobe-run"), "--help"],
                     env=self.clean_env())
        self.assertIn("tprobe-run [OPTIONS] -- COMMAND", helped.stdout)

    def test_nothing_is_installed_outside_the_environment(self) -> None:
        env = os.path.realpath(self.env)
        outside = [f for f in self.installed_files()
                   if not f.startswith(env + os.sep)]
        self.assertEqual(outside, [])

    def test_example_runs_with_the_bundled_daemon(self) -> None:
        work = fresh_dir("tp-wheel-run-")
        sock = os.path.join(work, "d.sock")
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "TPROBED")}
        env.update(TPROBE_SOCKET=sock, TPROBE_AUTOSTART="1")
        dump = os.path.join(work, "dump")
        example = run([self.env_python(), SCRIPT, "--tool", "tprobe",
                       "--config", CONFIG, "--dump-path", dump, "--steps",
                       "1"], env=env, cwd=work)
        # tprobe came from the wheel, not from a build tree.
        where = run([self.env_python(), "-c",
                     "import tprobe; print(tprobe.__file__)"], env=env,
                    cwd=work).stdout.strip()
        self.assertTrue(os.path.realpath(where).startswith(
            os.path.realpath(self.env) + os.sep), where)
        daemons = daemons_on(sock)
        self.assertEqual(len(daemons), 1, example.stdout)
        self.assertEqual(daemons[0][1], os.path.realpath(
            os.path.join(self.package_dir(), "bin", "tprobed")))
        tprobe = os.path.join(self.env, "bin", "tprobe")
        status = run([tprobe, "status", "--socket", sock], env=env)
        self.assertIn(f"tprobed pid {daemons[0][0]} on {sock}", status.stdout)
        run([tprobe, "shutdown", "--socket", sock], env=env)
        wait_until(lambda: not daemons_on(sock), 30, "tprobed to exit")
        with open(os.path.join(dump, "step0", "rank", "dump.json")) as f:
            data = json.load(f)["data"]
        self.assertIn("Module.blocks.0.Block.forward.0", data)


if __name__ == "__main__":
    unittest.main()
