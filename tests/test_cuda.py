"""CUDA code generation without a GPU: every kernel is compiled to cubin by nvcc (their values
on a real GPU: tests/test_gpu.py)."""

import re

import pytest

import needs_cuda
from sparsegen import cuda_runtime
from sparsegen.build import build_library
from sparsegen.choice import choose
from sparsegen.compiler import build_many, cuda_source
from sparsegen.registry import KERNELS
from sparsegen.target import cuda



@pytest.fixture(autouse=True)
def _nvcc() -> None:
    """Every test here needs nvcc (a skip, or a failure under SPARSEGEN_REQUIRE_CUDA=1)."""
    needs_cuda.nvcc()


THREADS = 128  # the default threads per thread block of cuda.rows

SHARED_ROWS = (
    ("retain", "gather"),
    ("optim_adam", "lazy"),
    ("optim_adam", "std"),
    ("cast_rsp_dense", "scatter"),
    ("cast_csr_dense", "scatter"),
    ("dot_csr_dense", "matmul"),
    ("dot_dense_csr", "matmul"),
    ("ew_rsp", "fill_add"),
    ("ew_dense", "add"),
    ("cmp_dense", "equal"),
    ("cmp_dense", "greater_scalar"),
)
"""Functions whose column loops are shared by ``row_threads`` threads."""

THREAD_PER_ROW = (
    ("cast_dense_csr", "count"),
    ("cast_dense_rsp", "mark"),
    ("ew_csr", "fill_add"),
)
"""Functions that keep one thread per row (a reduction or a merge over the row)."""

BLOCKED_SCANS = (
    ("cast_dense_rsp", "mark", 1),
    ("cast_dense_csr", "count", 1),
    ("ew_index", "csr_union_count", 1),
    ("ew_index", "csr_intersect_count", 1),
    ("dot_csrT", "unique", 2),
    ("dot_dense_csr", "unique", 2),
    *((kernel, function, 1) for kernel, function in (
        ("dot_csrT", "sort_dense"), ("dot_csrT", "gather_rsp"), ("dot_csrT", "sort_pass"),
        ("dot_dense_csr", "sort_dense"), ("dot_dense_csr", "sort_pass"))),
)
"""Functions with a blocked prefix sum (templates/scan.py), and how many of their kernels run on
one thread: the carry over chunk totals, and ``unique``'s count. The radix sort's functions
count, scan and scatter chunks of entries on threads (``gather_rsp`` lists the stored rows'
entries, a thread per row)."""

SCAN_BUFFERS = {"Table", "Starts"}
"""The buffers a radix sort function's one-thread kernel (the scan carry) may take: the digit
table, or the stored rows' offsets; no array of entries."""


def _kernels(source: str) -> dict[str, str]:
    """The ``__global__`` function definitions of CUDA C, by name."""
    return {m.group(1): m.group(0) for m in re.finditer(
        r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\([^;{]*\{.*?\n\}\n',
        source,
        re.S)}


def _kernels_of(kernels: dict[str, str], symbol: str) -> list[str]:
    """The CUDA kernels one function was split into (``<symbol>_kernel``, ``..._kernel_1``, ...)."""
    pattern = re.compile(rf"{symbol}_kernel(_\d+)?")
    return [code for name, code in kernels.items() if pattern.fullmatch(name)]


def _column_index(row_threads: int) -> re.Pattern:
    """A column index ``jo * row_threads + threadIdx.x`` as TVM prints it."""
    return re.compile(rf"jo(_\d+)?\)? \* \(int64_t\){row_threads}\)+ \+ "
                      rf"\(\(int64_t\)\(\(int\)threadIdx\.x\)\)")


def _row_index(rows_per_block: int, axis: str) -> str:
    """A row index ``blockIdx.x * rows_per_block + axis`` as TVM prints it."""
    return f"((int64_t)blockIdx.x) * (int64_t){rows_per_block}) + ((int64_t){axis})"


def _check_launches(kernels: dict[str, str], row_threads: int) -> None:
    """Rows on ``threadIdx.y`` only beside shared column loops, and every threaded kernel
    declares its block size."""
    for name, code in kernels.items():
        assert ("threadIdx.y" in code) <= bool(_column_index(row_threads).search(code)), name
        assert f"__launch_bounds__({THREADS})" in code or "threadIdx" not in code, name


def test_every_kernel_compiles_to_cubin(fresh_cache):
    summary = build_library(dtypes=("float32",), target=cuda("sm_90"), progress=False)
    assert summary.failed == ()
    assert summary.built == len(KERNELS)
    cubins = sorted((fresh_cache.directory / "kernels").glob("*.cubin"))
    assert len(cubins) == summary.built
    for cubin in cubins:
        assert cubin.read_bytes()[:4] == b"\x7fELF"  # a device ELF image from nvcc
        assert cubin.with_suffix(".so").exists()
        _check_launches(_kernels(cubin.with_suffix(".cu").read_text()), 32)  # the default: a warp
    again = build_library(dtypes=("float32",), target=cuda("sm_90"), progress=False)
    assert again.built == 0 and again.cached == summary.built


MAPPED = sorted({kernel for kernel, *_ in (*SHARED_ROWS, *THREAD_PER_ROW, *BLOCKED_SCANS)})
"""The kernels built for each row mapping: between them every kind of loop the mapping changes
(shared column loops, a thread per row, blocked scans, radix passes); every kernel is built and
checked with the default mapping above."""


@pytest.mark.parametrize("row_threads", [1, 32, THREADS])  # thread, warp, block per row
def test_kernels_compile_for_each_row_mapping(row_threads):
    target = cuda("sm_90")
    parts = [(KERNELS[k], ("float32",) * len(KERNELS[k].dtype_params),
              KERNELS[k].space("cuda").config({"row_threads": row_threads, "threads": THREADS}))
             for k in MAPPED]
    source = cuda_source(build_many(parts, target)[1])
    assert cuda_runtime.compile_cubin(source, "sm_90")[:4] == b"\x7fELF"

    kernels = _kernels(source)
    assert len(kernels) >= len(MAPPED)
    rows = THREADS // row_threads

    def body(kernel: str, function: str) -> str:
        return kernels[f"sg_{kernel}_float32_{function}_kernel"]

    for kernel, function in THREAD_PER_ROW:
        assert _row_index(THREADS, "threadIdx.x") in body(kernel, function)
    for kernel, function in SHARED_ROWS:
        code = body(kernel, function)
        if row_threads == 1:
            assert _row_index(THREADS, "threadIdx.x") in code
        else:
            assert _column_index(row_threads).search(code), (kernel, function)
            assert (_row_index(rows, "threadIdx.y") in code) == (rows > 1)
    for kernel, function, serial in BLOCKED_SCANS:  # chunks on threads, not one thread each
        definition = KERNELS[kernel]
        codes = _kernels_of(kernels, definition.symbol(("float32",) * len(definition.dtype_params),
                                                      function))
        threaded = [code for code in codes if "threadIdx" in code]
        assert len(codes) - len(threaded) == serial and len(threaded) >= 3, (kernel, function)
        assert all(_row_index(THREADS, "threadIdx.x") in code for code in threaded), function
        if function.startswith(("sort", "gather")):
            serial_code = next(code for code in codes if "threadIdx" not in code)
            buffers = set(re.findall(r"(\w+)_ptr", serial_code.splitlines()[0]))
            assert buffers <= SCAN_BUFFERS, (kernel, function, buffers)
    _check_launches(kernels, row_threads)


def test_cuda_kernels_are_keyed_by_arch_and_default_to_a_warp_per_row(fresh_cache):
    sm80 = choose("retain", ("float32",), cuda("sm_80")).key
    sm90 = choose("retain", ("float32",), cuda("sm_90")).key
    assert sm80.digest() != sm90.digest()
    assert dict(sm90.config) == {"lanes": 1, "row_threads": 32, "threads": 128}


@pytest.mark.parametrize("function", ["rsp_union", "rsp_intersect"])
def test_row_sparse_merges_are_multi_threaded(function):
    """The merge-path merges walk their chunks on threads (a count pass and a write pass, around
    a blocked scan); only the scan's carry and the total's copy run on one thread, and neither
    reads the id lists."""
    definition = KERNELS["ew_index"]
    source = cuda_source(build_many([(definition, (), definition.space("cuda").config({}))],
                                    cuda("sm_90"))[1])
    codes = _kernels_of(_kernels(source), definition.symbol((), function))
    threaded = [code for code in codes if "threadIdx" in code]
    walks = [code for code in threaded if "A_ptr" in code and "B_ptr" in code]
    assert len(codes) - len(threaded) == 2 and len(walks) == 2 and len(threaded) == 4, function
    assert all(_row_index(THREADS, "threadIdx.x") in code for code in threaded), function
    assert not any("A_ptr" in code or "B_ptr" in code for code in codes if code not in threaded)
