"""sparsegen export: one library + C header + manifest, usable from C/C++ without Python."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import needs_cuda
from sparsegen import tvm_runtime as runtime
from sparsegen.cli import main
from sparsegen.errors import SparsegenError
from sparsegen.export import export

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "embed_cpp"
EXAMPLE_OPS = ["optim_sgd", "optim_adam", "dot_csr_dense"]
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The kernels the C++ example runs, plus retain, exported once for this module."""
    return export(tmp_path_factory.mktemp("export") / "out", "cpu", EXAMPLE_OPS + ["retain"])


def test_directory_holds_library_header_manifest_runtime(exported):
    names = {p.name for p in exported.directory.iterdir()}
    assert {"libsparsegen_kernels.so", "sparsegen_kernels.h", "manifest.json", "libtvm_ffi.so",
            "libtvm_runtime.so", "include"} <= names
    assert (exported.directory / "include" / "tvm" / "ffi" / "c_api.h").is_file()
    assert (exported.directory / "include" / "dlpack" / "dlpack.h").is_file()


def test_manifest_describes_every_function(exported):
    manifest = json.loads(exported.manifest.read_text())
    assert manifest["library"] == "libsparsegen_kernels.so" and manifest["device"] == "cpu"
    assert manifest["target"]["kind"] == "llvm"
    assert manifest["runtime"] == ["libtvm_ffi.so", "libtvm_runtime.so"]
    assert manifest["versions"]["tvm"] == "0.27.0.post1"
    kernels = {k["kernel"]: k for k in manifest["kernels"]}
    assert sorted(kernels) == sorted(EXAMPLE_OPS + ["retain"])
    assert kernels["retain"]["dtypes"] == ["float32"] and "lanes" in kernels["retain"]["config"]
    gather, merge, check = kernels["retain"]["functions"]
    assert merge["name"] == "gather_merge"
    assert check["name"] == "check" and [a["name"] for a in check["arguments"]] == [
        "req", "rows", "bad"]
    assert gather["symbol"] == "__tvm_ffi_sg_retain_float32_gather"
    assert gather["arguments"] == [
        {"name": "data", "kind": "tensor", "dtype": "float32", "shape": ["k", "d"],
         "written": False},
        {"name": "indices", "kind": "tensor", "dtype": "int64", "shape": ["k"], "written": False},
        {"name": "req", "kind": "tensor", "dtype": "int64", "shape": ["m"], "written": False},
        {"name": "out", "kind": "tensor", "dtype": "float32", "shape": ["m", "d"], "written": True},
    ]
    lazy = next(f for f in kernels["optim_adam"]["functions"] if f["name"] == "lazy")
    written = [a["name"] for a in lazy["arguments"] if a["written"]]
    assert written == ["weight", "mean", "var"]
    assert [a["dtype"] for a in lazy["arguments"] if a["kind"] == "scalar"] == ["float32"] * 7
    assert len(exported.functions) == sum(len(k["functions"]) for k in manifest["kernels"])


def test_header_declares_each_function_with_its_writes(exported):
    header = exported.header.read_text()
    assert ("static inline int sg_retain_float32_gather(const sparsegen_kernels_library* sg_lib, "
            "const DLTensor* data, const DLTensor* indices, const DLTensor* req, DLTensor* out)"
            ) in header
    assert ("sg_optim_sgd_float32_lazy(const sparsegen_kernels_library* sg_lib, DLTensor* weight, "
            "const DLTensor* grad_data, const DLTensor* grad_indices, float lr, float wd, "
            "float rescale_grad, float clip_gradient)") in header
    for function in exported.functions:
        assert f'"{function.symbol}"' in header and f"int {function.symbol}(" in header


@needs_gxx
@pytest.mark.parametrize("compiler, flags", [("gcc", ["-x", "c", "-std=c11"]),
                                             ("g++", ["-x", "c++", "-std=c++17"])])
def test_header_compiles_cleanly_as_c_and_cpp(exported, tmp_path, compiler, flags):
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    source = tmp_path / "use.c"
    source.write_text('#include "sparsegen_kernels.h"\nint main(void) { return 0; }\n')
    done = subprocess.run([compiler, *flags, "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                           f"-I{exported.directory}", f"-I{exported.directory / 'include'}",
                           str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


OPENER = r"""
#include <stdio.h>
#include "sparsegen_kernels.h"
int main(int argc, char** argv) {
  char message[512];
  for (int i = 1; i < argc; ++i) {
    sparsegen_kernels_library lib;
    if (sparsegen_kernels_open(&lib, argv[i]) == 0) {
      printf("opened\n");
      sparsegen_kernels_close(&lib);
    } else {
      printf("refused: %s\n", sparsegen_kernels_last_error(message, sizeof message));
    }
  }
  return 0;
}
"""


@needs_gxx
def test_open_close_reopen_and_refusals(exported, tmp_path):
    """Libraries open again after closing, a second export directory shares the runtime, and a
    library lacking a declared function or a missing file is refused with a message."""
    other = export(tmp_path / "other", "cpu", ["retain"], ["float64"])
    copy = shutil.copytree(exported.directory, tmp_path / "copy")
    (tmp_path / "open.cpp").write_text(OPENER)
    subprocess.run(["g++", "-std=c++17", f"-I{exported.directory}",
                    f"-I{exported.directory / 'include'}", str(tmp_path / "open.cpp"),
                    "-o", str(tmp_path / "open"), f"-L{exported.directory}", "-ltvm_ffi",
                    f"-Wl,-rpath,{exported.directory}"], check=True)
    done = subprocess.run([str(tmp_path / "open"), str(exported.library), str(exported.library),
                           str(copy / exported.library.name), str(other.library),
                           str(tmp_path / "missing.so")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["opened"] * 3
    assert lines[3] == f"refused: RuntimeError: {other.library} has no function " \
                       "sg_optim_sgd_float32_lazy"
    assert lines[4].startswith("refused: ") and "missing.so" in lines[4]


def test_library_runs_from_python_too(exported):
    """The exported library is an ordinary tvm_ffi module: its functions compute the kernels."""
    module = runtime.load_module(exported.library)
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = np.full((3, 2), -1, np.float32)
    module["sg_retain_float32_gather"](data, np.array([1, 3, 6, 9]), np.array([0, 6, 9]), out)
    np.testing.assert_array_equal(out, [[0, 0], [4, 5], [6, 7]])


@needs_gxx
def test_cpp_example_runs_sgd_adam_and_csr_dot_from_a_moved_export(exported, tmp_path):
    """run.sh builds examples/embed_cpp against the export, moved elsewhere to show it stands
    alone (no venv on the library path), and the program checks its own results."""
    moved = shutil.copytree(exported.directory, tmp_path / "moved")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    done = subprocess.run(["sh", str(EXAMPLE / "run.sh"), str(moved)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("OK "), done.stdout
    assert "refused" in done.stdout and "warning" not in done.stderr


def test_cli_export_other_dtypes_and_name(tmp_path, capsys):
    assert main(["export", "--ops", "cast_rsp_dense", "--dtypes", "int32", "float64",
                 "--name", "mine", "-o", str(tmp_path)]) == 0
    assert "exported 2 kernels (2 functions)" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [k["dtypes"] for k in manifest["kernels"]] == [["int32"], ["float64"]]
    header = (tmp_path / "mine.h").read_text()
    assert "int mine_open(mine_library* lib, const char* path)" in header
    assert "sg_cast_rsp_dense_float64_scatter(const mine_library* sg_lib" in header
    assert (tmp_path / "libmine.so").is_file()


@pytest.mark.parametrize("kwargs, message", [
    ({"ops": ["nope"]}, "unknown kernel 'nope'"),
    ({"ops": ["retain"], "dtypes": ["bool"]}, "unknown dtypes"),
    ({"ops": ["retain"], "name": "my-lib"}, "C identifier"),
    ({"ops": ["retain"], "target": {"kind": "c"}}, "'kind' of 'llvm', 'cuda'"),
    ({"ops": [], "dtypes": []}, "unknown kernel|nothing to export"),
])
def test_bad_requests_are_refused(tmp_path, kwargs, message):
    with pytest.raises(SparsegenError, match=message):
        export(tmp_path, **kwargs)


def test_cuda_export_builds_and_exports_its_symbols(tmp_path):
    """Built with nvcc and checked (symbols, header), not run: no GPU is needed or assumed."""
    needs_cuda.nvcc()
    result = export(tmp_path, "cuda", ["retain", "cast_rsp_dense", "dot_csrT"])
    manifest = json.loads(result.manifest.read_text())
    assert manifest["device"] == "cuda" and manifest["target"]["host"] == {"kind": "cuda_host"}
    assert manifest["runtime"] == ["libtvm_ffi.so"] and manifest["source"].endswith(".cu")
    source = (tmp_path / manifest["source"]).read_text()
    assert "__global__" in source and "blockIdx.x" in source
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", "-D", "--defined-only", str(result.library)],
                                 capture_output=True, text=True, check=True).stdout
        for name in ("sg_retain_float32_gather", "sg_cast_rsp_dense_float32_scatter",
                     "sg_dot_csrT_float32_sort_dense"):
            assert f"__tvm_ffi_{name}" in symbols
    assert "on kDLCUDA" in result.header.read_text()
