"""``sparsegen export``: chosen kernels in one shared library, with a C header and a JSON manifest.

The export directory works on its own (nothing of Python or of the build machine is needed)::

    lib<name>.so      the kernels; exported symbols ``__tvm_ffi_sg_<kernel>_<dtypes>_<function>``
    <name>.h          C API: <name>_open / <name>_close / <name>_last_error, one typed wrapper
                      per function (DLTensor arguments; ``const`` ones are read, others WRITTEN)
    manifest.json     the same as data: target, versions, kernels, functions, arguments
    libtvm_ffi.so     the calling convention the library speaks (its loader and error state)
    libtvm_runtime.so (cpu) the thread pool that parallel kernels run on
    include/          tvm-ffi and DLPack headers to compile against
    lib<name>.cu      (cuda) the generated CUDA source the library was compiled from

The library finds its runtime libraries beside itself (``RUNPATH $ORIGIN``); a program links
``-ltvm_ffi`` only and opens the library by path (docs/embedding.md).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import cachedir, registry
from . import tvm_runtime as runtime
from ._version import __version__
from .cachekey import versions
from .choice import choose
from .errors import SparsegenError
from .files import write_atomically
from .formats import DATA_DTYPES
from .kernels import Argument, argument_table, arguments
from .registry import KernelDef
from .target import Target
from .target import resolve as resolve_target

DEFAULT_NAME = "sparsegen_kernels"
"""The default base name: ``libsparsegen_kernels.so``, ``sparsegen_kernels.h``."""

_C_SCALARS = {"float32": "float", "float64": "double", "int64": "int64_t", "int32": "int32_t"}
_C_RESERVED = frozenset(
    "alignas auto bool break case char class const continue default delete do double else enum "
    "explicit extern float for goto if inline int long new operator private protected public "
    "register restrict return short signed sizeof static struct switch template this typedef "
    "union unsigned virtual void volatile while".split()
)


@dataclass(frozen=True)
class ExportedFunction:
    """One function of the library: where it comes from, its symbol and its arguments."""

    kernel: KernelDef
    dtypes: tuple[str, ...]
    config: dict[str, Any]
    function: str
    symbol: str  # the C wrapper's name; the library exports "__tvm_ffi_" + symbol
    arguments: tuple[Argument, ...]  # scalar dtypes as compiled (the template decides)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    directory: Path
    library: Path
    header: Path
    manifest: Path
    functions: tuple[ExportedFunction, ...]
    seconds: float

    def __str__(self) -> str:
        kernels = len({(f.kernel.name, f.dtypes) for f in self.functions})
        return (f"exported {kernels} kernels ({len(self.functions)} functions) to {self.directory} "
                f"in {self.seconds:.1f} s: {self.library.name}, {self.header.name}, "
                f"{self.manifest.name}")


# -- choosing and compiling ----------------------------------------------------------------------
def _compile_target(target: Any) -> Target:
    """The target the library is built for: the host CPU, or CUDA with a CUDA C++ host side."""
    resolved = resolve_target(target)  # a kind other than llvm and cuda is refused there
    if resolved.kind == "llvm":
        return resolved
    return Target.from_dict({**resolved.as_dict, "host": {"kind": "cuda_host"}})


def _parts(ops: Sequence[str], dtypes: Sequence[str], target: Target
           ) -> list[tuple[KernelDef, tuple[str, ...], Any]]:
    """(kernel, dtypes, binary config) for each op and dtype, with the tuned config if any."""
    unknown = [d for d in dtypes if d not in DATA_DTYPES]
    if unknown:
        raise SparsegenError(f"unknown dtypes {unknown}; supported: {DATA_DTYPES}")
    parts = []
    for op in dict.fromkeys(ops):
        kernel = registry.kernel_def(op)
        for dtype in dict.fromkeys(dtypes):
            kernel_dtypes = (dtype,) * len(kernel.dtype_params)
            parts.append((kernel, kernel_dtypes,
                          choose(op, kernel_dtypes, target).key.config))
    return parts


def _build(parts: list[tuple[KernelDef, tuple[str, ...], Any]], target: Target) -> tuple[Any, Any]:
    """The scheduled module and executable; a failure names the kernels that cannot compile."""
    from . import compiler

    try:
        return compiler.build_many(parts, target)
    except Exception as err:  # TVM raises many kinds; find which kernels are at fault
        failed = []
        for part in parts:
            try:
                compiler.build_many([part], target)
            except Exception as each:  # noqa: BLE001 - reported below
                failed.append(f"{part[0].name} ({','.join(part[1])}): {_reason(each)}")
        raise SparsegenError(
            f"cannot compile for {target.kind}: " + ("; ".join(failed) or str(err))
            + ". Leave these kernels out with --ops."
        ) from None


def _reason(err: Exception) -> str:
    """The line of a TVM error that says what is wrong (a parse error's ``error:`` line, else
    the last line, after the traceback)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    said = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "")
    return f"{type(err).__name__}: {said}"


def compiled_arguments(kernel: KernelDef, dtypes: tuple[str, ...], function: str,
                       func: Any) -> tuple[Argument, ...]:
    """The registry's documented arguments of ``function``, checked against its PrimFunc ``func``
    (count, tensor or scalar, dtype, rank), with scalar dtypes as the template declares them."""
    from tvm.ir.type import PrimType

    documented = arguments(kernel, function, dtypes)
    where = f"registry signature of {kernel.name}.{function} ({','.join(dtypes)})"
    if len(func.params) != len(documented):
        raise SparsegenError(f"{where} lists {len(documented)} arguments, the template takes "
                             f"{len(func.params)}")
    checked = []
    for spec, param in zip(documented, func.params):
        if isinstance(param.ty, PrimType):
            actual = str(param.ty.dtype)
            if spec.is_tensor or actual not in spec.dtype.split("|"):
                raise SparsegenError(f"{where}: {spec.describe()} is a {actual} scalar")
            checked.append(replace(spec, dtype=actual))
        else:
            if not spec.is_tensor or spec.dtype != str(param.dtype) or \
                    len(spec.shape or ()) != len(param.shape):
                raise SparsegenError(f"{where}: {spec.describe()} is a {len(param.shape)}-D "
                                     f"{param.dtype} array")
            checked.append(spec)
    return tuple(checked)


def _functions(parts: list[tuple[KernelDef, tuple[str, ...], Any]], mod: Any
               ) -> tuple[ExportedFunction, ...]:
    return tuple(
        ExportedFunction(kernel, dtypes, dict(config), name, symbol,
                         compiled_arguments(kernel, dtypes, name, mod[symbol]))
        for kernel, dtypes, config in parts
        for name, symbol in ((n, kernel.symbol(dtypes, n)) for n, _ in kernel.signatures)
    )


# -- files ---------------------------------------------------------------------------------------
def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise SparsegenError(f"{package} is not installed")
    return Path(spec.origin).parent


def _copy_runtime(directory: Path, kind: str) -> list[str]:
    """Copy what the library needs at run time, and the headers to build against, into DIR."""
    ffi = _package_dir("tvm_ffi")
    libraries = [ffi / "lib" / "libtvm_ffi.so"]
    if kind == "llvm":
        libraries.append(runtime.runtime_library())
    for library in libraries:
        write_atomically(directory / library.name, lambda tmp, src=library: shutil.copy2(src, tmp))
    shutil.copytree(ffi / "include", directory / "include", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("tvm_ffi_python_*"))
    return [library.name for library in libraries]


# Never unloaded: libtvm_runtime registers global functions with libtvm_ffi when it loads, and
# loading it a second time after an unload aborts the process on the duplicate registration.
_NODELETE = "-z,nodelete"


def _link_cpu(executable: Any, library: Path) -> None:
    """The kernels as a shared library that loads libtvm_runtime/libtvm_ffi from beside itself."""
    options = [f"-L{library.parent}", "-Wl,--no-as-needed", "-ltvm_runtime", "-ltvm_ffi",
               "-Wl,-rpath,$ORIGIN", f"-Wl,{_NODELETE}"]
    write_atomically(library, lambda tmp: executable.export_library(str(tmp), options=options))


def _link_cuda(executable: Any, library: Path, target: Target) -> Path:
    """CUDA C++ (device kernels and their host launchers) compiled by nvcc into the library."""
    from tvm.backend.cuda import export_cuda_host

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise SparsegenError("nvcc was not found on PATH: a CUDA export compiles the generated "
                             "CUDA source with the CUDA toolkit's nvcc")
    source = library.with_suffix(".cu")
    source.write_text(export_cuda_host(executable.mod))

    def compile_to(tmp: Path) -> None:
        command = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-std=c++17", "-O3", f"-arch={target.arch}",
                   "-diag-suppress", "174", f"-I{library.parent / 'include'}", str(source),
                   "-o", str(tmp), f"-L{library.parent}", "-ltvm_ffi", "-Xlinker", "-rpath,$ORIGIN",
                   "-Xlinker", _NODELETE]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SparsegenError(f"nvcc failed ({done.returncode}) on {source}:\n"
                                 + "\n".join((done.stderr or done.stdout).splitlines()[-20:]))

    write_atomically(library, compile_to)
    return source


def _check_symbols(library: Path, functions: Sequence[ExportedFunction]) -> None:
    """Open the library as any program would and find every declared function in it."""
    try:
        handle = ctypes.CDLL(str(library), mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as err:
        raise SparsegenError(f"the exported library does not load: {err}") from None
    missing = [f.symbol for f in functions if not hasattr(handle, f"__tvm_ffi_{f.symbol}")]
    if missing:
        raise SparsegenError(f"{library} lacks the functions {missing}")


# -- the C header ----------------------------------------------------------------------------------
def _c_name(arg: Argument) -> str:
    return f"{arg.name}_" if arg.name in _C_RESERVED else arg.name


def _c_parameter(arg: Argument) -> str:
    if arg.is_tensor:
        return f"{'' if arg.written else 'const '}DLTensor* {_c_name(arg)}"
    c_type = _C_SCALARS.get(arg.dtype, "double" if "float" in arg.dtype else "int64_t")
    return f"{c_type} {_c_name(arg)}"


def _c_setter(name: str, arg: Argument, index: int) -> str:
    kind = "tensor" if arg.is_tensor else "float" if "float" in arg.dtype else "int"
    return f"  {name}__{kind}(&sg_args[{index}], {_c_name(arg)});"


def _c_wrapper(name: str, index: int, f: ExportedFunction) -> str:
    comment = [f"/* {f.kernel.name}.{f.function} [{','.join(f.dtypes)}]: {f.kernel.doc}",
               *[f" *{row[1:]}" for row in argument_table(f.arguments)], " */"]
    params = ", ".join([f"const {name}_library* sg_lib", *(_c_parameter(a) for a in f.arguments)])
    return "\n".join([
        *comment,
        f"static inline int {f.symbol}({params}) {{",
        f"  TVMFFIAny sg_args[{len(f.arguments)}];",
        *(_c_setter(name, a, i) for i, a in enumerate(f.arguments)),
        f"  return {name}__call(sg_lib, {index}, sg_args, {len(f.arguments)});",
        "}",
    ])


def _c_intro(name: str, target: Target, library: str) -> str:
    """The header's opening comment: what it declares and how to call it."""
    device = "kDLCUDA" if target.kind == "cuda" else "kDLCPU"
    return f"""\
/* {name}.h: generated by sparsegen {__version__} with `sparsegen export`; do not edit.
 *
 * The kernels of {library}, compiled for {json.dumps(target.as_dict, sort_keys=True)}.
 *
 *   {name}_library lib;
 *   if ({name}_open(&lib, "path/to/{library}") != 0) {{ ... {name}_last_error(buf, size) ... }}
 *   if (sg_<kernel>_<dtype>_<function>(&lib, tensors..., scalars...) != 0) {{ ... }}
 *   {name}_close(&lib);
 *
 * Arrays are DLTensors on {device}, C-contiguous (strides NULL or compact), with the dtypes and
 * ranks declared below; dimension names that repeat must agree. Arguments passed as
 * `const DLTensor*` are read; `DLTensor*` arguments (WRITTEN) are written in place. Every call
 * checks counts, dtypes, ranks, shapes and devices and returns 0, or -1 with the reason kept for
 * {name}_last_error() on the calling thread. Index arrays (int64) must be valid: sorted, unique
 * and in range as sparsegen's storage formats guarantee; their values are not checked.
 * Link with -ltvm_ffi (see include/); the library finds its runtime libraries beside itself.
 */
"""


def _c_declarations(name: str, guard: str, functions: Sequence[ExportedFunction]) -> str:
    """The include guard, includes, the symbol table and the library struct."""
    symbols = ",\n".join(f'  "{f.symbol}"' for f in functions)
    return f"""\
#ifndef {guard}
#define {guard}

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {{
#endif

#define {name.upper()}_NUM_FUNCTIONS {len(functions)}

/* The exported functions' symbols (the library exports "__tvm_ffi_" + each). */
static const char* const {name}_symbols[{name.upper()}_NUM_FUNCTIONS] = {{
{symbols}
}};

/* An open library: the module and one handle per function (fill it with {name}_open). */
typedef struct {{
  TVMFFIAny module;
  TVMFFIObjectHandle functions[{name.upper()}_NUM_FUNCTIONS];
}} {name}_library;

"""


def _c_errors(name: str) -> str:
    """The error reader and the call of a tvm-ffi global function."""
    return f"""\
/* The last error raised on this thread ("Kind: message") copied into buf; returns buf. */
static inline const char* {name}_last_error(char* buf, size_t size) {{
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) {{
    snprintf(buf, size, "no error");
    return buf;
  }}
  {{
    const TVMFFIErrorCell* cell =
        (const TVMFFIErrorCell*)((const char*)error + sizeof(TVMFFIObject));
    snprintf(buf, size, "%.*s: %.*s", (int)cell->kind.size, cell->kind.data,
             (int)cell->message.size, cell->message.data);
  }}
  TVMFFIObjectDecRef(error);
  return buf;
}}

static inline int {name}__call_global(const char* global, TVMFFIAny* args, int32_t count,
                                      TVMFFIAny* result) {{
  TVMFFIByteArray global_name;
  TVMFFIObjectHandle function = NULL;
  int status;
  global_name.data = global;
  global_name.size = strlen(global);
  if (TVMFFIFunctionGetGlobal(&global_name, &function) != 0) return -1;
  if (function == NULL) {{
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "tvm_ffi lacks a global function it needs");
    return -1;
  }}
  memset(result, 0, sizeof(*result));
  result->type_index = kTVMFFINone;
  status = TVMFFIFunctionCall(function, args, count, result);
  TVMFFIObjectDecRef(function);
  return status;
}}

"""


def _c_loader(name: str) -> str:
    """``<name>_close`` and ``<name>_open``: load the library and find its functions."""
    return f"""\
/* Release the module and its functions (safe on a library that failed to open). */
static inline void {name}_close({name}_library* lib) {{
  int i;
  for (i = 0; i < {name.upper()}_NUM_FUNCTIONS; ++i) {{
    if (lib->functions[i] != NULL) TVMFFIObjectDecRef(lib->functions[i]);
    lib->functions[i] = NULL;
  }}
  if (lib->module.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(lib->module.v_obj);
  memset(&lib->module, 0, sizeof(lib->module));
}}

/* Load the library at path and find every function in it; 0 on success, else -1. */
static inline int {name}_open({name}_library* lib, const char* path) {{
  TVMFFIAny args[3];
  TVMFFIAny result;
  char missing[256];
  int i;
  memset(lib, 0, sizeof(*lib));
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIRawStr;
  args[0].v_c_str = path;
  if ({name}__call_global("ffi.ModuleLoadFromFile", args, 1, &result) != 0) return -1;
  lib->module = result;
  for (i = 0; i < {name.upper()}_NUM_FUNCTIONS; ++i) {{
    memset(args, 0, sizeof(args));
    args[0] = lib->module;
    args[1].type_index = kTVMFFIRawStr;
    args[1].v_c_str = {name}_symbols[i];
    args[2].type_index = kTVMFFIBool;
    args[2].v_int64 = 0;
    if ({name}__call_global("ffi.ModuleGetFunction", args, 3, &result) != 0) {{
      {name}_close(lib);
      return -1;
    }}
    if (result.type_index < kTVMFFIStaticObjectBegin) {{
      snprintf(missing, sizeof(missing), "%s has no function %s", path, {name}_symbols[i]);
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", missing);
      {name}_close(lib);
      return -1;
    }}
    lib->functions[i] = result.v_obj;
  }}
  return 0;
}}

"""


def _c_calls(name: str) -> str:
    """The argument setters and the checked call every wrapper makes."""
    return f"""\
static inline void {name}__tensor(TVMFFIAny* slot, const DLTensor* tensor) {{
  memset(slot, 0, sizeof(*slot));
  slot->type_index = kTVMFFIDLTensorPtr;
  slot->v_ptr = (void*)tensor;
}}

static inline void {name}__float(TVMFFIAny* slot, double value) {{
  memset(slot, 0, sizeof(*slot));
  slot->type_index = kTVMFFIFloat;
  slot->v_float64 = value;
}}

static inline void {name}__int(TVMFFIAny* slot, int64_t value) {{
  memset(slot, 0, sizeof(*slot));
  slot->type_index = kTVMFFIInt;
  slot->v_int64 = value;
}}

static inline int {name}__call(const {name}_library* lib, int index, TVMFFIAny* args,
                               int32_t count) {{
  TVMFFIAny result;
  if (lib->functions[index] == NULL) {{
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "the library is not open");
    return -1;
  }}
  memset(&result, 0, sizeof(result));
  result.type_index = kTVMFFINone;
  return TVMFFIFunctionCall(lib->functions[index], args, count, &result) == 0 ? 0 : -1;
}}

"""


def header_text(name: str, functions: Sequence[ExportedFunction], target: Target,
                library: str) -> str:
    """The C header of an export: the loader API and one typed wrapper per function."""
    guard = f"{name.upper()}_H_"
    wrappers = "\n\n".join(_c_wrapper(name, i, f) for i, f in enumerate(functions))
    return "".join([
        _c_intro(name, target, library),
        _c_declarations(name, guard, functions),
        _c_errors(name),
        _c_loader(name),
        _c_calls(name),
        f"""\
{wrappers}

#ifdef __cplusplus
}}  /* extern "C" */
#endif

#endif  /* {guard} */
""",
    ])


def manifest_data(name: str, functions: Sequence[ExportedFunction], target: Target,
                  runtime_files: Sequence[str], source: Path | None) -> dict[str, Any]:
    """The manifest: what the header declares, as JSON-able data."""
    kernels: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for f in functions:
        entry = kernels.setdefault((f.kernel.name, f.dtypes), {
            "kernel": f.kernel.name, "dtypes": list(f.dtypes), "config": f.config,
            "doc": f.kernel.doc, "functions": [],
        })
        entry["functions"].append({
            "name": f.function,
            "symbol": f"__tvm_ffi_{f.symbol}",
            "c_function": f.symbol,
            "arguments": [
                {"name": a.name, "kind": "tensor" if a.is_tensor else "scalar", "dtype": a.dtype,
                 **({"shape": list(a.shape)} if a.shape is not None else {}),
                 "written": a.written}
                for a in f.arguments
            ],
        })
    return {
        "format": "sparsegen-export/1",
        "name": name,
        "library": f"lib{name}.so",
        "header": f"{name}.h",
        **({"source": source.name} if source is not None else {}),
        "device": "cuda" if target.kind == "cuda" else "cpu",
        "target": target.as_dict,
        "runtime": list(runtime_files),
        "include": "include",
        "versions": versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "kernels": list(kernels.values()),
    }


def _writable(out: Path) -> Path:
    """``out``, created if need be and checked to take files, else ``SparsegenError`` saying why."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=out, prefix=".probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as err:
        raise SparsegenError(f"cannot write the export directory {out} "
                             f"({cachedir.describe(err)})") from None
    return out


def export(
    directory: str | os.PathLike[str],
    target: Any = "cpu",
    ops: Iterable[str] | None = None,
    dtypes: Iterable[str] = ("float32",),
    name: str = DEFAULT_NAME,
) -> ExportResult:
    """Compile ``ops`` (kernel names, default all) for each of ``dtypes`` into one library for
    ``target`` (``cpu``, ``cuda`` or a target dict), with its header, manifest and runtime."""
    start = time.perf_counter()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise SparsegenError(f"name must be a C identifier, got {name!r}")
    compile_target = _compile_target(target)
    parts = _parts(list(ops or sorted(registry.KERNELS)), list(dtypes), compile_target)
    if not parts:
        raise SparsegenError("nothing to export: give at least one op and one dtype")
    out = _writable(Path(directory))  # fails now, not after the build
    mod, executable = _build(parts, compile_target)
    functions = _functions(parts, mod)
    runtime_files = _copy_runtime(out, compile_target.kind)
    library = out / f"lib{name}.so"
    source = None
    if compile_target.kind == "cuda":
        source = _link_cuda(executable, library, compile_target)
    else:
        _link_cpu(executable, library)
    _check_symbols(library, functions)
    header = out / f"{name}.h"
    header.write_text(header_text(name, functions, compile_target, library.name))
    manifest = out / "manifest.json"
    manifest.write_text(json.dumps(
        manifest_data(name, functions, compile_target, runtime_files, source), indent=1) + "\n")
    return ExportResult(out, library, header, manifest, functions, time.perf_counter() - start)
