"""A runtime-only install: tvm_ffi plus the TVM runtime libraries, a prebuilt cache, no compiler.

The subprocesses here cannot import ``tvm`` (a meta path finder refuses it, as on a machine
without the apache-tvm distribution) and find the runtime libraries through
``$SPARSEGEN_TVM_RUNTIME_DIR``, a folder that names their TVM version in ``TVM_VERSION``.
"""

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sparsegen import tvm_runtime as runtime
from sparsegen.build import build_library
from sparsegen.registry import kernel_def
from sparsegen.target import Target
from sparsegen.tune import tuner

# no tuning records name this CPU, so every size bucket gets the kernels' default configs
PORTABLE = Target.from_dict({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "x86-64-v3"})

NO_TVM = """
    import importlib.abc, sys

    class NoTVM(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "tvm" or name.startswith("tvm."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTVM())
"""

PROBE = """
    import json
    import numpy as np
    import sparsegen as mx
    from sparsegen import tvm_runtime as runtime
    from sparsegen.cache import default_cache

    imported_tvm = "tvm" in sys.modules

    def to_row_sparse(dtype):
        x = np.zeros((6, 3), dtype)
        x[[1, 4]] = 2
        try:
            return mx.nd.array(x, dtype=dtype).tostype("row_sparse").indices.asnumpy().tolist()
        except mx.MXNetError as err:
            return f"{type(err).__name__}: {err}"

    print(json.dumps({
        "float32": to_row_sparse(np.float32),
        "float64": to_row_sparse(np.float64),
        "imported_tvm": imported_tvm or "tvm" in sys.modules,
        "stats": dict(default_cache().stats),
        "runtime": str(runtime.runtime_library()),
    }))
"""


@pytest.fixture
def runtime_folder(tmp_path: Path) -> Path:
    """A TVM runtime folder as a runtime-only install has it: the two libraries, TVM_VERSION."""
    folder = tmp_path / "tvm_runtime"
    folder.mkdir()
    for name in ("libtvm_runtime.so", "libtvm_runtime_cuda.so"):
        (folder / name).symlink_to(runtime.runtime_dir() / name)
    (folder / runtime.VERSION_FILE).write_text(importlib.metadata.version("apache-tvm") + "\n")
    return folder


def _python(code: str, cache_dir: Path, folder: Path) -> subprocess.CompletedProcess:
    """``code`` in a process on ``folder``'s runtime, ``cache_dir`` and the portable CPU target."""
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(cache_dir),
           "SPARSEGEN_TVM_RUNTIME_DIR": str(folder),
           "SPARSEGEN_CPU_TARGET": PORTABLE.spec}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done


def _run_without_tvm(cache_dir: Path, folder: Path) -> dict:
    """PROBE in a process that cannot import tvm, on ``folder``'s runtime and ``cache_dir``."""
    done = _python(textwrap.dedent(NO_TVM) + textwrap.dedent(PROBE), cache_dir, folder)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cli(args: list[str], cache_dir: Path, folder: Path, compiler: bool = False) -> str:
    """The output of ``sparsegen ARGS`` in a process that cannot import tvm, unless ``compiler``."""
    code = (textwrap.dedent("" if compiler else NO_TVM)
            + f"from sparsegen.cli import main\nsys.exit(main({args!r}))\n")
    return _python("import sys\n" + code, cache_dir, folder).stdout


def _missing(message: str, dtype: str) -> bool:
    """Whether ``message`` is the runtime-only install's error for cast_dense_rsp[dtype]."""
    expected = f"CompilerMissingError: kernel cast_dense_rsp[{dtype}] for llvm-x86-64-v3 is not in "
    return message.startswith(expected + "the prebuilt cache") \
        and "and the TVM compiler is not installed" in message


def test_prebuilt_kernels_run_without_the_compiler(fresh_cache, runtime_folder):
    build_library(["cast_dense_rsp"], ["float32"], PORTABLE, progress=False)
    result = _run_without_tvm(fresh_cache.directory, runtime_folder)
    assert result["float32"] == [1, 4]
    assert _missing(result["float64"], "float64")
    assert result["imported_tvm"] is False
    assert result["stats"] == {"disk": 1}
    assert result["runtime"] == str(runtime_folder / "libtvm_runtime.so")


def test_cache_keys_follow_the_runtime_folders_version(fresh_cache, runtime_folder):
    build_library(["cast_dense_rsp"], ["float32"], PORTABLE, progress=False)
    (runtime_folder / runtime.VERSION_FILE).write_text("0.0.0-another-release\n")
    result = _run_without_tvm(fresh_cache.directory, runtime_folder)
    assert _missing(result["float32"], "float32")


def test_tuning_times_the_prebuilt_candidates_without_the_compiler(fresh_cache, runtime_folder,
                                                                     tmp_path):
    tuner.prebuild(["retain"], ["float32"], PORTABLE, trials=3, buckets=["small"], progress=False)
    kernels = sorted((fresh_cache.directory / "kernels").glob("*.so"))
    ship = tmp_path / "ship"
    out = _cli(["tune", "--target", PORTABLE.spec, "--op", "retain", "--trials", "5", "--buckets",
                "small", "--rounds", "2", "--ship", str(ship)], fresh_cache.directory,
               runtime_folder)
    assert "timed only the candidates in the prebuilt kernel cache" in out
    assert sorted((fresh_cache.directory / "kernels").glob("*.so")) == kernels  # nothing built
    shipped = ship / "llvm-x86-64-v3-retain.jsonl"
    lines = [json.loads(line) for line in shipped.read_text().splitlines()]
    assert shipped.read_text() == (fresh_cache.directory / "tuning" / "records.jsonl").read_text()
    # the first 3 candidates, then 2 later ones that run one of their binaries (dispatch knobs)
    order = tuner._order(kernel_def("retain").space("llvm"), seed=0)
    assert len(lines) == 5 and [line["config"] for line in lines[:3]] == [dict(c) for c in order[:3]]
    binaries = [tuner._binary("retain", ("float32",), PORTABLE, c, "small") for c in order[:3]]
    configs = [tuple(sorted(line["config"].items())) for line in lines]
    assert all(tuner._binary("retain", ("float32",), PORTABLE, c, "small") in binaries
               for c in configs)
    best = min(lines, key=lambda line: line["median_s"])["config"]
    # a later process picks the records (the report needs no compiler; `info` asks find_spec
    # whether tvm is installed, which the import blocker here would answer with an error)
    report = _cli(["info", "--tuning"], fresh_cache.directory, runtime_folder, compiler=True)
    assert (f"llvm-x86-64-v3     retain             float32  small   user     llvm-x86-64-v3       "
            f"{best}") in report


CACHED_STEP = """
    import sys
    import numpy as np
    import sparsegen as mx
    w = mx.nd.array(np.ones((8, 2), np.float32))
    g = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), np.array([3])), shape=(8, 2))
    opt = mx.optimizer.SGD(learning_rate=0.5)
    opt.update(0, w, g, opt.create_state(0, w))
    assert w.asnumpy()[3].tolist() == [0.5, 0.5] and w.asnumpy()[2].tolist() == [1.0, 1.0]
    print(sorted(m for m in ("ml_dtypes", "torch", "tvm") if m in sys.modules))
"""


def test_a_cached_step_imports_neither_the_compiler_nor_ml_dtypes_nor_torch(fresh_cache):
    """The warm-start path (issue 17): tvm_ffi loads without ml_dtypes (0.8 s of CPU in 0.7.0)
    and torch; once the kernel is cached, a fresh process imports none of them."""
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(fresh_cache.directory)}
    run = [sys.executable, "-c", textwrap.dedent(CACHED_STEP)]
    subprocess.run(run, env=env, check=True, capture_output=True, timeout=300)  # builds it
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_loading_the_compiler_gives_tvm_ffi_the_ml_dtypes_entries():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import sparsegen, tvm_ffi
        from sparsegen import cache
        assert "ml_dtypes" not in sys.modules
        cache._compiler(None, None)  # what a build does first
        import ml_dtypes
        print(tvm_ffi.dtype._NUMPY_DTYPE_TO_STR[np.dtype(ml_dtypes.bfloat16)])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "bfloat16"
