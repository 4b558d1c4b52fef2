"""Resource arithmetic on sparse ``{type: int}`` maps.

The core keeps resources as plain dicts of non-negative ints (memory, vcore in
milli-cores, ...): a type missing from a map counts as zero. Plain dicts and
module functions instead of a class keep the scheduling hot path cheap
(``docs/performance.md``). Functions never mutate their arguments unless their
name ends in ``_into`` / ``_from``.

Semantics follow YuniKorn's ``resources`` package where the seeds are silent
(``004``, "Implementation": sort queues and apps by usage;
fair share needs per-type shares).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Resource = dict[str, int]
ResourceView = Mapping[str, int]


def copy(r: ResourceView) -> Resource:
    """A copy without zero entries, so equal resources compare equal as dicts."""
    return {k: v for k, v in r.items() if v}


def add(a: ResourceView, b: ResourceView) -> Resource:
    """``a + b`` per type."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def sub(a: ResourceView, b: ResourceView) -> Resource:
    """``a - b`` per type; may go negative (callers check with :func:`fits`)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return {k: v for k, v in out.items() if v}


def sub_floor(a: ResourceView, b: ResourceView) -> Resource:
    """``a - b`` per type, never below zero (room left, for display)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return {k: v for k, v in out.items() if v > 0}


def add_into(target: Resource, delta: ResourceView) -> None:
    """``target += delta`` in place (hot path: no new dict)."""
    for k, v in delta.items():
        n = target.get(k, 0) + v
        if n:
            target[k] = n
        else:
            target.pop(k, None)


def sub_from(target: Resource, delta: ResourceView) -> None:
    """``target -= delta`` in place (hot path: no new dict)."""
    for k, v in delta.items():
        n = target.get(k, 0) - v
        if n:
            target[k] = n
        else:
            target.pop(k, None)


def fits(ask: ResourceView, room: ResourceView) -> bool:
    """Whether ``ask`` fits in ``room``: every type of the ask, missing in room = 0."""
    for k, v in ask.items():
        if v > room.get(k, 0):
            return False
    return True


def fits_with(ask: ResourceView, used: ResourceView, limit: ResourceView) -> bool:
    """Whether ``used + ask`` stays within ``limit`` for every type ``limit`` sets.

    Types the limit does not mention are unlimited: this is how a queue's
    ``max`` works in YuniKorn (a max of ``{memory: 10}`` does not cap vcore).
    """
    for k, v in ask.items():
        if k in limit and used.get(k, 0) + v > limit[k]:
            return False
    return True


def within(used: ResourceView, limit: ResourceView) -> bool:
    """Whether ``used`` is at most ``limit`` for every type ``limit`` sets."""
    for k, v in limit.items():
        if used.get(k, 0) > v:
            return False
    return True


def le(a: ResourceView, b: ResourceView) -> bool:
    """Component-wise ``a <= b`` over the union of types (missing = 0)."""
    return all(v <= b.get(k, 0) for k, v in a.items()) and all(
        a.get(k, 0) <= v for k, v in b.items()
    )


def equal(a: ResourceView, b: ResourceView) -> bool:
    """Equality treating missing types as zero."""
    return le(a, b) and le(b, a)


# Plain loops rather than all()/any() over a generator: these run per allocation and per
# ask, on maps of two or three types, where the generator costs more than the test.


def is_zero(r: ResourceView) -> bool:
    """Whether every type is zero (or the map is empty)."""
    for v in r.values():
        if v != 0:
            return False
    return True


def any_positive(r: ResourceView) -> bool:
    """Whether some type is strictly positive."""
    for v in r.values():
        if v > 0:
            return True
    return False


def has_negative(r: ResourceView) -> bool:
    """Whether some type is negative (an accounting bug when it happens)."""
    for v in r.values():
        if v < 0:
            return True
    return False


def total(items: Iterable[ResourceView]) -> Resource:
    """The sum of many resources."""
    out: Resource = {}
    for r in items:
        add_into(out, r)
    return out


def multiply(r: ResourceView, n: int) -> Resource:
    """``r * n`` per type."""
    return {k: v * n for k, v in r.items() if v * n}


def component_min(a: ResourceView, b: ResourceView) -> Resource:
    """Per-type minimum over the union of types (missing = 0)."""
    keys = sorted(set(a) | set(b))
    return {k: m for k in keys if (m := min(a.get(k, 0), b.get(k, 0)))}


def shares(used: ResourceView, base: ResourceView) -> list[float]:
    """Per-type ``used / base`` for the types ``used`` has, largest first.

    A type with no (or zero) base counts as a share of ``used`` itself when
    positive (YuniKorn: unguaranteed usage weighs fully), 0 otherwise. The
    descending list compares lexicographically, which is how fair sorting
    breaks ties on the dominant share.
    """
    out: list[float] = []
    for k, v in used.items():
        b = base.get(k, 0)
        if b > 0:
            out.append(v / b)
        elif v > 0:
            out.append(float(v))
        else:
            out.append(0.0)
    out.sort(reverse=True)
    return out


def dominant_share(used: ResourceView, base: ResourceView) -> float:
    """The largest per-type share of ``used`` against ``base`` (0 when unused)."""
    s = shares(used, base)
    return s[0] if s else 0.0


def weighted_usage(
    allocated: ResourceView, capacity: ResourceView, weights: ResourceView | Mapping[str, float]
) -> float:
    """Weighted mean of ``allocated / capacity`` over the weighted types.

    The node sorting score of YuniKorn's fair and binpacking policies
    (``nodesortpolicy.resourceweights``, default vcore 1.0 and memory 1.0):
    types with no capacity or no weight do not count.
    """
    return used_share(capacity, sub(capacity, allocated), weights)


def used_share(
    capacity: ResourceView, available: ResourceView, weights: ResourceView | Mapping[str, float]
) -> float:
    """:func:`weighted_usage` of ``capacity - available`` without building the difference
    (integers: ``cap - available`` is exactly the usage): a node's sort score, computed at
    every allocation."""
    num = 0.0
    den = 0.0
    for k, w in weights.items():
        cap = capacity.get(k, 0)
        if w <= 0 or cap <= 0:
            continue
        num += w * ((cap - available.get(k, 0)) / cap)
        den += w
    return num / den if den else 0.0


class ShapeMemo:
    """Resources known to fail, kept as an antichain of the smallest ones.

    ``covers(r)`` is true when some remembered shape fits in ``r``: an ask at
    least that large fails too (room only shrinks within a scheduling call).
    Keeping only minimal shapes bounds the memo by the number of distinct
    incomparable sizes, not by the number of failed asks.
    """

    __slots__ = ("shapes",)

    def __init__(self) -> None:
        self.shapes: list[ResourceView] = []

    def covers(self, r: ResourceView) -> bool:
        for shape in self.shapes:
            if fits(shape, r):
                return True
        return False

    def add(self, r: ResourceView) -> None:
        if self.covers(r):
            return
        self.shapes = [s for s in self.shapes if not fits(r, s)]
        self.shapes.append(r)


INT64_MAX = 2**63 - 1
"""The largest quantity the SI (int64) and a Go or Java reader of the state can hold."""


def overflow(base: ResourceView, extra: ResourceView) -> str:
    """The first resource (by name) whose ``base + extra`` would pass int64, or ``""``."""
    for name, v in extra.items():
        if base.get(name, 0) + v > INT64_MAX:
            break
    else:
        return ""
    for name in sorted(extra):
        if base.get(name, 0) + extra[name] > INT64_MAX:
            return name
    return ""


def component_max(items: Iterable[ResourceView]) -> Resource:
    """Per-type maximum over many resources (missing = 0)."""
    out: Resource = {}
    for r in items:
        for k, v in r.items():
            if v > out.get(k, 0):
                out[k] = v
    return out


def to_str(r: ResourceView) -> str:
    """A stable human-readable form: ``{memory:10 vcore:1}``."""
    return "{" + " ".join([f"{k}:{r[k]}" for k in sorted(r)]) + "}"
