#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, installs the
# Python package for /usr/bin/python3, and runs the main job — a small
# GPT-style PyTorch training with dumping through an auto-started tprobed.
# It prints where the dump tree is.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
echo "[quickstart] training examples/train_gpt.py with tprobe dumping"
/usr/bin/python3 examples/train_gpt.py "$@"
echo "[quickstart] the dump files:"
find ./dump -name '*.json' 2>/dev/null | sort | head -20
