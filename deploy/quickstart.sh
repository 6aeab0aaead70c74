#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, creates the
# project virtual environment .venv (torch 2.13.0 and tprobe), and runs the
# main job in it — a small GPT-style PyTorch training with dumping through an
# auto-started tprobed. It prints where the dump tree is.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
echo "[quickstart] training examples/train_gpt.py with tprobe dumping (.venv)"
.venv/bin/python examples/train_gpt.py "$@"
echo "[quickstart] the dump files:"
find ./dump -name '*.json' 2>/dev/null | sort | head -20
