"""``mx.util`` (the shape-semantics switch, ``mx.np`` arrays refused) and the
``mx.test_utils`` helpers MXNet's tests import: ``environment``, ``retry`` and the stochastic
checks (against distributions whose answers are known, and against ones that must fail)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.stats

import sparsegen as mx
from sparsegen import test_utils as tu


def test_util_shape_and_array_switches():
    # MXNet 1.9.1: legacy shape semantics by default, set_np_shape returns the previous state
    assert not mx.util.is_np_shape() and not mx.util.is_np_array()
    assert mx.is_np_shape is mx.util.is_np_shape and mx.np_shape is mx.util.np_shape
    assert mx.util.set_np_shape(True) is False and mx.util.is_np_shape()
    assert mx.util.set_np_shape(False) is True and not mx.util.is_np_shape()
    with mx.util.np_shape(True):
        assert mx.util.is_np_shape()
        with mx.util.np_shape(False):
            assert not mx.util.is_np_shape()
        assert mx.util.is_np_shape()
    assert not mx.util.is_np_shape()
    assert mx.nd.zeros((0, 3)).shape == (0, 3)  # NDArrays: numpy's shapes either way
    for call in (lambda: mx.util.set_np(), lambda: mx.util.set_np_array(True)):
        with pytest.raises(mx.MXNetError):
            call()
        assert not mx.util.is_np_shape()  # a refused call changes nothing

    @mx.util.use_np_shape
    def shaped():
        return mx.util.is_np_shape()

    @mx.util.use_np_shape
    class Shaped:
        def answer(self):
            return mx.util.is_np_shape()

    @mx.util.use_np
    def needs_np():
        return 4

    assert shaped() is True and Shaped().answer() is True and not mx.util.is_np_shape()
    with pytest.raises(NotImplementedError, match="needs_np is decorated to run on mx.np"):
        needs_np()
    mx.util.set_np_shape(True)
    mx.util.reset_np()
    assert not mx.util.is_np_shape()


def test_util_environment_and_devices(tmp_path, monkeypatch):
    monkeypatch.delenv("SG_UTIL_TEST", raising=False)
    mx.util.setenv("SG_UTIL_TEST", "7")
    assert mx.util.getenv("SG_UTIL_TEST") == "7"
    mx.util.setenv("SG_UTIL_TEST", None)
    assert mx.util.getenv("SG_UTIL_TEST") is None
    mx.util.makedirs(str(tmp_path / "a" / "b"))
    mx.util.makedirs(str(tmp_path / "a" / "b"))  # exists: fine
    assert (tmp_path / "a" / "b").is_dir()
    assert mx.util.get_gpu_count() == mx.context.num_gpus()


def test_environment_sets_and_restores(monkeypatch):
    monkeypatch.setenv("SG_ENV_A", "old")
    monkeypatch.delenv("SG_ENV_B", raising=False)
    with pytest.raises(KeyError):
        with tu.environment({"SG_ENV_A": "new", "SG_ENV_B": 1}):
            assert os.environ["SG_ENV_A"] == "new" and os.environ["SG_ENV_B"] == "1"
            raise KeyError  # restored even so
    assert os.environ["SG_ENV_A"] == "old" and "SG_ENV_B" not in os.environ
    with tu.environment("SG_ENV_A", None):
        assert "SG_ENV_A" not in os.environ
    assert os.environ["SG_ENV_A"] == "old"
    with pytest.raises(mx.MXNetError, match="name, value"):
        with tu.environment("a", "b", "c"):
            pass


def test_retry_reruns_assertion_failures_only():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3

    flaky()
    assert len(calls) == 3

    @tu.retry(2)
    def broken():
        raise AssertionError("always")

    with pytest.raises(AssertionError, match="always"):
        broken()


def test_stochastic_checks_accept_the_right_distribution_and_reject_a_wrong_one():
    rng = np.random.default_rng(0)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: scipy.stats.norm.ppf(q), 5)
    assert probs == [0.2] * 5 and buckets[0][0] == -np.inf and buckets[-1][1] == np.inf
    p_values = tu.verify_generator(lambda n: rng.standard_normal(n), buckets, probs,
                                   nsamples=20000)
    assert len(p_values) == 5
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: rng.standard_normal(n) + 0.5, buckets, probs,
                            nsamples=20000)
    # a discrete distribution: the values themselves are the buckets
    p, observed, expected = tu.chi_square_check(lambda n: rng.integers(0, 3, n), [0, 1, 2],
                                                [1 / 3] * 3, nsamples=30000)
    assert observed.sum() == 30000 and expected.sum() == pytest.approx(30000) and p > 1e-4
    assert tu.mean_check(lambda n: rng.normal(2.0, 1.0, n), 2.0, 1.0, 100000)
    assert not tu.mean_check(lambda n: rng.normal(2.1, 1.0, n), 2.0, 1.0, 100000)
    assert tu.var_check(lambda n: rng.normal(0, 2.0, n), 2.0, 100000)
    assert not tu.var_check(lambda n: rng.normal(0, 2.2, n), 2.0, 100000)
    with pytest.raises(mx.MXNetError, match="ascending and disjoint"):
        tu.chi_square_check(lambda n: rng.random(n), [(0.5, 1.0), (0.0, 0.5)], [0.5, 0.5], 10)


def test_discard_stderr_silences_descriptor_2_and_restores_it(capfd):
    with tu.discard_stderr():  # what C libraries write (the descriptor, not sys.stderr)
        os.write(2, b"hidden from the terminal\n")
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_mx_np_stands_in_and_refuses_every_use():
    import sparsegen.numpy as mx_np

    assert mx.np is mx.numpy is mx_np
    with pytest.raises(NotImplementedError, match="mx.np.zeros: MXNet's numpy interface"):
        mx.np.zeros((2,))
    with pytest.raises(mx.MXNetError, match="mx.np.random"):
        mx_np.random.uniform(size=(1,))


def test_contrib_namespaces_and_amp_out_of_scope():
    """``mx.contrib.nd`` / ``sym`` are the contrib namespaces; ``from mxnet.contrib.amp import
    amp`` imports (scripts that import it and train in float32 run) and each AMP call raises
    naming itself."""
    from sparsegen.contrib.amp import amp
    from sparsegen.errors import NotSupported

    assert mx.contrib.nd is mx.nd.contrib and mx.contrib.ndarray is mx.nd.contrib
    assert mx.contrib.sym is mx.sym.contrib and mx.contrib.symbol is mx.sym.contrib
    with pytest.raises(NotSupported, match=r"mx\.contrib\.amp\.init: automatic mixed precision"):
        amp.init()
    with pytest.raises(NotSupported, match=r"mx\.contrib\.amp\.scale_loss"):
        mx.contrib.amp.scale_loss
    with pytest.raises(AttributeError, match="no attribute 'quantization'"):
        mx.contrib.quantization


def test_runtime_features_under_mxnet_names():
    """MXNet's 32 feature names in its order; sparsegen's own answers (generated operators,
    the profiler and the distributed store on; BLAS, MKL-DNN and OpenMP off; the CPU's
    instruction sets from /proc/cpuinfo)."""
    from sparsegen.target import cpu_flags

    features = mx.runtime.Features()
    assert list(features)[:3] == ["CUDA", "CUDNN", "NCCL"] and len(features) == 32
    assert [f.name for f in mx.runtime.feature_list()] == list(features)
    assert features.is_enabled("TVM_OP") and features.is_enabled("dist_kvstore")
    assert not features.is_enabled("MKLDNN") and not features.is_enabled("BLAS_OPEN")
    assert features.is_enabled("CPU_AVX2") == ("avx2" in cpu_flags())
    assert features["CUDA"].enabled == (mx.num_gpus() > 0)
    assert repr(features["TVM_OP"]) == "✔ TVM_OP"
    with pytest.raises(RuntimeError, match="Feature 'NOPE' is unknown, known features are"):
        features.is_enabled("NOPE")


def test_data_helpers_use_files_in_place_and_name_what_is_missing(tmp_path, monkeypatch):
    """download / get_bz2_data / get_zip_data / get_mnist as MXNet's, offline: a file in place
    is used (unpacked as MXNet unpacks it), a missing one raises naming the URL and the path."""
    import bz2
    import gzip
    import struct
    import zipfile

    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"fetch https://h/x.bin and put it at .*d/x.bin"):
        tu.download("https://h/x.bin", dirname="d")
    (tmp_path / "d" / "x.bin").write_bytes(b"1")
    assert tu.download("https://h/x.bin", dirname="d") == os.path.join("d", "x.bin")
    with pytest.raises(mx.MXNetError, match="overwrite=True"):
        tu.download("https://h/x.bin", dirname="d", overwrite=True)

    (tmp_path / "d" / "kdda.t.bz2").write_bytes(bz2.compress(b"1 3:1\n0 2:0.5\n"))
    tu.get_bz2_data("d", "kdda.t", "https://h/kdda.t.bz2", "kdda.t.bz2")
    assert (tmp_path / "d" / "kdda.t").read_bytes() == b"1 3:1\n0 2:0.5\n"
    assert not (tmp_path / "d" / "kdda.t.bz2").exists()  # removed, as MXNet's
    tu.get_bz2_data("d", "kdda.t", "https://h/kdda.t.bz2", "kdda.t.bz2")  # in place: nothing

    with zipfile.ZipFile(tmp_path / "d" / "ml.zip", "w") as zipped:
        zipped.writestr("ml/ratings.dat", "1::2::5\n")
    tu.get_zip_data("d", "https://h/ml.zip", "ml.zip")  # the archive is there: not unpacked
    assert not (tmp_path / "d" / "ml").exists()  # (MXNet unpacks only what it downloads)
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as zipped:
        zipped.writestr("../escape.txt", "x")
    from sparsegen.test_data import _extract_zip

    with pytest.raises(mx.MXNetError, match="outside"):
        _extract_zip(str(tmp_path / "evil.zip"), str(tmp_path / "d"))

    rng = np.random.default_rng(0)
    for split, n in (("train", 3), ("t10k", 2)):
        labels = rng.integers(0, 10, n).astype(np.int8)
        images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
        with gzip.open(tmp_path / f"{split}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())
        with gzip.open(tmp_path / f"{split}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        if split == "t10k":
            got = tu.get_mnist()
            np.testing.assert_array_equal(got["test_label"], labels)
            np.testing.assert_allclose(got["test_data"], images.reshape(n, 1, 28, 28) / 255.0,
                                       rtol=1e-6)
            assert got["train_data"].shape == (3, 1, 28, 28)
            assert got["train_data"].dtype == np.float32
