#!/usr/bin/env bash
# A profile-guided (PGO) release build of the `arcbatch` CLI, and with --wheel of the Python
# wheel: an instrumented build runs a workload, LLVM merges what it counted, and a second build
# lays out and inlines the code by those counts. The results are the plain build's (the same
# source); the speed is not (docs/performance.md, "Profile-guided builds").
#
#   scripts/pgo-build.sh [--data DIR] [--solvers FILE] [--out DIR] [--wheel [-- MATURIN_ARGS]]
#
# --data DIR     ARC data with training/ and evaluation/ (default ../shared/arc where it
#                exists). `--data none`, or no data found: the workload is the embedded demo
#                alone, a smaller profile.
# --solvers FILE solvers of the training tasks (default ../shared/ref/arc-dsl/solvers.py where
#                it exists, else the embedded team library).
# --wheel        also build the Python wheel with the same profile (needs maturin); what
#                follows `--` goes to `maturin build` (Kaggle's: `-- --zig --compatibility
#                manylinux2014`).
# --out DIR      where the builds and the profile go (default target/pgo).
#
# The workload (each step under the instrumented binary, on one thread):
#   1. `demo`, and `solve` of the embedded demo tasks;
#   2. with data: `batt --cross` of the solvers over every 10th evaluation task;
#   3. with data: `solve` of every 20th evaluation task (test outputs are never read).
# It leaves out `run` of the solvers on the training tasks, the benchmark against CPython
# (benches/run_vs_cpython.py), so that the benchmark does not time the workload the build
# was laid out for (with it, the build was as fast: docs/performance.md).
# Needs `llvm-profdata` of the LLVM that rustc is built on (`rustc -vV`): rustup's
# llvm-tools component, or Debian's llvm-<major> package, or LLVM_PROFDATA=path.
# Prints the path of the PGO binary last.
set -euo pipefail
cd "$(dirname "$0")/.."

data=""
solvers=""
wheel=0
maturin_args=()
out="target/pgo"
[ -d ../shared/arc/training ] && data=../shared/arc
[ -f ../shared/ref/arc-dsl/solvers.py ] && solvers=../shared/ref/arc-dsl/solvers.py
while [ $# -gt 0 ]; do
    case "$1" in
        --data) data="$2"; shift 2 ;;
        --solvers) solvers="$2"; shift 2 ;;
        --wheel) wheel=1; shift ;;
        --out) out="$2"; shift 2 ;;
        --) shift; maturin_args=("$@"); break ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "pgo-build: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ "$data" = none ] && data=""
if [ -n "$data" ] && { [ ! -d "$data/training" ] || [ ! -d "$data/evaluation" ]; }; then
    echo "pgo-build: --data $data has no training/ and evaluation/ folders" >&2
    exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# llvm-profdata must read the raw profiles of rustc's own LLVM.
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="${LLVM_PROFDATA:-}"
if [ -z "$profdata" ]; then
    for candidate in "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" \
        "$(command -v "llvm-profdata-$major" || true)" "/usr/lib/llvm-$major/bin/llvm-profdata"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then
            profdata="$candidate"
            break
        fi
    done
fi
if [ -z "$profdata" ]; then
    echo "pgo-build: no llvm-profdata for LLVM $major (rustc's): 'rustup component add llvm-tools'," >&2
    echo "  or 'apt-get install llvm-$major', or set LLVM_PROFDATA" >&2
    exit 2
fi

# The flags of .cargo/config.toml, which a RUSTFLAGS in the environment replaces.
base_flags=""
case "$host" in x86_64-*) base_flags="-C target-cpu=x86-64-v2" ;; esac

echo "== instrumented build ($out/instrumented)"
raw="$out/raw"
RUSTFLAGS="$base_flags -Cprofile-generate=$raw" \
    cargo build --release --quiet --bin arcbatch --target-dir "$out/instrumented"
bin="$out/instrumented/release/arcbatch"
# The build's own build scripts and proc macros, instrumented too, wrote profiles here as they
# ran: only the workload's are kept.
rm -rf "$raw"

echo "== workload"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step() {
    echo "  arcbatch $*"
    LLVM_PROFILE_FILE="$raw/%p-%m.profraw" "$bin" "$@" >"$work/log" 2>&1 || {
        echo "pgo-build: the workload step failed: arcbatch $*" >&2
        tail -5 "$work/log" >&2
        exit 1
    }
}
# Every n-th task file of a folder, linked into a folder of their own.
every() {
    local from="$1" n="$2" to="$3" k=0
    mkdir -p "$to"
    for f in "$from"/*.json; do
        [ $((k % n)) -eq 0 ] && ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$to/"
        k=$((k + 1))
    done
}
step demo
step solve --threads 1 --submission "$work/demo.json"
if [ -n "$data" ]; then
    library=()
    [ -n "$solvers" ] && library=(--solvers "$solvers")
    every "$data/evaluation" 10 "$work/eval10"
    step batt --cross --threads 1 --timeout-ms 500 "${library[@]}" --tasks "$work/eval10"
    every "$data/evaluation" 20 "$work/eval20"
    step solve --threads 1 --max-candidates 5000 --tasks "$work/eval20" --submission "$work/eval.json"
fi
"$profdata" merge -o "$out/arcbatch.profdata" "$raw"
echo "  profile: $out/arcbatch.profdata ($(du -k "$out/arcbatch.profdata" | cut -f1) KB)"

echo "== optimised build ($out/release)"
use_flags="$base_flags -Cprofile-use=$out/arcbatch.profdata"
RUSTFLAGS="$use_flags" cargo build --release --quiet --bin arcbatch --target-dir "$out"
if [ "$wheel" -eq 1 ]; then
    echo "== wheel ($out/wheels)"
    RUSTFLAGS="$use_flags" CARGO_TARGET_DIR="$out" maturin build --release --out "$out/wheels" "${maturin_args[@]}"
fi
echo "$out/release/arcbatch"
