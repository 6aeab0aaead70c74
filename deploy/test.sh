#!/usr/bin/env bash
# Runs every test: sets up and builds (deploy/setup.sh, which also makes the
# .venv the torch 2.13 tests run in), then the whole suite under ctest with
# two jobs: the Python tests run both in .venv (torch 2.13) and in Debian's
# /usr/bin/python3 (torch 1.13).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
ctest --test-dir build -j2 --output-on-failure "$@"
