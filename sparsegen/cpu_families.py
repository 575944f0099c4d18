"""CPU families: which other CPU's tuning records stand in for a CPU that has none of its own.

LLVM names a CPU by its microarchitecture (``mcpu``). Kernels tuned on one member of a family
(same vendor, same vector width and cache design) are a better start on a sibling than the
schedule's defaults, so a CPU without records of its own takes the records of the family member
nearest to it in generation order (the newer one on a tie). A CPU outside every family gets the
defaults. This module never imports TVM: it runs on the call path.
"""

from __future__ import annotations

FAMILIES: dict[str, tuple[str, ...]] = {
    "intel-avx512": ("skylake-avx512", "cascadelake", "cooperlake", "icelake-client",
                     "icelake-server", "tigerlake", "rocketlake", "sapphirerapids",
                     "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids"),
    "intel-avx2": ("haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
                   "arrowlake", "arrowlake-s", "lunarlake", "pantherlake"),
    "amd-zen": ("znver1", "znver2", "znver3", "znver4", "znver5"),
    "arm-neoverse": ("neoverse-n1", "neoverse-v1", "neoverse-n2", "neoverse-v2", "neoverse-n3",
                     "neoverse-v3"),
}
"""Each family's LLVM CPU names, oldest first."""

_MEMBER = {cpu: (family, rank) for family, cpus in FAMILIES.items() for rank, cpu in enumerate(cpus)}


def family(mcpu: str | None) -> str | None:
    """The family of LLVM CPU ``mcpu``, or ``None`` for a CPU outside every family."""
    member = _MEMBER.get(mcpu or "")
    return member[0] if member else None


def nearest(mcpu: str | None, candidates: set[str]) -> str | None:
    """Of ``candidates`` (CPUs that have records), the one in ``mcpu``'s family nearest to it in
    generation order, the newer on a tie; ``None`` when no candidate is in its family."""
    if mcpu not in _MEMBER:
        return None
    home, rank = _MEMBER[mcpu]
    siblings = [c for c in candidates if c != mcpu and _MEMBER.get(c, ("", 0))[0] == home]
    if not siblings:
        return None
    return min(siblings, key=lambda c: (abs(_MEMBER[c][1] - rank), -_MEMBER[c][1]))
