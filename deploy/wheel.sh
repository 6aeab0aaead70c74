#!/usr/bin/env bash
# Builds self-contained binary wheels of tprobe, one per interpreter:
#
#   deploy/wheel.sh [--out DIR] [PYTHON...]
#   deploy/wheel.sh --which PYTHON     prints the interpreter PYTHON names
#
# PYTHON is an interpreter to build for: a path or a command name
# (python3.9 ... python3.13; one pyenv has but does not activate is found in
# pyenv's versions). Default: the python3 on PATH. The wheels go to DIR
# (default dist/).
#
# Each wheel holds the tprobe package with tprobe._C, libtprobe, tprobed and
# the tprobe CLI (bin/, on the environment's PATH once installed). They are
# linked so that they need nothing outside the wheel but glibc, libm,
# libstdc++ and libgcc_s: protobuf's lite runtime, spdlog and fmt are linked
# in with their symbols hidden (TPROBE_SELF_CONTAINED, CMakeLists.txt), so a
# process that also loads torch (which exports protobuf symbols of its own)
# never mixes the two. Debian's libprotobuf-lite.a is not position-
# independent, so the script builds the same release (apt-get source
# protobuf) with -fPIC once, cached in .cache/wheel/. Each wheel is checked
# (no exported protobuf, spdlog or fmt symbol; ldd lists only the libraries
# above) and tagged with the lowest manylinux tag `auditwheel show` agrees
# with.
#
# Needs what deploy/setup.sh --no-build installs, Debian's source packages
# (a deb-src entry is added to apt when there is none), and PyPI
# (scikit-build-core, pybind11, ninja and auditwheel, into one build venv per
# interpreter under .cache/wheel/; $TPROBE_WHEEL_CACHE moves that folder).
# Timings: docs/operating.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

out=dist
pythons=()
which_only=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --which) which_only=1; shift ;;
    --out)
      [[ $# -ge 2 ]] || { echo "deploy/wheel.sh: --out needs a folder" >&2; exit 2; }
      out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    -*) echo "deploy/wheel.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    *) pythons+=("$1"); shift ;;
  esac
done
((${#pythons[@]})) || pythons=(python3)

cache=${TPROBE_WHEEL_CACHE:-$root/.cache/wheel}
mkdir -p "$cache"
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

# libprotobuf-lite.a of the installed protoc's release, built with -fPIC.
protobuf_lite() {
  local version src lib
  version=$(protoc --version | awk '{print $2}')
  lib=$cache/protobuf-$version-pic/libprotobuf-lite.a
  if [[ -f $lib ]]; then
    echo "$lib"
    return
  fi
  log "building protobuf-lite $version with -fPIC (once; cached in $cache)" >&2
  src=$cache/src
  mkdir -p "$src"
  if ! ls "$src"/protobuf_"$version".orig.tar.* >/dev/null 2>&1; then
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
    if ! (cd "$src" && apt-get source --download-only -qq protobuf) >&2; then
      echo "deploy/wheel.sh: 'apt-get source protobuf' failed (see above)" >&2
      exit 1
    fi
  fi
  rm -rf "$src/protobuf-$version"
  tar -xf "$src"/protobuf_"$version".orig.tar.* -C "$src"
  /usr/bin/cmake -S "$src/protobuf-$version" -B "$src/build-$version" \
    -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_CXX_FLAGS="-fvisibility=hidden -fvisibility-inlines-hidden" \
    -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_WITH_ZLIB=OFF -DBUILD_SHARED_LIBS=OFF >&2
  ninja -C "$src/build-$version" libprotobuf-lite >&2
  mkdir -p "$(dirname "$lib")"
  cp "$src/build-$version/libprotobuf-lite.a" "$lib"
  rm -rf "$src/protobuf-$version" "$src/build-$version"
  echo "$lib"
}

# A build venv for interpreter $1 with what the wheel build needs.
build_venv() {
  local py=$1 tag venv
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  venv=$cache/venv-$tag
  # Made once: .ready marks a venv whose packages all installed.
  if [[ ! -f $venv/.ready ]]; then
    log "build venv for $tag: $venv" >&2
    "$py" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      --upgrade pip 'scikit-build-core>=0.10' 'pybind11>=2.12' ninja \
      auditwheel wheel >&2
    touch "$venv/.ready"
  fi
  echo "$venv"
}

# Fails unless every ELF under $1 exports no protobuf, spdlog or fmt symbol
# and needs no library beyond glibc's, libstdc++ and libgcc_s (or one of
# the wheel's own).
check_elves() {
  local dir=$1 bad=0 elf exports needed
  while IFS= read -r elf; do
    exports=$(nm -D --defined-only -C "$elf" 2>/dev/null |
      grep -E ' (google::protobuf|spdlog|fmt)::' | head -3 || true)
    if [[ -n $exports ]]; then
      echo "deploy/wheel.sh: $elf exports $exports" >&2
      bad=1
    fi
    needed=$(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
      grep -Ev '^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libtprobe)\.so' || true)
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
mkdir -p "$out"
out=$(cd "$out" && pwd)
protobuf=$(protobuf_lite)
for name in "${pythons[@]}"; do
  py=$(resolve_python "$name")
  venv=$(build_venv "$py")
  tag=$("$venv/bin/python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  t0=$SECONDS
  log "$tag: building ($py)"
  tmp=$cache/out-$tag
  rm -rf "$tmp"
  "$venv/bin/python" -m pip wheel "$root" --no-build-isolation --no-deps \
    --disable-pip-version-check -q -w "$tmp" \
    -C build-dir="$cache/build-$tag" \
    -C cmake.define.TPROBE_SELF_CONTAINED=ON \
    -C cmake.define.TPROBE_PROTOBUF_LITE="$protobuf" \
    -C cmake.define.pybind11_DIR="$("$venv/bin/python" -m pybind11 --cmakedir)"
  wheel=$(ls "$tmp"/tprobe-*.whl)
  unpacked=$tmp/unpacked
  "$venv/bin/python" -m wheel unpack -d "$unpacked" "$wheel" >/dev/null
  check_elves "$unpacked"
  platform=$("$venv/bin/auditwheel" show "$wheel" |
    grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64' | head -1)
  if [[ -z $platform ]]; then
    "$venv/bin/auditwheel" show "$wheel" >&2
    echo "deploy/wheel.sh: auditwheel found no manylinux tag for $wheel" >&2
    exit 1
  fi
  "$venv/bin/python" -m wheel tags --remove --platform-tag "$platform" \
    "$wheel" >/dev/null
  wheel=$(ls "$tmp"/tprobe-*"$platform".whl)
  mv -f "$wheel" "$out/"
  rm -rf "$tmp"
  log "$tag: $out/$(basename "$wheel") ($(du -h "$out/$(basename "$wheel")" | cut -f1), $((SECONDS - t0)) s)"
done
log "done in $((SECONDS - started)) s"
