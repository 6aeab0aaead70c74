#!/usr/bin/env bash
# Installs the tprobe Python package of a build tree for /usr/bin/python3:
#
#   client/python/install.sh BUILD_DIR
#
# It writes tprobe.pth, which names BUILD_DIR/python, into /usr/bin/python3's
# site-packages (the user's site-packages when that is not writable). Then
# `/usr/bin/python3 -c "from tprobe.torch import PrecisionDebugger"` works
# from any directory, a rebuild takes effect without reinstalling, and the
# package starts BUILD_DIR/bin/tprobed when no daemon answers.
set -euo pipefail
python=/usr/bin/python3
build_dir=${1:?usage: $0 BUILD_DIR}
package_dir=$(cd "$build_dir" && pwd)/python
if ! compgen -G "$package_dir/tprobe/_C*.so" >/dev/null; then
  echo "install.sh: $package_dir/tprobe/_C*.so is missing; build the" \
       "tprobe_python target first" >&2
  exit 1
fi
site_dir=$("$python" - <<'PY'
import os, site
for d in site.getsitepackages():
    if d.startswith("/usr/local/") and (os.access(d, os.W_OK) or
            (not os.path.exists(d) and os.access(os.path.dirname(d), os.W_OK))):
        print(d)
        break
else:
    print(site.getusersitepackages())
PY
)
mkdir -p "$site_dir"
echo "$package_dir" > "$site_dir/tprobe.pth"
cd /
"$python" -c "from tprobe.torch import PrecisionDebugger" || {
  echo "install.sh: $python cannot import tprobe.torch after writing" \
       "$site_dir/tprobe.pth" >&2
  exit 1
}
echo "[install] tprobe for $python: $site_dir/tprobe.pth -> $package_dir"
