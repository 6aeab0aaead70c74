#!/usr/bin/env bash
# Creates or updates the project virtual environment .venv and puts tprobe
# into it:
#
#   deploy/venv.sh [BUILD_DIR]      (default BUILD_DIR: build)
#
# 1. `/usr/bin/python3 -m venv .venv` (Debian's 3.11, the interpreter whose
#    ABI the build's tprobe._C is made for) when .venv is missing.
# 2. torch, pinned in deploy/requirements.txt, is installed first and alone
#    (the CPU wheel on disk), then the rest of deploy/requirements.txt.
#    Nothing is installed when every pin is already satisfied.
# 3. tprobe from BUILD_DIR, editable: a tprobe.pth in .venv's site-packages
#    names BUILD_DIR/python, and .venv/bin/tprobe and .venv/bin/tprobed link
#    to BUILD_DIR/bin. A rebuild takes effect without reinstalling. Nothing
#    is written outside .venv. (`.venv/bin/pip install .` instead installs
#    a built wheel with the daemon inside; see README.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_dir=$(cd "${1:-build}" 2>/dev/null && pwd || echo "$root/${1:-build}")
venv=$root/.venv
requirements=deploy/requirements.txt

started=$SECONDS
if [[ ! -x $venv/bin/python ]]; then
  echo "[venv] creating $venv"
  /usr/bin/python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

torch_pin=$(grep -E '^torch==' "$requirements")
if [[ -z $torch_pin ]]; then
  echo "venv.sh: $requirements has no torch==VERSION line" >&2
  exit 1
fi
# pip prints a warning line for each missing local index folder; hide those.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
quiet_pip() {
  local status=0
  "${pip[@]}" "$@" >"$log" 2>&1 || status=$?
  grep -v "is ignored: it is neither a file nor a directory" "$log" || true
  return "$status"
}
if ! "$venv/bin/python" - "$requirements" <<'PY'
import sys
from importlib import metadata
wanted = [l.split("#")[0].strip() for l in open(sys.argv[1])]
for line in filter(None, wanted):
    name, version = line.split("==")
    try:
        have = metadata.version(name).split("+")[0]
    except metadata.PackageNotFoundError:
        sys.exit(1)
    if have != version:
        sys.exit(1)
PY
then
  echo "[venv] installing $torch_pin (first, alone), then $requirements"
  quiet_pip install -q "$torch_pin"
  quiet_pip install -q -r "$requirements"
  have=$("$venv/bin/python" -c "import torch; print(torch.__version__)")
  if [[ $have != "${torch_pin#torch==}"* ]]; then
    echo "venv.sh: .venv has torch $have, not ${torch_pin#torch==}" >&2
    exit 1
  fi
else
  echo "[venv] every pin of $requirements is installed"
fi

# msprobe 8.3.3, beside 26.x and never imported by tprobe: the reference for
# task overflow_check, which 26.x no longer has (tests/python/pytorch/parity_test.py),
# and, on Debian's /usr/bin/python3 (torch 1.13), the live reference of the
# 8.3.3 golden test. einops is the one import of it that Debian lacks; the
# rest come from apt (deploy/setup.sh).
msprobe833=(mindstudio-probe==8.3.3 einops==0.8.2)
if [[ ! -d $venv/msprobe833/msprobe || ! -d $venv/msprobe833/einops ]]; then
  rm -rf "$venv/msprobe833"
  quiet_pip install -q --no-deps --target "$venv/msprobe833" "${msprobe833[@]}"
fi

site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$build_dir/python" > "$site/tprobe.pth"
for tool in tprobe tprobed; do
  ln -sfn "$build_dir/bin/$tool" "$venv/bin/$tool"
done
echo "[venv] tprobe in .venv -> $build_dir ($((SECONDS - started)) s)"
