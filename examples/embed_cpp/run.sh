#!/bin/sh
# Build the C++ embedding example against an export and run it:
#   sparsegen export --ops optim_sgd optim_adam dot_csr_dense --dtypes float32 -o EXPORT_DIR
#   examples/embed_cpp/run.sh EXPORT_DIR
# It needs only g++ and EXPORT_DIR (the library, its header, include/ and runtime libraries).
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 EXPORT_DIR" >&2
    exit 2
fi
export_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wextra -I"$export_dir" -I"$export_dir/include" \
    "$here/main.cpp" -o "$build/embed_demo" \
    -L"$export_dir" -ltvm_ffi -Wl,-rpath,"$export_dir"
"$build/embed_demo" "$export_dir/libsparsegen_kernels.so"
