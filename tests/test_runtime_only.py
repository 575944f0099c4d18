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

from sparsegen import runtime
from sparsegen.build import build_library
from sparsegen.target import Target

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
    from sparsegen import runtime
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


def _run_without_tvm(cache_dir: Path, folder: Path) -> dict:
    """PROBE in a process that cannot import tvm, on ``folder``'s runtime and ``cache_dir``."""
    env = {**os.environ, "SPARSEGEN_CACHE_DIR": str(cache_dir),
           "SPARSEGEN_TVM_RUNTIME_DIR": str(folder),
           "SPARSEGEN_CPU_TARGET": PORTABLE.spec}
    code = textwrap.dedent(NO_TVM) + textwrap.dedent(PROBE)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


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
