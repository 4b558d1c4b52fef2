"""The quiescent closure of a state: what happens when the shim only answers and time passes.

From a state, the shim confirms every release the core started, sends
nothing new, the clock passes every live timer, and ``schedule()`` runs,
round after round, until a round changes nothing; then the clock jumps a
day and the rounds go on until even that changes nothing. The liveness
properties (``invariants/properties/liveness.py``) are judged there. The steps are
deterministic, so the closure of a state is a function of its fingerprint:
every fingerprint met on the way is remembered with the verdict, and a later
closure that meets one stops there.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from invariants.explore.scope import next_live_timer, pending_confirmations
from invariants.modelshim import speaking
from invariants.modelshim.world import World
from invariants.properties import liveness
from invariants.properties.catalog import Violation
from scheduler.trace import Step

ROUNDS = 40
"""Rounds without rest, beyond the world's own work (``budget``), before the closure calls
it a livelock (``liveness.quiescence``)."""
PER_OBJECT = 4
"""Rounds each application, node, allocation, finished application and allocation an ask
still waits for may take on its way to rest: a timeout, a release to confirm, a Completing
spell, expiry."""
JUMP = 24 * 3600.0
"""How far the clock jumps past the last timer to make "forever" concrete."""


@dataclass
class Closure:
    """Where a closure ended: the steps it took and what it found (empty: every property held)."""

    steps: list[Step] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    safety: bool = False
    """A safety invariant broke on the way (not a liveness property)."""
    scheduled: int | None = None
    """With ``hint``: the fingerprint after the first round when that round was a lone
    ``schedule()`` that broke nothing, the step rules of its transitions included (the
    state's ``schedule`` child, which the search then need not take again)."""


def confirm_all(world: World) -> list[Step]:
    """One request per running RM confirming every release the core started, in the SI
    the RM speaks (today's by key, through ``invariants/modelshim/speaking.py``)."""
    out = []
    for rm_id, rv in sorted(world.shim.rms.items()):
        if rv.paused or rv.stopped:
            continue
        pending = pending_confirmations(rv)
        if not pending:
            continue
        step = Step("update_allocation", request=rv.release_request(pending))
        if rm_id in world.today:
            # A confirmation draws nothing from the speech stream (only an RM's own end
            # of a running pod does): any stream says it the same.
            out.extend(speaking.speak(step, rv, random.Random(0)))
        else:
            out.append(step)
    return out


def budget(world: World) -> int:
    """Rounds the closure of ``world`` may take before it is a livelock.

    Every timer and every release belongs to an object whose lifecycle is finite, so a
    correct core comes to rest within a number of rounds that grows with the world: ten
    applications expiring one after another take ten timer rounds. A core that never rests
    exceeds any bound; a fixed one would call a large world's honest chain of timeouts a
    livelock.
    """
    work = 0
    for _, rv in sorted(world.shim.rms.items()):
        if rv.paused or rv.stopped:
            continue
        work += len(rv.apps) + len(rv.nodes) + len(rv.allocs) + len(rv.finished)
        work += sum(max(a.max_allocations - a.allocated, 1) for a in rv.asks.values())
    return ROUNDS + PER_OBJECT * work


def run(world: World, fingerprint: Callable[[World], int],
        memo: dict[int, tuple[str, ...]] | None = None, start: int | None = None,
        hint: bool = False, properties: Sequence[str] | None = None
        ) -> tuple[Closure, tuple[str, ...]]:
    """Drive ``world`` to rest; return the closure and the names of the broken properties.

    With ``memo`` the closure stops at the first fingerprint it has met
    before and takes that verdict (its steps are then not complete: run
    again without ``memo`` to get the whole counterexample). ``start`` is the
    world's fingerprint when the caller has it. The model shim judges every
    message on the way; the registered invariants are checked where it rests, then the
    liveness ``properties`` (default: every one).
    """
    closure = Closure()
    met: list[int] = []

    def step(s: Step) -> bool:
        closure.steps.append(s)
        problems = world.run(s, invariants=False)
        if problems:
            closure.violations = problems
            closure.safety = True
        return not problems

    jumped = False
    fp = start if start is not None else fingerprint(world)
    rounds = budget(world)
    for _ in range(rounds):
        # What follows a state depends on it and on whether the clock has just jumped;
        # only states met before a jump are remembered, so a verdict is a function of one.
        if not jumped:
            if memo is not None and fp in memo:
                verdict = memo[fp]
                for seen in met:
                    memo[seen] = verdict
                return closure, verdict
            met.append(fp)
        confirmations = confirm_all(world)
        for s in [*confirmations, Step.schedule()]:
            if not step(s):
                return closure, _remember(memo, met, closure)
        after = fingerprint(world)
        if hint and not confirmations and len(closure.steps) == 1 \
                and not world.check(after_schedule=True, transitions_only=True):
            closure.scheduled = after
        if after != fp:
            jumped = False
            fp = after
            continue
        due = next_live_timer(world)
        if due is not None:
            moves = [Step.advance(due - world.clock.now()), Step.schedule()]
        elif not jumped:
            jumped = True
            moves = [Step.advance(JUMP), Step.schedule()]
        else:
            return closure, _judge(world, closure, memo, met, properties)
        for s in moves:
            if not step(s):
                return closure, _remember(memo, met, closure)
        fp = fingerprint(world)
    closure.violations = [Violation(liveness.QUIESCENCE, "the closure",
                                    f"still changing after {rounds} rounds of confirmations, "
                                    "timers and cycles (the world's own work allows "
                                    f"{rounds - ROUNDS} of them)")]
    return closure, _remember(memo, met, closure)


def settle(world: World, properties: Sequence[str] | None = None) -> Closure:
    """Drive the world to rest (confirm every release, pass every timer) and judge the
    liveness ``properties`` there (default: every one)."""
    from invariants.explore.fingerprint import fingerprint

    end, _ = run(world, fingerprint, properties=properties)
    return end


def _judge(world: World, closure: Closure, memo: dict[int, tuple[str, ...]] | None,
           met: list[int], properties: Sequence[str] | None) -> tuple[str, ...]:
    """At rest: the safety rules once more, then the liveness properties."""
    closure.violations = world.check(after_schedule=True)
    closure.safety = bool(closure.violations)
    if not closure.safety:
        closure.violations = liveness.judge(world, properties)
    return _remember(memo, met, closure)


def _remember(memo: dict[int, tuple[str, ...]] | None, met: list[int],
              closure: Closure) -> tuple[str, ...]:
    verdict = tuple(sorted({v.invariant for v in closure.violations}))
    if memo is not None:
        for fp in met:
            memo[fp] = verdict
    return verdict
