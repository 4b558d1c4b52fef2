"""Shortening a shrunk counterexample: a breadth-first search over the trace's own steps.

Shrinking (``shrink.py``) only removes and simplifies: it ends 1-minimal, in a
local minimum of its moves, and a shorter path that takes the steps in
another order, or one step twice, stays out of its reach. This module
explores, as the explorer does (``explore/search.py``: states known by their
fingerprint, stored as snapshots, level by level), every sequence of the
trace's own distinct steps after its registration, and keeps the first that
breaks the same rule: a shortest one within the trace's alphabet. Every path
found is replayed on a fresh core before it is taken (a fingerprint abstracts
the names a later step reads), so the result always fails as the original did.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from invariants.actions.draw import CLOCK_START
from invariants.explore import closure
from invariants.explore.fingerprint import fingerprint
from invariants.explore.search import freeze, thaw
from invariants.modelshim.world import World
from invariants.properties import liveness
from invariants.properties.catalog import REGISTRY
from invariants.random_search.runner import Failure, scheduler_options
from invariants.random_search.shrink import fails
from scheduler.trace import Step

STATES = 20_000
"""States the search may store before it gives up (a snapshot each)."""


@dataclass
class Shortened:
    """The shortest failing steps found (the input when none is shorter) and the cost."""

    steps: list[Step]
    shorter: bool
    states: int
    seconds: float
    exhausted: bool
    """Every sequence shorter than the input was tried: no shorter counterexample
    exists within the trace's alphabet."""


def alphabet(steps: Sequence[Step]) -> list[Step]:
    """The distinct steps after the registration, in the order of their first use."""
    seen: dict[str, Step] = {}
    for step in steps[1:]:
        seen.setdefault(json.dumps(step.to_json(), sort_keys=True), step)
    return list(seen.values())


def shorten(failure: Failure, steps: Sequence[Step], seconds: float = 10.0) -> Shortened:
    """The shortest sequence of ``steps``' own steps that breaks ``failure``'s rule, found
    within ``seconds`` and :data:`STATES` stored states; ``steps`` when none is."""
    started = time.monotonic()
    deadline = started + seconds
    original = list(steps)
    if len(original) < 3 or original[0].call != "register_resource_manager":
        return Shortened(original, False, 0, 0.0, True)
    target = failure.violation.invariant
    letters = alphabet(original)
    # A protocol rule is the model shim's, judged inside every step: the registered
    # invariants (half a step's time) need not run for it.
    registered = target in REGISTRY
    world = World(CLOCK_START, failure.scenario.predicate(), translate=failure.sym,
                  scheduler_options=scheduler_options(failure.scenario))
    if world.run(original[0]):
        return Shortened(original, False, 0, 0.0, True)
    visited = {fingerprint(world)}
    frontier: list[tuple[bytes, list[int]]] = [(freeze(world), [])]
    memo: dict[int, tuple[str, ...]] = {}
    # Paths of the registration plus ``depth`` letters; only those shorter than the input.
    for depth in range(1, len(original) - 1):
        next_frontier: list[tuple[bytes, list[int]]] = []
        for snapshot, path in frontier:
            for index, letter in enumerate(letters):
                if time.monotonic() >= deadline or len(visited) >= STATES:
                    return Shortened(original, False, len(visited),
                                     time.monotonic() - started, False)
                child = thaw(snapshot)
                problems = child.run(letter, invariants=registered)
                candidate = [original[0], *(letters[i] for i in path), letter]
                broke = any(v.invariant == target for v in problems)
                if not broke and not problems and failure.quiescent:
                    broke = target in _at_rest(child, memo)
                if broke and fails(failure, candidate):
                    return Shortened(candidate, True, len(visited),
                                     time.monotonic() - started, False)
                if problems:
                    continue  # another rule broke first: not this rule's counterexample
                fp = fingerprint(child)
                if fp in visited:
                    continue
                visited.add(fp)
                if depth < len(original) - 2:
                    next_frontier.append((freeze(child), [*path, index]))
        frontier = next_frontier
        if not frontier:
            break
    return Shortened(original, False, len(visited), time.monotonic() - started, True)


def _at_rest(world: World, memo: dict[int, tuple[str, ...]]) -> tuple[str, ...]:
    """The liveness verdict of a case end at this state (on a copy: the search goes on
    from the state itself)."""
    copy = thaw(freeze(world))
    copy.untranslated()
    verdict = closure.run(copy, fingerprint, memo, properties=liveness.CASE_ENDS)[1]
    return verdict
