#!/usr/bin/env bash
# The one prepared script for a machine with an NVIDIA GPU: GPU tests, CUDA build, a quick CUDA
# tuning run and the GPU benchmarks (W1-W7 against PyTorch CUDA). Every stage has a time limit,
# is logged to benchmarks/results/gpu/run.log and may fail without stopping the others; the
# whole run stays under TOTAL_S seconds (480 by default).
#
#   bash benchmarks/gpu/run.sh [COPY_DIR]
#
# Writes benchmarks/results/gpu/{results.json,results.md,results.png,run.log,tune.jsonl} and
# tuning_logs/cuda-sm_XY-<kernel>.jsonl; with COPY_DIR, copies those there too. The Python
# used is $PYTHON, else .venv/bin/python, else python3, the first that imports sparsegen's
# dependencies; where none does, they are installed from wheels in .whl/ (no network needed),
# else with pip from the package index. BENCH_FLAGS adds flags to the bench (--quick for a
# smoke test; with SPARSEGEN_GPU=host the bench runs without a GPU).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
RESULTS=benchmarks/results/gpu
COPY_DIR=${1:-}
TOTAL_S=${TOTAL_S:-480}
START=$(date +%s)
mkdir -p "$RESULTS" tuning_logs
LOG=$RESULTS/run.log
: >"$LOG"
SUMMARY=()
# one kernel cache for every stage (the tests would otherwise make a fresh one of their own)
export SPARSEGEN_CACHE_DIR=${SPARSEGEN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sparsegen}
export PYTHONUNBUFFERED=1 PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

say() { echo "[$(date +%H:%M:%S) +$(($(date +%s) - START))s] $*" | tee -a "$LOG"; }

# stage NAME LIMIT_S COMMAND...: run with a time limit (cut to what is left of TOTAL_S), log it.
stage() {
    local name=$1 limit=$2 left rc t0 verdict
    shift 2
    left=$((TOTAL_S - ($(date +%s) - START)))
    ((limit > left)) && limit=$left
    if ((limit < 10)); then
        say "== $name: SKIPPED (the run's $TOTAL_S s are spent)"
        SUMMARY+=("$name: skipped, no time left")
        return 1
    fi
    say "== $name (limit ${limit}s): $*"
    t0=$(date +%s)
    timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    case $rc in
        0) verdict=ok ;;
        124 | 137) verdict="TIMED OUT after ${limit}s" ;;
        *) verdict="FAILED (exit $rc)" ;;
    esac
    say "== $name: $verdict in $(($(date +%s) - t0))s"
    SUMMARY+=("$name: $verdict")
    return "$rc"
}

usable() { "$1" -c "import numpy, scipy, tvm_ffi, sparsegen" >/dev/null 2>&1; }

say "sparsegen GPU run in $ROOT (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
stage "nvidia-smi" 20 nvidia-smi
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
ARCH=sm_${ARCH:-90}
say "GPU architecture: $ARCH"

PY=""
for candidate in "${PYTHON:-}" .venv/bin/python python3; do
    if [ -n "$candidate" ] && usable "$candidate"; then PY=$candidate; break; fi
done
if [ -z "$PY" ]; then
    if ls .whl/*.whl >/dev/null 2>&1; then
        stage "install wheels from .whl/" 60 python3 -m pip install -q --no-index --no-deps \
            --no-compile --no-cache-dir --upgrade --target /tmp/sparsegen-site .whl/*.whl
        export PYTHONPATH="$PYTHONPATH:/tmp/sparsegen-site"
    else
        stage "pip install" 120 python3 -m pip install -q -e ".[test]"
    fi
    usable python3 && PY=python3
fi
if [ -z "$PY" ]; then
    say "no Python here imports sparsegen's dependencies (numpy, scipy, apache-tvm, apache-tvm-ffi): stopping"
    exit 1
fi
say "Python: $(command -v "$PY") ($("$PY" -V 2>&1)); TVM compiler: $("$PY" -c 'import tvm; print(tvm.__version__)' 2>/dev/null || echo 'missing: build and tune stages will fail, cached kernels still load')"
stage "sparsegen info" 30 "$PY" -m sparsegen.cli info

# the build fills the kernel cache that the tests, the tuner and the bench then load from
stage "build cuda $ARCH" 90 "$PY" -m sparsegen.cli build --target cuda --arch "$ARCH" --dtypes float32
if [ -f tests/test_gpu.py ]; then
    stage "GPU tests" 90 "$PY" -m pytest -q -p no:cacheprovider tests/test_gpu.py
else
    say "== GPU tests: tests/test_gpu.py is not in this checkout"
    SUMMARY+=("GPU tests: missing")
fi
stage "tune cuda (quick)" 120 "$PY" -m sparsegen.cli tune --target cuda --op all --trials 4 \
    --buckets large --log "$RESULTS/tune.jsonl" --ship tuning_logs
# shellcheck disable=SC2086 # BENCH_FLAGS holds several flags
stage "GPU benchmarks" 180 "$PY" -m sparsegen.cli bench --target gpu --out "$RESULTS" ${BENCH_FLAGS:-}

say "summary (total $(($(date +%s) - START))s):"
for line in "${SUMMARY[@]}"; do say "  $line"; done
say "outputs in $RESULTS: $(ls "$RESULTS" | tr '\n' ' ')"
say "tuning logs: $(ls tuning_logs | grep -c "^cuda-$ARCH-") files tuning_logs/cuda-$ARCH-*.jsonl"
if [ -n "$COPY_DIR" ]; then
    mkdir -p "$COPY_DIR"
    cp "$RESULTS"/* "$COPY_DIR"/ 2>/dev/null
    tar -czf "$COPY_DIR/tuning_logs-$ARCH.tar.gz" tuning_logs/cuda-"$ARCH"-*.jsonl 2>/dev/null
    say "copied the outputs to $COPY_DIR"
fi
