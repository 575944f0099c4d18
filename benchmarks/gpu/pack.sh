#!/usr/bin/env bash
# Packs the runtime-only bundle with which benchmarks/gpu/run.sh runs on a GPU machine that has
# no TVM compiler (no apache-tvm): the apache-tvm-ffi wheel for that machine's Python, TVM's two
# runtime libraries, and a kernel cache prebuilt here for everything run.sh runs (CPU kernels for
# a portable x86-64 target, CUDA kernels for one GPU architecture, and the CUDA candidates its
# tuning stage times: the first TUNE_TRIALS configs `sparsegen tune` tries for each tunable
# kernel, float32). Run it where apache-tvm and nvcc are installed (no GPU needed), from the
# tree that will travel: each kernel's cache key includes a digest of the code that builds it
# (its template and schedule modules, what they import, compiler.py; sparsegen/cachekey.py).
#
#   bash benchmarks/gpu/pack.sh [BUNDLE_DIR]      # default .gpu-bundle (ignored by git)
#
# Settings: PYTHON (with sparsegen and apache-tvm; default .venv/bin/python), PY_VERSIONS (the
# device Pythons to fetch tvm-ffi wheels for; default 3.12), ARCH (default sm_90), DTYPES
# (default "float32 float64": what tests/test_gpu.py and the GPU bench use), CPU_TARGET (default
# x86-64-v3: AVX2 and FMA, no AVX-512, which any x86-64 server CPU of the last decade runs),
# TUNE_TRIALS (CUDA tuning candidates per kernel, the default config included; default 12).
# Writes BUNDLE_DIR/{wheels/,tvm_runtime/,cache/,versions.json,env.sh} and prints the sizes; a
# second run rebuilds nothing unless the tree or the versions changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUNDLE=$(realpath -m "${1:-.gpu-bundle}")
PY=${PYTHON:-.venv/bin/python}
PY_VERSIONS=${PY_VERSIONS:-3.12}
ARCH=${ARCH:-sm_90}
DTYPES=${DTYPES:-float32 float64}
CPU_TARGET=${CPU_TARGET:-'{"kind": "llvm", "mcpu": "x86-64-v3", "mtriple": "x86_64-linux-gnu"}'}
TUNE_TRIALS=${TUNE_TRIALS:-12}
LIMIT_MIB=56 # the tree and the bundle travel together, 64 MiB at most

# kernels are built with the installed apache-tvm, whose version names the cache keys
unset SPARSEGEN_TVM_RUNTIME_DIR
export SPARSEGEN_CACHE_DIR=$BUNDLE/cache SPARSEGEN_CPU_TARGET=$CPU_TARGET

say() { echo "pack: $*"; }
mib() { echo $(($1 / 1048576)).$((($1 % 1048576) * 10 / 1048576)); }
dist_version() { "$PY" -c "import importlib.metadata as m; print(m.version('$1'))"; }

# a cache built from another tree or other versions holds keys nothing here asks for
versions=$("$PY" -c 'import json; from sparsegen.cachekey import versions
print(json.dumps(versions(), sort_keys=True))')
if [ "$(cat "$BUNDLE/versions.json" 2>/dev/null)" != "$versions" ]; then
    rm -rf "$BUNDLE/cache"
fi
mkdir -p "$BUNDLE/wheels" "$BUNDLE/tvm_runtime" "$BUNDLE/cache"

say "apache-tvm-ffi wheels for Python $PY_VERSIONS, and typing-extensions"
rm -f "$BUNDLE"/wheels/*.whl
for version in $PY_VERSIONS; do
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$version" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$BUNDLE/wheels" "apache-tvm-ffi==$(dist_version apache-tvm-ffi)"
done
# tvm-ffi's one requirement, installed there only where the Python lacks a recent enough one
"$PY" -m pip download -q --no-deps --only-binary=:all: -d "$BUNDLE/wheels" "typing-extensions>=4.13"

say "TVM runtime libraries"
lib=$("$PY" -c 'from sparsegen.tvm_runtime import runtime_dir; print(runtime_dir())')
cp "$lib/libtvm_runtime.so" "$lib/libtvm_runtime_cuda.so" "$BUNDLE/tvm_runtime/"
dist_version apache-tvm >"$BUNDLE/tvm_runtime/TVM_VERSION"

say "kernels for $CPU_TARGET and cuda $ARCH, dtypes $DTYPES"
# shellcheck disable=SC2086 # DTYPES holds several dtypes
"$PY" -m sparsegen.cli build --dtypes $DTYPES
# shellcheck disable=SC2086
"$PY" -m sparsegen.cli build --target cuda --arch "$ARCH" --dtypes $DTYPES
say "storage casts for every dtype (zeros and conversions of any dtype run them)"
CASTS="cast_dense_rsp cast_rsp_dense cast_dense_csr cast_csr_dense"
ALL_DTYPES="float16 float32 float64 uint8 int8 int32 int64"
# shellcheck disable=SC2086
"$PY" -m sparsegen.cli build --ops $CASTS --dtypes $ALL_DTYPES
# shellcheck disable=SC2086
"$PY" -m sparsegen.cli build --target cuda --arch "$ARCH" --ops $CASTS --dtypes $ALL_DTYPES
say "int64 index kernels (the id checks of retain and of coalescing torch's sparse gradients, aranges)"
"$PY" -m sparsegen.cli build --ops nn_gather shape retain --dtypes int64
"$PY" -m sparsegen.cli build --target cuda --arch "$ARCH" --ops nn_gather shape retain --dtypes int64
say "CUDA tuning candidates for $ARCH: the first $TUNE_TRIALS configs of each tunable kernel, float32"
"$PY" -m sparsegen.cli tune --prebuild --target cuda --arch "$ARCH" --op all --dtype float32 \
    --trials "$TUNE_TRIALS" --buckets large
find "$BUNDLE/cache" -name '*.lock' -delete
echo "$versions" >"$BUNDLE/versions.json"

cat >"$BUNDLE/env.sh" <<EOF
# The runtime-only bundle's settings (written by benchmarks/gpu/pack.sh); source it.
BUNDLE_DIR=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export SPARSEGEN_TVM_RUNTIME_DIR=\$BUNDLE_DIR/tvm_runtime
export SPARSEGEN_CPU_TARGET='$CPU_TARGET'
BUNDLE_ARCH=$ARCH
BUNDLE_DTYPES="$DTYPES"
BUNDLE_TUNE_TRIALS=$TUNE_TRIALS
EOF

bundle_bytes=$(du -sb "$BUNDLE" | cut -f1)
tree_bytes=$(git ls-files -z -co --exclude-standard | du -cb --files0-from=- 2>/dev/null |
    tail -1 | cut -f1)
total=$((bundle_bytes + tree_bytes))
say "$BUNDLE: $(mib "$bundle_bytes") MiB ($(find "$BUNDLE/cache/kernels" -name '*.so' | wc -l)" \
    "kernel libraries); the git tree: $(mib "$tree_bytes") MiB; together $(mib $total) MiB"
if ((total > LIMIT_MIB * 1048576)); then
    say "too large: the tree and the bundle must stay under $LIMIT_MIB MiB"
    exit 1
fi
