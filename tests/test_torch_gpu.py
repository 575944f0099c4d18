"""sparsegen.torch off the host: sparse COO gradients coalesced where they live, on GPUs emulated
in host memory (``SPARSEGEN_GPU=host``: ``DeviceArray`` buffers, every machine) and on torch
``cuda`` tensors (skipped without a CUDA GPU and a CUDA build of torch; a failure with
``SPARSEGEN_REQUIRE_CUDA=1``), against torch's own coalesce and optimizers and numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import needs_cuda  # noqa: E402
import sparsegen.torch as sgt  # noqa: E402
from sparsegen import device  # noqa: E402
from sparsegen.device import DeviceArray  # noqa: E402
from sparsegen.errors import SparsegenError  # noqa: E402
from sparsegen.torch.coalesce import check_ids, coalesce_rows  # noqa: E402
from test_torch_optim import BAD_GRADIENTS, PAIRS  # noqa: E402 - torch's optimizers and ours
from test_torch_optim import ROWS as BAD_ROWS  # noqa: E402 - the rows BAD_GRADIENTS are for

ROWS, WIDTH = 50, 5


def _oracle(ids: np.ndarray, values: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's coalesce: sorted unique ids and the float64 sums of their rows."""
    sums = np.zeros((rows, values.shape[1]))
    np.add.at(sums, ids, values.astype(np.float64))
    kept = np.unique(ids)
    return kept, sums[kept]


@settings(max_examples=25, deadline=None)
@given(count=st.integers(0, 70), rows=st.integers(1, 40), width=st.integers(1, 6),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_coalesce_rows_on_emulated_gpu_arrays(count, rows, width, dtype, seed) -> None:
    """Device buffers in, device buffers out (no host copy), values as numpy sums them."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, rows, count)
    values = rng.standard_normal((count, width)).astype(dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARSEGEN_GPU", "host")
        where = device.gpu_device(0)
        got_ids, got = coalesce_rows(DeviceArray.from_numpy(ids, where),
                                     DeviceArray.from_numpy(values, where), rows)
        assert isinstance(got_ids, DeviceArray) and isinstance(got, DeviceArray)
        assert got_ids.device == where and got.device == where
        want_ids, want = _oracle(ids, values, rows)
        np.testing.assert_array_equal(got_ids.numpy(), want_ids)
        assert got.numpy().dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype == "float32" else 1e-12,
                                   atol=1e-5 if dtype == "float32" else 1e-12)
        # the buffers go to torch without a copy, as they do from a CUDA GPU
        assert not got.size or torch.from_dlpack(got).data_ptr() == got.tensor.data_ptr()


@pytest.mark.parametrize("bad", [-1, ROWS, 2**40])
def test_out_of_range_ids_on_emulated_gpu_are_named(bad: int, monkeypatch) -> None:
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    where = device.gpu_device(0)
    ids = DeviceArray.from_numpy(np.array([3, 1, bad, 2]), where)
    values = DeviceArray.from_numpy(np.ones((4, WIDTH), np.float32), where)
    with pytest.raises(SparsegenError, match=rf"\[0, {ROWS}\), got {bad} at position 2"):
        coalesce_rows(ids, values, ROWS)


@pytest.mark.parametrize("ids, refusal", [
    ([1, 3, 7], None),
    ([], None),
    ([1, 7, 3], "sorted and unique, got 7 then 3 at position 2"),
    ([4, 4], "sorted and unique, got 4 then 4 at position 1"),
    ([1, ROWS], rf"\[0, {ROWS}\), got {ROWS} at position 1"),
])
def test_coalesced_ids_on_emulated_gpu_are_checked_there(ids, refusal, monkeypatch) -> None:
    """The ids of a gradient told coalesced are checked to rise on the device (no host copy
    of them: only the ones named are read back, one element each)."""
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    buffer = DeviceArray.from_numpy(np.array(ids, np.int64), device.gpu_device(0))
    host_reads = []
    original = DeviceArray.numpy
    monkeypatch.setattr(DeviceArray, "numpy",
                        lambda self: host_reads.append(self.shape) or original(self))
    if refusal is None:
        check_ids(buffer, ROWS, rising=True)
    else:
        with pytest.raises(SparsegenError, match=refusal):
            check_ids(buffer, ROWS, rising=True)
    assert host_reads == []


@pytest.fixture()
def cuda(monkeypatch) -> torch.device:
    """torch's ``cuda:0``, where sparsegen's CUDA kernels run (skips without a GPU)."""
    monkeypatch.setenv("SPARSEGEN_GPU", "cuda")
    needs_cuda.gpu()
    if not torch.cuda.is_available():
        needs_cuda.skip(f"torch {torch.__version__} is not a CUDA build or sees no GPU")
    return torch.device("cuda", 0)


def _gradient(count: int, rows: int, width: int, dtype: torch.dtype, at: torch.device,
              seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, rows, (count,), generator=gen)
    values = torch.randn(count, width, generator=gen, dtype=torch.float64).to(dtype)
    return torch.sparse_coo_tensor(ids[None], values, (rows, width)).to(at)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("count", [0, 1, 300, 20_000])
def test_coalesce_on_cuda_matches_torch(cuda, count: int, dtype: torch.dtype) -> None:
    """A CUDA gradient is coalesced on the GPU: CUDA tensors out, torch's coalesce's values."""
    grad = _gradient(count, 1000, 7, dtype, cuda, count)
    ids, values = sgt.coalesce(grad, 1000)
    assert ids.device == cuda and values.device == cuda and values.dtype == dtype
    want = grad.coalesce()
    torch.testing.assert_close(ids, want.indices()[0], rtol=0, atol=0)
    torch.testing.assert_close(values, want.values())


def test_out_of_range_ids_on_cuda_are_named(cuda) -> None:
    grad = torch.sparse_coo_tensor(torch.tensor([[0, ROWS + 3, 1]]), torch.ones(3, WIDTH),
                                   (ROWS + 5, WIDTH)).to(cuda)
    with pytest.raises(SparsegenError, match=rf"got {ROWS + 3} at position 1"):
        sgt.coalesce(grad, ROWS)


@pytest.mark.parametrize("bag", [False, True])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_optimizers_on_cuda_match_torch(cuda, name: str, bag: bool) -> None:
    """Three steps of an embedding model on the GPU by torch's optimizer and by sparsegen.torch's
    (updated in place: the weight's memory never moves) agree."""
    make_ref, make_mine, sparse = PAIRS[name]
    torch.manual_seed(1)
    make = (lambda: torch.nn.EmbeddingBag(ROWS, WIDTH, mode="sum", sparse=sparse)) if bag \
        else (lambda: torch.nn.Embedding(ROWS, WIDTH, sparse=sparse))
    a, b = make().to(cuda), make().to(cuda)
    b.weight.data.copy_(a.weight.data)
    ref, mine = make_ref(a.parameters()), make_mine(b.parameters())
    where = b.weight.data_ptr()
    gen = torch.Generator().manual_seed(2)
    for _ in range(3):
        ids = torch.randint(0, ROWS, (16, 3), generator=gen).to(cuda)  # repeated ids
        for model, optimizer in ((a, ref), (b, mine)):
            optimizer.zero_grad()
            (model(ids if bag else ids.reshape(-1)) ** 2).sum().backward()
            optimizer.step()
    assert b.weight.data_ptr() == where and b.weight.device == cuda
    torch.testing.assert_close(b.weight, a.weight, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", BAD_GRADIENTS)
def test_bad_gradient_on_cuda_leaves_the_weight(cuda, bad: str) -> None:
    """A sparse gradient with an id out of range, or told coalesced with ids that do not rise,
    is refused before any kernel writes."""
    ids, coalesced, refusal = BAD_GRADIENTS[bad]
    model = torch.nn.Embedding(BAD_ROWS, WIDTH, sparse=True).to(cuda)
    optimizer = sgt.Adam(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    model.weight.grad = torch.sparse_coo_tensor(  # torch checks no ids unless asked
        torch.tensor([ids]), torch.ones(3, WIDTH), (BAD_ROWS, WIDTH), check_invariants=False,
        is_coalesced=coalesced).to(cuda)
    with pytest.raises(SparsegenError, match=refusal):
        optimizer.step()
    torch.testing.assert_close(model.weight.detach(), before, rtol=0, atol=0)
