"""Comparisons (== != > >= < <=, mx.nd.equal ...): values against numpy, storage types, dtypes,
fallback warnings and the Python protocol against MXNet 1.9.1 (tests/fixtures/compare.json,
recorded by tests/fixtures/record_compare.py)."""

import json
import math
import operator
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from conftest import DTYPES
from sparsegen.errors import StorageFallbackWarning
from strategies import sparse_dense_arrays

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "compare.json").read_text())
STYPES = ("default", "row_sparse", "csr")
OPERATORS = {"equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt,
             "greater_equal": operator.ge, "lesser": operator.lt, "lesser_equal": operator.le}
NUMPY = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
         "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal}
SCALARS = {"0": 0, "0.0": 0.0, "-0.0": -0.0, "1": 1, "-1": -1, "0.5": 0.5, "nan": math.nan,
           "inf": math.inf, "-inf": -math.inf}
ERRORS = {"MXNetError": mx.MXNetError, "TypeError": TypeError, "ValueError": ValueError}


def to_stype(x: np.ndarray, stype: str):
    return mx.nd.array(x, dtype=x.dtype).tostype(stype)


def run(call):
    """``call()`` and whether it gave a StorageFallbackWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, any(issubclass(w.category, StorageFallbackWarning) for w in caught)


def check_against_mxnet(result, fell_back: bool, fact: dict, sparse_input: bool) -> None:
    assert result.stype == fact["stype"]
    assert np.dtype(result.dtype).name == fact["dtype"]
    np.testing.assert_array_equal(result.asnumpy().astype(np.float64), fact["values"])
    assert fell_back == (sparse_input and result.stype == "default")
    assert fell_back or not fact["fallback"]  # MXNet logs once per op and stypes: never more


# -- MXNet's facts ---------------------------------------------------------------------------------
MATRIX = np.array(FIXTURE["matrix"], dtype=np.float32)


@pytest.mark.parametrize("key", sorted(FIXTURE["arrays"]))
def test_array_pairs_as_mxnet(fresh_warnings, key):
    lhs, op, rhs = key.split()
    result, fell_back = run(lambda: OPERATORS[op](to_stype(MATRIX, lhs), to_stype(MATRIX, rhs)))
    check_against_mxnet(result, fell_back, FIXTURE["arrays"][key], {lhs, rhs} != {"default"})
    functional, _ = run(lambda: getattr(mx.nd, op)(to_stype(MATRIX, lhs), to_stype(MATRIX, rhs)))
    np.testing.assert_array_equal(functional.asnumpy(), result.asnumpy())


@pytest.mark.parametrize("key", sorted(FIXTURE["scalars"]))
def test_scalars_on_either_side_as_mxnet(fresh_warnings, key):
    left, op, right = key.split()
    if left in STYPES:
        stype, call = left, lambda: OPERATORS[op](to_stype(MATRIX, left), SCALARS[right])
    else:
        stype, call = right, lambda: OPERATORS[op](SCALARS[left], to_stype(MATRIX, right))
    result, fell_back = run(call)
    check_against_mxnet(result, fell_back, FIXTURE["scalars"][key], stype != "default")


@pytest.mark.parametrize("key", sorted(FIXTURE["dtypes"]))
def test_result_dtype_is_the_input_dtype(key):
    stype, dtype = key.split()
    values = MATRIX.astype(dtype)  # -1 wraps to 255 as uint8, as in MXNet
    result = to_stype(values, stype) > 0
    assert np.dtype(result.dtype).name == FIXTURE["dtypes"][key] == dtype
    np.testing.assert_array_equal(result.asnumpy(), (values > 0).astype(dtype))


def test_nan_inf_and_signed_zero_as_mxnet():
    special = mx.nd.array([np.nan, 1, -0.0, np.inf, -np.inf])
    other = mx.nd.array([np.nan, 1, 0.0, np.inf, np.inf])
    for op, want in FIXTURE["protocol"]["special values"].items():
        np.testing.assert_array_equal(OPERATORS[op](special, other).asnumpy(), want, err_msg=op)


def test_integer_scalars_convert_into_the_dtype_as_mxnet():
    got = {
        "uint8 [255, 1] == -1": mx.nd.array([255, 1], dtype="uint8") == -1,
        "int32 [2, 3] == 2.5": mx.nd.array([2, 3], dtype="int32") == 2.5,
        "int32 [2, 3] < 2.5": mx.nd.array([2, 3], dtype="int32") < 2.5,
        "float16 [0.1, 0] == 0.1": mx.nd.array([0.1, 0], dtype="float16") == 0.1,
    }
    for key, result in got.items():
        np.testing.assert_array_equal(result.asnumpy(), FIXTURE["integer scalars"][key], key)


@pytest.mark.filterwarnings("ignore::sparsegen.errors.StorageFallbackWarning")
def test_python_protocol_as_mxnet():
    facts = FIXTURE["protocol"]
    x = mx.nd.array([[1, 2], [3, 4]])
    for stype in STYPES:
        y = x.tostype(stype)
        assert (hash(y) == hash(y) and hash(y) != hash(y.copy())) == facts["hash is identity"]
        assert {y: 1}[y] == 1 and len({y, y.copy()}) == 2
        assert (y in [y]) == facts["x in [x]"]
        assert [bool(mx.nd.array([[3]]).tostype(stype)),
                bool(mx.nd.array([[0]]).tostype(stype))] == facts["bool of one element"]
        with pytest.raises(ERRORS[facts["bool of many elements"]], match=r"\(2, 2\)"):
            bool(y)
        with pytest.raises(ERRORS[facts["x in [other]"]], match="multiple elements"):
            y in [y.copy()]  # noqa: B015 - the membership test itself is checked
    assert bool(mx.nd.array(2.0) == 2) and not mx.nd.array([0.5]) > 1
    # MXNet's error there is its zeros((0,)) failing (legacy shapes); an empty array it can make
    # (mx.nd.array([])) is false, and so is every empty array here
    assert facts["bool of no elements"] == "MXNetError" and not bool(mx.nd.zeros((0, 3)))
    assert mx.nd.equal(2, 2) == facts["equal(2, 2)"] and mx.nd.equal(2, 3) == facts["equal(2, 3)"]
    assert sorted(f for f in OPERATORS if hasattr(mx.nd, f)) == facts["nd functions"]
    assert sorted(f for f in OPERATORS if hasattr(mx.nd.sparse, f)) == facts["sparse functions"]
    assert set(OPERATORS) <= set(mx.nd.__all__)
    assert not facts["equal takes out"]
    with pytest.raises(TypeError):
        mx.nd.equal(x, x, out=mx.nd.zeros((2, 2)))


@pytest.mark.parametrize("stype", STYPES)
@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_unsupported_operands_raise_type_error(stype, op):
    facts = FIXTURE["protocol"]
    x = mx.nd.array([[1, 2], [3, 4]]).tostype(stype)
    for label, other in (("x == None", None), ("x == 'a'", "a"), ("x == list", [[1, 2], [3, 4]]),
                         ("x == numpy array", np.ones((2, 2)))):
        with pytest.raises(ERRORS[facts[label]], match=f"{op}: type {type(other).__name__} is"):
            OPERATORS[op](x, other)
        with pytest.raises(ERRORS[facts[label]], match=f"type {type(other).__name__} is not"):
            OPERATORS[op](other, x)
        with pytest.raises(TypeError):
            getattr(mx.nd, op)(other, x)


def test_mismatched_operands_name_both(monkeypatch):
    facts = FIXTURE["protocol"]
    x = mx.nd.array([[1, 2], [3, 4]])
    with pytest.raises(ERRORS[facts["shape mismatch"]], match=r"\(2, 2\).*\(3,\)"):
        x == mx.nd.array([1, 2, 3])  # noqa: B015
    with pytest.raises(mx.MXNetError, match=r"\(2, 2\).*\(1, 3\)"):
        x.tostype("csr") < mx.nd.array([[1, 2, 3]]).tostype("row_sparse")  # noqa: B015
    with pytest.raises(ERRORS[facts["dtype mismatch"]], match="float32 and int32"):
        x == x.astype("int32")  # noqa: B015
    monkeypatch.setenv("SPARSEGEN_GPU", "host")  # host contexts mix (cpu(1) too); a GPU does not
    with pytest.raises(mx.MXNetError, match="one context"):
        mx.nd.greater(x, x.copyto(mx.gpu(0)))


# -- values against numpy ---------------------------------------------------------------------------
def with_specials(values: np.ndarray, seed: int) -> np.ndarray:
    """``values`` with some nan, inf, -inf and -0.0 where the dtype has them."""
    if values.dtype.kind != "f" or not values.size:
        return values
    out = values.copy().reshape(-1)
    rng = np.random.default_rng(seed)
    where = rng.random(out.size) < 0.2
    out[where] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], out.dtype), where.sum())
    return out.reshape(values.shape)


def scalar_in(dtype: np.dtype, s: float | int):
    """The oracle's scalar: rounded into a float dtype; truncated and wrapped into an integer
    dtype as MXNet converts it; a non-finite value against integers stays as it is (numpy)."""
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(s, dtype=np.float64).astype(dtype)
    if isinstance(s, float) and not math.isfinite(s):
        return s
    bits = dtype.itemsize * 8
    wrapped = int(s) % 2**bits
    return np.array(wrapped - 2**bits if dtype.kind == "i" and wrapped >= 2**(bits - 1)
                    else wrapped).astype(dtype)


def stored_positions(array):
    """The row ids of a row_sparse array, the (indices, indptr) of a csr one."""
    if array.stype == "row_sparse":
        return (array.indices.asnumpy(),)
    return array.indices.asnumpy(), array.indptr.asnumpy()


@given(values=sparse_dense_arrays(ndim=2), stype=st.sampled_from(STYPES),
       op=st.sampled_from(sorted(OPERATORS)), reflected=st.booleans(), seed=st.integers(0, 99),
       s=st.one_of(st.sampled_from(list(SCALARS.values()) + [2, 300, -129, 2**40, 1e30]),
                   st.floats(-50, 50), st.integers(-300, 300)))
def test_array_with_scalar_matches_numpy(values, stype, op, reflected, seed, s):
    values = with_specials(values, seed)
    x = to_stype(values, stype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        got = OPERATORS[op](s, x) if reflected else OPERATORS[op](x, s)
    oracle_s = scalar_in(values.dtype, s)
    wide = values if values.dtype.kind == "f" or not isinstance(oracle_s, float) else \
        values.astype(np.float64)
    with np.errstate(invalid="ignore"):
        want = NUMPY[op](oracle_s, wide) if reflected else NUMPY[op](wide, oracle_s)
        zero = NUMPY[op](oracle_s, 0) if reflected else NUMPY[op](0, oracle_s)
    assert np.dtype(got.dtype) == values.dtype
    np.testing.assert_array_equal(got.asnumpy(), want.astype(values.dtype))
    assert got.stype == ("default" if zero else stype)
    if got.stype != "default":  # the input's stored positions, as MXNet keeps them
        for mine, theirs in zip(stored_positions(got), stored_positions(x)):
            np.testing.assert_array_equal(mine, theirs)


@given(data=st.data(), stypes=st.tuples(st.sampled_from(STYPES), st.sampled_from(STYPES)),
       op=st.sampled_from(sorted(OPERATORS)), functional=st.booleans())
def test_two_arrays_match_numpy(data, stypes, op, functional):
    a = data.draw(sparse_dense_arrays(ndim=2), "a")
    b = data.draw(sparse_dense_arrays(ndim=2, dtypes=(a.dtype.name,)).filter(
        lambda b: b.shape == a.shape) | st.just(a[::-1].copy()), "b")
    seed = data.draw(st.integers(0, 99), "seed")
    a, b = with_specials(a, seed), with_specials(b, seed + 1)
    if data.draw(st.booleans(), "shared zeros"):
        b = np.where(a == 0, np.zeros((), a.dtype), b).astype(a.dtype)
    call = getattr(mx.nd, op) if functional else OPERATORS[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        got = call(to_stype(a, stypes[0]), to_stype(b, stypes[1]))
    assert got.stype == "default" and np.dtype(got.dtype) == a.dtype
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got.asnumpy(), NUMPY[op](a, b).astype(a.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_against_itself_and_neighbours(dtype):
    """Large enough for the parallel build (and the tail after whole blocks)."""
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    values = np.array([info.min, info.max, 0, 1, 2], dtype=dtype).repeat(1000 + 3)
    x, shifted = mx.nd.array(values, dtype=dtype), mx.nd.array(np.roll(values, 1), dtype=dtype)
    for op in OPERATORS:
        np.testing.assert_array_equal(OPERATORS[op](x, shifted).asnumpy(),
                                      NUMPY[op](values, np.roll(values, 1)).astype(dtype))
        np.testing.assert_array_equal(OPERATORS[op](x, 1).asnumpy(),
                                      NUMPY[op](values, 1).astype(dtype))


def test_integer_arrays_against_nan_and_inf_answer_as_numpy():
    x = mx.nd.array([[0, -5], [7, 0]], dtype="int32").tostype("row_sparse")
    values = x.asnumpy().astype(np.float64)
    for s in (math.nan, math.inf, -math.inf):
        for op in OPERATORS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", StorageFallbackWarning)
                got = OPERATORS[op](x, s)
            np.testing.assert_array_equal(got.asnumpy(), NUMPY[op](values, s), err_msg=(op, s))
