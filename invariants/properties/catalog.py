"""The registry of named invariants.

An invariant is a statement about the scheduler's state that must hold after
every API call: a name, the statement, the seed section it enforces, and a
check that returns violations, each with an explanation a person can act on.
Checks only read: they take the scheduler's lock for a consistent view and
never change an object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from invariants.properties.recorder import LifecycleRecorder
    from scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant on one object."""

    invariant: str
    subject: str
    explanation: str

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.subject}: {self.explanation}"


class WireFault(Exception):
    """A step the wire broke in a way no in-process run can show
    (``invariants/modelshim/loopback.py``): the step ends with this violation, as a core that
    raised ends with its own."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(str(violation))
        self.violation = violation


T = TypeVar("T")


@dataclass(slots=True)
class CheckContext:
    """What a check may read: the scheduler and, when present, observers of it.

    ``recorder`` has seen every lifecycle transition of the scheduler since it
    was created; ``shim_view`` is what a model shim believes it holds (uuid ->
    (application id, node id)), for the invariant that compares the two.
    """

    scheduler: Scheduler
    recorder: LifecycleRecorder | None = None
    shim_view: dict[str, tuple[str, str]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    memo: dict[Any, Any] = field(default_factory=dict)
    """Readings several checks take alike of this one state (``shared``)."""

    def shared(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()``, taken once per context: the sums that several checks read of one
        state (each check still judges them its own way). The result is read, never
        changed; whoever runs several checks on one context holds the scheduler's lock
        across them (``check_all``), so that they read one state."""
        if key in self.memo:
            return cast(T, self.memo[key])
        value = self.memo[key] = compute()
        return value


CheckFn = Callable[[CheckContext], Iterable[Violation]]


@dataclass(frozen=True, slots=True)
class Invariant:
    """A named statement with the seed section it comes from."""

    name: str
    statement: str
    seed: str
    meaning: str
    check: CheckFn
    needs: tuple[str, ...] = ()

    def run(self, ctx: CheckContext) -> list[Violation]:
        """Violations in ``ctx`` (empty when the invariant holds or can not apply)."""
        if "recorder" in self.needs and ctx.recorder is None:
            return []
        if "shim_view" in self.needs and ctx.shim_view is None:
            return []
        if "after_schedule" in self.needs and not ctx.extra.get("after_schedule"):
            return []
        with ctx.scheduler.lock:
            return list(self.check(ctx))


REGISTRY: dict[str, Invariant] = {}


def invariant(
    name: str, statement: str, seed: str, meaning: str, needs: Sequence[str] = ()
) -> Callable[[CheckFn], CheckFn]:
    """Register ``check`` under ``name`` (names are unique and stable)."""

    def register(check: CheckFn) -> CheckFn:
        if name in REGISTRY:
            raise ValueError(f"invariant {name} registered twice")
        REGISTRY[name] = Invariant(name, statement, seed, meaning, check, tuple(needs))
        return check

    return register


def check_all(ctx: CheckContext, names: Iterable[str] | None = None) -> list[Violation]:
    """Run the named invariants (all by default) in registry order, on one state: the
    lock is held throughout, so the sums they share (``CheckContext.shared``) are of it."""
    chosen = list(REGISTRY) if names is None else list(names)
    out: list[Violation] = []
    with ctx.scheduler.lock:
        ctx.memo.clear()
        for name in chosen:
            out.extend(REGISTRY[name].run(ctx))
    return out


def results(ctx: CheckContext) -> dict[str, list[Violation]]:
    """Every invariant with its violations (empty list: holds)."""
    with ctx.scheduler.lock:
        ctx.memo.clear()
        return {name: inv.run(ctx) for name, inv in REGISTRY.items()}
