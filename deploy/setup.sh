#!/usr/bin/env bash
# Installs what tprobe needs from Debian 12's archive (only what is missing),
# then configures and builds it into ./build.
#
#   deploy/setup.sh [--no-build]
#
# Safe to re-run: apt is only called for packages that are not installed,
# and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libboost-dev libprotobuf-dev protobuf-compiler libspdlog-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-torch
  python3-venv
)
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

# --- MindSpore ------------------------------------------------------------
# The virtual environment .venv holds MindSpore (CPU) and, as a test
# reference, msprobe, pinned in deploy/requirements.txt. torch goes in
# first, alone, so that nothing pulls another torch build.
# TPROBE_SKIP_VENV=1 leaves it out.
if [[ "${TPROBE_SKIP_VENV:-0}" != 1 ]]; then
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  pin() { grep -E "^$1==" deploy/requirements.txt; }
  .venv/bin/pip install -q "$(pin torch)"
  .venv/bin/pip install -q "$(pin mindspore)" "$(pin numpy)" "$(pin pandas)" \
    "$(pin mindstudio-probe)"
  echo "[setup] .venv: $(.venv/bin/python -c 'import mindspore; print("mindspore", mindspore.__version__)' 2>/dev/null)"
fi

[[ "${1:-}" == "--no-build" ]] && exit 0

echo "[setup] building into ./build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
if [[ -x client/python/install.sh ]]; then
  client/python/install.sh build
fi
echo "[setup] done: build/bin/tprobed, build/bin/tprobe, build/lib/libtprobe.so"
