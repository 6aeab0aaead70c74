#!/usr/bin/env bash
# Builds the binary wheels of tprobe, one per architecture and interpreter:
#
#   deploy/wheel.sh [--arch x86_64,aarch64] [--out DIR] [PYTHON...]
#   deploy/wheel.sh --which PYTHON     prints the interpreter PYTHON names
#
# PYTHON is an interpreter to build for: a path or a command name
# (python3.9 ... python3.13; one pyenv has but does not activate is found in
# pyenv's versions). Default: the python3 on PATH. --arch: the
# architectures, comma-separated (default x86_64). The wheels go to DIR
# (default dist/).
#
# Each wheel holds the tprobe package with tprobe._C, libtprobe (lib/, with
# the headers in include/), tprobed and the tprobe CLI (bin/, on the
# environment's PATH once installed). One pinned toolchain builds every
# wheel on this x86_64 machine: `zig c++` (PyPI's ziglang, clang with
# libc++) for the target <arch>-linux-gnu.2.28, so no binary needs a glibc
# symbol newer than 2.28, and libc++ is linked statically with its symbols
# hidden: the wheels need neither libstdc++ nor libgcc_s. protobuf-lite and
# yaml-cpp (Debian's sources of the installed protoc's and
# libyaml-cpp-dev's releases, built once per arch with the same toolchain),
# spdlog and fmt are linked in with their symbols hidden
# (TPROBE_SELF_CONTAINED, CMakeLists.txt). The host's /usr/include is kept
# out of the compile (its glibc headers are newer than the target's): only
# the boost, google, spdlog, fmt and CLI headers are seen, through a folder
# of links, and nlohmann's come from PyPI's nlohmann-json (Debian's 3.11.2
# does not build with libc++ >= 19). The aarch64 tprobe._C is compiled
# against the same interpreter's headers and renamed to aarch64's suffix.
#
# Each wheel is checked: every ELF exports only tprobe:: symbols (libtprobe)
# or PyInit__C (tprobe._C) and needs only glibc's libraries and libtprobe;
# it is tagged with the manylinux tag `auditwheel show` agrees with.
#
# Needs what deploy/setup.sh installs (cmake, ninja, protoc, the boost,
# spdlog, fmt, CLI11 and yaml-cpp packages), Debian's source packages (a
# deb-src entry is added to apt when there is none) and PyPI: the tool venv
# (ziglang, auditwheel, wheel, nlohmann-json) and one build venv per
# interpreter (scikit-build-core, pybind11), all pinned below, under
# $TPROBE_WHEEL_CACHE (default build/wheel-cache). The first build of an
# arch pays for zig's libc++, protobuf-lite and yaml-cpp (about 1, 1-3 and
# 1 min); the project is compiled once per arch, and each further
# interpreter only rebuilds tprobe._C. Timings: docs/development.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# The pinned toolchain and build tools.
TOOL_PINS=(ziglang==0.17.0 auditwheel==6.8.2 wheel==0.48.0
  nlohmann-json==3.12.0)
BUILD_PINS=(pip==25.0.1 scikit-build-core==1.1.2 pybind11==3.1.0)
GLIBC=2.28

out=dist
pythons=()
arches=x86_64
which_only=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --which) which_only=1; shift ;;
    --out | --arch)
      [[ $# -ge 2 ]] || { echo "deploy/wheel.sh: $1 needs a value" >&2; exit 2; }
      [[ $1 == --out ]] && out=$2 || arches=$2
      shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --arch=*) arches=${1#--arch=}; shift ;;
    -*) echo "deploy/wheel.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    *) pythons+=("$1"); shift ;;
  esac
done
((${#pythons[@]})) || pythons=(python3)
IFS=, read -ra arch_list <<<"$arches"
for arch in "${arch_list[@]}"; do
  case $arch in
    x86_64 | aarch64) ;;
    *) echo "deploy/wheel.sh: unknown arch '$arch' (x86_64, aarch64)" >&2; exit 2 ;;
  esac
done

cache=${TPROBE_WHEEL_CACHE:-$root/build/wheel-cache}
started=$SECONDS

log() { echo "[wheel] $*"; }
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
deb_src=/etc/apt/sources.list.d/tprobe-deb-src.sources

# An interpreter that runs: as given, else pyenv's installed version of it.
resolve_python() {
  local py=$1 found
  if "$py" -c 'import sys' >/dev/null 2>&1; then
    command -v "$py" || echo "$py"
    return
  fi
  if [[ $py =~ ^python(3\.[0-9]+)$ ]] && command -v pyenv >/dev/null; then
    found=$(ls -d "$(pyenv root)/versions/${BASH_REMATCH[1]}".*/bin/"$py" \
      2>/dev/null | sort -V | tail -1)
    if [[ -n $found ]]; then
      echo "$found"
      return
    fi
  fi
  echo "deploy/wheel.sh: '$py' is not an interpreter that runs here" >&2
  exit 2
}

# A venv at $1 made by interpreter $2 with the packages $3...; made once
# (.ready marks one whose packages all installed).
make_venv() {
  local venv=$1 py=$2
  shift 2
  if [[ ! -f $venv/.ready ]]; then
    log "venv $venv" >&2
    rm -rf "$venv"
    "$py" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" >&2
    touch "$venv/.ready"
  fi
}

# The toolchain for arch $1 in $cache/toolchain: compiler wrappers, a CMake
# toolchain file, and the folder of the only host headers the build sees.
toolchain() {
  local arch=$1 tc=$cache/toolchain zig site
  make_venv "$cache/tools" /usr/bin/python3 "${TOOL_PINS[@]}"
  site=$("$cache/tools/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  zig=$site/ziglang/zig
  mkdir -p "$tc/headers"
  for dir in boost google spdlog fmt CLI; do
    ln -sfn "/usr/include/$dir" "$tc/headers/$dir"
  done
  ln -sfn "$site/nlohmann_json/include/nlohmann" "$tc/headers/nlohmann"
  for tool in cc c++; do
    printf '#!/bin/sh\nZIG_GLOBAL_CACHE_DIR=%s exec %s %s -target %s "$@"\n' \
      "$cache/zig-cache" "$zig" "$tool" "$arch-linux-gnu.$GLIBC" \
      >"$tc/$arch-$tool"
    chmod +x "$tc/$arch-$tool"
  done
  # The host's /usr/include counts as the compiler's own folder, so CMake
  # never passes it (Boost's, protobuf's and the config packages' include
  # folder); headers/ stands in for it.
  cat >"$tc/project.cmake" <<'EOF'
list(APPEND CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
list(APPEND CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
EOF
  # Binaries are stripped by the linker (-s): the host's strip knows no
  # aarch64. CMAKE_LIBRARY_ARCHITECTURE finds the host's header-only config
  # packages (spdlog, fmt, nlohmann_json). Boost 1.74's Asio needs telling
  # that libc++ has coroutines and invoke_result.
  cat >"$tc/$arch.cmake" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $arch)
set(CMAKE_C_COMPILER $tc/$arch-cc)
set(CMAKE_CXX_COMPILER $tc/$arch-c++)
set(CMAKE_STRIP /bin/true)
set(CMAKE_LIBRARY_ARCHITECTURE $(gcc -print-multiarch))
set(CMAKE_C_FLAGS_INIT "-isystem $tc/headers")
set(CMAKE_CXX_FLAGS_INIT "-isystem $tc/headers -DBOOST_ASIO_HAS_CO_AWAIT=1 -DBOOST_ASIO_HAS_STD_INVOKE_RESULT=1")
set(CMAKE_EXE_LINKER_FLAGS_INIT -s)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -s)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -s)
EOF
}

# Debian's source of package $1 (release $2) into $cache/src, downloaded
# once: a deb-src entry is added to apt when there is none.
debian_source() {
  local package=$1 version=$2 src=$cache/src
  mkdir -p "$src"
  if ls "$src/${package}_$version".orig.tar.* >/dev/null 2>&1; then
    return
  fi
  if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list \
      /etc/apt/sources.list.d/; then
    log "adding Debian's source packages to apt ($deb_src)" >&2
    printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" \
      "Suites: $(. /etc/os-release && echo "$VERSION_CODENAME")" \
      "Components: main" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
      $sudo tee "$deb_src" >/dev/null
    $sudo apt-get update -qq >&2
  fi
  if ! (cd "$src" && apt-get source --download-only -qq "$package") >&2; then
    echo "deploy/wheel.sh: 'apt-get source $package' failed (see above)" >&2
    exit 1
  fi
}

# libprotobuf-lite.a of the installed protoc's release for arch $1, built
# with the toolchain once.
protobuf_lite() {
  local arch=$1 version src=$cache/src lib
  version=$(protoc --version | awk '{print $2}')
  lib=$cache/protobuf-$version-$arch/libprotobuf-lite.a
  if [[ -f $lib ]]; then
    echo "$lib"
    return
  fi
  log "building protobuf-lite $version for $arch (once; cached in $cache)" >&2
  debian_source protobuf "$version"
  rm -rf "$src/protobuf-$version" "$src/build-$arch"
  tar -xf "$src"/protobuf_"$version".orig.tar.* -C "$src"
  /usr/bin/cmake -S "$src/protobuf-$version" -B "$src/build-$arch" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="$cache/toolchain/$arch.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_CXX_FLAGS="-fvisibility=hidden -fvisibility-inlines-hidden" \
    -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_WITH_ZLIB=OFF -DBUILD_SHARED_LIBS=OFF >&2
  ninja -C "$src/build-$arch" libprotobuf-lite >&2
  mkdir -p "$(dirname "$lib")"
  cp "$src/build-$arch/libprotobuf-lite.a" "$lib"
  rm -rf "$src/protobuf-$version" "$src/build-$arch"
  echo "$lib"
}

# A static yaml-cpp of the installed libyaml-cpp-dev's release for arch $1,
# built with the toolchain once and installed into a prefix of its own;
# prints the folder of its CMake package (yaml-cpp_DIR).
yaml_cpp() {
  local arch=$1 version upstream src=$cache/src prefix
  version=$(dpkg-query -W -f='${Version}' libyaml-cpp-dev | sed 's/-[^-]*$//')
  upstream=${version%%+*}
  prefix=$cache/yaml-cpp-$upstream-$arch
  if [[ ! -f $prefix/lib/libyaml-cpp.a ]]; then
    log "building yaml-cpp $upstream for $arch (once; cached in $cache)" >&2
    debian_source yaml-cpp "$version"
    rm -rf "$src/yaml-cpp-yaml-cpp-$upstream" "$src/build-$arch" "$prefix"
    tar -xf "$src/yaml-cpp_$version".orig.tar.* -C "$src"
    /usr/bin/cmake -S "$src/yaml-cpp-yaml-cpp-$upstream" -B "$src/build-$arch" \
      -G Ninja -DCMAKE_TOOLCHAIN_FILE="$cache/toolchain/$arch.cmake" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
      -DCMAKE_CXX_FLAGS="-fvisibility=hidden -fvisibility-inlines-hidden" \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
      -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
      -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF >&2
    ninja -C "$src/build-$arch" install >&2
    rm -rf "$src/yaml-cpp-yaml-cpp-$upstream" "$src/build-$arch"
  fi
  find "$prefix" -name yaml-cpp-config.cmake -printf '%h\n'
}

# Fails unless every ELF under $1 exports only tprobe:: or PyInit__C and
# needs only glibc's libraries (or the wheel's own libtprobe).
check_elves() {
  local dir=$1 bad=0 elf exports needed
  while IFS= read -r elf; do
    exports=$(nm -D --defined-only "$elf" 2>/dev/null | awk '{print $NF}' |
      grep -Ev '^(_Z(N|NK|NR|NO|NKR|NKO|TIN|TSN|TVN|TTN|GVN|TWN|THN)6tprobe|PyInit__C$)' |
      head -3 || true)
    if [[ -n $exports ]]; then
      echo "deploy/wheel.sh: $elf exports $exports" >&2
      bad=1
    fi
    needed=$(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
      grep -Ev '^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-(x86-64|aarch64)\.so\.[12]|libtprobe\.so\.[0-9]+)$' || true)
    if [[ -n $needed ]]; then
      echo "deploy/wheel.sh: $elf needs $needed" >&2
      bad=1
    fi
  done < <(find "$dir" -type f \( -name '*.so*' -o -perm -u+x \) \
    -exec sh -c 'head -c4 "$1" | grep -q ELF' sh {} \; -print)
  return $bad
}

if ((which_only)); then
  for name in "${pythons[@]}"; do resolve_python "$name"; done
  exit 0
fi
mkdir -p "$out" "$cache"
out=$(cd "$out" && pwd)
tools=$cache/tools/bin
for arch in "${arch_list[@]}"; do
  toolchain "$arch"
  protobuf=$(protobuf_lite "$arch")
  yaml_cpp_dir=$(yaml_cpp "$arch")
  for name in "${pythons[@]}"; do
    py=$(resolve_python "$name")
    tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
    venv=$cache/venv-$tag
    make_venv "$venv" "$py" "${BUILD_PINS[@]}"
    t0=$SECONDS
    log "$arch $tag: building ($py)"
    tmp=$cache/out-$arch-$tag
    rm -rf "$tmp"
    # One build folder per arch: the second interpreter rebuilds _C alone.
    "$venv/bin/python" -m pip wheel "$root" --no-build-isolation --no-deps \
      --disable-pip-version-check -q -w "$tmp" \
      -C build-dir="$cache/build-$arch" \
      -C cmake.define.CMAKE_TOOLCHAIN_FILE="$cache/toolchain/$arch.cmake" \
      -C cmake.define.CMAKE_PROJECT_INCLUDE="$cache/toolchain/project.cmake" \
      -C cmake.define.TPROBE_CCACHE=OFF \
      -C cmake.define.TPROBE_SELF_CONTAINED=ON \
      -C cmake.define.TPROBE_PROTOBUF_LITE="$protobuf" \
      -C cmake.define.Protobuf_LIBRARY="$protobuf" \
      -C cmake.define.Protobuf_LITE_LIBRARY="$protobuf" \
      -C cmake.define.yaml-cpp_DIR="$yaml_cpp_dir" \
      -C cmake.define.pybind11_DIR="$("$venv/bin/python" -m pybind11 --cmakedir)"
    wheel=$(ls "$tmp"/tprobe-*.whl)
    unpacked=$tmp/unpacked
    "$tools/python" -m wheel unpack -d "$unpacked" "$wheel" >/dev/null
    rm -f "$wheel"
    if [[ $arch != x86_64 ]]; then
      for module in "$unpacked"/*/tprobe/_C.*x86_64-linux-gnu.so; do
        mv "$module" "${module/x86_64-linux-gnu/$arch-linux-gnu}"
      done
    fi
    check_elves "$unpacked"
    "$tools/python" -m wheel pack -d "$tmp" "$unpacked"/tprobe-* >/dev/null
    # auditwheel reads the arch from the tag: linux_<arch> first.
    wheel=$(ls "$tmp"/tprobe-*.whl)
    if [[ $arch != x86_64 ]]; then
      "$tools/python" -m wheel tags --remove --platform-tag "linux_$arch" \
        "$wheel" >/dev/null
      wheel=$(ls "$tmp"/tprobe-*.whl)
    fi
    platform=$("$tools/auditwheel" show "$wheel" |
      grep -oE "manylinux_[0-9]+_[0-9]+_$arch" | head -1 || true)
    if [[ -z $platform ]]; then
      "$tools/auditwheel" show "$wheel" >&2
      echo "deploy/wheel.sh: auditwheel found no manylinux tag for $wheel" >&2
      exit 1
    fi
    "$tools/python" -m wheel tags --remove --platform-tag "$platform" \
      "$wheel" >/dev/null
    wheel=$(ls "$tmp"/tprobe-*"$platform".whl)
    mv -f "$wheel" "$out/"
    rm -rf "$tmp"
    log "$arch $tag: $out/$(basename "$wheel") ($(du -h "$out/$(basename "$wheel")" | cut -f1), $((SECONDS - t0)) s)"
  done
done
log "done in $((SECONDS - started)) s"
