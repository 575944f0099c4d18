"""GPU arrays: placement, copies between contexts, and every op class on ``gpu(i)`` arrays.

Each test runs twice: on GPUs emulated in host memory (``SPARSEGEN_GPU=host``: the whole GPU code
path with the host kernels, on every machine) and on real CUDA GPUs, where that run skips unless
the machine has one (fails, with ``SPARSEGEN_REQUIRE_CUDA=1``). Values are checked against numpy /
scipy on the host; between them the checks run every kernel family.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import needs_cuda
import sparsegen as mx
from sparsegen import autograd
from sparsegen import cache as kcache
from sparsegen import cuda_runtime, device
from sparsegen.device import DeviceArray
from sparsegen.registry import KERNELS
from sparsegen.update_rules.builtin import BUILT_IN
from sparsegen.target import host_cpu
from test_nn_ops import check_nn_on_gpu
from test_conv import check_conv_on_gpu  # -- conv --
from test_batchnorm import check_batchnorm_on_gpu  # -- batchnorm --
from test_rnn_op import check_rnn_on_gpu  # -- nn_rnn_cell --


@pytest.fixture(params=["host", "cuda"])
def gpu(request, monkeypatch):
    """``mx.gpu(0)`` in one of the two GPU modes (the CUDA one needs a GPU)."""
    monkeypatch.setenv("SPARSEGEN_GPU", request.param)
    if request.param == "cuda":
        needs_cuda.gpu()
    return mx.gpu(0)


def _on_device(array: mx.nd.NDArray) -> bool:
    """Whether every buffer of ``array`` is a device array (no host copy slipped in)."""
    return all(isinstance(b, DeviceArray) for b in device.buffers(array._storage))


def _rsp(rng: np.random.Generator, rows: int, cols: int, density: float) -> np.ndarray:
    dense = rng.standard_normal((rows, cols)).astype(np.float32)
    dense[rng.random(rows) >= density] = 0
    return dense


def test_dense_arrays_live_on_the_gpu(gpu):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.nd.array(values, ctx=gpu)
    assert a.context == gpu and _on_device(a)
    np.testing.assert_array_equal(a.asnumpy(), values)
    np.testing.assert_array_equal(np.asarray(a), values)
    np.testing.assert_array_equal(a.reshape((4, 3)).asnumpy(), values.reshape(4, 3))
    np.testing.assert_array_equal(a[1].asnumpy(), values[1])
    a[1] = 7
    values[1] = 7
    np.testing.assert_array_equal(a.asnumpy(), values)
    for shape, dtype in (((2, 3), "float32"), ((0, 5), "int64"), ((2, 3, 4), "float16"),
                         ((), "float64"), ((5,), "uint8")):
        zeros = mx.nd.zeros(shape, ctx=gpu, dtype=dtype)
        assert _on_device(zeros) and zeros.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(zeros.asnumpy(), np.zeros(shape, dtype))
    np.testing.assert_array_equal(mx.nd.ones((2, 3), ctx=gpu).asnumpy(), np.ones((2, 3)))
    a.wait_to_read()


def test_copies_between_contexts(gpu):
    rng = np.random.default_rng(0)
    dense = _rsp(rng, 9, 3, 0.5)
    host = mx.nd.sparse.row_sparse_array(dense)
    on_gpu = host.copyto(gpu)
    assert on_gpu.context == gpu and _on_device(on_gpu)
    np.testing.assert_array_equal(on_gpu.asnumpy(), dense)
    assert on_gpu.as_in_context(gpu) is on_gpu
    back = on_gpu.as_in_context(mx.cpu())
    assert back.context == mx.cpu() and not _on_device(back)
    np.testing.assert_array_equal(back.asnumpy(), dense)
    np.testing.assert_array_equal(back.indices.asnumpy(), np.flatnonzero(dense.any(axis=1)))
    into = mx.nd.zeros((9, 3), ctx=gpu)
    host.copyto(into)
    assert _on_device(into)
    np.testing.assert_array_equal(into.asnumpy(), dense)
    csr = mx.nd.sparse.csr_matrix(dense, ctx=gpu)
    assert _on_device(csr)
    np.testing.assert_array_equal(csr[2:7].asnumpy(), dense[2:7])
    assert csr.asscipy().nnz == np.count_nonzero(dense)
    copied = csr.copy()
    assert copied.context == gpu and _on_device(copied)


def test_second_gpu_and_mixed_contexts(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    a = mx.nd.ones((2, 2), ctx=mx.gpu(0))
    b = a.as_in_context(mx.gpu(1))
    assert b.context == mx.gpu(1) and b._storage.device != a._storage.device
    np.testing.assert_array_equal(b.asnumpy(), np.ones((2, 2)))
    with pytest.raises(mx.MXNetError, match=r"one context, got gpu\(0\), gpu\(1\)"):
        a + b
    with pytest.raises(mx.MXNetError, match=r"one context, got gpu\(0\), cpu\(0\)"):
        mx.nd.dot(a, mx.nd.ones((2, 2)))
    weight = mx.nd.ones((2, 2), ctx=mx.gpu(0))
    grad = mx.nd.ones((2, 2))
    opt = mx.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(mx.MXNetError, match=r"grad is on cpu\(0\), the weight is on gpu\(0\)"):
        opt.update(0, weight, grad, opt.create_state(0, weight))
    np.testing.assert_array_equal(weight.asnumpy(), np.ones((2, 2)))
    with pytest.raises(mx.MXNetError, match=r"cannot use gpu\(2\): this machine has 2 GPU"):
        mx.nd.ones((1,), ctx=mx.gpu(2))


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(1, 6), density=st.floats(0, 1),
       seed=st.integers(0, 2**16))
def test_ops_on_emulated_gpu_match_numpy(rows, cols, density, seed):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARSEGEN_GPU", "host")
        _check_ops(mx.gpu(0), rows, cols, density, seed)


def test_ops_on_gpu_match_numpy(gpu):
    for rows, cols, density in ((0, 3, 0.5), (1, 1, 1.0), (37, 5, 0.3), (300, 64, 0.1)):
        _check_ops(gpu, rows, cols, density, rows)


def _check_ops(ctx: mx.Context, rows: int, cols: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = _rsp(rng, rows, cols, density), _rsp(rng, rows, cols, density)
    rx = mx.nd.sparse.row_sparse_array(x, ctx=ctx)
    ry = mx.nd.sparse.row_sparse_array(y, ctx=ctx)
    cx = mx.nd.sparse.csr_matrix(x, ctx=ctx)
    dx = mx.nd.array(x, ctx=ctx)
    results = {
        "rsp+rsp": (rx + ry, x + y),
        "rsp-rsp": (rx - ry, x - y),
        "rsp*rsp": (rx * ry, x * y),
        "csr+csr": (cx + mx.nd.sparse.csr_matrix(y, ctx=ctx), x + y),
        "dense+rsp": (dx + ry, x + y),
        "rsp*dense": (rx * mx.nd.array(y, ctx=ctx), x * y),
        "sqrt": (mx.nd.sqrt(rx * rx), np.sqrt(x * x)),
        "scalar": (rx * 3, x * 3),
        "rsp>0": (rx > 0, (x > 0).astype(x.dtype)),
        "csr!=0": (cx != 0, (x != 0).astype(x.dtype)),
        "dense<=dense": (dx <= mx.nd.array(y, ctx=ctx), (x <= y).astype(x.dtype)),
        "cast": (dx.tostype("row_sparse").tostype("default"), x),
        "csr cast": (dx.tostype("csr"), x),
    }
    if rows:
        ids = np.unique(rng.integers(0, rows, size=3))
        kept = np.zeros_like(x)
        kept[ids] = x[ids]
        results["retain"] = (mx.nd.sparse.retain(rx, mx.nd.array(ids, ctx=ctx, dtype="int64")),
                             kept)
    w = rng.standard_normal((cols, 4)).astype(np.float32)
    wd = mx.nd.array(w, ctx=ctx)
    results["csr.dense"] = (mx.nd.dot(cx, wd), x @ w)
    v = rng.standard_normal((rows, 4)).astype(np.float32)
    results["csrT.dense"] = (mx.nd.dot(cx, mx.nd.array(v, ctx=ctx), transpose_a=True), x.T @ v)
    results["dense.csr"] = (mx.nd.dot(mx.nd.array(v.T, ctx=ctx), cx), v.T @ x)
    for name, (got, want) in results.items():
        assert got.context == ctx and _on_device(got), name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_optimizer_updates_on_gpu(gpu):
    _check_optimizers(gpu, (("sgd", {"momentum": 0.9, "wd": 0.01}), ("adam", {"wd": 0.01}),
                            ("adagrad", {}), ("ftrl", {"wd": 0.01})))


def _check_optimizers(gpu: mx.Context, optimizers: tuple[tuple[str, dict], ...]) -> None:
    """Three updates of each optimizer (name, hyper-parameters) on ``gpu`` give the weights of
    the same updates on the CPU."""
    rng = np.random.default_rng(1)
    rows, cols = 50, 8
    grad_dense = _rsp(rng, rows, cols, 0.3)
    for name, kwargs in optimizers:
        weights = {}
        for ctx in (mx.cpu(), gpu):
            opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
            weight = mx.nd.array(np.linspace(-1, 1, rows * cols).reshape(rows, cols), ctx=ctx)
            grad = mx.nd.sparse.row_sparse_array(grad_dense, ctx=ctx)
            state = opt.create_state(0, weight)
            for _ in range(3):
                opt.update(0, weight, grad, state)
            assert _on_device(weight) == (ctx == gpu)
            weights[ctx] = weight.asnumpy()
        np.testing.assert_allclose(weights[gpu], weights[mx.cpu()], rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def _check_compression(gpu: mx.Context) -> None:
    """2-bit compressed pushes of arrays on ``gpu`` (rule ``quantize_2bit``'s kernel there)
    against numpy: residual + push, thresholded at 0.5, summed over the arrays."""
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((4, 3), ctx=gpu))
    pushed = np.array([[0.3, 0.6, -0.7], [0.0, 1.2, -0.2], [0.5, -0.5, 0.49], [2.0, 0.1, -3.0]],
                      np.float32)
    kv.push(0, [mx.nd.array(pushed, ctx=gpu), mx.nd.array(pushed, ctx=gpu)])
    out = mx.nd.zeros((4, 3), ctx=gpu)
    kv.pull(0, out=out)
    want = 2 * 0.5 * ((pushed >= 0.5).astype(np.float32) - (pushed <= -0.5))
    np.testing.assert_allclose(out.asnumpy(), want)


def _check_other_ops(ctx: mx.Context) -> None:
    """The ops of the kernel families that ``_check_ops`` leaves out, against numpy."""
    rng = np.random.default_rng(2)
    x, y = _rsp(rng, 40, 6, 0.4), _rsp(rng, 6, 3, 0.5)
    cx, dx = mx.nd.sparse.csr_matrix(x, ctx=ctx), mx.nd.array(x, ctx=ctx)
    v = rng.standard_normal((5, 6)).astype(np.float32)
    results = {
        "csr.rsp": (mx.nd.dot(cx, mx.nd.sparse.row_sparse_array(y, ctx=ctx)), x @ y),
        "dense.csrT": (mx.nd.dot(mx.nd.array(v, ctx=ctx), cx[0:3], transpose_b=True),
                       v @ x[0:3].T),
        "dense.dense": (mx.nd.dot(dx, mx.nd.array(y, ctx=ctx)), x @ y),
        "dense+dense": (dx + dx, x + x),
        "csr to dense": (cx.tostype("default"), x),
        "transpose": (mx.nd.transpose(dx), x.T),  # kernel strided
        "concat": (mx.nd.concat(dx, dx, dim=0), np.concatenate([x, x])),  # kernel shape
    }
    results["csr sum"] = (mx.nd.sum(cx, axis=0), x.sum(axis=0))  # -- reduce --
    for name, (got, want) in results.items():
        assert got.context == ctx and _on_device(got), name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5, err_msg=name)


def _check_random(ctx: mx.Context) -> None:
    """One seed draws the CPU's numbers on ``ctx`` (kernels ``random``, ``random_multinomial``)."""
    probabilities = np.tile(np.float32([0.1, 0.3, 0.6]), (20, 1))
    draws = []
    for where in (mx.cpu(), ctx):
        mx.random.seed(7)
        uniform = mx.nd.random.uniform(shape=(50,), ctx=where)
        picks = mx.nd.random.multinomial(mx.nd.array(probabilities, ctx=where))
        assert uniform.context == picks.context == where
        draws.append((uniform.asnumpy(), picks.asnumpy()))
    (u_cpu, m_cpu), (u_ctx, m_ctx) = draws
    assert 0 <= u_cpu.min() and u_cpu.max() < 1 and set(np.unique(m_cpu)) <= {0, 1, 2}
    np.testing.assert_array_equal(u_ctx, u_cpu)
    np.testing.assert_array_equal(m_ctx, m_cpu)


def _check_issue38_ops(ctx: mx.Context) -> None:
    """Kernels ``linalg``, ``nn_batch_dot``, ``nn_cumsum``, ``graph``, ``graph_sample`` and
    ``random_unique_zipfian`` on ``ctx``, against numpy (the samplers: against the CPU's
    draws for one seed); then the signal kernels (``_check_signal_ops``)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3, 3))
    spd = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    x = mx.nd.array(spd, ctx=ctx, dtype="float64")
    np.testing.assert_allclose(mx.nd.linalg.potrf(x).asnumpy(), np.linalg.cholesky(spd),
                               rtol=1e-10)
    np.testing.assert_allclose(mx.nd.linalg.inverse(x).asnumpy(), np.linalg.inv(spd), rtol=1e-8)
    np.testing.assert_allclose(mx.nd.linalg.det(x).asnumpy(), np.linalg.det(spd), rtol=1e-8)
    b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    c = rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(
        mx.nd.batch_dot(mx.nd.array(b, ctx=ctx), mx.nd.array(c, ctx=ctx)).asnumpy(), b @ c,
        rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mx.nd.cumsum(mx.nd.array(b, ctx=ctx), axis=1).asnumpy(),
                               np.cumsum(b, axis=1), rtol=1e-5, atol=1e-5)
    graph = scipy.sparse.csr_matrix(np.float32([[0, 2, 0], [3, 0, 4], [0, 0, 5]]))
    u, v = mx.nd.array([0, 1, 2, 2], ctx=ctx), mx.nd.array([1, 1, 2, 0], ctx=ctx)
    ids = mx.nd.contrib.edge_id(mx.nd.sparse.csr_matrix(graph, ctx=ctx), u, v)
    np.testing.assert_array_equal(ids.asnumpy(), [2, -1, 5, -1])
    edges = mx.nd.sparse.csr_matrix(graph.astype(np.int64), ctx=ctx)  # kernel graph_sample
    new, old = mx.nd.contrib.dgl_subgraph(edges, mx.nd.array([0, 1], ctx=ctx, dtype="int64"),
                                          return_mapping=True)
    assert new.context == ctx and old.asnumpy().tolist() == [[0, 2], [3, 0]]
    sampled = []
    for where in (mx.cpu(), ctx):
        mx.random.seed(13)
        out = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
            mx.nd.sparse.csr_matrix(graph.astype(np.int64), ctx=where),
            mx.nd.array([0.5, 1.0, 2.0], ctx=where), mx.nd.array([1], ctx=where, dtype="int64"),
            num_hops=2, num_neighbor=1, max_num_vertices=3)
        assert out[1].context == where
        sampled.append([o.asnumpy().tolist() for o in out])
    assert sampled[1] == sampled[0]
    classes = []
    for where in (mx.cpu(), ctx):
        mx.random.seed(11)
        drawn, _ = mx.nd._internal._sample_unique_zipfian(50, shape=(3, 10), ctx=where)
        classes.append(drawn.asnumpy())
    np.testing.assert_array_equal(classes[1], classes[0])
    _check_signal_ops(ctx)


def _check_signal_ops(ctx: mx.Context) -> None:
    """Kernels ``signal`` (both fft lengths: radix 2 and direct), ``count_sketch`` and ``hawkes``
    on ``ctx``, against numpy and a hand-computed likelihood, gradients included."""
    rng = np.random.default_rng(7)
    for d in (8, 6):
        x = rng.standard_normal((3, d)).astype(np.float32)
        y = mx.nd.contrib.fft(mx.nd.array(x, ctx=ctx))
        want = np.fft.fft(x)
        np.testing.assert_allclose(y.asnumpy()[:, 0::2], want.real, atol=1e-4)
        np.testing.assert_allclose(y.asnumpy()[:, 1::2], want.imag, atol=1e-4)
        np.testing.assert_allclose(mx.nd.contrib.ifft(y).asnumpy(), d * x, atol=1e-4)
    data = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]], ctx=ctx)
    data.attach_grad()
    with autograd.record():
        sketch = mx.nd.contrib.count_sketch(data, mx.nd.array([[0, 3, 4]], ctx=ctx),
                                            mx.nd.array([[1, -1, 1]], ctx=ctx), out_dim=5)
    sketch.backward(mx.nd.ones((2, 5), ctx=ctx))
    np.testing.assert_allclose(sketch.asnumpy(), [[1.2, 0, 0, -2.5, 3.4],
                                                  [3.2, 0, 0, -5.7, 6.6]], rtol=1e-6)
    np.testing.assert_array_equal(data.grad.asnumpy(), [[1, -1, 1]] * 2)
    lda = mx.nd.array([[1.5]], ctx=ctx)
    lda.attach_grad()
    with autograd.record():
        ll, _ = mx.nd.contrib.hawkesll(
            lda, mx.nd.array([0.2], ctx=ctx), mx.nd.array([1.0], ctx=ctx),
            mx.nd.zeros((1, 1), ctx=ctx), mx.nd.array([[1.0, 2.0]], ctx=ctx),
            mx.nd.zeros((1, 2), ctx=ctx, dtype="int32"), mx.nd.array([2.0], ctx=ctx),
            mx.nd.array([4.0], ctx=ctx))
    ll.backward()
    # events at t = 1, 3 (states 0, then 1; 1 + e^-2 after), observed until 4
    want = (math.log(1.5) + math.log(1.5 + 0.2 * math.exp(-2)) - 1.5 * 4
            - 0.2 * (1 - math.exp(-2)) - 0.2 * (1 + math.exp(-2)) * (1 - math.exp(-1)))
    np.testing.assert_allclose(ll.asnumpy(), [want], rtol=1e-5)
    np.testing.assert_allclose(lda.grad.asnumpy(),
                               [[1 / 1.5 + 1 / (1.5 + 0.2 * math.exp(-2)) - 4]], rtol=1e-5)


def test_every_kernel_family_runs_on_the_gpu(gpu, monkeypatch):
    """Between them the value checks above run every kernel family on ``gpu``: on a CUDA GPU,
    every family's CUDA build, checked against numpy (or the CPU's checked results)."""
    loaded = []
    get = kcache.KernelCache.get
    monkeypatch.setattr(kcache.KernelCache, "get",
                        lambda self, key: loaded.append(key) or get(self, key))
    kcache.forget_choices()  # every kernel is asked of the cache again, not of the call memo
    _check_ops(gpu, 37, 5, 0.3, 37)
    _check_other_ops(gpu)
    _check_arith_ops(gpu)  # -- arith --
    _check_optimizers(gpu, (("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {}),
                            ("adagrad", {}), ("ftrl", {})))
    _check_optimizers(gpu, (("rmsprop", {}), ("rmsprop", {"centered": True}),  # issue 13
                            ("nag", {"momentum": 0.9}), ("signum", {}), ("signum", {"momentum": 0}),
                            ("adadelta", {}), ("adamax", {}), ("nadam", {}), ("lamb", {})))
    _check_optimizers(gpu, (("ftml", {}), ("dcasgd", {"momentum": 0.9}), ("groupadagrad", {}),
                            ("test", {})))  # issue 38
    _check_compression(gpu)
    check_nn_on_gpu(gpu)  # the nn kernels (tests/test_nn_ops.py)
    check_conv_on_gpu(gpu)  # -- conv -- (tests/test_conv.py)
    check_batchnorm_on_gpu(gpu)  # -- batchnorm -- (tests/test_batchnorm.py)
    _check_random(gpu)
    _check_issue38_ops(gpu)
    check_rnn_on_gpu(gpu)  # -- nn_rnn_cell -- (tests/test_rnn_op.py)
    target = host_cpu() if device.emulated() else device.cuda_target(0)
    rules = {k for k in KERNELS if k.startswith("optim_") and k[len("optim_"):] not in BUILT_IN}
    # update rules beyond MXNet's optimizers (sparsegen.updates, and any a test registered) are
    # not run by this check: tests/test_update_rules.py compiles them for CUDA
    loaded_here = {key.kernel for key in loaded if key.target == target}
    assert loaded_here - rules == set(KERNELS) - HOST_ONLY - rules


HOST_ONLY = {"libsvm"}
"""Kernels that run on host memory only: ``libsvm`` parses file bytes (mx.io's LibSVMIter gives
host arrays, as MXNet's); its CUDA build is checked by tests/test_cuda.py."""


def test_csr_from_scipy_on_gpu(gpu):
    matrix = scipy.sparse.random(30, 20, density=0.2, format="csr", dtype=np.float64,
                                 random_state=3)
    csr = mx.nd.sparse.csr_matrix(matrix, ctx=gpu)
    assert _on_device(csr)
    np.testing.assert_allclose(csr.asnumpy(), matrix.toarray())
    np.testing.assert_allclose(csr.astype("float32").asnumpy(), matrix.toarray(), rtol=1e-6)
    csr.check_format()


def test_device_array_basics(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    values = np.arange(10, dtype=np.int64).reshape(5, 2)
    buffer = DeviceArray.from_numpy(values, device.gpu_device(0))
    assert (buffer.shape, buffer.dtype, buffer.size, buffer.nbytes) == ((5, 2), values.dtype,
                                                                       10, 80)
    np.testing.assert_array_equal(buffer.reshape(-1).numpy(), values.reshape(-1))
    np.testing.assert_array_equal(buffer.head(2).numpy(), values[:2])
    np.testing.assert_array_equal(buffer.rows(1, 4).numpy(), values[1:4])
    assert buffer.item(-1) == 9 and buffer.item(3) == 3
    assert buffer.overlaps(buffer.head(1)) and not buffer.overlaps(buffer.copy())
    with pytest.raises(mx.MXNetError, match=r"cannot reshape an array of shape \(5, 2\) to \(3,\)"):
        buffer.reshape(3)
    with pytest.raises(mx.MXNetError, match="cannot copy float32 values of shape"):
        buffer.copy_from(np.zeros((5, 2), np.float32))
    empty = DeviceArray.empty((0, 3), np.float32, device.gpu_device(0))
    assert empty.numpy().shape == (0, 3)


def test_bad_gpu_mode_is_named(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "rocm")
    with pytest.raises(mx.MXNetError, match="SPARSEGEN_GPU must be 'cuda' or 'host', got 'rocm'"):
        mx.nd.ones((1,), ctx=mx.gpu(0))


def test_cubin_callback_serves_registered_cubins_then_steps_aside():
    from sparsegen.tvm_runtime import tvm_ffi

    name = "tvm_callback_cuda_compile"
    before = tvm_ffi.get_global_func(name, allow_missing=True)
    cuda_runtime.register_cubin("// kernel A", b"\x7fELF-A")
    with cuda_runtime.serving_cubins("sm_90"):
        assert bytes(tvm_ffi.get_global_func(name)("// kernel A")) == b"\x7fELF-A"
    after = tvm_ffi.get_global_func(name, allow_missing=True)
    assert (after is None) == (before is None)  # TVM's own callback (or none) is back


def test_host_sharing_interop_refuses_gpu_arrays(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    rsp = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2), ctx=mx.gpu(0))
    csr = mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1, 1]), shape=(2, 2), ctx=mx.gpu(0))
    with pytest.raises(mx.MXNetError, match=r"to_pair: the array is on gpu\(0\)"):
        mx.interop.to_pair(rsp)
    with pytest.raises(mx.MXNetError, match=r"to_scipy: the array is on gpu\(0\)"):
        mx.interop.to_scipy(csr)
    values, ids = mx.interop.to_pair(rsp.as_in_context(mx.cpu()))
    np.testing.assert_array_equal(ids, [1])
    np.testing.assert_array_equal(values, [[1.0, 2.0]])


def test_cuda_kernel_without_cuda_libraries_says_why(fresh_cache):
    try:
        cuda_runtime.load()
    except mx.MXNetError:
        pass
    else:
        pytest.skip("the CUDA libraries load on this machine")
    key = mx.choice.kernel_key("retain", ("float32",), mx.target.cuda("sm_90"))
    with pytest.raises(mx.MXNetError, match="the CUDA runtime cannot be loaded"):
        fresh_cache.get(key)
    assert fresh_cache.stats["built"] == fresh_cache.stats["rebuilt"] == 0


def test_retain_checks_gpu_ids_on_the_gpu(gpu, monkeypatch):
    rsp = mx.nd.sparse.row_sparse_array(
        (np.arange(12, dtype=np.float32).reshape(4, 3), [1, 3, 6, 8]), shape=(10, 3), ctx=gpu)
    dense = rsp.asnumpy()
    host_reads = []
    original = device.DeviceArray.numpy
    monkeypatch.setattr(device.DeviceArray, "numpy",
                        lambda self: host_reads.append(self.shape) or original(self))
    ids = mx.nd.array([0, 3, 8, 9], ctx=gpu, dtype="int64")
    kept = mx.nd.sparse.retain(rsp, ids)
    assert host_reads == [] and _on_device(kept)  # checked and used on the device
    expected = np.zeros_like(dense)
    expected[[0, 3, 8, 9]] = dense[[0, 3, 8, 9]]
    np.testing.assert_array_equal(kept.asnumpy(), expected)
    for unsorted in ([8, 3, 3], [5, 1]):  # any order and repeats: sorted on the host
        got = mx.nd.sparse.retain(rsp, mx.nd.array(unsorted, ctx=gpu, dtype="int64"))
        np.testing.assert_array_equal(got.indices.asnumpy(), np.unique(unsorted))
    for bad in ([3, 10], [-1, 2]):
        with pytest.raises(mx.MXNetError, match=r"indices out of range \[0, 10\)"):
            mx.nd.sparse.retain(rsp, mx.nd.array(bad, ctx=gpu, dtype="int64"))
    empty = mx.nd.sparse.retain(rsp, mx.nd.array(np.zeros(0, np.int64), ctx=gpu, dtype="int64"))
    assert empty.indices.asnumpy().size == 0


# -- arith --
def _check_arith_ops(ctx: mx.Context) -> None:
    """The arith kernels (ew_arith, bcast_csr, where, and strided broadcasting), against numpy."""
    rng = np.random.default_rng(4)
    x = _rsp(rng, 20, 4, 0.5)
    row = rng.standard_normal((1, 4)).astype(np.float32)
    dx, drow = mx.nd.array(x, ctx=ctx), mx.nd.array(row, ctx=ctx)
    cx = mx.nd.sparse.csr_matrix(x, ctx=ctx)
    results = {
        "maximum": (mx.nd.maximum(dx, dx * 0.5), np.maximum(x, x * 0.5)),
        "dense + row": (dx + drow, x + row),
        "csr * row": (cx * drow, x * row),
        "where csr": (mx.nd.where(cx, dx, dx * 2), np.where(x != 0, x, x * 2)),
    }
    for name, (got, want) in results.items():
        assert got.context == ctx and _on_device(got), name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=name)
