"""Resource arithmetic for the checks, written apart from the core's on purpose.

The invariants recompute totals and compare them with the core's; doing that
with the core's own ``scheduler.resources`` would make a bug there invisible
to every check. Resources are ``{type: int}`` maps; a missing type is zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Quantities = Mapping[str, int]


INT64_MAX = 2**63 - 1
"""The SI's int64: no total the core keeps may pass it."""


def total(items: Iterable[Quantities]) -> dict[str, int]:
    """The per-type sum, without zero entries."""
    out: dict[str, int] = {}
    for r in items:
        for k, v in r.items():
            out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def plus(a: Quantities, b: Quantities) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def add(into: dict[str, int], r: Quantities, n: int = 1) -> None:
    """``into += n x r`` in place (zero entries may stay: compare with :func:`same`)."""
    for k, v in r.items():
        into[k] = into.get(k, 0) + v * n


def minus(a: Quantities, b: Quantities) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return {k: v for k, v in out.items() if v}


def times(r: Quantities, n: int) -> dict[str, int]:
    return {k: v * n for k, v in r.items() if v * n}


def same(a: Quantities, b: Quantities) -> bool:
    """Equal, a missing type counting as zero (the explorer asks this ~20 times a state)."""
    for k, v in a.items():
        if b.get(k, 0) != v:
            return False
    return all(a.get(k, 0) == v for k, v in b.items())


def fits(want: Quantities, room: Quantities) -> bool:
    """Every type of ``want`` is at most what ``room`` has (missing = 0)."""
    return all(v <= room.get(k, 0) for k, v in want.items())


def within(used: Quantities, limit: Quantities) -> bool:
    """``used`` stays at or under ``limit`` on every type the limit names (others unlimited)."""
    return all(used.get(k, 0) <= v for k, v in limit.items())


def positive(r: Quantities) -> bool:
    return any(v > 0 for v in r.values())


def show(r: Quantities) -> str:
    """``{memory:10 vcore:1}``, types sorted."""
    return "{" + " ".join(f"{k}:{r[k]}" for k in sorted(r) if r[k]) + "}"
