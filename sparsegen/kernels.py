"""The generated kernels as a library: plain callables on numpy arrays, torch or DLPack tensors.

Every registered kernel is an attribute of this module::

    import sparsegen.kernels as K

    K.retain.gather(data, indices, req, out)   # dtype taken from the arrays, out written in place
    sgd = K.get("optim_sgd", "float32")        # bound to a dtype, compiled (or loaded) now
    sgd.lazy(weight, grad_data, grad_indices, 0.1, 0.0, 1.0, float("inf"))
    help(K.optim_adam.lazy)                    # argument order, dtypes, what it writes

Arrays pass through DLPack without copies, so a kernel's in-place writes land in the caller's
numpy array or torch tensor. They must be C-contiguous and all on the CPU, or all on one CUDA GPU
(torch ``cuda`` tensors, say): then that GPU's CUDA kernels run, compiled for its ``sm_XY``. A
wrong count, dtype, rank, shape, layout or device raises ``SparsegenError`` naming the argument.

Index values are checked before every call, against the domains the registry's signatures give
them (``DOMAINS``: ``<n`` in range, ``ptr(nnz)`` a row pointer, ``sorted`` strictly rising,
``sorted(indptr)`` rising within rows), so that no call reads or writes out of bounds: a bad id
raises ``SparsegenError`` naming the function, argument, values and positions, and nothing is
written. The check is vectorised numpy on the index arrays; arrays in CUDA memory have their
index arrays copied to the host for it. Internal phases (an ``internal`` argument: positions or
sizes only an earlier phase of the op vouches for) are refused. ``get(..., check=False)`` skips
the checks and allows the internal phases, for trusted ids, as the exported C library does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .cache import get_kernel
from .device import DeviceArray, target_of
from .errors import SparsegenError
from .formats import ACCUMULATOR, DATA_DTYPES, check_indptr, check_range, check_sorted_rows
from .registry import KERNELS, KernelDef, kernel_def


@dataclass(frozen=True)
class Argument:
    """One argument of a kernel function, as its registry signature documents it."""

    name: str
    dtype: str  # a dtype, or alternatives such as "float64|int64" for a scalar
    shape: tuple[str, ...] | None  # dimension expressions ("k", "n+1", "1"); None for a scalar
    written: bool
    domain: tuple[str, ...] = ()  # what its values must be: "<n", "ptr(nnz)", "sorted", ...

    @property
    def is_tensor(self) -> bool:
        """Whether the argument is an array (else a scalar)."""
        return self.shape is not None

    def describe(self) -> str:
        """The argument as the signature writes it: ``out[m,d] float32 WRITTEN``."""
        dims = f"[{','.join(self.shape)}]" if self.shape is not None else ""
        return f"{self.name}{dims} {self.dtype}{' WRITTEN' if self.written else ''}"


_ITEM = re.compile(
    r"^(?P<name>\w+)(?:\[(?P<dims>[^\]]*)\])?(?:\s+(?!WRITTEN\b)(?P<dtype>[\w|]+))?"
    r"(?:\s+(?P<written>WRITTEN))?(?P<domain>(?:\s+\S+)*)$"
)
_DOMAIN = re.compile(r"^(?:<(?P<below>\w+)|ptr\((?P<ptr>\w+)\)|sorted(?:\((?P<rows>\w+)\))?"
                     r"|(?P<internal>internal))$")
DOMAINS = {
    "<n": "every value in [0, n), n a dimension of the signature",
    "ptr(nnz)": "a row pointer: starts at 0, never drops, ends at nnz",
    "sorted": "non-negative and strictly rising (sorted, unique)",
    "sorted(indptr)": "strictly rising within each row that row pointer indptr delimits",
    "internal": "made by another phase of the op (or sized by its plan): not checkable, so the "
                "function is refused unless checks are turned off",
}
"""The value domains a signature gives its index arguments, and what each requires."""
_DIM = re.compile(r"^(?:(?P<literal>\d+)|(?P<symbol>[A-Za-z_]\w*)(?:\+(?P<offset>\d+))?)$")


def _split_items(body: str) -> list[str]:
    items, depth, start = [], 0, 0
    for pos, char in enumerate(body):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start:pos])
            start = pos + 1
    items.append(body[start:])
    return [item.strip() for item in items if item.strip()]


def parse_signature(text: str, dtypes: Mapping[str, str] | None = None) -> tuple[Argument, ...]:
    """The arguments of a registry signature such as ``(x[n,d] dtype, pos[n+1] int64 WRITTEN)``.

    ``dtypes`` maps the kernel's dtype parameters (``dtype``) to concrete dtypes. Scalars listed
    together (``lr, wd float32``) share the type written after the last one.
    """
    stripped = text.strip()
    if not (stripped.startswith("(") and stripped.endswith(")")):
        raise SparsegenError(f"signature must be parenthesised, got {text!r}")
    arguments: list[Argument] = []
    untyped: list[str] = []
    for item in _split_items(stripped[1:-1]):
        match = _ITEM.match(item)
        domain = tuple(match["domain"].split()) if match else ()
        if (match is None or (match["dtype"] is None and (match["dims"] or match["written"]))
                or not all(_DOMAIN.match(d) for d in domain)
                or (domain and match["dims"] is None)):
            raise SparsegenError(f"cannot read argument {item!r} of signature {text!r}")
        if match["dtype"] is None:
            untyped.append(match["name"])
            continue
        dtype = "|".join((dtypes or {}).get(d, d) for d in match["dtype"].split("|"))
        arguments.extend(Argument(name, dtype, None, False) for name in untyped)
        untyped.clear()
        dims = None if match["dims"] is None else tuple(d.strip() for d in match["dims"].split(","))
        arguments.append(Argument(match["name"], dtype, dims, bool(match["written"]), domain))
    if untyped:
        raise SparsegenError(f"arguments {untyped} of signature {text!r} have no type")
    return tuple(arguments)


def arguments(kernel: KernelDef, function: str, dtypes: tuple[str, ...]) -> tuple[Argument, ...]:
    """The arguments of ``kernel.function`` with its dtype parameters bound to ``dtypes``."""
    signature = dict(kernel.signatures).get(function)
    if signature is None:
        raise SparsegenError(
            f"kernel {kernel.name!r} has no function {function!r}; it has "
            f"{[name for name, _ in kernel.signatures]}"
        )
    bound = dict(zip(kernel.dtype_params, dtypes))
    if bound.get("dtype") in ACCUMULATOR:  # "acc": the dtype reductions accumulate in
        bound["acc"] = ACCUMULATOR[bound["dtype"]]
    return _parsed(signature, tuple(sorted(bound.items())))


@lru_cache(maxsize=4096)
def _parsed(signature: str, bound: tuple[tuple[str, str], ...]) -> tuple[Argument, ...]:
    """``parse_signature`` remembered (a call checks its arguments against it every time)."""
    return parse_signature(signature, dict(bound))


def argument_table(args: Sequence[Argument]) -> list[str]:
    """One aligned line per argument: name, shape (or ``scalar``), dtype, ``WRITTEN``."""
    width = max((len(a.name) for a in args), default=0)
    return [
        f"  {a.name:<{width}}  {('[' + ', '.join(a.shape) + ']') if a.shape else 'scalar':<12}"
        f"  {a.dtype}{'   WRITTEN' if a.written else ''}"
        for a in args
    ]


# -- describing what a caller passed (only when a call was refused) ------------------------------
@dataclass(frozen=True)
class _ArrayInfo:
    dtype: str
    shape: tuple[int, ...]
    compact: bool
    writable: bool
    device: str


def _compact(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    if strides is None or math.prod(shape) == 0:
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def _array_info(value: Any) -> _ArrayInfo | str:
    """What a passed array is, or why it cannot be passed through DLPack."""
    if isinstance(value, np.ndarray):
        strides = tuple(s // value.itemsize for s in value.strides) if value.itemsize else None
        return _ArrayInfo(value.dtype.name, value.shape, _compact(value.shape, strides),
                          bool(value.flags.writeable), "cpu")
    if not hasattr(value, "__dlpack__"):
        return f"expected an array (numpy, torch or any DLPack array), got {type(value).__name__}"
    if type(value).__module__.startswith("torch") and not value.requires_grad:
        info = _tensor_info(value)  # most calls: no DLPack export just to check arguments
        if info is not None:
            return info
    import tvm_ffi

    try:
        tensor = tvm_ffi.from_dlpack(value, require_alignment=0)
    except Exception as err:  # whatever the exporter raises, it is the reason the call failed
        return f"cannot be passed through DLPack ({type(err).__name__}: {err})"
    shape = tuple(int(d) for d in tensor.shape)
    strides = tuple(int(s) for s in tensor.strides) if tensor.strides is not None else None
    return _ArrayInfo(str(tensor.dtype), shape, _compact(shape, strides), True,
                      str(tensor.device).split(":")[0])


def _tensor_info(tensor: Any) -> _ArrayInfo | None:
    """What a strided CPU or CUDA torch tensor of a numpy dtype is, read from its attributes
    (the facts a DLPack export would give, without one), else ``None``."""
    import torch  # loaded: the tensor is one

    name = _name_of(tensor.dtype)
    if name is None or tensor.layout != torch.strided or tensor.device.type not in ("cpu",
                                                                                  "cuda"):
        return None
    shape = tuple(tensor.shape)
    return _ArrayInfo(name, shape, _compact(shape, tuple(tensor.stride())), True,
                      tensor.device.type)


def _gpu_target(args: tuple[Any, ...]) -> Any:
    """The CUDA target of the first array argument when it is in CUDA memory, else ``None``
    (the host CPU's kernels)."""
    return target_of(next((a for a in args if hasattr(a, "__dlpack_device__")), None))


@lru_cache(maxsize=256)
def _name_of(dtype: Any) -> str | None:
    """numpy's name of a numpy dtype or scalar type, or of a torch dtype (``torch.float32``)."""
    try:
        return np.dtype(dtype if isinstance(dtype, type) else
                        str(dtype).removeprefix("torch.")).name
    except TypeError:
        return None


def _dtype_name(value: Any) -> str | None:
    """The element dtype of an array argument (numpy, torch, NDArray, any DLPack array)."""
    dtype = getattr(value, "dtype", None)
    try:
        name = _name_of(dtype) if dtype is not None else None
    except TypeError:  # an unhashable dtype object
        name = None
    if name is not None:
        return name
    info = _array_info(value)
    return info.dtype if isinstance(info, _ArrayInfo) else None


def _check_dims(spec: Argument, shape: tuple[int, ...], bound: dict[str, tuple[int, str]]) -> str:
    """A mismatch between ``shape`` and the dimension expressions bound so far, else ''."""
    for axis, (expr, size) in enumerate(zip(spec.shape or (), shape)):
        match = _DIM.match(expr.replace(" ", ""))
        if match is None:
            continue
        if match["literal"] is not None:
            if size != int(match["literal"]):
                return f"has shape {shape}; shape[{axis}] must be {match['literal']}"
            continue
        symbol, offset = match["symbol"], int(match["offset"] or 0)
        if symbol not in bound:
            bound[symbol] = (size - offset, spec.name)
        elif bound[symbol][0] + offset != size:
            value, source = bound[symbol]
            return (f"has shape {shape}; shape[{axis}] must be {expr} = {value + offset} "
                    f"({symbol} = {value} from '{source}')")
    return ""


def _check_argument(spec: Argument, value: Any, bound: dict[str, tuple[int, str]],
                    device: str = "cpu") -> str:
    """Why ``value`` does not fit ``spec`` for kernels running on ``device``, or '' when it does."""
    if not spec.is_tensor:
        if isinstance(value, (bool, np.bool_)):
            return f"expected a number, got the bool {value!r}"
        if isinstance(value, (int, float, np.integer, np.floating)):
            return ""
        return f"expected a number, got {type(value).__name__}"
    info = _array_info(value)
    if isinstance(info, str):
        return info
    if info.device != device:
        return (f"is on device {info.device}; the kernel runs on {device} (every array of a "
                "call must be on the device of the first one)")
    if "|" not in spec.dtype and info.dtype != spec.dtype:
        return f"has dtype {info.dtype}, expected {spec.dtype}"
    if len(info.shape) != len(spec.shape or ()):
        return (f"has {len(info.shape)} dimensions (shape {info.shape}), "
                f"expected {len(spec.shape or ())}")
    mismatch = _check_dims(spec, info.shape, bound)
    if mismatch:
        return mismatch
    if not info.compact:
        return ("is not C-contiguous; pass a contiguous array (kernels read and write the "
                "caller's buffer, no copy is made)")
    if spec.written and not info.writable:
        return "is read-only, and the kernel writes it"
    return ""


# -- the public callables ------------------------------------------------------------------------
def _dtypes_label(dtypes: tuple[str, ...] | None) -> str:
    return ",".join(dtypes) if dtypes else "any of " + "/".join(DATA_DTYPES)


class KernelFunction:
    """One function of a kernel, callable on arrays in its documented argument order.

    Bound to dtypes (``K.get("retain", "float32").gather``) or taking them from the arrays it is
    given (``K.retain.gather``). Returns ``None``: results are the arguments marked WRITTEN.
    """

    def __init__(self, kernel: KernelDef, function: str, dtypes: tuple[str, ...] | None,
                 target: Any = None, config: dict[str, Any] | None = None,
                 check: bool = True) -> None:
        self.kernel = kernel
        self.name = function
        self.dtypes = dtypes
        self.check = check
        self._target = target
        self._config = config
        self._generic = arguments(kernel, function, tuple(kernel.dtype_params))
        self.arguments = arguments(kernel, function, dtypes) if dtypes else self._generic
        self.internal = next((a.name for a in self._generic if "internal" in a.domain), None)
        self.__doc__ = self._document()

    def call_line(self) -> str:
        """``name(arg, ...)`` as one line."""
        return f"{self.name}({', '.join(a.name for a in self.arguments)})"

    def _document(self) -> str:
        return "\n".join([
            f"{self.kernel.name}.{self.call_line()}  [dtype: {_dtypes_label(self.dtypes)}]",
            "",
            self.kernel.doc,
            "",
            "Arguments in order; the kernel writes only those marked WRITTEN, in place:",
            *argument_table(self.arguments),
            "",
            "Arrays: numpy, torch or any DLPack array, C-contiguous, on the CPU, never copied.",
            *self._domain_lines(),
        ])

    def _domain_lines(self) -> list[str]:
        if self.internal is not None:
            return [f"An internal phase ('{self.internal}' comes from another phase): refused "
                    "unless checks are off (sparsegen.kernels.get(..., check=False))."]
        checked = [f"  {a.name}: {' '.join(a.domain)}" for a in self._generic if a.domain]
        if not checked:
            return []
        state = "checked before every call" if self.check else "NOT checked (check=False)"
        return [f"Index values, {state} (see sparsegen.kernels.DOMAINS):", *checked]

    def __repr__(self) -> str:
        return (f"<kernel function {self.kernel.name}.{self.name}"
                f"({', '.join(a.name for a in self.arguments)}) [{_dtypes_label(self.dtypes)}]>")

    def symbol(self, dtypes: tuple[str, ...] | None = None) -> str:
        """The exported C symbol (without the ``__tvm_ffi_`` prefix) for ``dtypes``."""
        dtypes = dtypes or self.dtypes
        if not dtypes:
            raise SparsegenError(f"{self!r} is not bound to dtypes: pass them")
        return self.kernel.symbol(dtypes, self.name)

    def _infer_dtypes(self, args: tuple[Any, ...]) -> tuple[str, ...]:
        found = []
        for param in self.kernel.dtype_params:
            position = next((i for i, a in enumerate(self._generic) if a.dtype == param), None)
            if position is None:
                raise SparsegenError(
                    f"{self.kernel.name}.{self.name} has no argument of the kernel's {param}: "
                    f"bind one with sparsegen.kernels.get({self.kernel.name!r}, dtype)"
                )
            if position >= len(args):
                raise SparsegenError(self._explain(None, args, None))
            dtype = _dtype_name(args[position])
            if dtype not in DATA_DTYPES:
                raise SparsegenError(
                    f"{self.kernel.name}.{self.name}: argument #{position} "
                    f"'{self._generic[position].name}' sets the kernel's {param}, which must be "
                    f"one of {', '.join(DATA_DTYPES)}; got {dtype or type(args[position]).__name__}"
                )
            found.append(dtype)
        return tuple(found)

    def __call__(self, *args: Any) -> None:
        dtypes = self.dtypes or self._infer_dtypes(args)
        head = f"{self.kernel.name}.{self.name} [{_dtypes_label(dtypes)}]"
        if self.check and self.internal is not None:
            raise SparsegenError(
                f"{head} is an internal phase of its op: argument '{self.internal}' comes from "
                "another phase and its values cannot be checked, so the call is refused; call it "
                f"through sparsegen.kernels.get({self.kernel.name!r}, ..., check=False) on "
                "arrays you vouch for"
            )
        for spec, value in zip(self.arguments, args):
            if not spec.is_tensor and isinstance(value, (bool, np.bool_)):  # TVM takes it as 0/1
                raise SparsegenError(self._explain(dtypes, args, None))
        size = max((math.prod(getattr(a, "shape", ())) for a in args), default=0)
        target = self._target if self._target is not None else _gpu_target(args)
        compiled = get_kernel(self.kernel.name, dtypes, target, self._config, size=size)
        if self.check and any(a.domain for a in self._generic):
            device = "cuda" if compiled.key.target.kind == "cuda" else "cpu"
            specs = arguments(self.kernel, self.name, dtypes)
            bound: dict[str, tuple[int, str]] = {}
            problem = self._structure(head, specs, args, bound, device)
            if problem:
                raise SparsegenError(problem)
            _check_domains(head, specs, args, {k: v for k, (v, _) in bound.items()})
        try:
            compiled.functions[self.name](*args)
        except (TypeError, ValueError, BufferError, RuntimeError) as err:
            device = "cuda" if compiled.key.target.kind == "cuda" else "cpu"
            raise SparsegenError(self._explain(dtypes, args, err, device)) from None

    def _explain(self, dtypes: tuple[str, ...] | None, args: tuple[Any, ...],
                 err: BaseException | None, device: str = "cpu") -> str:
        """Which argument is wrong and how, from the documented signature (else TVM's words)."""
        specs = arguments(self.kernel, self.name, dtypes) if dtypes else self._generic
        head = f"{self.kernel.name}.{self.name} [{_dtypes_label(dtypes)}]"
        problem = self._structure(head, specs, args, {}, device)
        if problem:
            return problem
        if err is None:
            return ""
        text = str(err).strip()
        named = re.search(r"argument #(\d+)", text)
        if named and int(named[1]) < len(specs):
            text = f"argument #{named[1]} '{specs[int(named[1])].name}': {text}"
        return f"{head}: {text}"


    @staticmethod
    def _structure(head: str, specs: Sequence[Argument], args: tuple[Any, ...],
                   bound: dict[str, tuple[int, str]], device: str) -> str:
        """Which argument does not fit its spec (count, dtype, shape, layout, device), else ''
        with ``bound`` holding each dimension symbol's size."""
        if len(args) != len(specs):
            return (f"{head} takes {len(specs)} arguments "
                    f"({', '.join(a.describe() for a in specs)}), got {len(args)}")
        for position, (spec, value) in enumerate(zip(specs, args)):
            problem = _check_argument(spec, value, bound, device)
            if problem:
                return f"{head}: argument #{position} '{spec.name}' ({spec.describe()}) {problem}"
        return ""


def _host_values(value: Any) -> np.ndarray:
    """An index argument's values on the host: the array itself for numpy and other CPU arrays
    (no copy), a copy for arrays in device memory."""
    if isinstance(value, np.ndarray):
        return value
    info = _array_info(value)
    if isinstance(info, _ArrayInfo) and info.device == "cpu":
        return np.from_dlpack(value)
    return DeviceArray.from_dlpack(value).numpy()


def _check_domains(head: str, specs: Sequence[Argument], args: tuple[Any, ...],
                   sizes: dict[str, int]) -> None:
    """Raise ``SparsegenError`` unless every index argument's values lie in its domain (row
    pointers first: the per-row checks read them)."""
    values = {s.name: _host_values(a).reshape(-1) for s, a in zip(specs, args) if s.domain}
    order = sorted((s for s in specs if s.domain),
                   key=lambda s: not any(d.startswith("ptr(") for d in s.domain))
    try:
        for spec in order:
            what = f"{head}: argument '{spec.name}'"
            arr = values[spec.name]
            for token in spec.domain:
                match = _DOMAIN.match(token)
                assert match is not None  # parse_signature accepted it
                if match["below"]:
                    check_range(arr, what, sizes[match["below"]], sorted_unique=False)
                elif match["ptr"]:
                    check_indptr(arr, what, sizes[match["ptr"]])
                elif match["rows"]:
                    check_range(arr, what, None, sorted_unique=False)
                    check_sorted_rows(arr, values[match["rows"]], what)
                elif token == "sorted":
                    check_range(arr, what, None, sorted_unique=True)
    except SparsegenError as err:
        raise SparsegenError(f"{err} (index values are checked before the kernel runs; "
                             "sparsegen.kernels.get(..., check=False) skips the check)") from None


class KernelFamily:
    """A registered kernel as Python callables: its functions as attributes; ``family["float32"]`` binds dtypes."""

    def __init__(self, kernel: KernelDef, dtypes: tuple[str, ...] | None = None,
                 target: Any = None, config: dict[str, Any] | None = None,
                 check: bool = True) -> None:
        if dtypes is not None:
            kernel.check_dtypes(dtypes)
        self.kernel = kernel
        self.dtypes = dtypes
        self.check = check
        self.functions = {
            name: KernelFunction(kernel, name, dtypes, target, config, check)
            for name, _ in kernel.signatures
        }
        self._target = target
        self._config = config
        self.__doc__ = "\n\n".join(
            [f"{kernel.name} [{_dtypes_label(dtypes)}]: {kernel.doc}"]
            + ["\n".join([f.call_line(), *argument_table(f.arguments)])
               for f in self.functions.values()]
            + ["Functions write only the arguments marked WRITTEN; help(family.function) for more."]
        )

    def __getattr__(self, name: str) -> KernelFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(
            f"kernel {self.__dict__['kernel'].name!r} has no function {name!r}; "
            f"it has {sorted(functions)}"
        )

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.functions})

    def __getitem__(self, dtypes: str | tuple[str, ...]) -> "KernelFamily":
        names = (dtypes,) if isinstance(dtypes, str) else dtypes
        if not isinstance(names, tuple) or not all(isinstance(d, str) for d in names):
            raise SparsegenError(
                f"kernel {self.kernel.name!r} is bound to dtype names (a str, or a tuple of "
                f"them, one per dtype parameter {self.kernel.dtype_params}), got {dtypes!r}")
        return KernelFamily(self.kernel, names, self._target, self._config, self.check)

    def __repr__(self) -> str:
        return (f"<kernel {self.kernel.name} [{_dtypes_label(self.dtypes)}]: "
                f"{', '.join(self.functions)}>")


def names() -> list[str]:
    """The names of every registered kernel."""
    return sorted(KERNELS)


def get(name: str, *dtypes: str, target: Any = None, config: dict[str, Any] | None = None,
        check: bool = True) -> KernelFamily:
    """Kernel family ``name`` bound to ``dtypes`` (one per dtype parameter; one dtype is used for
    all), compiled or loaded from the kernel cache now. ``target``/``config`` as in the cache;
    ``check=False`` skips the index-value checks (and allows internal phases): trusted input."""
    if not isinstance(check, bool):
        raise SparsegenError(f"check must be True or False, got {check!r}")
    kernel = kernel_def(name)
    if config is not None and not isinstance(config, Mapping):
        raise SparsegenError(f"config must be a dict of schedule knob values, got {config!r}")
    if len(dtypes) == 1:
        dtypes = dtypes * len(kernel.dtype_params)
    family = KernelFamily(kernel, tuple(dtypes), target, config, check)
    get_kernel(name, family.dtypes, target, config)
    return family


def __getattr__(name: str) -> KernelFamily:
    if name in KERNELS:
        return KernelFamily(KERNELS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *KERNELS})


__all__ = ["DOMAINS", "Argument", "KernelFamily", "KernelFunction", "argument_table",
           "arguments", "get", "names", "parse_signature"]
