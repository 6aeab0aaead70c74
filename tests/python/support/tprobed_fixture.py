"""A real tprobed for one test: its own socket in its own temporary
directory, started in the foreground and stopped with SIGTERM (which makes
it drain and write everything).

    with Tprobed(binary, tmpdir) as daemon:
        subprocess.run(cmd, env=daemon.env(), check=True)

Paths come from the environment ctest sets (tests/python/CMakeLists.txt):
TPROBED (the daemon), TPROBE_PYTHONPATH (build/python).
"""

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Dict, Optional

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir, os.pardir))


def tprobed_binary() -> str:
    return os.path.abspath(os.environ.get("TPROBED")
                           or os.path.join(ROOT, "build", "bin", "tprobed"))


def python_path() -> str:
    return os.path.abspath(os.environ.get("TPROBE_PYTHONPATH")
                           or os.path.join(ROOT, "build", "python"))


def fresh_dir(prefix: str) -> str:
    """A fresh temporary directory, removed when the test process exits
    (kept when $TPROBE_KEEP_TEST_DIRS is set, for a look after a failure).
    Its path is short: socket paths must fit in 107 bytes."""
    path = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("TPROBE_KEEP_TEST_DIRS"):
        atexit.register(shutil.rmtree, path, True)
    return path


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def _answers(path: str) -> bool:
    if not os.path.exists(path):
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class Tprobed:
    def __init__(self, binary: str, workdir: str) -> None:
        self.binary = binary
        self.workdir = workdir
        self.socket = os.path.join(workdir, "tprobed.sock")
        self.log_path = os.path.join(workdir, "tprobed.log")
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> "Tprobed":
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--socket", self.socket, "--foreground",
             "--log-level", "info"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        try:
            wait_until(lambda: self.proc.poll() is not None
                       or _answers(self.socket), 15, "tprobed to listen")
        except TimeoutError:
            self.stop()
            raise
        if self.proc.poll() is not None:
            raise RuntimeError(f"tprobed exited: {self.log()}")
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def log(self) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def env(self, **extra: str) -> Dict[str, str]:
        env = dict(os.environ)
        env["TPROBE_SOCKET"] = self.socket
        env["TPROBE_AUTOSTART"] = "0"
        env["PYTHONPATH"] = python_path() + (
            os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.update(extra)
        return env
