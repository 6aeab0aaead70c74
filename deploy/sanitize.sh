#!/usr/bin/env bash
# Runs the C++ test suite under sanitizers (.ci/run runs it after
# deploy/test.sh; it needs what deploy/setup.sh installs):
#
#   deploy/sanitize.sh [address] [thread]     (both when none is named)
#
#   address  ASan and UBSan (TPROBE_SANITIZE=address) in ./build-asan: every
#            C++ test, the real tprobed and tprobe they start included. The
#            Python tests are not built: the interpreter would need libasan
#            preloaded, and ASan would then report CPython's and torch's own
#            leaks; the C++ tests drive the same client and daemon.
#   thread   TSan (TPROBE_SANITIZE=thread) in ./build-tsan: the ring, client
#            core, lock-free session and daemon-process tests (ring_test,
#            client_test, recorder_test, naming_test, selection_test,
#            session_test, daemon_process_test), where threads and
#            processes share memory.
#
# A sanitizer report ends the process with an error, so the test fails. Each
# build directory builds only what its tests need. Extra arguments after
# "--" go to ctest.
#
# Cost, measured cold (no ccache) on 2 idle cores (2026-12-02), with the
# instrumented builds at -O1 -g1 (CMakeLists.txt): address builds its 244
# steps and runs its 589 tests in 16 min (the tests about 75 s); thread
# builds its targets and runs its 74 tests in 4 min. No test is left out for
# time.
set -euo pipefail
cd "$(dirname "$0")/.."

kinds=()
while (($#)) && [[ $1 != -- ]]; do kinds+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
((${#kinds[@]})) || kinds=(address thread)

configure() {  # build-dir sanitizer
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTPROBE_SANITIZE="$2" -DTPROBE_BUILD_PYTHON=OFF \
    -DTPROBE_BUILD_BENCHMARKS=OFF -DTPROBE_VENV_PYTHON=/nonexistent >/dev/null
}

for kind in "${kinds[@]}"; do
  case $kind in
    address)
      echo "[sanitize] ASan+UBSan: building ./build-asan"
      configure build-asan address
      cmake --build build-asan -j "$(nproc)"
      # consumer_builds_from_install_and_runs links a separate, uninstrumented
      # program against the instrumented libtprobe, which ASan refuses (its
      # runtime must come first); the same build runs in deploy/test.sh.
      UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build-asan -j2 --output-on-failure \
          -E '^consumer_builds_from_install_and_runs$' "$@"
      ;;
    thread)
      echo "[sanitize] TSan: building ./build-tsan"
      configure build-tsan thread
      cmake --build build-tsan -j "$(nproc)" \
        --target ring_test client_test recorder_test naming_test selection_test \
        session_test daemon_process_test
      TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --test-dir build-tsan -j2 --output-on-failure \
          -L '^(ring_test|client_test|recorder_test|naming_test|selection_test|session_test|daemon_process_test)$' "$@"
      ;;
    *)
      echo "deploy/sanitize.sh: unknown sanitizer '$kind' (address or thread)" >&2
      exit 2
      ;;
  esac
done
