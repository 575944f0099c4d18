"""The kernel cache: symbolic shapes, disk reuse across processes, corrupt entries, concurrency."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import cache as kcache
from sparsegen import cachekey
from sparsegen.cachekey import ENTRY_FORMAT
from sparsegen.choice import kernel_key
from sparsegen.errors import KernelCacheWarning, TargetWarning


def _run(code: str, cache_dir) -> dict:
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


PROBE = """
    import json, sys, warnings
    import numpy as np
    import sparsegen as mx
    from sparsegen.cache import default_cache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = np.zeros((6, 3), np.float32); x[[1, 4]] = 2
        ok = bool((mx.nd.array(x).tostype('row_sparse').asnumpy() == x).all())
    print(json.dumps({"ok": ok, "stats": dict(default_cache().stats),
                      "tvm_imported": "tvm" in sys.modules,
                      "warnings": [str(w.message) for w in caught]}))
"""


def test_second_shape_does_not_rebuild(fresh_cache):
    mx.nd.array(np.eye(3)).tostype("row_sparse").asnumpy()
    built = dict(fresh_cache.stats)
    assert built["built"] == 2  # dense -> row_sparse and back
    for shape in [(7, 5), (1000, 3), (2, 129)]:
        x = np.zeros(shape, np.float32)
        x[::2] = 1
        np.testing.assert_array_equal(mx.nd.array(x).tostype("row_sparse").asnumpy(), x)
    assert fresh_cache.stats["built"] == built["built"]
    assert fresh_cache.stats["disk"] == 0


def test_fresh_process_loads_from_disk_without_the_compiler(tmp_path):
    first = _run(PROBE, tmp_path)
    assert first["ok"] and first["stats"]["built"] == 2
    second = _run(PROBE, tmp_path)
    assert second["ok"]
    assert second["stats"].get("built", 0) == 0 and second["stats"]["disk"] == 2
    assert second["tvm_imported"] is False  # tvm_ffi and the runtime library only


def test_corrupt_entry_is_rebuilt_with_a_warning(tmp_path):
    _run(PROBE, tmp_path)
    entries = sorted((tmp_path / "kernels").glob("cast_dense_rsp-*.so"))
    assert len(entries) == 1
    size = entries[0].stat().st_size
    entries[0].write_bytes(b"this is not a shared library")
    result = _run(PROBE, tmp_path)
    assert result["ok"]
    assert result["stats"]["rebuilt"] == 1 and result["stats"]["built"] == 1
    assert result["warnings"] == [f"kernel cache entry {entries[0]} is not loaded: "
                                  f"{entries[0].name} is 28 bytes, its record says {size}; "
                                  "rebuilding it"]
    assert _run(PROBE, tmp_path)["stats"].get("rebuilt", 0) == 0  # the rebuilt entry is valid


def test_two_processes_building_at_once_leave_one_valid_entry(tmp_path):
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(PROBE)], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    results = [json.loads(p.communicate(timeout=300)[0].strip().splitlines()[-1]) for p in procs]
    assert all(r["ok"] for r in results)
    assert sum(r["stats"].get("built", 0) for r in results) == 2  # each kernel built once
    assert sum(r["stats"].get("disk", 0) for r in results) == 2  # and loaded by the other
    files = sorted(p.name for p in (tmp_path / "kernels").iterdir() if p.suffix == ".so")
    assert len(files) == 2 and not any(".tmp" in f for f in files)
    assert _run(PROBE, tmp_path)["stats"]["disk"] == 2


def test_key_holds_everything_that_changes_the_binary():
    key = kernel_key("retain", ("float64",))
    record = key.record()
    assert record["kernel"] == "retain" and record["dtypes"] == ["float64"]
    assert record["target"]["kind"] == "llvm" and record["target"]["mcpu"] != "generic"
    assert record["config"] == {"chunk": 8, "lanes": 16, "parallel": True}
    assert set(record["versions"]) == {"tvm", "tvm_ffi", "sparsegen"}
    assert record["code"] == cachekey.kernel_digest("retain", "llvm")  # tests/test_cachekey.py
    assert record["entry_format"] == ENTRY_FORMAT
    other = kernel_key("retain", ("float64",), config={"chunk": 64})
    assert other.digest() != key.digest()
    assert kernel_key("retain", ("float32",)).digest() != key.digest()


def test_host_target_is_the_real_cpu():
    from tvm.target import codegen

    from sparsegen.target import host_cpu

    assert host_cpu().as_dict["mcpu"] == codegen.llvm_get_system_cpu() != "generic"


def test_generic_cpu_is_never_silent(monkeypatch):
    from tvm.target import codegen

    from sparsegen import target

    monkeypatch.setattr(codegen, "llvm_get_system_cpu", lambda: "generic")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = target._detect_host_llvm()
    assert spec["mcpu"] == "generic"
    assert any(issubclass(w.category, TargetWarning) and "generic" in str(w.message) for w in caught)


def test_cache_clear_and_entries(fresh_cache):
    mx.nd.array(np.eye(2)).tostype("csr")
    entries = fresh_cache.entries()
    assert {e["kernel"] for e in entries} == {"cast_dense_csr"}
    assert all(e["bytes"] > 0 for e in entries)
    assert fresh_cache.clear() == 3  # .so, .json, .lock
    assert fresh_cache.entries() == []


def test_unknown_kernel_and_dtype():
    with pytest.raises(mx.MXNetError, match="unknown kernel 'nope'"):
        kcache.get_kernel("nope", ("float32",))
    with pytest.raises(mx.MXNetError, match="takes dtypes"):
        kcache.get_kernel("retain", ("bool",))


def test_kernel_cache_warning_is_a_user_warning():
    assert issubclass(KernelCacheWarning, UserWarning)


def test_cache_info_counts_corrupt_entries(capsys, fresh_cache):
    from sparsegen.cli import main

    mx.nd.array(np.eye(2)).tostype("csr")
    [entry] = fresh_cache.entries()
    assert entry["problem"] is None
    library = fresh_cache.directory / "kernels" / entry["file"]
    # damaged by replacing the file: this process has the library mapped, and cutting that
    # inode short would be a SIGBUS the next time its pages are touched (at exit at the latest)
    damaged = library.with_name(library.name + ".damaged")
    damaged.write_bytes(library.read_bytes()[:100])
    os.replace(damaged, library)
    assert main(["cache", "info", "-v"]) == 0
    out = capsys.readouterr().out
    assert "entries    1" in out and "corrupt    1 (rebuilt when next used)" in out
    assert f"CORRUPT: {library.name} is 100 bytes, its record says {entry['bytes']}" in out
