"""Builds tprobe._C and tprobed with the repository's CMake project and puts
both into the package (tprobe/_C*.so, tprobe/bin/tprobed).

TPROBE_CMAKE_BUILD_DIR names a build tree to use (default: a directory under
setuptools' build_temp); the repository root is two levels up.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = os.environ.get("TPROBE_CMAKE_BUILD_DIR") or os.path.join(
            os.path.abspath(self.build_temp), "cmake")
        configure = ["cmake", "-S", ROOT, "-B", build_dir,
                     f"-DPython3_EXECUTABLE={sys.executable}",
                     "-DTPROBE_BUILD_TESTS=OFF",
                     "-DTPROBE_BUILD_BENCHMARKS=OFF"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_dir, "--target",
                               "tprobe_python", "tprobed", "--parallel",
                               str(os.cpu_count() or 1)])
        ext_path = os.path.abspath(self.get_ext_fullpath(ext.name))
        target = os.path.dirname(ext_path)
        built = glob.glob(os.path.join(build_dir, "python", "tprobe",
                                       "_C*.so"))
        if not built:
            raise RuntimeError(f"no tprobe/_C*.so under {build_dir}/python")
        os.makedirs(os.path.join(target, "bin"), exist_ok=True)
        shutil.copy2(built[0], ext_path)
        shutil.copy2(os.path.join(build_dir, "bin", "tprobed"),
                     os.path.join(target, "bin", "tprobed"))


setup(ext_modules=[Extension("tprobe._C", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
