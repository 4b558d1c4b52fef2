"""Sums of one checked state that several checks read alike, taken once per state.

``accounting.application``, ``gang.placeholders_within_ask`` and ``limits.accounting``
each sum an application's allocations; summed once per checked state (through
``CheckContext.shared``) the sums are the checker's own, from the allocations, never the
totals the core keeps, and each check still compares them with what it judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.properties.catalog import CheckContext
from invariants.readings.view import Application, PartitionState


@dataclass(frozen=True, slots=True)
class Held:
    """What one application's allocations add up to (types with zero left out)."""

    real: dict[str, int]
    placeholders: dict[str, int]
    own_placeholders: dict[str, int]
    """Placeholders the core placed itself (recovered ones excepted)."""
    every: dict[str, int]


def held(ctx: CheckContext, p: PartitionState, app: Application) -> Held:
    """The sums of ``app``'s allocations in the state ``ctx`` checks."""
    return ctx.shared(("held", p.rm_id, p.name, app.id), lambda: _held(app))


def _held(app: Application) -> Held:
    real: dict[str, int] = {}
    placeholders: dict[str, int] = {}
    own: dict[str, int] = {}
    every: dict[str, int] = {}
    for a in app.allocations.values():
        into = placeholders if a.placeholder else real
        mine = a.placeholder and not a.recovered
        for k, v in a.resource.items():
            into[k] = into.get(k, 0) + v
            every[k] = every.get(k, 0) + v
            if mine:
                own[k] = own.get(k, 0) + v
    return Held(*({k: v for k, v in r.items() if v} for r in (real, placeholders, own, every)))
