"""The kernel cache under faults: damaged entries, unwritable directories, full disks, foreign
host records, replaced libraries, interrupted builds. It verifies, degrades, never crashes.

Cases that could crash the interpreter (a damaged library reaching ``dlopen``) run in a fresh
process through ``isolated``; the mount cases (tmpfs, read-only bind mounts) skip only where
mounting is refused, and say so.
"""

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import isolated
import sparsegen as mx
from sparsegen import cache as kcache
from sparsegen import cachedir, cacheentry, files, target
from sparsegen import tvm_runtime as runtime
from sparsegen.choice import kernel_key
from sparsegen.files import file_record
from sparsegen.build import build_library
from sparsegen.errors import KernelCacheWarning
from sparsegen.registry import kernel_def

# a (6, 3) float32 array to row_sparse and back: two kernels, cast_dense_rsp and cast_rsp_dense
CONVERT = """
    import sys
    import numpy as np
    import sparsegen as mx
    from sparsegen.cache import default_cache
    x = np.zeros((6, 3), np.float32)
    x[[1, 4]] = 2
    a = mx.nd.array(x).tostype("row_sparse")
    result = {"values": a.asnumpy().tolist(), "indices": a.indices.asnumpy().tolist(),
              "stats": dict(default_cache().stats), "tvm": "tvm" in sys.modules}
"""
EXPECTED = {"values": [[0, 0, 0], [2, 2, 2], [0, 0, 0], [0, 0, 0], [2, 2, 2], [0, 0, 0]],
            "indices": [1, 4]}


def _convert(cache_dir: Path, code: str = CONVERT) -> isolated.Outcome:
    """CONVERT (or ``code``) in a fresh process on ``cache_dir``; checks the values it got."""
    outcome = isolated.run(code, env={"SPARSEGEN_CACHE_DIR": str(cache_dir)})
    assert outcome.error is None, f"{outcome.error}: {outcome.message}\n{outcome.traceback}"
    assert {k: outcome.result[k] for k in EXPECTED} == EXPECTED
    return outcome


def _cache_warnings(outcome: isolated.Outcome) -> list[str]:
    return [message for category, message in outcome.warnings if category == "KernelCacheWarning"]


@pytest.fixture(scope="module")
def prebuilt(tmp_path_factory) -> Path:
    """A complete cache with CONVERT's two kernels and this CPU's host record."""
    directory = tmp_path_factory.mktemp("prebuilt")
    assert _convert(directory).result["stats"]["built"] == 2
    return directory


@pytest.fixture
def cache_copy(prebuilt, tmp_path) -> Path:
    """A copy of the prebuilt cache this test may damage."""
    directory = tmp_path / "cache"
    shutil.copytree(prebuilt, directory)
    return directory


def _entry(directory: Path, kernel: str = "cast_dense_rsp") -> Path:
    """The library of ``kernel``'s one entry in ``directory``."""
    found = sorted((directory / "kernels").glob(f"{kernel}-*.so"))
    assert len(found) == 1, found
    return found[0]


def _rebuilt_once(cache_dir: Path, library: Path, reason: str) -> None:
    """CONVERT in a fresh process rebuilds ``library``'s entry with one warning giving
    ``reason``, and leaves two entries that verify."""
    outcome = _convert(cache_dir)
    assert outcome.result["stats"] == {"disk": 1, "rebuilt": 1, "built": 1}
    assert _cache_warnings(outcome) == [
        f"kernel cache entry {library} is not loaded: {reason}; rebuilding it"]
    assert [e["problem"] for e in kcache.KernelCache(cache_dir).entries()] == [None, None]


# -- integrity -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.5, 0.9, 0.9999])
def test_truncated_library_is_rebuilt_never_loaded(cache_copy, fraction):
    library = _entry(cache_copy)
    size = library.stat().st_size
    kept = int(size * fraction)
    with open(library, "r+b") as handle:  # in place, as a disk that lost the tail would leave it
        handle.truncate(kept)
    _rebuilt_once(cache_copy, library, f"{library.name} is {kept} bytes, its record says {size}")


@given(data=st.data())
def test_every_truncation_and_every_changed_byte_is_detected(prebuilt, data):
    library = _entry(prebuilt)
    original = library.read_bytes()
    record = json.loads(library.with_suffix(".json").read_text())["files"][".so"]
    assert files.file_problem(library, record) is None
    cut = data.draw(st.integers(0, len(original) - 1), label="kept bytes")
    where = data.draw(st.integers(0, len(original) - 1), label="changed byte")
    changed = bytearray(original)
    changed[where] ^= data.draw(st.integers(1, 255), label="xor")
    with tempfile.TemporaryDirectory() as tmp:
        damaged = Path(tmp) / library.name
        damaged.write_bytes(original[:cut])
        assert files.file_problem(damaged, record) == (
            f"{library.name} is {cut} bytes, its record says {len(original)}")
        damaged.write_bytes(bytes(changed))
        assert files.file_problem(damaged, record) == (
            f"the content of {library.name} differs from its recorded digest")


def test_overwritten_code_is_rebuilt_never_loaded(cache_copy):
    library = _entry(cache_copy)
    data = bytearray(library.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = b"\xcc" * 4096  # int3: a SIGTRAP wherever it runs
    library.write_bytes(bytes(data))
    _rebuilt_once(cache_copy, library, f"the content of {library.name} differs from its "
                                       "recorded digest")


def test_another_kernels_library_in_its_place_is_rebuilt(cache_copy):
    library, other = _entry(cache_copy), _entry(cache_copy, "cast_rsp_dense")
    shutil.copyfile(other, library)
    size, theirs = (json.loads(p.with_suffix(".json").read_text())["files"][".so"]["bytes"]
                    for p in (library, other))
    reason = (f"{library.name} is {theirs} bytes, its record says {size}" if size != theirs
              else f"the content of {library.name} differs from its recorded digest")
    _rebuilt_once(cache_copy, library, reason)


def test_another_kernels_whole_entry_in_its_place_is_rebuilt(cache_copy):
    library, other = _entry(cache_copy), _entry(cache_copy, "cast_rsp_dense")
    shutil.copyfile(other, library)
    shutil.copyfile(other.with_suffix(".json"), library.with_suffix(".json"))
    _rebuilt_once(cache_copy, library,
                  f"its record {library.with_suffix('.json').name} describes another kernel or "
                  "version")


@pytest.mark.parametrize("sidecar", [b"", b"{not json", b"[]", b'{"kernel": "cast_dense_rsp"}'])
def test_damaged_sidecar_is_rebuilt(cache_copy, sidecar):
    library = _entry(cache_copy)
    record = json.loads(library.with_suffix(".json").read_text())
    if sidecar.startswith(b'{"kernel"'):  # the key, but no file sizes and digests
        record.pop("files")
        sidecar = json.dumps(record).encode()
    library.with_suffix(".json").write_bytes(sidecar)
    name = library.with_suffix(".json").name
    reason = {b"": f"its record {name} is not JSON", b"{not json": f"its record {name} is not JSON",
              b"[]": f"its record {name} describes another kernel or version"}.get(
        sidecar, f"its record {name} has no file sizes and digests")
    _rebuilt_once(cache_copy, library, reason)


def test_cuda_entry_files_are_verified(tmp_path):
    key = kernel_key("retain", ("float32",), "cuda")
    path = tmp_path / key.filename()
    files = cacheentry.entry_files(key, path)
    assert [f.suffix for f in files] == [".so", ".cu", ".cubin"]
    for i, f in enumerate(files):
        f.write_bytes(b"file %d" % i)
    meta = {**key.record(), "files": {f.suffix: file_record(f) for f in files}}
    path.with_suffix(".json").write_text(json.dumps(meta))
    assert cacheentry.entry_problem(key, path) is None
    path.with_suffix(".cubin").write_bytes(b"file 9")
    assert cacheentry.entry_problem(key, path) == (f"the content of {path.stem}.cubin differs from "
                                               "its recorded digest")
    path.with_suffix(".cu").unlink()
    assert cacheentry.entry_problem(key, path).startswith(f"{path.stem}.cu cannot be read (No such")


def test_interrupted_build_counts_as_absent(cache_copy):
    library = _entry(cache_copy)
    library.with_suffix(".json").unlink()  # the sidecar is written last
    leftover = library.with_name(f".{library.stem}.99999.1.tmp.so")  # a killed writer's temporary
    leftover.write_bytes(b"half a library")
    outcome = _convert(cache_copy)
    assert outcome.result["stats"] == {"disk": 1, "built": 1} and outcome.warnings == []
    assert not leftover.exists()


def test_sigkill_during_a_build_leaves_a_valid_cache(tmp_path):
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(tmp_path)}
    code = textwrap.dedent(CONVERT)
    victim = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "kernels").glob("*.lock")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # into the compile or the export of the first kernel
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=60) == -signal.SIGKILL
    outcome = _convert(tmp_path)
    assert outcome.warnings == []
    assert _convert(tmp_path).result["stats"] == {"disk": 2}
    names = sorted(p.name for p in (tmp_path / "kernels").iterdir() if p.suffix != ".lock")
    assert len(names) == 4 and not any(".tmp" in n for n in names)  # two .so, two .json


def test_a_replaced_library_loads_from_a_fresh_path(cache_copy, tmp_path):
    # dlopen answers a path it opened before with the old library, whatever the file is now
    library, other = _entry(cache_copy), _entry(cache_copy, "cast_rsp_dense")
    path = tmp_path / "replaced.so"
    shutil.copyfile(library, path)
    first = runtime.load_module(path)
    shutil.copyfile(other, tmp_path / "new.so")
    os.replace(tmp_path / "new.so", path)  # a rebuilt entry: a new file under the old name
    second = runtime.load_module(path)
    mark = kernel_def("cast_dense_rsp").symbol(("float32",), "mark")
    scatter = kernel_def("cast_rsp_dense").symbol(("float32",), "scatter")
    assert first.implements_function(mark) and not first.implements_function(scatter)
    assert second.implements_function(scatter) and not second.implements_function(mark)
    assert runtime.load_module(path).implements_function(scatter)


def test_a_cleared_and_rebuilt_entry_is_the_one_loaded(fresh_cache):
    x = np.zeros((5, 2), np.float32)
    x[3] = 1
    np.testing.assert_array_equal(mx.nd.array(x).tostype("row_sparse").asnumpy(), x)
    fresh_cache.clear()
    x[0] = 7
    np.testing.assert_array_equal(mx.nd.array(x).tostype("row_sparse").asnumpy(), x)
    assert fresh_cache.stats["built"] == 4 and fresh_cache.stats.get("rebuilt", 0) == 0


# -- unwritable cache directories ---------------------------------------------------------------
def _falls_back(directory: Path, reason: str) -> None:
    """CONVERT on ``directory`` works, with one warning naming it and ``reason``."""
    outcome = _convert(directory)
    assert outcome.result["stats"] == {"built": 2}
    [warning] = _cache_warnings(outcome)
    assert warning.startswith(f"the kernel cache directory {directory} is not writable ({reason}")
    assert "for this process only" in warning
    assert outcome.warnings == [["KernelCacheWarning", warning]]


def test_cache_dir_under_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    _falls_back(tmp_path / "file" / "cache", "Not a directory")


def test_cache_dir_is_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    _falls_back(tmp_path / "file", "it is a file, not a directory")
    assert (tmp_path / "file").read_text() == "not a directory"


def test_cache_dir_in_proc():
    _falls_back(Path("/proc/sparsegen-cache"), "No such file or directory")


def _mount(args: list[str], where: Path) -> None:
    """``mount ARGS WHERE``, or skip the test saying that mounting is refused here."""
    if shutil.which("mount") is None:
        pytest.skip("mounting is refused here: no mount command")
    done = subprocess.run(["mount", *args, str(where)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting is refused here (mount {' '.join(args)}: "
                    f"{(done.stderr or done.stdout).strip()})")


@pytest.fixture
def mounts():
    """Mount points to unmount after the test (last mounted first)."""
    mounted: list[Path] = []
    yield mounted
    for where in reversed(mounted):
        subprocess.run(["umount", str(where)], check=False)


def _read_only(source: Path, where: Path, mounts: list[Path]) -> Path:
    """``source`` bind-mounted read-only at ``where``."""
    where.mkdir()
    _mount(["--bind", str(source)], where)
    mounts.append(where)
    _mount(["-o", "remount,bind,ro"], where)
    with pytest.raises(OSError, match="Read-only file system"):
        (where / "probe").write_text("")
    return where


def test_read_only_empty_cache_falls_back(tmp_path, mounts):
    (tmp_path / "empty").mkdir()
    directory = _read_only(tmp_path / "empty", tmp_path / "ro", mounts)
    _falls_back(directory, "Read-only file system")


def test_read_only_prebuilt_cache_is_used_as_it_is(prebuilt, tmp_path, mounts):
    directory = _read_only(prebuilt, tmp_path / "ro", mounts)
    outcome = _convert(directory)
    assert outcome.result["stats"] == {"disk": 2} and outcome.warnings == []
    assert outcome.result["tvm"] is False  # no build, no host detection, no lock


def test_read_only_cache_with_a_damaged_entry(cache_copy, tmp_path, mounts):
    library = _entry(cache_copy)
    size = library.stat().st_size
    with open(library, "r+b") as handle:
        handle.truncate(size // 2)
    directory = _read_only(cache_copy, tmp_path / "ro", mounts)
    outcome = _convert(directory)
    assert outcome.result["stats"] == {"disk": 1, "rebuilt": 1, "built": 1}
    unwritable, damaged = _cache_warnings(outcome)
    assert unwritable.startswith(f"the kernel cache directory {directory} is not writable "
                                 "(Read-only file system")
    entry = directory / "kernels" / library.name
    assert damaged.startswith(f"kernel cache entry {entry} is not loaded: {library.name} is "
                              f"{size // 2} bytes, its record says {size}; rebuilding it in ")


def test_build_into_an_unwritable_cache_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SPARSEGEN_CACHE_DIR", str(tmp_path / "file"))
    kcache.reset()
    try:
        with pytest.raises(mx.MXNetError, match=f"kernel cache directory {tmp_path / 'file'} is "
                                                "not writable \\(it is a file, not a directory\\)"):
            build_library(["retain"], ["float32"], progress=False)
    finally:
        kcache.reset()


# -- full disks ----------------------------------------------------------------------------------
def test_full_disk_raises_keeps_nothing_then_falls_back(prebuilt, tmp_path, mounts):
    where = tmp_path / "small"
    where.mkdir()
    _mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs"], where)
    mounts.append(where)
    shutil.copytree(prebuilt / "hosts", where / "hosts")  # this CPU's record fits; kernels do not
    with open(where / "filler", "wb") as filler:
        filler.write(b"\0" * (shutil.disk_usage(where).free - 8192))
    code = textwrap.dedent(CONVERT).replace('a = mx.nd.array(x).tostype("row_sparse")', (
        "import os\n"
        "try:\n"
        "    mx.nd.array(x).tostype('row_sparse')\n"
        "except mx.MXNetError as err:\n"
        "    first = str(err)\n"
        "left = sorted(os.listdir(os.environ['SPARSEGEN_CACHE_DIR'] + '/kernels'))\n"
        "a = mx.nd.array(x).tostype('row_sparse')"))
    code += "result.update(first=first, left=left)\n"
    outcome = _convert(where, code)
    first = outcome.result["first"]
    assert first.startswith("kernel cache entry cast_dense_rsp-float32-")
    assert (f"could not be written in {where / 'kernels'}: the disk is full (No space left on "
            "device); nothing of it was kept; later kernels are built in ") in first
    assert all(name.endswith(".lock") for name in outcome.result["left"])  # no partial entry
    assert outcome.result["stats"] == {"built": 2} and outcome.warnings == []


def test_no_space_while_writing_a_file_is_the_same(fresh_cache, monkeypatch):
    real = cacheentry.write_atomically

    def no_space_for_sidecars(path, write):
        if path.suffix == ".json" and fresh_cache.directory in path.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, write)

    monkeypatch.setattr(cacheentry, "write_atomically", no_space_for_sidecars)
    key = kernel_key("retain", ("float32",))
    with pytest.raises(mx.MXNetError, match="the disk is full") as raised:
        fresh_cache.get(key)
    folder = fresh_cache.directory / "kernels"
    assert f"could not be written in {folder}: " in str(raised.value)
    assert [p.name for p in folder.iterdir() if p.suffix != ".lock"] == []
    kernel = fresh_cache.get(key)  # later builds go to this process's directory
    assert kernel.path.parent == cachedir.readable(fresh_cache.directory)[1] / "kernels"
    assert kernel.path.parent != folder and fresh_cache.stats["built"] == 1


def test_an_unrelated_build_error_is_not_a_full_disk(fresh_cache, monkeypatch):
    def broken(path, write):
        raise RuntimeError("Compilation error: something else went wrong")

    monkeypatch.setattr(cacheentry, "write_atomically", broken)
    with pytest.raises(RuntimeError, match="something else went wrong"):
        fresh_cache.get(kernel_key("retain", ("float32",)))
    assert cachedir.readable(fresh_cache.directory) == (fresh_cache.directory,)


# -- host-CPU records ----------------------------------------------------------------------------
@pytest.fixture
def host_record(fresh_cache):
    """This CPU's host record path in an empty cache; host_cpu() is asked afresh."""
    target.host_cpu.cache_clear()
    yield fresh_cache.directory / "hosts" / f"{target._cpu_fingerprint()}.json"
    target.host_cpu.cache_clear()


def _real_cpu() -> dict:
    from tvm.target import codegen

    return {"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(),
            "mtriple": codegen.llvm_get_system_triple()}


FOREIGN = {"kind": "llvm", "mcpu": "cortex-a72", "mtriple": "aarch64-unknown-linux-gnu"}


@pytest.mark.parametrize("record", [
    {"fingerprint": "0123456789abcdef", "target": FOREIGN},  # another CPU's record, copied here
    FOREIGN,  # a record without a fingerprint
    {"fingerprint": None, "target": {"kind": "cuda"}},
    "{truncated",
])
def test_a_host_record_for_another_cpu_is_replaced(host_record, record):
    host_record.parent.mkdir(parents=True)
    host_record.write_text(record if isinstance(record, str) else json.dumps(record))
    assert target.host_cpu().as_dict == _real_cpu()
    assert json.loads(host_record.read_text()) == {"fingerprint": target._cpu_fingerprint(),
                                                   "target": _real_cpu()}


def test_a_matching_host_record_is_trusted(host_record, monkeypatch):
    recorded = {**_real_cpu(), "mcpu": "x86-64-v3"}
    host_record.parent.mkdir(parents=True)
    host_record.write_text(json.dumps({"fingerprint": target._cpu_fingerprint(),
                                       "target": recorded}))
    monkeypatch.setattr(target, "_detect_host_llvm", lambda: pytest.fail("LLVM was asked"))
    assert target.host_cpu().as_dict == recorded


def test_the_host_record_goes_to_the_fallback_when_the_cache_is_unwritable(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SPARSEGEN_CACHE_DIR", str(tmp_path / "file" / "cache"))
    target.host_cpu.cache_clear()
    try:
        with pytest.warns(KernelCacheWarning, match="is not writable \\(Not a directory"):
            assert target.host_cpu().as_dict == _real_cpu()
        [fallback] = cachedir.readable(tmp_path / "file" / "cache")[1:]
        assert (fallback / "hosts" / f"{target._cpu_fingerprint()}.json").is_file()
    finally:
        target.host_cpu.cache_clear()
