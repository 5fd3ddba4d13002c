#!/usr/bin/env bash
# The device checks and figures, for a machine with a GPU that is lent for minutes: in under
# 8 minutes, with nothing to build there.
#
#   scripts/gpu-checks.sh BIN DATA [OUT]
#
# BIN: an `arcbatch` release binary built elsewhere (strip it to carry it: about 4 MB).
# DATA: a folder holding `training/` and `evaluation/` (ARC task files) and `solvers.py` (the
#       reference's published solvers).
# OUT: where the log goes (default: $OUT where set, else ./gpu-checks-out).
# ARCBATCH_NVRTC names NVRTC's library, as for every run (NVRTC 12 from PyPI's
# nvidia-cuda-nvrtc-cu12 compiles for every architecture the project supports).
#
# Runs, each under its own time limit, and logs to OUT/gpu-checks.log:
#   1. the machine (nvidia-smi) and `gpu-info` (the kernels compiled by NVRTC, the GPUs);
#   2. `diff --a cpu --b gpu`: the published solvers on training, then every solver on every
#      evaluation task (`--cross --timeout-ms 500`): every value of every step compared;
#   3. `batt --cross` of the published solvers over evaluation on the CPU backend and on the GPU
#      backend, 4 threads each (a Kaggle notebook's vCPUs), with wall time and peak memory;
#   4. `bench-gpu` at 100,000 lanes, 4 threads: each kernel's GPU time against the CPU's, and
#      the chain of five grid steps run as one job;
#   5. `solve` over evaluation at the same --max-candidates on `--backend cpu` and `--backend
#      gpu`, 4 threads each: the submissions compared, and each run's distinct values per
#      second (its `enumeration:` line).
# Exit status: 1 if a diff found values that differ or the two submissions differ, else 0 (a
# step past its time limit is logged as such).
set -uo pipefail
bin=$(realpath "$1")
data=$(realpath "$2")
out=${3:-${OUT:-gpu-checks-out}}
mkdir -p "$out"
log="$out/gpu-checks.log"
status=0

# GNU time for the peak memory, where the machine has it.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "   wall %e s, peak %M KB")

step() {
    local limit=$1 name=$2
    shift 2
    echo "== $name (limit ${limit}s): $*" | tee -a "$log"
    local start=$SECONDS
    timeout "$limit" "${timer[@]}" "$@" >>"$log" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - start)) s" | tee -a "$log"
    return $rc
}

: >"$log"
echo "ARCBATCH_NVRTC=${ARCBATCH_NVRTC:-}" | tee -a "$log"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$log"
nproc | sed 's/^/cpus: /' | tee -a "$log"
step 60 "gpu-info" "$bin" gpu-info
step 90 "diff, training" "$bin" diff --a cpu --b gpu --solvers "$data/solvers.py" --tasks "$data/training" \
    || status=1
step 150 "diff --cross, evaluation" "$bin" diff --a cpu --b gpu --cross --timeout-ms 500 \
    --solvers "$data/solvers.py" --tasks "$data/evaluation" || status=1
for backend in cpu gpu; do
    step 75 "batt --cross, evaluation, $backend, 4 threads" "$bin" batt --cross --timeout-ms 500 \
        --backend "$backend" --threads 4 --solvers "$data/solvers.py" --tasks "$data/evaluation"
done
step 90 "bench-gpu, 100,000 lanes, 4 threads" "$bin" bench-gpu --tasks "$data/training" --sizes 100000 \
    --threads 4 --repeat 2
for backend in cpu gpu; do
    step 90 "solve, evaluation, $backend, 4 threads" "$bin" solve --backend "$backend" --threads 4 \
        --max-candidates 10000 --minutes 30 --tasks "$data/evaluation" \
        --submission "$out/submission-$backend.json"
done
if cmp -s "$out/submission-cpu.json" "$out/submission-gpu.json"; then
    echo "   solve: the two submissions are identical" | tee -a "$log"
else
    echo "   solve: the submissions DIFFER" | tee -a "$log"
    status=1
fi
echo "== done: exit $status" | tee -a "$log"
exit $status
