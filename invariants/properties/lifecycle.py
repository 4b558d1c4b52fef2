"""Lifecycle legality: every state was reached through a declared transition."""

from __future__ import annotations

from collections.abc import Iterator

import statemachines
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.readings.view import stateful_objects


@invariant(
    "lifecycle.legal",
    "Every state an object has ever been in was reached through a declared transition, "
    "and its current state is the last one its lifecycle moved it to.",
    "002 lifecycles of RM, AllocationAsk, Allocation and node; 001 application states",
    "Some code changed a state without firing a trigger, or fired an edge the design "
    "does not draw: the diagrams in docs/ no longer describe the running system.",
    needs=("recorder",),
)
def _legal(ctx: CheckContext) -> Iterator[Violation]:
    rec = ctx.recorder
    assert rec is not None
    for problem in rec.illegal:
        yield Violation("lifecycle.legal", "transition", problem)
    lifecycles = statemachines.LIFECYCLES
    for name, obj, label in stateful_objects(ctx.scheduler):
        lc = lifecycles[name]
        if obj.state not in lc.state_specs:
            yield Violation("lifecycle.legal", label, f"state {obj.state!r} is not declared")
            continue
        expected = rec.last(obj) or lc.initial
        if obj.state != expected:
            yield Violation(
                "lifecycle.legal", label,
                f"is {obj.state} but its lifecycle last moved it to {expected}")
