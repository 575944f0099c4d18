"""gluon.utils' HookHandle, replace_file and shape_is_known, gluon.parameter.tensor_types,
gluon.contrib.data.IntervalSampler and mx.util.get_cuda_compute_capability, against MXNet
1.9.1's documented behaviour (its docstring examples and answers asked of /work/mxvenv)."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue
from sparsegen.gluon.contrib.data import IntervalSampler
from sparsegen.gluon.utils import HookHandle, replace_file, shape_is_known


def test_interval_sampler_mxnet_examples():
    assert list(IntervalSampler(13, interval=3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(IntervalSampler(13, interval=3, rollover=False)) == [0, 3, 6, 9, 12]
    assert len(IntervalSampler(13, 3)) == 13 and len(IntervalSampler(13, 3, False)) == 5


@given(st.integers(1, 60), st.data())
def test_interval_sampler_visits_every_id_once(length, data):
    interval = data.draw(st.integers(1, length))
    ids = list(IntervalSampler(length, interval))
    assert sorted(ids) == list(range(length)) and len(ids) == length
    once = list(IntervalSampler(length, interval, rollover=False))
    assert once == list(range(0, length, interval)) == ids[:len(once)]


def test_interval_sampler_in_a_data_loader_and_bad_arguments():
    data = mx.gluon.data.ArrayDataset(list(range(6)))
    loader = mx.gluon.data.DataLoader(data, batch_size=3, sampler=IntervalSampler(6, 2))
    assert [b.asnumpy().tolist() for b in loader] == [[0, 2, 4], [1, 3, 5]]
    with pytest.raises(InvalidValue, match="interval"):
        IntervalSampler(3, 4)
    with pytest.raises(mx.MXNetError, match="interval"):
        IntervalSampler(3, 0)


def test_hook_handle():
    hooks: OrderedDict = OrderedDict()
    handle = HookHandle()
    handle.attach(hooks, print)
    assert list(hooks.values()) == [print]
    with pytest.raises(mx.MXNetError, match="twice"):
        handle.attach(hooks, print)
    with handle:
        pass
    assert not hooks
    handle.detach()  # a second detach does nothing
    with pytest.raises(InvalidType, match="callable"):
        HookHandle().attach(hooks, 3)
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize()
    seen = []
    block_handle = net.register_forward_hook(lambda block, inputs, output: seen.append(1))
    assert isinstance(block_handle, HookHandle)
    net(mx.nd.ones((1, 2)))
    block_handle.detach()
    net(mx.nd.ones((1, 2)))
    assert seen == [1]


def test_shape_is_known_mxnet_answers():
    # MXNet 1.9.1: (2, 0) False, None False, (2, 3) True, () False
    assert shape_is_known((2, 3)) and not shape_is_known((2, 0))
    assert not shape_is_known(None) and not shape_is_known(())
    with pytest.raises(InvalidValue, match="shape"):
        shape_is_known((2, -1))
    # under numpy shape semantics: (2, 0) True, () True, (2, -1) False, (2, -2) an error
    with mx.util.np_shape(True):
        assert shape_is_known((2, 0)) and shape_is_known(())
        assert not shape_is_known((2, -1)) and not shape_is_known(None)
        with pytest.raises(InvalidValue, match="-2"):
            shape_is_known((2, -2))


def test_replace_file(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    src.write_text("new")
    dst.write_text("old")
    replace_file(str(src), str(dst))
    assert dst.read_text() == "new" and not src.exists()
    with pytest.raises(mx.MXNetError, match="replace_file"):
        replace_file(str(src), str(dst))


def test_tensor_types():
    assert mx.gluon.parameter.tensor_types == (mx.sym.Symbol, mx.nd.NDArray)


def test_get_cuda_compute_capability():
    with pytest.raises(InvalidValue, match="gpu context"):
        mx.util.get_cuda_compute_capability(mx.cpu())
    if mx.context.num_gpus() == 0:
        with pytest.raises(mx.MXNetError, match="gpu"):
            mx.util.get_cuda_compute_capability(mx.gpu(0))
    else:
        capability = mx.util.get_cuda_compute_capability(mx.gpu(0))
        assert isinstance(capability, int) and capability >= 30
