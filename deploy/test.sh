#!/usr/bin/env bash
# Runs every test: sets up and builds (deploy/setup.sh), then the whole
# suite under ctest with two jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup.sh
ctest --test-dir build -j2 --output-on-failure "$@"
