#!/usr/bin/env bash
# The README's first command: installs what is missing, creates the project
# virtual environment .venv (torch 2.13.0 and tprobe), builds only what a
# training runs (deploy/setup.sh --runtime; deploy/test.sh builds the rest),
# and runs the main job in .venv: a small GPT-style PyTorch training with
# dumping through an auto-started tprobed. It prints where the dump tree is.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh --runtime
echo "[quickstart] training examples/train_gpt.py with tprobe dumping (.venv)"
.venv/bin/python examples/train_gpt.py "$@"
echo "[quickstart] the dump files:"
find ./dump -name '*.json' 2>/dev/null | sort | head -20
