"""Rounds of fresh-process runs alternating between implementations (with a progress bar), for
the benchmarks that compare implementations in fresh processes; one run comes from
sparsegen.bench.harness."""

from __future__ import annotations

from collections.abc import Callable

from tqdm import tqdm

from sparsegen.bench.harness import fresh_run as one_run


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
