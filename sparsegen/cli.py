"""The ``sparsegen`` command: demo, info, build, tune, bench, export, cache, launch."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import textwrap
from pathlib import Path
from collections.abc import Sequence

from . import __version__
from .config import cache_dir, num_threads


def _demo(args: argparse.Namespace) -> int:
    from .build import build_library

    summary = build_library(dtypes=("float32",))
    print(f"kernel library ready: {summary}\n")
    if args.tutorial:
        from .tutorial import run

        for step, printed in run():
            print(f"== {step.section}: {step.text}")
            for line in textwrap.dedent(step.code).strip().splitlines() + [step.show]:
                continued = line.startswith((" ", "except", "else", "elif", "finally"))
                print(("... " if continued else ">>> ") + line)
            print(printed, end="\n\n")
        return 0
    from .demo import DemoConfig, run

    run(DemoConfig(train_rows=20_000, test_rows=2_000, epochs=2) if args.quick else DemoConfig(),
        plot_path=Path(args.plot))
    return 0


def _info(args: argparse.Namespace) -> int:
    import importlib.util

    from .context import num_gpus
    from .tvm_runtime import runtime_dir, tvm_version
    from .target import host_cpu

    facts = {
        "sparsegen": __version__,
        "tvm": tvm_version(),
        "tvm_compiler": importlib.util.find_spec("tvm") is not None,
        "tvm_runtime": str(runtime_dir()),
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
    if args.tuning:
        _tuning_report()
    return 0


def _tuning_report() -> None:
    """Which tuning records apply on this machine: the config chosen per target (the host CPU,
    each GPU architecture), kernel, dtype and bucket."""
    from .choice import choose
    from .cpu_families import family
    from .device import cuda_target, emulated, num_gpus
    from .registry import KERNELS
    from .target import host_cpu
    from .tuning_records import BUCKETS, sources

    gpus = [] if emulated() else [cuda_target(i) for i in range(num_gpus())]
    print("tuning logs: " + ", ".join(p for group in sources() for p in group))
    host = host_cpu()
    home = family(host.as_dict.get("mcpu"))
    print(f"host CPU: {host.label} ({f'family {home}' if home else 'in no known family'}); "
          "a kernel without records of this CPU takes those of the nearest CPU of its family")
    print(f"{'target':18} {'kernel':18} {'dtype':8} {'bucket':7} {'source':8} {'measured on':20} "
          "config")
    for target in dict.fromkeys([host, *gpus]):
        for name, kernel in sorted(KERNELS.items()):
            for dtypes in sorted({(d,) * len(kernel.dtype_params) for d in kernel.dtypes}):
                for bucket in BUCKETS:
                    choice = choose(name, dtypes, target, None, bucket)
                    if choice.source != "default":
                        print(f"{target.label:18} {name:18} {','.join(dtypes):8} {bucket:7} "
                              f"{choice.source:8} {choice.measured_on:20} {dict(choice.config)}")


def _version(dist: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(dist)


def _positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _port(text: str) -> int:
    """An argparse type: a TCP port, 1..65535."""
    value = _positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port (1..65535), got {text!r}")
    return value


def _cuda_arch(text: str) -> str:
    """An argparse type: a CUDA architecture such as sm_90."""
    if not re.fullmatch(r"sm_\d{2,3}[a-z]?", text):
        raise argparse.ArgumentTypeError(f"must be a CUDA architecture such as sm_90, got {text!r}")
    return text


def _check_dtypes(dtypes: Sequence[str] | None, flag: str) -> None:
    """Raise ``MXNetError`` naming ``flag`` when a dtype has no kernels."""
    from .errors import SparsegenError
    from .formats import DATA_DTYPES

    unknown = [d for d in dtypes or () if d not in DATA_DTYPES]
    if unknown:
        raise SparsegenError(f"{flag}: unknown dtypes {unknown}; supported: {', '.join(DATA_DTYPES)}")


def _build(args: argparse.Namespace) -> int:
    from .build import build_library
    from .formats import DATA_DTYPES

    from .target import cuda

    _check_dtypes(args.dtypes, "--dtypes")
    target = cuda(args.arch) if args.target == "cuda" else args.target
    summary = build_library(args.ops, args.dtypes or DATA_DTYPES, target)
    print(summary)
    return 0


def _tune(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .target import cuda, resolve
    from .tune import tuner
    from .tuning_records import log_name, user_log

    _check_dtypes(args.dtype, "--dtype")
    kernels = tuner.tunable() if args.op == ["all"] else args.op
    unknown = sorted(set(kernels) - set(tuner.tunable()))
    if unknown:
        print(f"sparsegen: error: no tuning workload for {unknown}; tunable: {tuner.tunable()}",
              file=sys.stderr)
        return 2
    if args.prebuild:
        target = cuda(args.arch) if args.target == "cuda" else resolve(args.target)
        summary = tuner.prebuild(kernels, args.dtype, target, args.trials, args.buckets)
        print(f"{summary} ({args.trials} tuning candidates per kernel for {target.label})")
        return 0
    log = Path(args.log) if args.log else user_log()
    ship = Path(args.ship) if args.ship else None
    for folder in (log.parent, ship):  # a path that cannot be written fails now, not after tuning
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
    target = tuner.tuning_target(args.target)
    outcomes = tuner.tune(kernels, args.dtype, target, args.trials, log, buckets=args.buckets,
                          ship=ship, rounds=args.rounds)
    print(tuner.table(outcomes))
    missing = sum(o.missing for o in outcomes)
    if missing:
        print(f"timed only the candidates in the prebuilt kernel cache ({missing} others passed "
              "over: the TVM compiler that would build them is not installed)")
    print(f"records appended to {log}" + (f" and {ship / log_name(target, '*')}" if ship else ""))
    return 0 if len(outcomes) == len(kernels) * len(args.dtype) * len(args.buckets) else 1


def _bench_training(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .bench import training
    from .config import num_threads

    config = training.Config.quick() if args.quick else training.Config()
    config = training.Config(**{**config.__dict__, **{k: getattr(args, k) for k in
                                                      ("rounds", "steps", "warmup")
                                                      if getattr(args, k) is not None}})
    out = Path(args.out or "benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)  # fails now, not after the benchmarks ran
    mxnet = training.MXNET_PYTHON if args.mxnet is None else args.mxnet
    result = training.run(config, num_threads(), None if mxnet == "none" else mxnet)
    paths = training.write(result, out)
    print(training.markdown(result))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.training:
        return _bench_training(args)
    if args.distributed:
        from .bench import dist

        out = Path(args.out or "benchmarks/results")
        out.mkdir(parents=True, exist_ok=True)
        report = dist.run(quick=args.quick)
        print(dist.markdown(report))
        print("wrote " + ", ".join(str(p) for p in dist.write(report, out)))
        return 0
    gpu = args.target == "gpu"
    if gpu:
        from .bench import gpu as suite
    else:
        from .bench import suite
    known = sorted(suite.WORKLOADS)
    ids = args.workloads.split(",") if args.workloads else known
    unknown = [i for i in ids if i not in suite.WORKLOADS]
    if unknown:
        print(f"sparsegen: error: unknown workloads {unknown}; known: {known}", file=sys.stderr)
        return 2
    out = Path(args.out or ("benchmarks/results/gpu" if gpu else "benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)  # fails now, not after the benchmarks ran
    report = suite.run(ids, quick=args.quick, out=out) if gpu else suite.run(ids, quick=args.quick)
    paths = suite.write(report, out)
    print(suite.markdown(report))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _launch(args: argparse.Namespace) -> int:
    from .launch import host_commands, hosts_of, launch

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("sparsegen: error: launch needs a command after --, e.g. "
              "sparsegen launch -n 2 -- python train.py", file=sys.stderr)
        return 2
    if args.hosts:
        for line in host_commands(hosts_of(args.hosts), args.nproc, args.port or 29500, command):
            print(line)
        return 0
    return launch(args.nproc, command, args.port)


def _export(args: argparse.Namespace) -> int:
    from .export import export

    print(export(args.output, args.target, args.ops, args.dtypes, args.name))
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
    print(f"corrupt    {sum(e['problem'] is not None for e in entries)} (rebuilt when next used)")
    if args.verbose:
        for e in entries:
            problem = f"  CORRUPT: {e['problem']}" if e["problem"] else ""
            print(f"  {e.get('kernel', '?'):16} {','.join(e.get('dtypes', [])):10} {e['bytes']:>9} B  "
                  f"{e['file']}{problem}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sparsegen`` command."""
    p = argparse.ArgumentParser(prog="sparsegen", description=__doc__)
    p.add_argument("--version", action="version", version=f"sparsegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train sparse logistic regression on generated kernels")
    demo.add_argument("--tutorial", action="store_true",
                      help="walk through MXNet's row_sparse tutorial instead")
    demo.add_argument("--quick", action="store_true", help="a smaller data set")
    demo.add_argument("--plot", default="sparsegen-demo-loss.png",
                      help="where the PNG of the loss curves goes (default: %(default)s)")
    demo.set_defaults(run=_demo)
    info = sub.add_parser("info", help="versions, host target, GPU and nvcc presence, cache directory")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.add_argument("--tuning", action="store_true",
                      help="also list the tuned configs that apply on this machine")
    info.set_defaults(run=_info)
    build = sub.add_parser("build", help="precompile kernels into the cache")
    build.add_argument("--target", default="cpu", help="cpu (default), cuda, or a target JSON dict")
    build.add_argument("--arch", default="sm_90", type=_cuda_arch,
                       help="GPU architecture for --target cuda")
    build.add_argument("--ops", nargs="+", help="kernel names (default: all)")
    build.add_argument("--dtypes", nargs="+", help="element dtypes (default: all supported)")
    build.set_defaults(run=_build)
    tune = sub.add_parser("tune", help="search schedule knobs and log the timings")
    tune.add_argument("--op", nargs="+", default=["all"], help="kernel names, or all (default)")
    tune.add_argument("--target", default="cpu",
                      help="cpu (default), cuda (GPU 0, its own sm_XY; needs a GPU), or a target "
                           "JSON dict")
    tune.add_argument("--trials", type=_positive_int, default=12, help="configs per workload (default 12)")
    tune.add_argument("--rounds", type=_positive_int, default=7,
                      help="timing rounds, each running every candidate once (default 7)")
    tune.add_argument("--prebuild", action="store_true",
                      help="only build the candidates --trials would time into the kernel cache "
                           "(no GPU needed), for a runtime-only install to tune among")
    tune.add_argument("--arch", default="sm_90", type=_cuda_arch,
                      help="GPU architecture for --prebuild --target cuda (tuning uses GPU 0's)")
    tune.add_argument("--log", help="JSON-lines log to append to (default: under the cache dir)")
    tune.add_argument("--ship", metavar="DIR",
                      help="also append each kernel's records to DIR/<target>-<kernel>.jsonl, "
                           "the naming of the shipped tuning_logs/")
    tune.add_argument("--dtype", nargs="+", default=["float32"], help="dtypes (default float32)")
    tune.add_argument("--buckets", nargs="+", default=["small", "medium", "large"],
                      choices=["small", "medium", "large"], help="workload size buckets")
    tune.set_defaults(run=_tune)
    bench = sub.add_parser("bench", help="run WORKLOADS.md against numpy/scipy and PyTorch "
                                         "(--target gpu: on a GPU)")
    bench.add_argument("--workloads", help="comma-separated ids such as W1,W4 (default: all)")
    bench.add_argument("--target", choices=("cpu", "gpu"), default="cpu",
                       help="cpu (default: W1-W12 against numpy/scipy and PyTorch CPU) or gpu "
                            "(W1-W7 on gpu(0) against PyTorch CUDA; SPARSEGEN_GPU=host emulates)")
    bench.add_argument("--out", help="output directory (default: benchmarks/results, "
                                     "or benchmarks/results/gpu for --target gpu)")
    bench.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    bench.add_argument("--training", action="store_true",
                       help="the Gluon sparse training benchmark (sparsegen, MXNet 1.9.1, "
                            "PyTorch) into gluon-train.{json,md,png}")
    for knob, what in (("rounds", "rounds per implementation (default 3)"),
                       ("steps", "timed steps per run (default 60)"),
                       ("warmup", "untimed steps first (default 10)")):
        bench.add_argument(f"--{knob}", type=_positive_int, help=f"--training: {what}")
    bench.add_argument("--mxnet", help="--training: a Python with mxnet==1.9.1 (default "
                                       "/work/mxvenv/bin/python; 'none' or a missing path: no "
                                       "MXNet run)")
    bench.add_argument("--distributed", action="store_true",
                       help="the dist_sync kvstore against dense all_reduce, 1, 2 and 4 workers "
                            "on loopback (benchmarks/results/dist-kvstore.*)")
    bench.set_defaults(run=_bench)
    launch = sub.add_parser("launch", help="start N workers of a distributed kvstore script "
                                           "here, or print each host's command")
    launch.add_argument("-n", "--nproc", type=_positive_int, required=True,
                        help="worker processes (a host, with --hosts)")
    launch.add_argument("--hosts", help="a file of host names, one a line: print the command "
                                        "to run on each instead of starting workers")
    launch.add_argument("--port", type=_port, help="the rendezvous port (default: a free one; "
                                                   "29500 with --hosts)")
    launch.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- then the command, e.g. -- python train.py ARGS")
    launch.set_defaults(run=_launch)
    export = sub.add_parser("export", help="one shared library + C header + manifest for C/C++")
    export.add_argument("--target", default="cpu", help="cpu (default), cuda, or a target JSON dict")
    export.add_argument("--ops", nargs="+", help="kernel names (default: all)")
    export.add_argument("--dtypes", nargs="+", default=["float32"],
                        help="element dtypes (default: float32)")
    export.add_argument("--name", default="sparsegen_kernels",
                        help="base name of lib<name>.so and <name>.h (default: sparsegen_kernels)")
    export.add_argument("-o", "--output", required=True, help="directory to write")
    export.set_defaults(run=_export)
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
    except OSError as err:  # a path given on the command line that cannot be read or written
        where = f" {err.filename}" if err.filename else ""
        print(f"sparsegen: error: cannot use{where}: {err.strerror or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
