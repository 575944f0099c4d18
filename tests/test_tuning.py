"""The tuner: records it writes, the config the compiler then picks, malformed logs."""

import json
import warnings

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import cache as kcache
from sparsegen import cli, device, kernels, tuning_records
from sparsegen.choice import choose
from sparsegen.registry import KERNELS
from sparsegen.tvm_runtime import tvm_ffi
from sparsegen.schedules.space import Knob, ScheduleSpace
from sparsegen.target import Target, cuda, host_cpu
from sparsegen.tune import tuner, workloads
from sparsegen.tuning_records import TuningLogWarning


def test_tune_writes_records_and_the_best_is_used(fresh_cache):
    log = tuning_records.user_log()
    outcome = tuner.tune_one("retain", ("float32",), host_cpu(), "medium", trials=3, log=log, rounds=3)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 3
    for line in lines:
        assert line["kernel"] == "retain" and line["dtypes"] == ["float32"]
        assert line["target"]["kind"] == "llvm" and line["workload"]["bucket"] == "medium"
        assert line["median_s"] > 0 and set(line["versions"]) >= {"tvm", "sparsegen"}
        assert set(line["config"]) == {"parallel", "chunk", "lanes", "serial_below"}
        assert tuning_records.parse(json.dumps(line), "test") is not None
    fastest = min(lines, key=lambda line: line["median_s"])["config"]
    assert dict(outcome.best) == fastest
    kcache.forget_choices()
    choice = choose("retain", ("float32",), None, None, "medium")
    assert choice.source == "user" and dict(choice.config) == fastest
    # a call in the medium bucket runs the tuned binary: its cache key holds the tuned knobs
    rsp = mx.nd.sparse.row_sparse_array(np.ones((4096, 128), np.float32))
    mx.nd.sparse.retain(rsp, np.arange(0, 4096, 2))
    used = [k for k in kcache.default_cache()._memory if k.kernel == "retain"]
    expected_parallel = fastest["parallel"] and 2048 * 128 >= fastest["serial_below"]
    assert any(dict(k.config) == {**{n: fastest[n] for n in ("chunk", "lanes")},
                                  "parallel": expected_parallel} for k in used)


def test_malformed_and_foreign_lines_are_skipped_with_warnings(fresh_cache):
    log = tuning_records.user_log()
    log.parent.mkdir(parents=True)
    good = {"kernel": "retain", "dtypes": ["float64"], "target": host_cpu().as_dict,
            "workload": {"bucket": "large"}, "median_s": 0.001,
            "config": {"parallel": True, "chunk": 64, "lanes": 8, "serial_below": 0}}
    log.write_text("\n".join([
        "not json at all",
        json.dumps({"some": "other tool"}),
        json.dumps({**good, "workload": {"bucket": "huge"}}),
        json.dumps({**good, "median_s": -1}),
        json.dumps([1, 2, 3]),
        json.dumps(good),
        "",
    ]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        choice = choose("retain", ("float64",), None, None, "large")
    skipped = [w for w in caught if issubclass(w.category, TuningLogWarning)]
    assert len(skipped) == 5
    assert all("skipping a line" in str(w.message) for w in skipped)
    assert choice.source == "user" and dict(choice.config) == good["config"]


def test_records_for_other_cpus_or_knob_sets_do_not_apply(fresh_cache):
    log = tuning_records.user_log()
    log.parent.mkdir(parents=True)
    other = {"kernel": "retain", "dtypes": ["float64"], "target": {"kind": "llvm", "mcpu": "other"},
             "workload": {"bucket": "large"}, "median_s": 0.001,
             "config": {"parallel": True, "chunk": 64, "lanes": 8, "serial_below": 0}}
    stale = {**other, "target": host_cpu().as_dict, "config": {"parallel": True, "tile": 3}}
    log.write_text(json.dumps(other) + "\n" + json.dumps(stale) + "\n")
    assert choose("retain", ("float64",), None, None, "large").source in ("default", "shipped")


def test_size_buckets():
    assert tuning_records.size_bucket(0) == "small"
    assert tuning_records.size_bucket(2**15) == "medium"
    assert tuning_records.size_bucket(2**30) == "large"


def test_small_calls_use_the_serial_build(fresh_cache):
    choice = choose("cast_rsp_dense", ("float32",), None, {"serial_below": 4096}, "small")
    assert dict(choice.key.config)["parallel"] is True
    assert dict(choice.small_key.config)["parallel"] is False
    small = kcache.get_kernel("cast_rsp_dense", ("float32",), config={"serial_below": 4096}, size=100)
    large = kcache.get_kernel("cast_rsp_dense", ("float32",), config={"serial_below": 4096}, size=10**6)
    assert small.key == choice.small_key and large.key == choice.key


def test_the_schedule_space_declares_its_small_call_build():
    space = ScheduleSpace("test", (
        Knob("mode", ("wide", "narrow"), "wide", "how it runs", small="narrow"),
        Knob("below", (0, 100), 100, "calls of fewer elements are small", threshold=True),
        Knob("width", (1, 2), 2, "a knob small calls keep"),
    ), apply=lambda sch, config: None)
    full, small, below = space.variants(space.config({"width": 1}))
    assert full == (("mode", "wide"), ("width", 1))
    assert small == (("mode", "narrow"), ("width", 1)) and below == 100
    narrow = space.variants(space.config({"mode": "narrow"}))
    assert narrow.full == narrow.small and narrow.small_below == 0  # already the small build


def test_cuda_records_apply_to_gpus_of_their_architecture(fresh_cache, tmp_path, monkeypatch,
                                                          capsys):
    """A CUDA tuning run's records (timed by a stand-in: no GPU here) are what `info --tuning`
    then reports for a GPU of that architecture."""

    class Timer:
        def __init__(self, key, calls):
            self.first = 1e-3 / dict(key.config)["threads"]  # more threads, faster

        def __call__(self, number):
            return self.first

    monkeypatch.setattr(tuner, "_Timer", Timer)
    monkeypatch.setattr(tuner, "_device", lambda target: tvm_ffi.device("cpu", 0))
    target = cuda("sm_90")
    outcome = tuner.tune_one("retain", ("float32",), target, "small", trials=6,
                             log=tuning_records.user_log(), rounds=1, ship=tmp_path)
    assert outcome.timed == 6 and dict(outcome.best)["threads"] == 512
    shipped = (tmp_path / "cuda-sm_90-retain.jsonl").read_text()
    assert shipped == tuning_records.user_log().read_text()
    monkeypatch.setattr(device, "num_gpus", lambda: 1)
    monkeypatch.setattr(device, "cuda_target", lambda device_id: target)
    kcache.forget_choices()
    cli._tuning_report()
    expected = (f"cuda-sm_90         retain             float32  small   user     cuda-sm_90           "
                f"{dict(outcome.best)}")
    assert expected in capsys.readouterr().out


def test_nearest_cpu_of_the_family():
    from sparsegen.cpu_families import family, nearest

    assert family("rocketlake") == "intel-avx512" and family("znver4") == "amd-zen"
    assert family("some-future-cpu") is None and family(None) is None
    # the nearest generation; the newer on a tie; never a CPU of another family
    assert nearest("rocketlake", {"emeraldrapids", "znver5", "skylake-avx512"}) == "emeraldrapids"
    assert nearest("sapphirerapids", {"icelake-server", "emeraldrapids"}) == "emeraldrapids"
    assert nearest("sapphirerapids", {"rocketlake", "emeraldrapids"}) == "emeraldrapids"  # a tie
    assert nearest("znver3", {"emeraldrapids", "znver5"}) == "znver5"
    assert nearest("znver3", {"emeraldrapids"}) is None
    assert nearest("some-future-cpu", {"emeraldrapids"}) is None
    assert nearest("znver5", {"znver5"}) is None  # its own records are not a stand-in


def _record(mcpu, chunk, median_s=0.001):
    return json.dumps({"kernel": "retain", "dtypes": ["float64"],
                       "target": {"kind": "llvm", "mcpu": mcpu}, "workload": {"bucket": "large"},
                       "median_s": median_s,
                       "config": {"parallel": True, "chunk": chunk, "lanes": 8,
                                  "serial_below": 0}})


def test_a_cpu_without_records_takes_its_nearest_siblings(fresh_cache, monkeypatch, tmp_path):
    """Records of the nearest CPU of the family apply (and say where they were measured);
    the CPU's own records win over a sibling's, and another family's never apply."""
    monkeypatch.setattr(tuning_records, "SHIPPED_LOGS", tmp_path)  # no shipped records in the way
    log = tuning_records.user_log()
    log.parent.mkdir(parents=True)
    log.write_text("\n".join([_record("emeraldrapids", 64), _record("cascadelake", 8, 1e-6),
                              _record("znver5", 1, 1e-9)]) + "\n")
    tuning_records.reload()
    spr = {"kind": "llvm", "mcpu": "sapphirerapids"}
    choice = choose("retain", ("float64",), spr, None, "large")
    assert (choice.source, choice.measured_on) == ("user", "llvm-emeraldrapids")
    assert dict(choice.config)["chunk"] == 64
    zen3 = choose("retain", ("float64",), {"kind": "llvm", "mcpu": "znver3"}, None, "large")
    assert (zen3.measured_on, dict(zen3.config)["chunk"]) == ("llvm-znver5", 1)
    lone = choose("retain", ("float64",), {"kind": "llvm", "mcpu": "neoverse-v2"}, None, "large")
    assert (lone.source, lone.measured_on) == ("default", None)
    with log.open("a") as f:
        f.write(_record("sapphirerapids", 8, 1.0) + "\n")  # its own, even though slower
    tuning_records.reload()
    own = choose("retain", ("float64",), spr, None, "large")
    assert (own.measured_on, dict(own.config)["chunk"]) == ("llvm-sapphirerapids", 8)
    # the family member's config is part of the cache key, so the stand-in build is its own
    assert dict(own.key.config)["chunk"] == 8 and dict(choice.key.config)["chunk"] == 64


def test_the_tuner_tries_the_config_that_applies_second(fresh_cache, monkeypatch, tmp_path):
    """A sibling CPU's config (what runs now) is timed right after the default, so tuning on a
    new CPU of the family can only keep it or find better."""
    from sparsegen.registry import kernel_def
    from sparsegen.tune import tuner

    monkeypatch.setattr(tuning_records, "SHIPPED_LOGS", tmp_path)
    log = tuning_records.user_log()
    log.parent.mkdir(parents=True)
    log.write_text(_record("emeraldrapids", 1) + "\n")
    tuning_records.reload()
    spr = Target.from_dict({"kind": "llvm", "mcpu": "sapphirerapids"})
    applying = tuner._applying("retain", ("float64",), spr, "large")
    assert dict(applying)["chunk"] == 1
    space = kernel_def("retain").space("llvm")
    plain, first = tuner._order(space, 0), tuner._order(space, 0, applying)
    assert first[:2] == [space.default(), applying] and sorted(first) == sorted(plain)
    assert tuner._applying("retain", ("float64",), Target.from_dict(
        {"kind": "llvm", "mcpu": "znver4"}), "large") is None  # no record of its family
    assert tuner._order(space, 0, space.default()) == plain  # the default is not tried twice


@pytest.mark.parametrize("name", sorted(n for n in KERNELS if workloads.has_workload(n)))
def test_every_tuning_workload_calls_its_kernels_functions_with_their_arguments(name):
    # the workloads table is keyed by kernel name: each entry must name a kernel and call its
    # functions with the dtypes and shapes of their signatures
    kdef = KERNELS[name]
    dtypes = tuple(kdef.dtypes[:1] if "float32" not in kdef.dtypes else ("float32",))
    dtypes = dtypes * len(kdef.dtype_params)
    load = workloads.workload(name, dtypes, "small")
    assert load.calls
    for function, args in load.calls:
        expected = kernels.arguments(kdef, function, dtypes)
        assert len(args) == len(expected), (function, [a.name for a in expected])
        for arg, want in zip(args, expected):
            if want.shape is None:  # a scalar
                assert np.ndim(arg) == 0, want.name
            else:
                assert arg.ndim == len(want.shape) and arg.dtype.name in want.dtype.split("|"), \
                    (want.name, arg.shape, arg.dtype)


def test_only_kernels_have_tuning_workloads():
    assert set(workloads.MAKERS) <= set(KERNELS)
