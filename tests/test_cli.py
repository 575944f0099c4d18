"""The sparsegen command: demo, info, build, bench and cache."""

import json
import os
import subprocess
import sys

from sparsegen.cli import main


def test_demo_tutorial_walks_the_tutorial(capsys):
    assert main(["demo", "--tutorial"]) == 0
    out = capsys.readouterr().out
    assert "kernel library ready" in out
    for section in ("Row Sparse Format", "Array Creation", "Storage Type Conversion", "Copies",
                    "Retain Row Slices", "GPU Support"):
        assert f"== {section}" in out
    assert "'indices': array([0, 2])" in out
    assert "<RowSparseNDArray 6x2 @cpu(0)>" in out
    assert "'indices': array([3])" in out


def test_info_json(capsys):
    assert main(["info", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["tvm"] == "0.27.0.post1" and facts["host_target"]["kind"] == "llvm"
    assert facts["cache_dir"] == os.environ["SPARSEGEN_CACHE_DIR"]
    assert facts["gpus"] >= 0 and facts["threads"] >= 1


def test_build_then_all_from_cache(capsys, fresh_cache):
    assert main(["build", "--ops", "retain", "cast_rsp_dense", "--dtypes", "float32", "int8"]) == 0
    assert "8 kernels built, 0 from cache" in capsys.readouterr().out  # parallel + serial builds
    assert main(["build", "--ops", "retain", "cast_rsp_dense", "--dtypes", "float32", "int8"]) == 0
    assert "0 kernels built, 8 from cache" in capsys.readouterr().out
    assert main(["cache", "info", "-v"]) == 0
    out = capsys.readouterr().out
    assert "entries    8" in out and "retain" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 24 files" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0
    assert "entries    0" in capsys.readouterr().out


def test_console_script_reports_errors():
    result = subprocess.run([sys.executable, "-m", "sparsegen.cli", "build", "--ops", "nope"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "sparsegen: error: unknown kernel 'nope'" in result.stderr


def test_bench_quick_writes_its_files(tmp_path, capsys):
    assert main(["bench", "--quick", "--workloads", "W1,W7", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert [w["id"] for w in report["workloads"]] == ["W1", "W7"]
    for w in report["workloads"]:
        assert {"sparsegen", "numpy"} <= set(w["median_ms"]) and w["bytes"] > 0
        assert all(ms > 0 for ms in w["median_ms"].values())
    assert set(report["bandwidth_gbps"]) == {"copy", "triad", "rmw"}
    table = (tmp_path / "results.md").read_text()
    assert "| W1 " in table and "of bandwidth" in table
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_training_on_a_tiny_model(tmp_path, capsys):
    assert main(["bench", "--training", "--quick", "--steps", "2", "--mxnet", "none",
                 "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "gluon-train.json").read_text())
    assert result["config"]["features"] == 10_000 and result["config"]["steps"] == 2
    names = set(result["samples_per_s"])
    assert "sparsegen" in names and "MXNet 1.9.1" not in names
    assert names == set(result["samples_per_cpu_s"]) == set(result["peak_rss_mb"])
    assert all(v > 0 for v in result["samples_per_s"].values())
    split = result["sparsegen_cpu_ms_per_step_1_thread"]
    assert split["kernels"] > 0 and split["python"] > 0
    assert abs(split["kernels"] + split["python"] - split["total"]) < 1e-9
    table = (tmp_path / "gluon-train.md").read_text()
    assert "| sparsegen |" in table and "samples per CPU-second" in table
    assert (tmp_path / "gluon-train.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote " in capsys.readouterr().out


def test_bench_rejects_unknown_workloads(capsys):
    assert main(["bench", "--workloads", "W99"]) == 2
    assert "unknown workloads ['W99']" in capsys.readouterr().err


def test_tune_cli_tiny(tmp_path, capsys, fresh_cache):
    log = tmp_path / "log.jsonl"
    assert main(["tune", "--op", "cast_rsp_dense", "--trials", "2", "--buckets", "small",
                 "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "default ms" in out and "cast_rsp_dense" in out
    assert len(log.read_text().splitlines()) == 2
    assert main(["tune", "--op", "nope"]) == 2
