#!/bin/sh
# Runs one libFuzzer target for a bounded time (the fuzz_<name> tests):
#   run_fuzzer.sh FUZZER SEEDS WORKDIR SECONDS
# The seed corpus SEEDS is only read; new inputs go to WORKDIR/corpus and a
# crashing input to WORKDIR/ (libFuzzer prints its path). Fails on any
# crash, leak, sanitizer report, timeout (10 s for one input) or
# out-of-memory (2 GiB).
set -eu
fuzzer=$(realpath "$1") seeds=$(realpath "$2") work=$3 seconds=$4
rm -rf "$work"
mkdir -p "$work/corpus"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"
