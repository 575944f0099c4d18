"""sparsegen.kernels: the compiled kernels as callables on numpy arrays and DLPack tensors."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
        funcs = kernel.build_template(dtypes, {})
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
