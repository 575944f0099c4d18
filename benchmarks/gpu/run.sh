#!/usr/bin/env bash
# The one prepared script for a machine with an NVIDIA GPU: GPU tests, CUDA build, sparsegen.torch
# against torch's optimizers on CUDA tensors, a quick CUDA tuning run and the GPU benchmarks
# (W1-W7 against PyTorch CUDA). Every stage has a time limit,
# is logged to benchmarks/results/gpu/run.log and may fail without stopping the others; the
# whole run stays under TOTAL_S seconds (480 by default).
#
#   bash benchmarks/gpu/run.sh [COPY_DIR]
#
# Writes benchmarks/results/gpu/{results.json,results.md,results.png,run.log,tune.jsonl,
# torch-embedding.json,torch-embedding.md} and
# tuning_logs/cuda-sm_XY-<kernel>.jsonl; with COPY_DIR, copies those there too. The Python
# used is $PYTHON, else .venv/bin/python or python3, the first that imports sparsegen's
# dependencies and the TVM compiler. Where none has the compiler and the runtime-only bundle
# of benchmarks/gpu/pack.sh is here ($SPARSEGEN_BUNDLE, default .gpu-bundle), ${PYTHON:-python3}
# runs on it: tvm-ffi installed from its wheel, the kernels loaded from its prebuilt cache, the
# build stage a check that they are all there, and the tuning stage timing the CUDA candidates
# prebuilt into that cache (no compiler builds others).
# Else the first Python that imports the dependencies without the compiler, else they are
# installed from wheels in .whl/ (no network needed), else with pip from the package index.
# BENCH_FLAGS adds flags to the bench (--quick for a smoke test; with SPARSEGEN_GPU=host the
# bench runs without a GPU).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
RESULTS=benchmarks/results/gpu
COPY_DIR=${1:-}
BUNDLE=${SPARSEGEN_BUNDLE:-.gpu-bundle}
RUNTIME_ONLY=""
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
has_compiler() { "$1" -c "import tvm" >/dev/null 2>&1; }

# first_python CHECK...: $PYTHON if set, else the first of .venv/bin/python and python3, if it
# passes every CHECK
first_python() {
    local candidate check
    for candidate in ${PYTHON:-.venv/bin/python python3}; do
        for check in "$@"; do "$check" "$candidate" || continue 2; done
        echo "$candidate"
        return 0
    done
    return 1
}

# use_bundle PYTHON: run on the runtime-only bundle (tvm-ffi from its wheel, TVM's runtime
# libraries, a copy of its prebuilt kernel cache); sets PY and RUNTIME_ONLY, or stops the run
use_bundle() {
    local py=$1 tag wheels
    tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
    wheels=$(ls "$BUNDLE"/wheels/apache_tvm_ffi-*-"$tag"-*.whl 2>/dev/null | head -1)
    if [ -z "$wheels" ]; then
        say "the bundle $BUNDLE has no apache-tvm-ffi wheel for $py ($tag): pack it with PY_VERSIONS naming that Python; stopping"
        exit 1
    fi
    # tvm-ffi needs typing-extensions >= 4.13; the bundle's is used only where that is missing
    "$py" -c "from typing_extensions import get_annotations" >/dev/null 2>&1 ||
        wheels="$wheels $(ls "$BUNDLE"/wheels/typing_extensions-*.whl)"
    # shellcheck disable=SC2086 # one or two wheels
    stage "install tvm-ffi from $BUNDLE" 60 "$py" -m pip install -q --no-index --no-deps \
        --no-compile --no-cache-dir --upgrade --target /tmp/sparsegen-site $wheels
    export PYTHONPATH="$PYTHONPATH:/tmp/sparsegen-site"
    # shellcheck source=/dev/null # written by pack.sh: SPARSEGEN_TVM_RUNTIME_DIR, SPARSEGEN_CPU_TARGET
    source "$BUNDLE/env.sh"
    rm -rf /tmp/sparsegen-bundle-cache && cp -r "$BUNDLE/cache" /tmp/sparsegen-bundle-cache
    export SPARSEGEN_CACHE_DIR=/tmp/sparsegen-bundle-cache
    if ! usable "$py"; then
        say "the runtime-only bundle does not run on $py; stopping:"
        "$py" -c "import numpy, scipy, tvm_ffi, sparsegen" 2>&1 | tail -3 | tee -a "$LOG"
        exit 1
    fi
    PY=$py RUNTIME_ONLY=1
    say "runtime-only bundle $BUNDLE: TVM runtime $(cat "$SPARSEGEN_TVM_RUNTIME_DIR/TVM_VERSION") from $SPARSEGEN_TVM_RUNTIME_DIR, CPU target $SPARSEGEN_CPU_TARGET, kernels for cuda $BUNDLE_ARCH ($BUNDLE_DTYPES) copied to $SPARSEGEN_CACHE_DIR"
}

# check_bundle: whether the bundle's kernels were built for this tree (same cache key versions)
check_bundle() {
    local here packed
    here=$("$PY" -c 'import json; from sparsegen.cachekey import versions
print(json.dumps(versions(), sort_keys=True))')
    packed=$(cat "$BUNDLE/versions.json")
    if [ "$here" != "$packed" ]; then
        say "the bundle was packed for versions $packed, this tree needs $here: its kernels will not be found (run benchmarks/gpu/pack.sh on this tree)"
    fi
    [ "$ARCH" = "$BUNDLE_ARCH" ] || say "the bundle holds CUDA kernels for $BUNDLE_ARCH, this GPU is $ARCH"
}

# cuda_libraries: TVM's CUDA runtime links libcudart.so.13 and the driver's libcuda.so.1; the
# folders of those the loader cannot find are searched for and put on LD_LIBRARY_PATH
cuda_libraries() {
    local lib found
    for lib in libcudart.so.13 libcuda.so.1; do
        "$PY" -c "import ctypes; ctypes.CDLL('$lib')" >/dev/null 2>&1 && continue
        found=$(timeout 30 find /usr/local /opt /usr/lib /usr/lib64 -name "$lib" 2>/dev/null | head -1)
        if [ -n "$found" ]; then
            export LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            say "$lib: $found (added to LD_LIBRARY_PATH)"
        else
            say "$lib: not found; CUDA kernels will not load"
        fi
    done
}

say "sparsegen GPU run in $ROOT (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
stage "nvidia-smi" 20 nvidia-smi
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
ARCH=sm_${ARCH:-90}
say "GPU architecture: $ARCH"

PY=$(first_python usable has_compiler) || PY=""
if [ -z "$PY" ] && [ -f "$BUNDLE/env.sh" ]; then
    use_bundle "${PYTHON:-python3}"
fi
[ -n "$PY" ] || PY=$(first_python usable) || PY=""
if [ -z "$PY" ]; then
    if ls .whl/*.whl >/dev/null 2>&1; then
        stage "install wheels from .whl/" 60 "${PYTHON:-python3}" -m pip install -q --no-index \
            --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/sparsegen-site .whl/*.whl
        export PYTHONPATH="$PYTHONPATH:/tmp/sparsegen-site"
    else
        stage "pip install" 120 "${PYTHON:-python3}" -m pip install -q -e ".[test]"
    fi
    usable "${PYTHON:-python3}" && PY=${PYTHON:-python3}
fi
if [ -z "$PY" ]; then
    say "no Python here imports sparsegen's dependencies (numpy, scipy, apache-tvm, apache-tvm-ffi): stopping"
    exit 1
fi
if [ -n "$RUNTIME_ONLY" ]; then
    compiler_note="missing: the bundle's prebuilt kernels load, tuning times its prebuilt candidates"
else
    compiler_note="missing: build and tune stages will fail, cached kernels still load"
fi
say "Python: $(command -v "$PY") ($("$PY" -V 2>&1)); TVM compiler: $("$PY" -c 'import tvm; print(tvm.__version__)' 2>/dev/null || echo "$compiler_note")"
[ "${SPARSEGEN_GPU:-cuda}" = cuda ] && cuda_libraries
stage "sparsegen info" 30 "$PY" -m sparsegen.cli info

# the build fills the kernel cache that the tests, the tuner and the bench then load from; on
# the bundle it checks that the prebuilt cache holds every kernel (a missing one is named)
if [ -n "$RUNTIME_ONLY" ]; then
    check_bundle
    # shellcheck disable=SC2086 # BUNDLE_DTYPES holds several dtypes
    stage "cached kernels, cpu" 60 "$PY" -m sparsegen.cli build --dtypes $BUNDLE_DTYPES
    # shellcheck disable=SC2086
    stage "cached kernels, cuda $ARCH" 60 "$PY" -m sparsegen.cli build --target cuda \
        --arch "$ARCH" --dtypes $BUNDLE_DTYPES
else
    stage "build cuda $ARCH" 90 "$PY" -m sparsegen.cli build --target cuda --arch "$ARCH" --dtypes float32
fi
# the tests' skips for lack of a GPU or nvcc are failures here (unless SPARSEGEN_GPU=host)
[ "${SPARSEGEN_GPU:-cuda}" = cuda ] && export SPARSEGEN_REQUIRE_CUDA=${SPARSEGEN_REQUIRE_CUDA:-1}
if [ -f tests/test_gpu.py ]; then
    stage "GPU tests" 120 "$PY" -m pytest -q -p no:cacheprovider tests/test_gpu.py \
        tests/test_torch_gpu.py
else
    say "== GPU tests: tests/test_gpu.py is not in this checkout"
    SUMMARY+=("GPU tests: missing")
fi
# sparsegen.torch's optimizers against torch's on an EmbeddingBag model in GPU memory
if "$PY" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" >/dev/null 2>&1; then
    stage "torch embedding on CUDA" 90 "$PY" benchmarks/torch_embedding.py --device cuda \
        --rounds 3 --steps 8 --repeats 20
else
    say "== torch embedding on CUDA: this Python's torch sees no CUDA GPU"
    SUMMARY+=("torch embedding on CUDA: no CUDA torch")
fi
# the compiler builds 4 candidates per kernel with nvcc; the bundle's prebuilt ones load at once
if [ -n "$RUNTIME_ONLY" ]; then
    tune_trials=${BUNDLE_TUNE_TRIALS:-12} tune_limit=90
    tune_name="tune cuda (the bundle's prebuilt candidates, up to $tune_trials per kernel)"
else
    tune_name="tune cuda (quick)" tune_trials=4 tune_limit=120
fi
stage "$tune_name" "$tune_limit" "$PY" -m sparsegen.cli tune --target cuda --op all \
    --trials "$tune_trials" --rounds 5 --buckets large --log "$RESULTS/tune.jsonl" --ship tuning_logs
stage "tuned configs" 30 "$PY" -m sparsegen.cli info --tuning
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
