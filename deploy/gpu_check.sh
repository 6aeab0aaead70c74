#!/usr/bin/env bash
# Everything that needs a CUDA or NPU device, in one run of under 5 minutes:
#
#   deploy/gpu_check.sh [OUT]
#
#  1. tests/python/pytorch/gpu_test.py: device statistics against the
#     daemon's and msprobe's, no synchronising call in the hooks (the calls
#     patched and counted), task tensor through pinned memory;
#  2. the no-synchronisation check on the device itself: a model with every
#     dtype (tests/python/both/statistics_on_model.py's) dumped at level mix,
#     tasks statistics and tensor, under torch.cuda.set_sync_debug_mode
#     ("warn"), which flags every call that waits for the device, Python's
#     or C++'s; the hooks must add none to what the model makes without a
#     tool;
#  3. bench/step_time.py --device cuda --small (10 steps, 2 rounds): no
#     tool against tprobe at L0, L1 and mix, dumped and undumped.
#
# On a machine with an Ascend NPU (torch_npu) only the bench runs, with
# --device npu: the first two are CUDA's.
#
# The interpreter is $PYTHON, or the first of .venv/bin/python,
# /usr/bin/python3 and python3 whose torch sees a device. It uses the
# project as deploy/setup.sh built it (build/bin/tprobed, build/python)
# when that tprobe._C loads in the interpreter; otherwise it builds
# tprobed and tprobe._C for the interpreter into build/gpu-check-pyXY
# (deploy/setup.sh --no-build first: the Debian packages the build needs,
# only those missing). Nothing is fetched when the build is there. With
# TPROBED set it builds nothing and uses an installed tprobe instead (a
# wheel of deploy/wheel.sh: TPROBED its bin/tprobed, TPROBE_PYTHONPATH
# where it is installed unless the interpreter finds it), for a machine
# that cannot build, such as one with no network.
#
# It prints a summary: each check with PASS or FAIL and its time, the
# device, the load, and the bench's table (× no tool, wall and the
# trainer's CPU). Logs and the summary go to OUT (default
# build/gpu-check/). Copy the figures into docs/performance.md's "GPU
# check" section.
#
# Exit status: 0 every check passed, 1 a check failed, 2 the project could
# not be built or loaded, 77 no CUDA or NPU device (nothing was checked).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-build/gpu-check}

# Prints "<cuda|npu|none> <device name> <torch version>".
detect='
import sys
try:
    import torch
except ImportError:
    print("none - no-torch"); sys.exit()
if torch.cuda.is_available():
    print("cuda", torch.cuda.get_device_name(0).replace(" ", "_"),
          torch.__version__); sys.exit()
try:
    import torch_npu  # noqa: F401
    if torch.npu.is_available():
        print("npu", torch.npu.get_device_name(0).replace(" ", "_"),
              torch.__version__); sys.exit()
except Exception:
    pass
print("none - torch-" + torch.__version__)
'
if [[ -n ${PYTHON:-} ]]; then
  candidates=("$PYTHON")
else
  candidates=(.venv/bin/python /usr/bin/python3 python3)
fi
python="" kind="" name="" tried=()
for p in "${candidates[@]}"; do
  command -v "$p" >/dev/null 2>&1 || continue
  answer=$(timeout 120 "$p" -c "$detect" 2>/dev/null)
  read -r kind name torch_version <<<"${answer:-none - no-answer}"
  tried+=("$p: $torch_version")
  if [[ $kind == cuda || $kind == npu ]]; then
    python=$(command -v "$p")
    [[ $python == /* ]] || python=$root/$python
    break
  fi
done
if [[ -z $python ]]; then
  echo "[gpu_check] no CUDA or NPU device: nothing checked (${tried[*]:-no python found})"
  exit 77
fi
echo "[gpu_check] $kind device ${name//_/ }, $python (torch $torch_version)"

loads() { PYTHONPATH="$1" "$python" -c 'import tprobe._C' 2>/dev/null; }
build=build
if [[ -n ${TPROBED:-} ]]; then
  build="" # an installed tprobe (a wheel: TPROBED is its bin/tprobed)
  loads "${TPROBE_PYTHONPATH:-}" || { echo "[gpu_check] FAIL: tprobe._C does not load in $python (TPROBE_PYTHONPATH=${TPROBE_PYTHONPATH:-})"; exit 2; }
elif ! [[ -x $build/bin/tprobed ]] || ! loads "$build/python"; then
  build=build/gpu-check-$("$python" -c 'import sys; print("py%d%d" % sys.version_info[:2])')
  if ! [[ -x $build/bin/tprobed ]] || ! loads "$build/python"; then
    echo "[gpu_check] building tprobed and tprobe._C for $python into $build"
    deploy/setup.sh --no-build &&
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPython3_EXECUTABLE="$python" \
        -DTPROBE_BUILD_TESTS=OFF -DTPROBE_BUILD_BENCHMARKS=OFF >/dev/null &&
      cmake --build "$build" -j "$(nproc)" --target tprobed tprobe_cli tprobe_python ||
      { echo "[gpu_check] FAIL: could not build the project for $python"; exit 2; }
    loads "$build/python" || { echo "[gpu_check] FAIL: $build/python's tprobe._C does not load in $python"; exit 2; }
  fi
fi
if [[ -n $build ]]; then
  export TPROBED=$root/$build/bin/tprobed TPROBE_CLI=$root/$build/bin/tprobe \
    TPROBE_PYTHONPATH=$root/$build/python
fi
export TPROBED TPROBE_PYTHONPATH=${TPROBE_PYTHONPATH:-} PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
mkdir -p "$out"
rm -f "$out"/{gpu_test,no_sync,step_time}.log "$out/summary.txt"
echo "[gpu_check] tprobed $TPROBED; logs in $out"

results=() failed=0
# check NAME LIMIT_S COMMAND...: runs COMMAND into $out/NAME.log under a
# time limit (a shell function: each of its commands under LIMIT_S) and
# notes PASS or FAIL with its seconds.
check() {
  local check_name=$1 start=$SECONDS status
  limit=$2
  shift 2
  echo "[gpu_check] $check_name ..."
  if declare -F "$1" >/dev/null; then
    "$@" >"$out/$check_name.log" 2>&1
  else
    timeout "$limit" "$@" >"$out/$check_name.log" 2>&1
  fi
  status=$?
  if ((status == 0)); then
    results+=("PASS  $check_name ($((SECONDS - start)) s)")
  else
    results+=("FAIL  $check_name (exit $status$( ((status == 124)) && echo ", over ${limit} s"), $((SECONDS - start)) s; $out/$check_name.log)")
    failed=1
    tail -n 30 "$out/$check_name.log"
  fi
}

# gpu_test.py, failing where a test skips: each needs only the device.
gpu_test() {
  local log status
  log=$(timeout "$limit" "$python" tests/python/pytorch/gpu_test.py -v 2>&1)
  status=$?
  echo "$log"
  ((status == 0)) && ! grep -q 'skipped=' <<<"$log"
}

# The no-synchronisation check, one process per task (the debugger is a
# singleton): the synchronising calls the training makes from
# debugger.start() to the end of the optimizer step (forward, backward,
# hooks), counted by torch itself, printed as "TASK HOOKS BOUNDARY WRITTEN"
# with those of the step boundary (stop, step) apart, as information. The
# main thread's and autograd's device threads' (backward hooks run there;
# Python sees them as dummy threads) count; tprobe's statistics thread,
# which waits for events by design, does not.
sync_model='
import json, os, sys, tempfile, threading, warnings
import torch
root, task = sys.argv[1:3]
sys.path.insert(0, os.path.join(root, "tests", "python", "both"))
from statistics_on_model import Net

phase, counts = [None], {}

def show(message, *args, **kwargs):
    thread = threading.current_thread()
    if "synchroniz" in str(message) and phase[0] and (
            thread is threading.main_thread() or
            isinstance(thread, threading._DummyThread)):
        counts[phase[0]] = counts.get(phase[0], 0) + 1

warnings.simplefilter("always")
warnings.showwarning = show
tmp = tempfile.mkdtemp(prefix="tp-sync-")
debugger = None
if task != "none":
    from tprobe.torch import PrecisionDebugger
    config = os.path.join(tmp, "config.json")
    with open(config, "w") as f:
        json.dump({"task": task, "level": "mix",
                   "dump_path": os.path.join(tmp, "dump"),
                   task: {"scope": [], "list": [], "data_mode": ["all"]}}, f)
    debugger = PrecisionDebugger(config_path=config)
torch.manual_seed(0)
net = Net().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 8).cuda()
torch.cuda.synchronize()
torch.cuda.set_sync_debug_mode("warn")
for step in range(3):
    if debugger:
        debugger.start(model=net)
    phase[0] = "hooks"
    loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    phase[0] = "boundary"
    if debugger:
        debugger.stop()
        debugger.step()
    phase[0] = None
torch.cuda.set_sync_debug_mode(0)
written = debugger is None or (debugger.session.flush(30000) and os.path.exists(
    os.path.join(tmp, "dump", "step2", "rank", "dump.json")))
print(task, counts.get("hooks", 0), counts.get("boundary", 0), written)
'
# Fails when tprobe adds a synchronising call to the hooks' part of a step
# or writes no dump.
no_sync() {
  local task line hooks boundary written baseline="" status=0
  for task in none statistics tensor; do
    line=$(timeout "$limit" "$python" -c "$sync_model" "$root" "$task") || return 1
    read -r _ hooks boundary written <<<"$line"
    if [[ $task == none ]]; then
      baseline=$hooks
      echo "no tool: $hooks synchronising calls in 3 steps"
      continue
    fi
    echo "tprobe mix, task $task: $hooks synchronising calls in 3 steps" \
         "(no tool: $baseline), $boundary at the step boundary; dump written: $written"
    [[ $hooks == "$baseline" && $written == True ]] || status=1
  done
  return $status
}

if [[ $kind == cuda ]]; then
  check gpu_test 240 gpu_test
  check no_sync 60 no_sync
fi
check step_time 240 env PYTHONPATH="$TPROBE_PYTHONPATH" "$python" bench/step_time.py \
  --tprobed "$TPROBED" --device "$kind" --small --steps 10 --rounds 2

{
  echo "== deploy/gpu_check.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
  echo "device: ${name//_/ } ($kind), torch $torch_version, $python"
  command -v nvidia-smi >/dev/null &&
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
  printf '%s\n' "${results[@]}"
  [[ -f $out/no_sync.log ]] && grep -E '^(no tool|tprobe)' "$out/no_sync.log"
  echo "step time (bench/step_time.py --device $kind --small --steps 10 --rounds 2):"
  grep -E '^(tool|none|tprobe|msprobe) ' "$out/step_time.log"
} | tee "$out/summary.txt"
exit "$failed"
