"""The ``sparsegen`` command: demo, info, build, cache."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from collections.abc import Sequence

from . import __version__
from .config import cache_dir, num_threads


def _demo(args: argparse.Namespace) -> int:
    from .build import build_library
    from .tutorial import run

    summary = build_library(dtypes=("float32", "float16", "int64"))
    print(f"kernel library ready: {summary}\n")
    for step, printed in run():
        print(f"== {step.section}: {step.text}")
        for line in textwrap.dedent(step.code).strip().splitlines() + [step.show]:
            continued = line.startswith((" ", "except", "else", "elif", "finally"))
            print(("... " if continued else ">>> ") + line)
        print(printed, end="\n\n")
    return 0


def _info(args: argparse.Namespace) -> int:
    from .context import num_gpus
    from .target import host_cpu

    facts = {
        "sparsegen": __version__,
        "tvm": _version("apache-tvm"),
        "tvm_ffi": _version("apache-tvm-ffi"),
        "host_target": host_cpu().as_dict,
        "threads": num_threads(),
        "nvcc": shutil.which("nvcc"),
        "gpus": num_gpus(),
        "cache_dir": str(cache_dir()),
    }
    if args.json:
        print(json.dumps(facts, indent=1))
    else:
        for key, value in facts.items():
            print(f"{key:12} {value if value not in (None, '') else 'not found'}")
    return 0


def _version(dist: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(dist)


def _build(args: argparse.Namespace) -> int:
    from .build import build_library
    from .registry import DATA_DTYPES

    summary = build_library(args.ops, args.dtypes or DATA_DTYPES, args.target)
    print(summary)
    return 0


def _cache(args: argparse.Namespace) -> int:
    from .cache import default_cache

    cache = default_cache()
    if args.action == "clear":
        print(f"removed {cache.clear()} files from {cache.directory / 'kernels'}")
        return 0
    entries = cache.entries()
    size = sum(e["bytes"] for e in entries)
    print(f"directory  {cache.directory}")
    print(f"entries    {len(entries)}")
    print(f"size       {size / 1e6:.2f} MB")
    if args.verbose:
        for e in entries:
            print(f"  {e.get('kernel', '?'):16} {','.join(e.get('dtypes', [])):10} {e['bytes']:>9} B  {e['file']}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sparsegen`` command."""
    p = argparse.ArgumentParser(prog="sparsegen", description=__doc__)
    p.add_argument("--version", action="version", version=f"sparsegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="walk through MXNet's row_sparse tutorial on generated kernels").set_defaults(run=_demo)
    info = sub.add_parser("info", help="versions, host target, GPU and nvcc presence, cache directory")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(run=_info)
    build = sub.add_parser("build", help="precompile kernels into the cache")
    build.add_argument("--target", default="cpu", help="cpu (default) or a target JSON dict")
    build.add_argument("--ops", nargs="+", help="kernel names (default: all)")
    build.add_argument("--dtypes", nargs="+", help="element dtypes (default: all supported)")
    build.set_defaults(run=_build)
    cache = sub.add_parser("cache", help="inspect or clear the kernel cache")
    cache.add_argument("action", choices=("info", "clear"))
    cache.add_argument("-v", "--verbose", action="store_true", help="list every entry")
    cache.set_defaults(run=_cache)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sparsegen`` console script."""
    args = parser().parse_args(argv)
    from .errors import SparsegenError

    try:
        return args.run(args)
    except SparsegenError as err:
        print(f"sparsegen: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
