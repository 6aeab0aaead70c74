"""deploy/wheel.sh: manylinux wheels for x86_64 and aarch64, proved on the
systems people train on.

The script builds the cp311 wheels for x86_64 and aarch64 and the cp39
wheel for x86_64 (its caches, the toolchain, protobuf-lite and the Debian
roots, under $TPROBE_WHEEL_CACHE). Each wheel is checked as a shipped
artefact: a manylinux tag of at most 2_28 that auditwheel agrees with; every
ELF exports only tprobe:: symbols or PyInit__C and needs only glibc's
libraries (and the wheel's libtprobe); at most 15 MB.

- x86_64 on glibc 2.31: in a Debian 11 (bullseye) root, a venv installs the
  cp39 wheel from its file alone; tprobe._C imports, `tprobe --help` and
  `tprobed --help` run, and the C++ example, built against the wheel's own
  include/ and lib/, writes through the auto-started tprobed a tree equal
  to the source build's.
- aarch64 under qemu: in an arm64 Debian 12 root, the same with the cp311
  aarch64 wheel; the tree equals the x86_64 one, and `tprobe compare` (that
  tree against the source build's) and `tprobe import` run there.
- beside the frameworks: the x86_64 cp311 wheel goes into a fresh venv
  after torch 2.13.0 (the wheel on this machine's disk), and a real PyTorch
  training dumps through the auto-started tprobed in a private mount
  namespace where Debian's libprotobuf, libspdlog and libfmt are /dev/null:
  its tree is the source build's (stack.json's torch folder aside). Again
  with MindSpore imported into the process. The environment's bin/tprobed
  is what the systemd unit starts, and bin/tprobe-run serves a training.

Each root runs in a mount namespace of its own (unshare -m): the proc and
dev mounts inside it end with its processes, whatever happens to the test.
Needs root, debootstrap, qemu-user-static and binfmt_misc (deploy/setup.sh).
Runs in the project venv.
"""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (ROOT, fresh_dir, python_path,  # noqa: E402
                             tprobed_binary)

SCRIPT = os.path.join(ROOT, "examples", "train_tiny_gpt.py")
CONFIG = os.path.join(ROOT, "tests", "data", "golden", "mix", "config.json")
EXAMPLE = os.path.join(ROOT, "examples", "example.cc")
CACHE = os.environ.get("TPROBE_WHEEL_CACHE",
                       os.path.join(ROOT, "build", "wheel-cache"))
MIRROR = "http://deb.debian.org/debian"
# (debian arch, suite): the wheel each root proves.
ROOTS = {"x86_64": ("amd64", "bullseye", "cp39"),
         "aarch64": ("arm64", "bookworm", "cp311")}
WHEELS = (("x86_64", "cp311"), ("x86_64", "cp39"), ("aarch64", "cp311"))
# The libraries a self-contained wheel must not need, as Debian installs
# them (the files the sonames point at).
DEBIAN_LIBS = ("libprotobuf.so.32", "libprotobuf-lite.so.32",
               "libspdlog.so.1.10", "libfmt.so.9")
ALLOWED_NEEDED = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|"
    r"ld-linux-(x86-64|aarch64)\.so\.[12]|libtprobe\.so\.\d+)$")
ALLOWED_EXPORT = re.compile(
    r"^(_Z(N|NK|NR|NO|NKR|NKO|TIN|TSN|TVN|TTN|GVN|TWN|THN)6tprobe|"
    r"PyInit__C$)")
MAX_WHEEL_BYTES = 15 * 1000 * 1000
BINFMT = "/proc/sys/fs/binfmt_misc"


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


def ensure_binfmt() -> bool:
    """qemu-aarch64 registered with binfmt_misc (F: the interpreter is
    opened now, so it runs inside a chroot too). Returns whether this call
    mounted binfmt_misc (then the caller unmounts it)."""
    mounted = False
    if not os.path.exists(os.path.join(BINFMT, "register")):
        run(["mount", "-t", "binfmt_misc", "binfmt_misc", BINFMT])
        mounted = True
    if not os.path.exists(os.path.join(BINFMT, "qemu-aarch64")):
        with open("/usr/lib/binfmt.d/qemu-aarch64.conf") as f:
            line = f.read().strip()
        with open(os.path.join(BINFMT, "register"), "w") as f:
            f.write(line)
    return mounted


def root_tarball(arch: str):
    """The cached tarball of the Debian root for `arch`, or a Popen that
    makes it (debootstrap, then tar; only the first run pays)."""
    deb_arch, suite, _ = ROOTS[arch]
    tarball = os.path.join(CACHE, "roots", f"{suite}-{deb_arch}.tar")
    if os.path.exists(tarball):
        return tarball, None
    work = os.path.join(CACHE, "roots", f"{suite}-{deb_arch}")
    script = (f"rm -rf {work} && mkdir -p {work} && "
              f"debootstrap --variant=minbase --arch={deb_arch} "
              f"--include=python3,python3-venv {suite} {work} {MIRROR} && "
              f"tar -C {work} -cf {tarball}.part . && "
              f"mv {tarball}.part {tarball} && rm -rf {work}")
    with open(os.path.join(CACHE, "roots", f"{suite}-{deb_arch}.log"),
              "w") as log:
        return tarball, subprocess.Popen(["sh", "-c", script], stdout=log,
                                         stderr=subprocess.STDOUT)


def in_root(root: str, script: str, timeout: int = 1800) -> str:
    """Runs the sh `script` chrooted into `root`, in a mount namespace of
    its own with proc and dev mounted; returns its output."""
    setup = (f"mount -t proc proc {root}/proc && "
             f"mount --rbind /dev {root}/dev && "
             f"exec chroot {root} /usr/bin/env -i PATH=/usr/bin:/bin "
             f"HOME=/w LANG=C.UTF-8 /bin/sh -ec \"$0\"")
    return run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                setup, script], timeout=timeout).stdout


class BinaryWheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-bwheel-")
        cls.dist = os.path.join(cls.tmp, "dist")
        os.makedirs(os.path.join(CACHE, "roots"), exist_ok=True)
        cls.unmount_binfmt = ensure_binfmt()
        # The roots are made while the wheels build.
        cls.tarballs = {}
        makers = []
        for arch in ROOTS:
            cls.tarballs[arch], maker = root_tarball(arch)
            if maker:
                makers.append(maker)
        env = clean_env(TPROBE_WHEEL_CACHE=CACHE)
        wheel_sh = os.path.join(ROOT, "deploy", "wheel.sh")
        try:
            cls.build = run([wheel_sh, "--arch", "x86_64,aarch64", "--out",
                             cls.dist, "python3.11"], env=env, cwd=cls.tmp)
            cls.build39 = run([wheel_sh, "--arch", "x86_64", "--out",
                               cls.dist, "python3.9"], env=env, cwd=cls.tmp)
        finally:
            for maker in makers:
                maker.wait(timeout=1800)
        for done in (cls.build, cls.build39):
            print("".join(line + "\n" for line in done.stdout.splitlines()
                          if line.startswith("[wheel]")), file=sys.stderr)
        cls.wheels = {}
        for path in glob.glob(os.path.join(cls.dist, "tprobe-*.whl")):
            parts = os.path.basename(path)[:-4].split("-")
            arch = "aarch64" if parts[4].endswith("aarch64") else "x86_64"
            cls.wheels[(arch, parts[2])] = path
        cls.venvs = {}

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.unmount_binfmt:
            subprocess.run(["umount", BINFMT])

    def wheel(self, arch: str, tag: str) -> str:
        self.assertIn((arch, tag), self.wheels,
                      self.build.stdout + self.build39.stdout)
        return self.wheels[(arch, tag)]

    def unpacked(self, arch: str, tag: str) -> str:
        folder = os.path.join(self.tmp, f"unpacked-{arch}-{tag}")
        if not os.path.isdir(folder):
            with zipfile.ZipFile(self.wheel(arch, tag)) as z:
                z.extractall(folder)
        return folder

    # --- the wheels as artefacts -----------------------------------------

    def test_every_wheel_is_manylinux_2_28_or_lower_and_small(self) -> None:
        auditwheel = os.path.join(CACHE, "tools", "bin", "auditwheel")
        for arch, tag in WHEELS:
            path = self.wheel(arch, tag)
            name = os.path.basename(path)
            match = re.search(rf"-{tag}-{tag}-manylinux_(\d+)_(\d+)_{arch}"
                              r"\.whl$", name)
            self.assertIsNotNone(match, name)
            self.assertLessEqual((int(match[1]), int(match[2])), (2, 28),
                                 name)
            self.assertLessEqual(os.path.getsize(path), MAX_WHEEL_BYTES, name)
            shown = run([auditwheel, "show", path]).stdout
            self.assertIn(f"manylinux_{match[1]}_{match[2]}_{arch}", shown)

    def test_every_elf_exports_tprobe_alone_and_needs_only_glibc(self):
        for arch, tag in WHEELS:
            found = elves(self.unpacked(arch, tag))
            names = {os.path.basename(f) for f in found}
            for expected in ("tprobed", "tprobe", "libtprobe.so.2"):
                self.assertIn(expected, names, (arch, tag))
            modules = [n for n in names if n.startswith("_C.")]
            self.assertEqual(
                modules, [f"_C.cpython-{tag[2:]}-{arch}-linux-gnu.so"])
            for elf in found:
                exported = run(["nm", "-D", "--defined-only",
                                elf]).stdout.split("\n")
                leaked = [line for line in exported if line and
                          not ALLOWED_EXPORT.match(line.split()[-1])]
                self.assertEqual(leaked[:3], [], elf)
                dynamic = run(["readelf", "-d", elf]).stdout
                needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
                outside = [n for n in needed if not ALLOWED_NEEDED.match(n)]
                self.assertEqual(outside, [], elf)
                self.assertIn("libc.so.6", needed, elf)

    # --- the example in Debian roots: bullseye and arm64 under qemu ------

    def example_config(self, folder: str, dump: str) -> str:
        with open(os.path.join(ROOT, "examples", "config_l0.json")) as f:
            config = json.load(f)
        config.update(dump_path=dump, level="mix")
        path = os.path.join(folder, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        return path

    def source_example_tree(self) -> str:
        """tprobe-example of the source build (build/bin), once."""
        dump = os.path.join(self.tmp, "source-example")
        if not os.path.isdir(dump):
            example = os.path.join(os.path.dirname(tprobed_binary()),
                                   "tprobe-example")
            run([example, "--config", self.example_config(self.tmp, dump),
                 "--socket", os.path.join(self.tmp, "ex.sock")],
                env=clean_env(), timeout=600)
        return dump

    def root_run(self, arch: str) -> str:
        """In a fresh copy of the Debian root for `arch`: a venv with the
        wheel, its _C, CLI and daemon, and the example built against the
        wheel writing /w/dump. Returns the root (its /w/dump written)."""
        _, suite, tag = ROOTS[arch]
        root = os.path.join(self.tmp, f"root-{arch}")
        if os.path.isdir(os.path.join(root, "w", "dump")):
            return root
        os.makedirs(root)
        run(["tar", "-C", root, "-xf", self.tarballs[arch]])
        work = os.path.join(root, "w")
        os.makedirs(work)
        wheel = self.wheel(arch, tag)
        shutil.copy(wheel, work)
        # The example, built with the wheels' toolchain against the wheel's
        # own header and library.
        package = os.path.join(self.unpacked(arch, tag), "tprobe")
        run([os.path.join(CACHE, "toolchain", f"{arch}-c++"), "-std=c++17",
             "-O2", EXAMPLE, "-I", os.path.join(package, "include"),
             os.path.join(package, "lib", "libtprobe.so.2"), "-o",
             os.path.join(work, "example")])
        self.example_config(work, "/w/dump")
        shutil.copytree(self.source_example_tree(),
                        os.path.join(work, "source"))
        out = in_root(root, f"""
cd /w
python3 -m venv /w/venv
/w/venv/bin/python -m pip install -q --no-index --no-deps \
  /w/{os.path.basename(wheel)}
/w/venv/bin/python -c 'import tprobe._C, os, platform
print("_C", os.path.realpath(tprobe._C.__file__), platform.machine())'
/w/venv/bin/tprobe --help | grep -q compare
/w/venv/bin/tprobed --help | grep -q -- --socket
/w/venv/bin/tprobe import --help | grep -q -- --task
lib=$(/w/venv/bin/python -c 'import tprobe, os
print(os.path.dirname(tprobe.__file__))')/lib
LD_LIBRARY_PATH=$lib /w/example --config /w/config.json --socket /w/t.sock
/w/venv/bin/tprobe shutdown --socket /w/t.sock
/w/venv/bin/tprobe compare /w/dump /w/source -o /w/compared > /w/compare.out
mkdir /w/empty
/w/venv/bin/tprobe import --task statistics /w/empty /w/imported \
  > /w/import.out 2>&1 || echo "import exited $?"
""")
        self.assertRegex(out, rf"_C /w/venv/lib/python3\.\d+/site-packages/"
                              rf"tprobe/_C\.\S+ {arch}")
        return root

    def test_x86_64_cp39_wheel_on_glibc_2_31(self) -> None:
        root = self.root_run("x86_64")
        with open(os.path.join(root, "etc", "debian_version")) as f:
            self.assertTrue(f.read().startswith("11."))
        self.assertEqual(tree_files(os.path.join(root, "w", "dump")),
                         tree_files(self.source_example_tree()))

    def test_aarch64_cp311_wheel_under_qemu(self) -> None:
        root = self.root_run("aarch64")
        arm = tree_files(os.path.join(root, "w", "dump"))
        self.assertTrue(any(k.endswith("dump.json") for k in arm), arm)
        self.assertEqual(arm, tree_files(self.source_example_tree()))
        # The x86_64 wheel's tree, when its root ran too, is the same.
        x86 = os.path.join(self.tmp, "root-x86_64", "w", "dump")
        if os.path.isdir(x86):
            self.assertEqual(arm, tree_files(x86))
        # compare there: the aarch64 tree against the source build's.
        with open(os.path.join(root, "w", "compare.out")) as f:
            self.assertIn("every row passes", f.read())
        self.assertIn("report.html",
                      os.listdir(os.path.join(root, "w", "compared")))
        # An empty source: import walks it and says what it lacks.
        with open(os.path.join(root, "w", "import.out")) as f:
            self.assertIn("no statistic.csv found", f.read())

    # --- cp311 where Debian's libraries cannot load -------------------------

    def venv(self, key: str, python: str) -> str:
        if key not in self.venvs:
            env = os.path.join(self.tmp, "venv-" + key)
            run([python, "-m", "venv", env], env=clean_env())
            self.venvs[key] = env
        return self.venvs[key]

    def torch_venv(self) -> str:
        """A fresh venv with torch 2.13.0 (from the wheel on disk), then
        the x86_64 cp311 wheel from its file alone."""
        env = self.venv("cp311-torch", sys._base_executable)
        if not os.path.exists(os.path.join(env, ".ready")):
            run([os.path.join(env, "bin", "python"), "-m", "pip", "install",
                 "-q", "torch==2.13.0"], env=clean_env())
            run([os.path.join(env, "bin", "python"), "-m", "pip", "install",
                 "-q", "--no-index", "--no-deps",
                 self.wheel("x86_64", "cp311")], env=clean_env())
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
                            TPROBED=tprobed_binary())
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


if __name__ == "__main__":
    unittest.main()
