"""What the benchmarks that compare implementations in fresh processes share: one run of a
program in a new interpreter (the numbers on its last output line), rounds of runs alternating
between implementations (with a progress bar), and the CPU's name for the results."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm


def one_run(python: str, code: str, env: dict[str, str]) -> list[float]:
    """The numbers a fresh ``python -c code`` prints on its last line of output."""
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{out.stderr[-3000:]}")
    return [float(v) for v in out.stdout.strip().splitlines()[-1].split()]


def alternate(runs: dict[str, tuple[str, str]], rounds: int, env: dict[str, str],
              describe: Callable[[str, list[float]], str]) -> dict[str, list[list[float]]]:
    """``rounds`` rounds of one fresh run per implementation (``name: (python, code)``), in
    the same order each round so all see the same machine noise; ``describe(name, numbers)``
    is printed after each run."""
    results: dict[str, list[list[float]]] = {name: [] for name in runs}
    with tqdm(total=rounds * len(runs), desc="runs") as bar:
        for r in range(rounds):
            for name, (python, code) in runs.items():
                results[name].append(one_run(python, code, env))
                bar.write(f"round {r + 1}/{rounds} {name}: {describe(name, results[name][-1])}")
                bar.update()
    return results


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo (the platform's processor string without it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
