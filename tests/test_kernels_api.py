"""sparsegen.kernels: the compiled kernels as callables on numpy arrays and DLPack tensors."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import MERGE_SIZES, MERGE_STEPS

import isolated
import sparsegen.kernels as K
from sparsegen import registry
from sparsegen.errors import SparsegenError
from sparsegen.kernels import Argument, parse_signature


def retain_oracle(data, indices, req):
    """Rows of ``data`` by requested id, zero rows where the id is not stored."""
    where = {int(r): i for i, r in enumerate(indices)}
    out = np.zeros((len(req), data.shape[1]), data.dtype)
    for row, r in enumerate(req):
        if int(r) in where:
            out[row] = data[where[int(r)]]
    return out


def test_parse_signature_groups_scalars_and_marks_written():
    args = parse_signature("(w[n,d] dtype WRITTEN, i[k] int64, lr, wd float32, s float64|int64, "
                           "seg[u+1] int64)", {"dtype": "float16"})
    assert args == (
        Argument("w", "float16", ("n", "d"), True),
        Argument("i", "int64", ("k",), False),
        Argument("lr", "float32", None, False),
        Argument("wd", "float32", None, False),
        Argument("s", "float64|int64", None, False),
        Argument("seg", "int64", ("u+1",), False),
    )
    assert args[0].describe() == "w[n,d] float16 WRITTEN" and not args[2].is_tensor


@pytest.mark.parametrize("text", ["x[n] dtype", "(x[n])", "(x[n] WRITTEN)", "(lr, wd)",
                                  "(x[n dtype)"])
def test_parse_signature_refuses_malformed(text):
    with pytest.raises(SparsegenError):
        parse_signature(text)


def test_every_registered_signature_matches_its_template():
    """The documented signatures (docstrings, header, manifest) agree with the compiled code:
    argument count, tensor or scalar, dtype, rank."""
    from sparsegen.export import compiled_arguments

    for kernel in registry.KERNELS.values():
        dtypes = ("float32",) * len(kernel.dtype_params)
        funcs = kernel.build_template(dtypes)
        assert sorted(funcs) == sorted(name for name, _ in kernel.signatures), kernel.name
        for name, func in funcs.items():
            compiled_arguments(kernel, dtypes, name, func)


@given(
    k=st.integers(0, 12), d=st.sampled_from((1, 3, 16, 37)), m=st.integers(0, 12),
    dtype=st.sampled_from(("float32", "int8")), seed=st.integers(0, 2**31),
)
def test_retain_gather_on_numpy_writes_out_in_place(k, d, m, dtype, seed):
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.choice(40, size=k, replace=False)).astype(np.int64)
    data = rng.integers(-50, 50, size=(k, d)).astype(dtype)
    req = np.sort(rng.choice(40, size=m, replace=False)).astype(np.int64)
    out = np.full((m, d), 99, dtype)
    K.retain.gather(data, indices, req, out)
    np.testing.assert_array_equal(out, retain_oracle(data, indices, req))


def test_retain_merge_steps_are_the_templates():
    from sparsegen.templates.elemwise import merge

    assert merge.MERGE_STEPS == MERGE_STEPS


@given(k=st.sampled_from(MERGE_SIZES), m=st.sampled_from(MERGE_SIZES),
       shared=st.floats(0, 1), d=st.sampled_from((1, 16, 37)),
       dtype=st.sampled_from(("float32", "float64", "int8")), seed=st.integers(0, 2**31))
def test_retain_gather_merge_matches_the_oracle_across_task_edges(k, m, shared, d, dtype, seed):
    """The merge walk (split by merge path into tasks of MERGE_STEPS steps) for stored and
    requested lists of 0, 1, a task's steps - 1 / + 0 / + 1 and several tasks, sharing a
    random fraction of their ids (so equal pairs fall on every task edge), against the
    dictionary oracle; every output row is written (out starts as 99s)."""
    rng = np.random.default_rng(seed)
    universe = 2 * (k + m) + 1
    indices = np.sort(rng.choice(universe, size=k, replace=False)).astype(np.int64)
    both = indices[rng.random(k) < shared]
    rest = np.setdiff1d(np.arange(universe), indices)
    req = np.union1d(both, rng.choice(rest, size=max(0, m - both.size), replace=False))
    req = np.sort(req[:m] if req.size > m else req).astype(np.int64)
    data = rng.integers(-50, 50, size=(k, d)).astype(dtype)
    out = np.full((req.size, d), 99, dtype)
    K.get("retain", dtype).gather_merge(data, indices, req, out)
    np.testing.assert_array_equal(out, retain_oracle(data, indices, req))


@pytest.mark.parametrize("stored, requested, merge", [(100_000, 50_000, True), (100_000, 10, False),
                                                      (1, 1, False), (0, 3, False),
                                                      (1_000, 1_000, True)])
def test_retain_takes_the_merge_walk_when_it_is_fewer_steps(stored, requested, merge):
    """The op's choice (``ops.retain.merge_walk``), and both paths' results through
    ``mx.nd.sparse.retain`` against numpy."""
    import sparsegen as mx
    from sparsegen.ops.retain import merge_walk

    assert merge_walk(stored, requested) is merge
    rng = np.random.default_rng(stored + requested)
    rows = 2 * stored + 2 * requested + 1
    ids = np.sort(rng.choice(rows, stored, replace=False)).astype(np.int64)
    data = rng.random((stored, 3), dtype=np.float32)
    req = np.sort(rng.choice(rows, requested, replace=False)).astype(np.int64)
    kept = mx.nd.sparse.retain(mx.nd.sparse.row_sparse_array((data, ids), shape=(rows, 3)), req)
    np.testing.assert_array_equal(kept.indices.asnumpy(), req)
    np.testing.assert_array_equal(kept.data.asnumpy(), retain_oracle(data, ids, req))


def test_bound_family_and_huge_row_ids():
    kernel = K.get("retain", "float64")
    indices = np.array([3, 2**40 - 1], np.int64)
    data = np.array([[1.0, 2.0], [3.0, 4.0]])
    req = np.array([0, 2**40 - 1], np.int64)
    out = np.empty((2, 2))
    assert kernel.gather(data, indices, req, out) is None
    np.testing.assert_array_equal(out, [[0, 0], [3, 4]])
    assert kernel.dtypes == ("float64",) and kernel.gather.symbol() == "sg_retain_float64_gather"
    assert K.retain["float64"].gather.dtypes == ("float64",)


def test_sgd_lazy_updates_only_gradient_rows():
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((7, 5)).astype(np.float32)
    grad = rng.standard_normal((2, 5)).astype(np.float32)
    ids = np.array([1, 5], np.int64)
    lr, wd, rescale, clip = 0.1, 0.01, 0.5, 0.3
    expected = weight.copy()
    expected[ids] = (1 - lr * wd) * weight[ids] - lr * np.clip(rescale * grad, -clip, clip)
    K.optim_sgd.lazy(weight, grad, ids, lr, wd, rescale, clip)
    np.testing.assert_allclose(weight, expected, rtol=1e-6, atol=1e-7)


def test_docs_name_arguments_dtypes_and_writes():
    doc = K.retain.gather.__doc__
    assert doc.startswith("retain.gather(data, indices, req, out)")
    assert "WRITTEN" in doc.splitlines()[[line.strip().split()[0] if line.strip() else ""
                                          for line in doc.splitlines()].index("out")]
    bound = K.get("optim_adam", "float32").lazy
    assert "float32" in bound.__doc__ and "lr             scalar" in bound.__doc__
    assert "retain" in dir(K) and "gather" in dir(K.retain) and "retain" in K.names()
    assert "gather(data, indices, req, out)" in K.retain.__doc__
    with pytest.raises(AttributeError, match="no function 'scatter'"):
        K.retain.scatter
    with pytest.raises(AttributeError):
        K.no_such_kernel
    with pytest.raises(SparsegenError, match="unknown kernel"):
        K.get("no_such_kernel", "float32")
    with pytest.raises(SparsegenError, match="takes dtypes"):
        K.get("retain", "bool")


def _retain_args():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    return [data, np.array([1, 5, 9], np.int64), np.array([5, 6], np.int64),
            np.full((2, 4), 7, np.float32)]


def _readonly(array):
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("position, value, message", [
    (1, np.array([1, 5, 9], np.int32), r"#1 'indices' .* has dtype int32, expected int64"),
    (1, np.array([1, 5], np.int64), r"#1 'indices' .* shape\[0\] must be k = 3 \(k = 3 from 'dat"),
    (3, np.zeros((3, 4), np.float32), r"#3 'out' .* shape\[0\] must be m = 2 \(m = 2 from 'req'\)"),
    (3, np.zeros((2, 5), np.float32), r"#3 'out' .* shape\[1\] must be d = 4"),
    (3, np.zeros((2, 4, 1), np.float32), r"#3 'out' .* has 3 dimensions"),
    (3, np.zeros((4, 2), np.float32).T, r"#3 'out' .* is not C-contiguous"),
    (3, _readonly(np.zeros((2, 4), np.float32)), r"#3 'out' .* is read-only"),
    (2, [5, 6], r"#2 'req' .* expected an array"),
    (0, np.zeros((3, 4), np.float64), r"#3 'out' .* has dtype float32, expected float64"),
])
def test_bad_arguments_raise_naming_the_argument_and_write_nothing(position, value, message):
    args = _retain_args()
    args[position] = value
    with pytest.raises(SparsegenError, match=message):
        K.retain.gather(*args)
    if position != 3:
        np.testing.assert_array_equal(args[3], np.full((2, 4), 7, np.float32))


def test_wrong_count_and_undecidable_dtype():
    with pytest.raises(SparsegenError, match="takes 4 arguments .* got 3"):
        K.retain.gather(*_retain_args()[:3])
    args = _retain_args()
    args[0] = np.zeros((3, 4), bool)
    with pytest.raises(SparsegenError, match="'data'"):
        K.retain.gather(*args)
    with pytest.raises(SparsegenError, match="bind one with"):
        K.dot_csrT.sort_dense(*[np.zeros(1, np.int64)] * 5)  # index arrays only: dtype unknown
    with pytest.raises(SparsegenError, match="expected a number, got str"):
        K.optim_sgd.lazy(np.zeros((2, 2), np.float32), np.zeros((1, 2), np.float32),
                         np.array([0]), "0.1", 0.0, 1.0, 1.0)


def test_torch_tensors_pass_zero_copy_and_torch_stays_out_of_import():
    """In a fresh process: importing and calling cached kernels does not import torch; torch
    tensors then pass through DLPack, and in-place writes show in them."""
    pytest.importorskip("torch")
    K.get("retain", "float32")  # built here: a build imports the TVM compiler, which imports torch
    K.get("optim_sgd", "float32")
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import sparsegen.kernels as K
        data, ids = np.ones((2, 3), np.float32), np.array([0, 4])
        out = np.zeros((1, 3), np.float32)
        K.retain.gather(data, ids, np.array([4]), out)
        assert out.tolist() == [[1, 1, 1]] and "torch" not in sys.modules, sorted(sys.modules)
        import torch
        weight = torch.zeros(5, 3)
        address = weight.data_ptr()
        grad = torch.ones(2, 3, requires_grad=True)
        K.optim_sgd.lazy(weight, grad, torch.tensor([1, 3]), 0.5, 0.0, 1.0, float("inf"))
        assert weight.data_ptr() == address
        assert weight[1].tolist() == [-0.5] * 3 and weight[0].tolist() == [0.0] * 3
        try:
            K.optim_sgd.lazy(weight, grad.double(), torch.tensor([1, 3]), 0.5, 0.0, 1.0, 1.0)
        except Exception as err:
            assert type(err).__name__ == "SparsegenError" and "'grad_data'" in str(err), err
        else:
            raise AssertionError("a float64 gradient was accepted for a float32 weight")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# -- index values are checked before the kernel runs ----------------------------------------------
def _public_functions():
    """(kernel, function) for every kernel function whose index arguments have value domains."""
    for kernel in registry.KERNELS.values():
        for name, _ in kernel.signatures:
            specs = K.arguments(kernel, name, ("float32",) * len(kernel.dtype_params))
            if any(s.domain for s in specs) and not any("internal" in s.domain for s in specs):
                yield kernel.name, name


def _internal_functions():
    for kernel in registry.KERNELS.values():
        for name, _ in kernel.signatures:
            specs = K.arguments(kernel, name, ("float32",) * len(kernel.dtype_params))
            if any("internal" in s.domain for s in specs):
                yield kernel.name, name


def _valid_args(kernel_name, function, seed=0):
    """Arguments that satisfy every domain of the signature: sorted ids below their bound, row
    pointers over 2 rows of 3 entries, rows' columns rising; data random, outputs zero."""
    rng = np.random.default_rng(seed)
    kernel = registry.KERNELS[kernel_name]
    specs = K.arguments(kernel, function, ("float32",) * len(kernel.dtype_params))
    sizes = {}
    for spec in specs:  # index arrays hold 3 values; a row pointer spans 2 rows
        if spec.domain and spec.shape and spec.shape[0].isidentifier():
            sizes.setdefault(spec.shape[0], 3)
        if any(d.startswith("ptr(") for d in spec.domain):
            sizes[spec.shape[0].split("+")[0]] = 2
            for d in spec.domain:  # the pointer [0, 2, 3] ends at its total
                if d.startswith("ptr("):
                    sizes.setdefault(d[4:-1], 3)
    for spec in specs:
        for dim in spec.shape or ():
            if not dim.isdigit():  # a literal size (acc[k,8]) is itself
                sizes.setdefault(dim.split("+")[0], 4)
    values = {}
    for spec in sorted(specs, key=lambda s: not any(d.startswith("ptr(") for d in s.domain)):
        if not spec.is_tensor:
            values[spec.name] = 0.5 if spec.dtype.startswith("float") else 1
            continue
        shape = tuple(int(d) if d.isdigit() else sizes[d.split("+")[0]] + (1 if "+" in d else 0)
                      for d in spec.shape)
        below = next((sizes[d[1:]] for d in spec.domain if d.startswith("<")), 10)
        if any(d.startswith("ptr(") for d in spec.domain):
            values[spec.name] = np.array([0, 2, 3], np.int64)
        elif any(d.startswith("sorted(") for d in spec.domain):
            rows = [np.sort(rng.choice(below, size, replace=False)) for size in (2, 1)]
            values[spec.name] = np.concatenate(rows).astype(np.int64)
        elif "sorted" in spec.domain:
            values[spec.name] = np.sort(rng.choice(below, shape[0], replace=False)).astype(np.int64)
        elif spec.domain:
            values[spec.name] = rng.integers(0, below, shape).astype(np.int64)
        elif spec.written:
            values[spec.name] = np.zeros(shape, spec.dtype)
        else:
            values[spec.name] = rng.standard_normal(shape).astype(spec.dtype)
    return [values[s.name] for s in specs], specs, sizes


def _corruptions(specs, args, sizes):
    """(label, position, bad array, fragments of the error) for each domain of each argument."""
    cases = []
    for position, (spec, arr) in enumerate(zip(specs, args)):
        for token in spec.domain:
            if token.startswith("<"):
                bound = sizes[token[1:]]
                for value in (bound, -1):
                    bad = arr.copy()
                    bad.reshape(-1)[-1] = value  # the last element (of a 2-D array too)
                    cases.append((f"{spec.name}{token}:{value}", position, bad,
                                  (spec.name, f"[0, {bound})", f"[{value}]",
                                   f"positions [{arr.size - 1}]")))
            elif token.startswith("ptr("):
                total = int(arr[-1])
                for label, bad, fragment in (
                        ("end", arr + np.array([0, 0, 1]), f"must end at {total}"),
                        ("start", arr + np.array([1, 0, 0]), "must start at 0"),
                        ("drop", np.array([0, 3, 3]) - np.array([0, 0, 1]), "drops at position 2")):
                    cases.append((f"{spec.name}:{label}", position, bad.astype(np.int64),
                                  (spec.name, fragment)))
            elif token.startswith("sorted("):
                bad = arr.copy()
                bad[[0, 1]] = bad[[1, 0]]
                cases.append((f"{spec.name}:row-order", position, bad,
                              (spec.name, "within each row; row 0", "positions 0, 1")))
            elif token == "sorted":
                bad = arr.copy()
                bad[[0, 1]] = bad[[1, 0]]
                cases.append((f"{spec.name}:unsorted", position, bad,
                              (spec.name, "unsorted at position 1")))
                dup = arr.copy()
                dup[1] = dup[0]
                cases.append((f"{spec.name}:duplicate", position, dup,
                              (spec.name, "duplicate at position 1")))
    return cases


_BAD_CALLS = r'''
import pickle, sys
import numpy as np
import sparsegen.kernels as K
kernel, function, args, cases = pickle.load(open(PATH, "rb"))
result = []
for label, position, bad, fragments in cases:
    given = list(args)
    given[position] = bad
    before = [a.copy() for a in given if isinstance(a, np.ndarray)]
    try:
        getattr(getattr(K, kernel), function)(*given)
    except Exception as err:
        outcome = [type(err).__name__, str(err)]
    else:
        outcome = [None, ""]
    after = [a for a in given if isinstance(a, np.ndarray)]
    outcome.append(all(np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after)))
    result.append(outcome)
'''


@pytest.mark.parametrize("kernel, function", list(_public_functions()))
def test_bad_index_values_raise_before_the_kernel_runs(kernel, function, tmp_path):
    """Out-of-range, unsorted, duplicate ids and bad row pointers: MXNetError naming the
    function, the argument, the value and its position, and no argument written. One fresh
    interpreter per function: a check that misses crashes this test only."""
    import pickle

    args, specs, sizes = _valid_args(kernel, function)
    cases = _corruptions(specs, args, sizes)
    assert cases, f"{kernel}.{function} has domains but no corruption was made"
    path = tmp_path / "case.pkl"
    path.write_bytes(pickle.dumps((kernel, function, args, cases)))
    outcomes = isolated.result(f"PATH = {str(path)!r}\n" + _BAD_CALLS)
    for (label, _, _, fragments), (error, message, unchanged) in zip(cases, outcomes):
        assert error == "SparsegenError", f"{label}: {error} {message}"
        for fragment in (f"{kernel}.{function}", *fragments):
            assert fragment in message, f"{label}: {fragment!r} not in {message!r}"
        assert unchanged, f"{label}: an argument was written"


@pytest.mark.parametrize("kernel, function", list(_internal_functions()))
def test_internal_phases_are_refused_unless_checks_are_off(kernel, function):
    args, specs, _ = _valid_args(kernel, function)
    internal = next(s.name for s in specs if "internal" in s.domain)
    dtypes = ("float32",) if registry.KERNELS[kernel].dtype_params else ()
    with pytest.raises(SparsegenError, match=f"internal phase.*'{internal}'.*check=False"):
        getattr(K.get(kernel, *dtypes), function)(*args)


def test_every_index_input_has_a_domain_or_is_internal():
    """An int64 array a kernel reads either has a checked domain, or its function is internal;
    the listed exceptions are only compared, never used as an address."""
    compared_only = {("retain", "gather", "req"), ("retain", "check", "req")}
    # nn_gather: ids clipped or wrapped into range, or range-checked, in the kernel before any
    # use as an address; csr_count only subtracts indptr values
    compared_only |= {("nn_gather", function, arg) for function, arg in (
        ("take", "ids"), ("pick", "ids"), ("one_hot", "ids"), ("check", "ids"),
        ("gather_nd", "ids"), ("gather_nd", "dims"), ("scatter_nd", "ids"),
        ("scatter_nd", "dims"), ("csr_count", "ids"), ("csr_count", "indptr"),
        ("take_rsp", "ids"))}
    # bcast_csr.by_row_nan_count only subtracts indptr values (a row's entry count)
    compared_only.add(("bcast_csr", "by_row_nan_count", "indptr"))
    # nn_sort.csr_rows only compares column ids (it moves entries by their positions in a row)
    compared_only.add(("nn_sort", "csr_rows", "indices"))
    # graph.edge_id only compares the target vertex with a row's column ids
    compared_only.add(("graph", "edge_id", "v"))
    # graph.compact only compares column ids with the sorted vertices (writing -1 where absent)
    compared_only.add(("graph", "compact", "indices"))
    for kernel in registry.KERNELS.values():
        for name, _ in kernel.signatures:
            specs = K.arguments(kernel, name, ("float32",) * len(kernel.dtype_params))
            if any("internal" in s.domain for s in specs):
                continue
            for spec in specs:
                if spec.is_tensor and spec.dtype == "int64" and not spec.written:
                    assert spec.domain or (kernel.name, name, spec.name) in compared_only, (
                        kernel.name, name, spec.name)


def _csr_dense(data, indices, indptr, columns):
    out = np.zeros((indptr.size - 1, columns), data.dtype)
    for row in range(indptr.size - 1):
        for p in range(indptr[row], indptr[row + 1]):
            out[row, indices[p]] += data[p]
    return out


@given(seed=st.integers(0, 2**31))
def test_valid_index_values_give_the_numpy_answer(seed):
    """Checked calls with valid ids compute what numpy computes."""
    args, _, sizes = _valid_args("cast_rsp_dense", "scatter", seed)
    data, indices, out = args
    expected = np.zeros_like(out)
    expected[indices] = data
    K.cast_rsp_dense.scatter(data, indices, out)
    np.testing.assert_array_equal(out, expected)

    args, _, sizes = _valid_args("cast_csr_dense", "scatter", seed)
    data, indices, indptr, out = args
    K.cast_csr_dense.scatter(data, indices, indptr, out)
    np.testing.assert_array_equal(out, _csr_dense(data, indices, indptr, out.shape[1]))

    args, _, sizes = _valid_args("dot_csr_dense", "matmul", seed)
    data, indices, indptr, rhs, out = args
    K.dot_csr_dense.matmul(data, indices, indptr, rhs, out)
    lhs = _csr_dense(data, indices, indptr, rhs.shape[0])
    np.testing.assert_allclose(out, lhs @ rhs, rtol=1e-5, atol=1e-5)

    args, _, sizes = _valid_args("dot_dense_csrT", "matmul", seed)
    lhs, data, indices, indptr, out = args
    K.dot_dense_csrT.matmul(lhs, data, indices, indptr, out)
    np.testing.assert_allclose(out, lhs @ _csr_dense(data, indices, indptr, lhs.shape[1]).T,
                               rtol=1e-5, atol=1e-5)

    args, _, sizes = _valid_args("ew_rsp", "update_add", seed)
    dense, data, indices = args
    expected = dense.copy()
    expected[indices] += data
    K.ew_rsp.update_add(dense, data, indices)
    np.testing.assert_allclose(dense, expected, rtol=1e-6)


def test_check_false_skips_the_check():
    """Unsorted (in-range) ids are refused by default and run as given with check=False."""
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    ids = np.array([3, 1], np.int64)
    out = np.zeros((4, 2), np.float32)
    with pytest.raises(SparsegenError, match="'indices' must be sorted and unique; unsorted"):
        K.cast_rsp_dense.scatter(data, ids, out)
    assert not out.any()
    unchecked = K.get("cast_rsp_dense", "float32", check=False)
    unchecked.scatter(data, ids, out)
    np.testing.assert_array_equal(out, [[0, 0], [3, 4], [0, 0], [1, 2]])
    assert "NOT checked" in unchecked.scatter.__doc__
    assert "checked before every call" in K.cast_rsp_dense.scatter.__doc__
    with pytest.raises(SparsegenError, match="check must be True or False"):
        K.get("retain", "float32", check="no")


def test_torch_index_tensors_are_checked():
    torch = pytest.importorskip("torch")
    weight = torch.zeros(4, 2)
    with pytest.raises(SparsegenError, match=r"'grad_indices' out of range \[0, 4\): \[9\]"):
        K.optim_sgd.lazy(weight, torch.ones(2, 2), torch.tensor([1, 9]), 0.5, 0.0, 1.0, 1.0)
    assert not weight.any()


def test_torch_tensors_are_refused_in_the_words_numpy_arrays_are():
    """A torch tensor's dtype, shape and layout are read from its attributes, with no DLPack
    export: each bad argument gives the message the same numpy array gives; a dtype numpy lacks
    (bfloat16) is still named, through DLPack."""
    torch = pytest.importorskip("torch")
    sgd = K.get("optim_sgd", "float32").lazy
    good = (np.zeros((4, 3), np.float32), np.ones((2, 3), np.float32), np.array([1, 3]))
    bad_grads = [np.ones((2, 3), np.float64), np.ones((2, 4), np.float32),
                 np.ones((3, 2), np.float32).T, np.ones((2, 3, 1), np.float32)]
    for grad in bad_grads:
        messages = []
        for convert in (lambda a: a, torch.from_numpy):
            weight, _, ids = (convert(a.copy()) for a in good)
            with pytest.raises(SparsegenError) as err:
                sgd(weight, convert(grad), ids, 0.5, 0.0, 1.0, 1.0)
            messages.append(str(err.value))
            assert not weight.any()
        assert messages[0] == messages[1]
    with pytest.raises(SparsegenError, match="'grad_data'.* has dtype bfloat16, expected float32"):
        sgd(torch.zeros(4, 3), torch.ones(2, 3, dtype=torch.bfloat16), torch.tensor([1, 3]),
            0.5, 0.0, 1.0, 1.0)
