"""Rules of time and of releases: cycles, the clock, pods ending, confirmations late or twice."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.actions.draw import TT, Gen, rule
from invariants.readings import view
from invariants.readings.shim import AllocView
from scheduler import si
from scheduler.trace import Step

DELAYS = (0.5, 5.0, 29.0, 31.0, 61.0, 900.0, 3 * 24 * 3600.0 + 1)


def confirmations(g: Gen, mode: str, placeholders_first: bool = False) -> Iterator[Step]:
    """The shim confirms the releases the core started: none, the first, all, or all twice.

    In the order the core released them, or with ``placeholders_first`` every placeholder
    before any real allocation (a state change that waits for everything must not come when
    only the placeholders are gone: ``001`` "Cleanup").
    """
    rv = g.rv
    if rv is None or mode == "none":
        return
    pending = [a for a in rv.running() if a.releasing is not None]
    if placeholders_first:
        pending.sort(key=lambda a: not a.placeholder)
    for alloc in pending[:1] if mode == "first" else pending:
        yield from _confirm(g, alloc, duplicate=mode == "twice")


RM_RELEASE_TYPES = (*(TT.STOPPED_BY_RM,) * 6, TT.UNKNOWN_TERMINATION_TYPE, TT.TIMEOUT,
                    TT.PREEMPTED_BY_SCHEDULER, TT.PLACEHOLDER_REPLACED)
"""The types ``rm_release`` sends: mostly the RM's own; an unset type is the RM's too; a
type only the core starts ends an allocation the core did not release that way just the
same, unanswered (YuniKorn's ``partition.go`` removeAllocation)."""


def _confirm(g: Gen, alloc: AllocView, duplicate: bool) -> Iterator[Step]:
    """Confirm one release; a shim may send it twice (the second names an allocation that
    is gone: ignored)."""
    rv = g.rv
    assert alloc.releasing is not None and rv is not None
    request = rv.release_request([alloc])
    yield g.request("update_allocation", request)
    if duplicate:
        yield g.request("update_allocation", request)


@rule(10, core=True)
def schedule(g: Gen) -> Iterator[Step]:
    """A scheduling cycle; then the shim may confirm what the core released."""
    yield Step.schedule()
    yield from confirmations(g, g.rng.choice(("none", "none", "first", "all", "twice")))


@rule(2)
def advance(g: Gen) -> Iterator[Step]:
    """The clock jumps (past every timeout of the design, sometimes), then a cycle."""
    yield Step.advance(g.rng.choice(DELAYS))
    yield Step.schedule()


@rule(3)
def advance_to_timer(g: Gen) -> Iterator[Step]:
    """The clock moves exactly to the next timer the core holds, then a cycle."""
    due = view.next_due(g.world.api)
    now = g.world.clock.now()
    if due is None or due <= now:
        return
    yield Step.advance(due - now)
    yield Step.schedule()
    yield from confirmations(g, g.rng.choice(("none", "all")))


@rule(3)
def rm_release(g: Gen) -> Iterator[Step]:
    """A pod ends: the RM releases one allocation, or every allocation of an application,
    with any termination type (``RM_RELEASE_TYPES``)."""
    rv = g.rv
    alloc = g.pick(list(rv.running())) if rv is not None else None
    if alloc is None:
        return
    whole = g.rng.random() < 0.2
    ttype = g.rng.choice(RM_RELEASE_TYPES)
    partition = rv.apps[alloc.app].partition if rv is not None and alloc.app in rv.apps \
        else "default"
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocations_to_release=[
            si.AllocationRelease(partition_name=partition, application_id=alloc.app,
                                 uuid="" if whole else alloc.uuid,
                                 termination_type=ttype)])))


@rule(4)
def confirm_release(g: Gen) -> Iterator[Step]:
    """A late confirmation of one release the core started, sometimes sent twice."""
    rv = g.rv
    pending = [a for a in rv.running() if a.releasing is not None] if rv is not None else []
    alloc = g.pick(pending)
    if alloc is not None:
        yield from _confirm(g, alloc, duplicate=g.rng.random() < 0.3)
