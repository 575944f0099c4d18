"""The GPU bench under host emulation, its fail-soft timing, and `sparsegen tune` for cuda."""

import json

import numpy as np
import pytest

from sparsegen import cuda_runtime
from sparsegen.bench import gpu
from sparsegen.bench.harness import Workload
from sparsegen.cli import main
from sparsegen.target import host_cpu


@pytest.fixture
def emulated(monkeypatch):
    """gpu(i) arrays in host memory, run by the host kernels (SPARSEGEN_GPU=host)."""
    monkeypatch.setenv("SPARSEGEN_GPU", "host")


def test_quick_gpu_bench_writes_every_workload(emulated, tmp_path, capsys):
    assert main(["bench", "--target", "gpu", "--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert [w["id"] for w in report["workloads"]] == ["W1", "W2", "W3", "W4", "W5", "W6", "W7"]
    for w in report["workloads"]:
        assert w["problems"] == [], w
        assert w["median_ms"]["sparsegen"] > 0 and w["gbps"]["sparsegen"] > 0 and w["bytes"] > 0
        assert w["runs"]["sparsegen"] >= 3
    assert report["machine"]["timer"] == "wall clock (host emulation)"
    assert report["bandwidth_gbps"]["copy"] > 0
    table = (tmp_path / "results.md").read_text()
    assert all(f"| W{i} " in table for i in range(1, 8)) and "of copy bandwidth" in table
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_gpu_rejects_the_cpu_only_workload(capsys):
    assert main(["bench", "--target", "gpu", "--workloads", "W8"]) == 2
    assert "unknown workloads ['W8']" in capsys.readouterr().err


def test_measure_reports_failing_and_differing_implementations(emulated):
    values = np.arange(4.0)

    def broken():
        raise RuntimeError("no kernel\nsecond line")

    workload = Workload("WX", "test", 32, {
        "good": lambda: lambda: values,
        "broken": broken,
        "off": lambda: lambda: values + 1,
    }, check=lambda e, g: np.testing.assert_allclose(g, e))
    result, problems = gpu.measure(workload, gpu.Clock(None), repeats=4)
    assert set(result.seconds) == {"good", "off"}
    assert all(len(times) == 4 for times in result.seconds.values())
    assert problems[0] == "broken failed: RuntimeError: no kernel"
    assert problems[1].startswith("off differs from good")


def test_tune_cuda_without_a_gpu_is_a_one_line_error(capsys):
    if cuda_runtime.device_count():
        pytest.skip("this machine has a CUDA GPU: tuning for cuda runs here")
    assert main(["tune", "--target", "cuda", "--op", "retain", "--trials", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("sparsegen: error: tuning for cuda times kernels on an NVIDIA GPU")


def test_tune_ships_records_under_the_shipped_name(tmp_path, capsys, fresh_cache):
    log, shipped = tmp_path / "log.jsonl", tmp_path / "logs"
    assert main(["tune", "--op", "cast_rsp_dense", "--trials", "2", "--buckets", "small",
                 "--log", str(log), "--ship", str(shipped)]) == 0
    (path,) = shipped.iterdir()
    assert path.name == f"{host_cpu().label}-cast_rsp_dense.jsonl"
    assert path.read_text() == log.read_text() and len(log.read_text().splitlines()) == 2


def test_tuning_target_is_gpu_0s_own_arch(monkeypatch):
    from sparsegen import tuning_records
    from sparsegen.tune import tuner

    monkeypatch.setattr(cuda_runtime, "device_count", lambda: 1)
    monkeypatch.setattr(cuda_runtime, "arch", lambda device_id: "sm_80")
    target = tuner.tuning_target("cuda")
    assert target.kind == "cuda" and target.as_dict["arch"] == "sm_80"
    assert tuning_records.log_name(target, "retain") == "cuda-sm_80-retain.jsonl"


def test_a_candidate_that_cannot_run_is_left_out(tmp_path, monkeypatch, capsys, fresh_cache):
    from sparsegen.tune import tuner

    real = tuner._Timer

    def timer(key, work):
        if dict(key.config)["lanes"] != 16:
            raise RuntimeError("launch refused\ndetails")
        return real(key, work)

    monkeypatch.setattr(tuner, "_Timer", timer)
    log = tmp_path / "log.jsonl"
    tuner.tune_one("cast_rsp_dense", ("float32",), host_cpu(), "small", trials=4, log=log, rounds=2)
    logged = [json.loads(line)["config"] for line in log.read_text().splitlines()]
    assert logged and all(config["lanes"] == 16 for config in logged)
    assert "left out cast_rsp_dense float32 small" in capsys.readouterr().err
