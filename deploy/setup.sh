#!/usr/bin/env bash
# Installs what tprobe needs from Debian 12's archive (only what is missing),
# creates the project virtual environment .venv (deploy/venv.sh: pinned
# torch 2.13.0, numpy, msprobe as a test reference), then configures and
# builds tprobe into ./build and puts it into .venv.
#
#   deploy/setup.sh [--no-build | --runtime]
#
# --runtime builds only what a training runs: tprobed, the tprobe CLI,
# libtprobe and the Python module (the quick start); without it everything
# is built, the tests and benchmarks too (deploy/test.sh). Where ccache is
# installed (it is one of the packages below) compiled objects are reused.
#
# Safe to re-run: apt is only called for packages that are not installed,
# pip only when a pin of deploy/requirements.txt is not satisfied, and the
# build is incremental. Nothing is written outside the repository but the
# apt packages.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config clang-format ccache
  libboost-dev libprotobuf-dev protobuf-compiler libspdlog-dev libfmt-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-torch
  python3-venv
  # msprobe 8.3.3's imports on /usr/bin/python3, the live reference of the
  # 8.3.3 golden test (einops, which Debian lacks, is in .venv/msprobe833)
  python3-pandas python3-matplotlib python3-tqdm python3-openpyxl
  # yaml.safe_load, which tprobe compare's mapping files are read as
  # (tests/tools/compare/mapping_file_test.cc runs it)
  python3-yaml
  clang libclang-rt-14-dev  # libFuzzer (tests/fuzz)
)
# Only the test suite needs these: headless Chromium opens `tprobe compare`'s
# report.html (tests/python/pytorch/compare_test.py; 113 MB to fetch, about
# a minute); debootstrap and qemu-user-static make and run the Debian roots
# (bullseye, arm64 bookworm) the binary wheels are proved in
# (tests/python/pytorch/binary_wheel_test.py); valgrind counts a step's
# instructions (bench/instructions.py, tests/python/pytorch/instructions_test.py).
case "${1:-}" in
  "") packages+=(chromium debootstrap qemu-user-static binfmt-support valgrind) ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "[setup] all packages present"
fi

targets=()
case "${1:-}" in
  "") ;;
  --no-build) exit 0 ;;
  --runtime) targets=(--target tprobed tprobe_cli tprobe tprobe_python) ;;
  *)
    echo "usage: deploy/setup.sh [--no-build | --runtime]" >&2
    exit 2
    ;;
esac

# The venv comes before the configure step: the tests that need it are
# registered only when .venv/bin/python exists (TPROBE_VENV_PYTHON).
deploy/venv.sh build

echo "[setup] building ${targets[*]:+${targets[*]:1} }into ./build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" "${targets[@]}"
echo "[setup] done: build/bin/tprobed, build/bin/tprobe, build/lib/libtprobe.so;" \
     ".venv/bin/python has torch 2.13.0 and tprobe"
