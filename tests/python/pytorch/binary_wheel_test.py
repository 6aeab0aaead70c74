"""deploy/wheel.sh: self-contained binary wheels, proved where people train.

The cp311, cp39 and cp312 wheels are built by the script (its protobuf
build is cached under $TPROBE_WHEEL_CACHE). Each is checked as a shipped
artefact: a manylinux tag auditwheel agrees with, at most manylinux_2_34;
no ELF exports a protobuf, spdlog or fmt symbol; none needs a library beyond
glibc's, libstdc++ and libgcc_s; at most 15 MB.

The cp311 wheel then goes into a fresh venv after torch 2.13.0 (the wheel on
this machine's disk), and a real PyTorch training dumps through the
auto-started tprobed inside a private mount namespace where Debian's
libprotobuf, libspdlog and libfmt are /dev/null: its tree is byte for byte
the source build's (stack.json's torch folder aside). Again with MindSpore
imported into the process. The environment's bin/tprobed is what the
systemd unit starts (READY=1 from the same process), and bin/tprobe-run
serves a training. The
cp39 and cp312 wheels install into venvs of their own, import tprobe._C and
run `tprobe --help`.

Runs in the project venv; needs root for the mount namespace (unshare -m).
"""

import glob
import os
import re
import socket
import subprocess
import sys
import sysconfig
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import ROOT, fresh_dir, python_path  # noqa: E402

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
CONFIG = os.path.join(ROOT, "tests", "data", "golden", "mix", "config.json")
PYTHONS = ("python3.11", "python3.9", "python3.12")
# The libraries a self-contained wheel must not need, as Debian installs
# them (the files the sonames point at).
DEBIAN_LIBS = ("libprotobuf.so.32", "libprotobuf-lite.so.32",
               "libspdlog.so.1.10", "libfmt.so.9")
ALLOWED_NEEDED = re.compile(
    r"^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|"
    r"libgcc_s|libtprobe)\.so")
MAX_WHEEL_BYTES = 15 * 1000 * 1000


def run(cmd, timeout=3000, **kwargs) -> subprocess.CompletedProcess:
    """Runs cmd; raises with its output when it fails."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{cmd} exited {done.returncode}:\n"
                             f"{done.stdout[-6000:]}")
    return done


def clean_env(**extra: str) -> dict:
    """The environment without anything pointing at the build tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TPROBED", "TPROBE_CLI",
                        "VIRTUAL_ENV")}
    env.update(extra)
    return env


def elves(folder: str) -> list:
    found = []
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def tree_files(root: str) -> dict:
    """relative path -> bytes of every file under root; in stack.json the
    folder that holds torch (each venv has its own) is <site-packages>."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                data = f.read()
            if name == "stack.json":
                data = re.sub(rb"File [^,\"]*/site-packages/",
                              b"File <site-packages>/", data)
            out[os.path.relpath(path, root)] = data
    return out


def debian_lib_files() -> list:
    """The real files behind Debian's libprotobuf, libspdlog and libfmt."""
    libdir = "/usr/lib/" + sysconfig.get_config_var("MULTIARCH")
    return sorted({os.path.realpath(os.path.join(libdir, name))
                   for name in DEBIAN_LIBS
                   if os.path.exists(os.path.join(libdir, name))})


class BinaryWheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-bwheel-")
        cls.dist = os.path.join(cls.tmp, "dist")
        env = clean_env()
        cache = os.environ.get("TPROBE_WHEEL_CACHE")
        if cache:
            env["TPROBE_WHEEL_CACHE"] = cache
        cls.build = run([os.path.join(ROOT, "deploy", "wheel.sh"), "--out",
                         cls.dist, *PYTHONS], env=env, cwd=cls.tmp)
        cls.wheels = {}
        for path in glob.glob(os.path.join(cls.dist, "tprobe-*.whl")):
            tag = os.path.basename(path).split("-")[2]
            cls.wheels[tag] = path
        cls.venvs = {}

    def wheel(self, tag: str) -> str:
        self.assertIn(tag, self.wheels, self.build.stdout)
        return self.wheels[tag]

    def venv(self, tag: str, python: str) -> str:
        """A fresh venv of `python` with the `tag` wheel installed from
        the file alone (--no-index --no-deps)."""
        if tag not in self.venvs:
            env = os.path.join(self.tmp, "venv-" + tag)
            run([python, "-m", "venv", env], env=clean_env())
            self.venvs[tag] = env
        return self.venvs[tag]

    def install(self, env: str, tag: str) -> None:
        run([os.path.join(env, "bin", "python"), "-m", "pip", "install",
             "-q", "--no-index", "--no-deps", self.wheel(tag)],
            env=clean_env())

    # --- the wheels as artefacts -----------------------------------------

    def test_every_wheel_is_manylinux_and_small(self) -> None:
        auditwheel = os.path.join(os.path.dirname(sys.executable),
                                  "auditwheel")
        for tag in ("cp311", "cp39", "cp312"):
            path = self.wheel(tag)
            name = os.path.basename(path)
            match = re.search(r"manylinux_(\d+)_(\d+)_x86_64\.whl$", name)
            self.assertIsNotNone(match, name)
            self.assertLessEqual((int(match[1]), int(match[2])), (2, 34),
                                 name)
            self.assertLessEqual(os.path.getsize(path), MAX_WHEEL_BYTES, name)
            if os.access(auditwheel, os.X_OK):
                shown = run([auditwheel, "show", path]).stdout
                self.assertIn(f"manylinux_{match[1]}_{match[2]}_x86_64",
                              shown)

    def test_no_elf_exports_or_needs_the_bundled_libraries(self) -> None:
        for tag in ("cp311", "cp39", "cp312"):
            unpacked = os.path.join(self.tmp, "unpacked-" + tag)
            with zipfile.ZipFile(self.wheel(tag)) as z:
                z.extractall(unpacked)
            found = elves(unpacked)
            names = {os.path.basename(f) for f in found}
            for expected in ("tprobed", "tprobe", "libtprobe.so.2"):
                self.assertIn(expected, names, tag)
            self.assertTrue(any(n.startswith("_C.") for n in names), names)
            for elf in found:
                exported = run(["nm", "-D", "--defined-only", "-C",
                                elf]).stdout
                leaked = [line for line in exported.splitlines()
                          if re.search(r" (google::protobuf|spdlog|fmt)::",
                                       line)]
                self.assertEqual(leaked[:3], [], elf)
                dynamic = run(["readelf", "-d", elf]).stdout
                needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
                outside = [n for n in needed if not ALLOWED_NEEDED.match(n)]
                self.assertEqual(outside, [], elf)

    # --- cp311 where Debian's libraries cannot load -------------------------

    def torch_venv(self) -> str:
        """A fresh venv with torch 2.13.0 (from the wheel on disk), then
        the cp311 wheel from its file alone."""
        env = self.venv("cp311-torch", sys._base_executable)
        if not os.path.exists(os.path.join(env, ".ready")):
            run([os.path.join(env, "bin", "python"), "-m", "pip", "install",
                 "-q", "torch==2.13.0"], env=clean_env())
            self.install(env, "cp311")
            open(os.path.join(env, ".ready"), "w").close()
        return env

    def driver(self) -> str:
        """The script both builds run: the example training (level mix,
        2 steps), MindSpore imported first when $TEST_MINDSPORE_SITE names
        where it is. One file, so that the stacks name the same lines."""
        path = os.path.join(self.tmp, "driver.py")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(
                    "import os, runpy, sys\n"
                    "if os.environ.get('TEST_MINDSPORE_SITE'):\n"
                    "    sys.path.append(os.environ['TEST_MINDSPORE_SITE'])\n"
                    "    import mindspore\n"
                    "    print('mindspore', mindspore.__version__)\n"
                    f"sys.argv = [{SCRIPT!r}, '--tool', 'tprobe', '--config', "
                    f"{CONFIG!r}, '--dump-path', sys.argv[1], '--steps', "
                    "'2']\n"
                    f"runpy.run_path({SCRIPT!r}, run_name='__main__')\n"
                    "import tprobe._C\n"
                    "print('tprobe._C from', "
                    "os.path.realpath(tprobe._C.__file__))\n")
        return path

    def train(self, python: str, dump: str, sock: str, env: dict,
              hide_debian_libs: bool) -> str:
        """Runs driver() with tprobe auto-starting its daemon on `sock`,
        then shuts that daemon down; returns the training's output."""
        env = dict(env, TPROBE_SOCKET=sock, TPROBE_AUTOSTART="1")
        argv = [python, self.driver(), dump]
        if hide_debian_libs:
            mounts = " && ".join(f"mount --bind /dev/null {lib}"
                                 for lib in debian_lib_files())
            # Inside, Debian's libprotobuf really cannot load.
            check = ("! python3 -c 'import ctypes; "
                     "ctypes.CDLL(\"libprotobuf.so.32\")' 2>/dev/null")
            argv = ["unshare", "-m", "sh", "-c",
                    f"mount --make-rprivate / && {mounts} && {check} && "
                    "exec \"$@\"", "sh"] + argv
        out = run(argv, env=env, timeout=900).stdout
        cli = os.path.join(os.path.dirname(python), "tprobe")
        if not os.access(cli, os.X_OK):
            cli = os.environ["TPROBE_CLI"]
        run([cli, "shutdown", "--socket", sock], env=env)
        return out

    def source_tree(self) -> str:
        """The same training with the source build (build/python and
        build/bin/tprobed), once."""
        dump = os.path.join(self.tmp, "source-dump")
        if not os.path.isdir(dump):
            env = clean_env(PYTHONPATH=python_path(),
                            TPROBED=os.environ["TPROBED"])
            self.train(sys.executable, dump,
                       os.path.join(self.tmp, "src.sock"), env, False)
        return dump

    def assertSameTree(self, wheel_dump: str) -> None:
        source = tree_files(self.source_tree())
        built = tree_files(wheel_dump)
        self.assertTrue(any(k.endswith("dump.json") for k in source), source)
        self.assertEqual(sorted(built), sorted(source))
        for name in source:
            self.assertEqual(built[name], source[name], name)

    def assertFromWheel(self, out: str, env: str) -> None:
        where = re.search(r"tprobe._C from (\S+)", out)
        self.assertIsNotNone(where, out)
        self.assertTrue(where[1].startswith(os.path.realpath(env) + os.sep),
                        where[1])

    def test_training_without_debian_libraries_writes_the_same_tree(self):
        env = self.torch_venv()
        dump = os.path.join(self.tmp, "wheel-dump")
        out = self.train(os.path.join(env, "bin", "python"), dump,
                         os.path.join(self.tmp, "w.sock"), clean_env(),
                         True)
        self.assertFromWheel(out, env)
        self.assertSameTree(dump)

    def test_the_same_with_mindspore_in_the_process(self) -> None:
        env = self.torch_venv()
        # MindSpore from the project venv, after the fresh venv's own
        # packages (torch and tprobe still come from the fresh venv).
        dump = os.path.join(self.tmp, "wheel-ms-dump")
        out = self.train(
            os.path.join(env, "bin", "python"), dump,
            os.path.join(self.tmp, "m.sock"),
            clean_env(TEST_MINDSPORE_SITE=sysconfig.get_paths()["purelib"]),
            True)
        self.assertIn("mindspore ", out)
        self.assertFromWheel(out, env)
        self.assertSameTree(dump)

    # --- as a node's daemon and around a job -------------------------------

    def test_env_tprobed_is_what_systemd_starts(self) -> None:
        # The unit's ExecStart for a wheel is ENV/bin/tprobed: the process
        # systemd started becomes the package's tprobed (Type=notify:
        # READY=1 names that same pid) and stops cleanly on SIGTERM.
        env = self.torch_venv()
        notify = os.path.join(self.tmp, "notify")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify)
        listener.settimeout(60)
        sock = os.path.join(self.tmp, "svc", "tprobed.sock")
        proc = subprocess.Popen(
            [os.path.join(env, "bin", "tprobed"), "--foreground", "--socket",
             sock], env=clean_env(NOTIFY_SOCKET=notify),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            message = listener.recv(4096).decode()
            self.assertEqual(message, f"READY=1\nMAINPID={proc.pid}")
            exe = os.readlink(f"/proc/{proc.pid}/exe")
            self.assertEqual(exe, os.path.realpath(os.path.join(
                self.package_dir(env), "bin", "tprobed")))
        finally:
            proc.terminate()
            self.assertEqual(proc.wait(timeout=60), 0)
            listener.close()

    def test_tprobe_run_serves_a_training(self) -> None:
        env = self.torch_venv()
        dump = os.path.join(self.tmp, "run-dump")
        out = run([os.path.join(env, "bin", "tprobe-run"), "--",
                   os.path.join(env, "bin", "python"), SCRIPT, "--tool",
                   "tprobe", "--config", CONFIG, "--dump-path", dump,
                   "--steps", "1"], env=clean_env(TMPDIR=self.tmp),
                  timeout=900).stdout
        with open(os.path.join(dump, "step0", "rank", "tprobe.json")) as f:
            self.assertIn('"complete": true', f.read(), out)

    def package_dir(self, env: str) -> str:
        return run([os.path.join(env, "bin", "python"), "-c",
                    "import tprobe, os; "
                    "print(os.path.dirname(os.path.realpath(tprobe.__file__)))"],
                   env=clean_env()).stdout.strip()

    # --- the other interpreters ------------------------------------------

    def test_cp39_and_cp312_wheels_install_and_run(self) -> None:
        for tag, name in (("cp39", "python3.9"), ("cp312", "python3.12")):
            python = run(["sh", "-c", f"{ROOT}/deploy/wheel.sh --which "
                          f"{name}"]).stdout.strip()
            env = self.venv(tag, python)
            self.install(env, tag)
            out = run([os.path.join(env, "bin", "python"), "-c",
                       "import tprobe._C, os; "
                       "print(os.path.realpath(tprobe._C.__file__))"],
                      env=clean_env()).stdout
            self.assertTrue(out.strip().startswith(os.path.realpath(env)),
                            out)
            helped = run([os.path.join(env, "bin", "tprobe"), "--help"],
                         env=clean_env()).stdout
            self.assertIn("compare", helped)
            helped = run([os.path.join(env, "bin", "tprobed"), "--help"],
                         env=clean_env()).stdout
            self.assertIn("--socket", helped)


if __name__ == "__main__":
    unittest.main()
