"""``mx.runtime``: MXNet's feature queries (``Features().is_enabled('CUDA')``), MXNet 1.9.1's
feature names answered for sparsegen: its operators are TVM-generated (``TVM_OP``), there is no
BLAS, LAPACK, MKL-DNN or OpenMP underneath, CPU instruction sets are the host's (the kernels are
compiled for it). The TVM runtime that loads the kernels is ``sparsegen.tvm_runtime``."""

from __future__ import annotations

import collections
from dataclasses import dataclass

from .errors import SparsegenError

_CPU_FLAGS = {"CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "pni", "CPU_SSE4_1": "sse4_1",
              "CPU_SSE4_2": "sse4_2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
              "SSE": "sse", "F16C": "f16c"}
"""MXNet's instruction-set features -> the ``/proc/cpuinfo`` flag that has them."""

NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
         "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
         "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
         "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
         "SIGNAL_HANDLER", "DEBUG", "TVM_OP")
"""MXNet 1.9.1's feature names, in its order."""

_SPARSEGEN = {"PROFILER": True, "DIST_KVSTORE": True, "TVM_OP": True}
"""The features sparsegen always has (``mx.profiler``, the torch.distributed kvstore, generated
operators); the others not named here or in ``_CPU_FLAGS`` it lacks, CUDA aside."""


class UnknownFeature(SparsegenError, RuntimeError):
    """A feature name MXNet does not list (MXNet raises ``RuntimeError``)."""


@dataclass(frozen=True)
class Feature:
    """One feature: its name and whether it is enabled."""

    name: str
    enabled: bool

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def feature_list() -> list[Feature]:
    """Every feature, in MXNet's order."""
    from .context import num_gpus
    from .target import cpu_flags

    flags = cpu_flags()
    enabled = {"CUDA": num_gpus() > 0, **_SPARSEGEN,
               **{name: flag in flags for name, flag in _CPU_FLAGS.items()}}
    return [Feature(name, enabled.get(name, False)) for name in NAMES]


class Features(collections.OrderedDict):
    """The features by name (``Features()['CUDA'].enabled``), as ``mx.runtime.Features``."""

    def __init__(self) -> None:
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` is enabled; an unknown name raises naming the known ones."""
        name = feature_name.upper()
        if name not in self:
            raise UnknownFeature(f"Feature '{feature_name}' is unknown, known features are: "
                               f"{list(self)}")
        return self[name].enabled


__all__ = ["Feature", "Features", "UnknownFeature", "feature_list"]
