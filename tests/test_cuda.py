"""CUDA code generation without a GPU: every kernel is compiled to cubin by nvcc."""

import shutil

import pytest

import sparsegen as mx
from sparsegen.build import build_library
from sparsegen.cache import choose
from sparsegen.registry import KERNELS
from sparsegen.target import cuda

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None,
                                reason="nvcc (the CUDA toolkit) is not installed on this machine")


def test_every_kernel_compiles_to_cubin(fresh_cache):
    summary = build_library(dtypes=("float32",), target=cuda("sm_90"), progress=False)
    assert summary.failed == ()
    assert summary.built == len(KERNELS)
    cubins = sorted((fresh_cache.directory / "kernels").glob("*.cubin"))
    assert len(cubins) == summary.built
    for cubin in cubins:
        assert cubin.read_bytes()[:4] == b"\x7fELF"  # a device ELF image from nvcc
        assert cubin.with_suffix(".so").exists()
    again = build_library(dtypes=("float32",), target=cuda("sm_90"), progress=False)
    assert again.built == 0 and again.cached == summary.built


def test_cuda_kernels_are_keyed_by_arch_and_never_loaded_here(fresh_cache):
    sm80 = choose("retain", ("float32",), cuda("sm_80")).parallel_key
    sm90 = choose("retain", ("float32",), cuda("sm_90")).parallel_key
    assert sm80.digest() != sm90.digest()
    assert dict(sm90.config) == {"lanes": 1, "threads": 128}
    with pytest.raises(mx.MXNetError, match="only host CPU kernels are loaded"):
        fresh_cache.get(sm90)
