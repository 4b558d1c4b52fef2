"""Traces the checker once flagged on a correct core: each must replay clean now.

Each file under ``tests/data/traces/`` is a counterexample a random check
produced (seed and rule in the file name's story below) that turned out to be
the checker's misreading, not a core bug. The core's behaviour in each is
the one the design asks for:

- ``liveness-long-chain-of-timeouts``: ten applications time out, complete and
  expire one after another at the case's end, each on its own timer; the closure
  took more than its fixed 40 rounds and ``liveness.quiescence`` called the honest
  chain a livelock (the budget now grows with the world).
- ``liveness-placeholder-allocated-while-running``: placeholders allocated while their
  application was Running are covered by no placeholder timer (design finding 13);
  ``liveness.placeholders_time_out`` at the case's end excused only those allocated
  after the timer fell due.
- ``preemption-order-twin-taken-on-the-node``: a further victim's newer twin was taken
  too, among the chosen node's victims; ``preemption.order`` counted it as left running.
- ``maximal-real-ask-waits-for-preempted-placeholder``: a real ask of a task
  group waits while a preempted placeholder of that group is unconfirmed
  (behaviour 2.7, YuniKorn's ``canReplace``); ``scheduling.maximal`` counted it
  as an ask that could have been placed.
- ``preemption-updated-ask-preempts-again``: the RM re-sends a pending
  required-node ask with another size; the update replaces the ask, and the new
  ask may preempt (YuniKorn keeps ``preemptionTriggered`` on the ask object);
  ``preemption.trigger`` treated it as the same ask preempting twice.
- ``preemption-reservation-taken-by-required-node-ask``: an ask preempted and
  reserved its victims' node; later in the same cycle a required-node ask of
  that node cancelled every other reservation there and reserved it
  (behaviour 2.6, YuniKorn's ``TestRequiredNodeCancelNonDSReservations``);
  ``preemption.outcome`` (P8) required the first ask to still hold a
  reservation at the end of the call.
- ``recovery-one-key-twice-in-one-request``: one request of today's SI bound a
  placeholder to a node and, in a second entry of the same key, named an unknown
  node with another size; the core recovered the first and refused the second, as
  YuniKorn's UpdateAllocation does (entries in order, the node looked up first), but
  ``protocol.recovery`` read the second entry over the first.
- ``quota-guarantee-tag-clears-template-max``: a gang enters a leaf a placement rule
  creates with a ``namespace.resourceguaranteed`` tag and no quota tag; as YuniKorn's
  ``SetResources`` does, the guarantee replaces both, clearing the template's max, and
  the placeholders are allocated past it; ``protocol.quota_on_path`` read the created
  leaf's max from its template alone.
- ``admission-earlier-application-tags-clear-leaf-max``: one request adds two
  applications that a ``user`` rule places in the same leaf it creates from a
  template with a max; the first carries a ``namespace.resourceguaranteed`` tag,
  which (YuniKorn ``SetResources``) clears the leaf's max, so the second, a gang
  over the template's max, is accepted. ``protocol.admission`` judged the gang
  against the template, as if the leaf were created for it.
- ``priority-order-reservation-made-and-dropped``: a reservation made and
  cancelled inside one ``schedule()`` closed a node for part of the call;
  ``priority.order`` judged the call as if the node had been open throughout.
- ``replacement-fallback-onto-a-placeholder-confirmed-with-it``: one ``schedule()``
  allocated two placeholders of a task group and started both swaps (``ph-8`` for
  ``gang-7-driver``, ``ph-9`` for ``gang-7-tg0-real-53``); one request confirmed both.
  The RM's predicates refuse the driver on ``ph-8``'s node, so it fell back to
  ``ph-9``'s node, where ``real-53`` then took its own placeholder's room (each swap
  keeps the pairing made when it started, as YuniKorn's placeholder links its real
  allocation at the match). ``protocol.replacement`` paired the driver with ``ph-9``
  by node and called ``real-53`` misplaced; it now accepts any pairing that explains
  every placement.
- ``liveness-required-node-ask-in-a-removed-queue``: a reload removed the leaf of an
  application whose required-node ask waited, and its parent, whose max (kept while they
  drain) is below the ask; the ask may not preempt. ``liveness.required_node_served``
  read the path's quotas from the new configuration, which names neither queue; it now
  claims nothing once a queue of the path has left the configuration.
- ``liveness-required-node-ask-behind-a-backed-off-walk``: the application of a waiting
  required-node ask also asks, at a higher priority, for a pod no node's free room holds;
  with ``application.unschedasks.backoff: 1`` every walk of the application backs it off
  on that pod before it reaches the required-node ask, for good (nothing leaves at
  rest). ``liveness.required_node_served`` excused only asks behind pods no node could
  ever hold; it now excuses those behind pods no node's free room holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.random_search import replay
from scheduler.trace import read_trace

TRACES = sorted((Path(__file__).parent / "data" / "traces").glob("*.jsonl"))


def test_the_regression_traces_are_there() -> None:
    assert [t.stem for t in TRACES] == [
        "admission-earlier-application-tags-clear-leaf-max",
        "liveness-long-chain-of-timeouts",
        "liveness-placeholder-allocated-while-running",
        "liveness-required-node-ask-behind-a-backed-off-walk",
        "liveness-required-node-ask-in-a-removed-queue",
        "maximal-real-ask-waits-for-preempted-placeholder",
        "preemption-order-twin-taken-on-the-node",
        "preemption-reservation-taken-by-required-node-ask",
        "preemption-updated-ask-preempts-again",
        "priority-order-reservation-made-and-dropped",
        "quota-guarantee-tag-clears-template-max",
        "recovery-one-key-twice-in-one-request",
        "replacement-fallback-onto-a-placeholder-confirmed-with-it",
    ]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem)
def test_trace_replays_clean(path: Path) -> None:
    trace = read_trace(path)
    result = replay.run(trace)
    assert result.violation is None, str(result.violation)
    assert result.steps == len(trace.steps)


def test_the_fallback_beside_a_confirmed_placeholder_is_a_coverage_goal() -> None:
    """The state the replacement trace found is counted (``gang.fallback_beside_confirmed_
    placeholder``), so a check run shows how often it reaches it."""
    from invariants.actions import predicate_for
    from invariants.modelshim.world import World
    from invariants.properties.coverage import Coverage

    trace = read_trace(Path(__file__).parent / "data" / "traces"
                       / "replacement-fallback-onto-a-placeholder-confirmed-with-it.jsonl")
    coverage = Coverage()
    world = World(trace.header["clock_start"],
                  predicate_for(trace.header["checker"]["predicate_salt"]), coverage=coverage)
    for step in trace.steps:
        assert world.run(step) == []
    assert coverage.goals["gang.fallback_beside_confirmed_placeholder"] == 1


def test_a_written_quiescent_trace_keeps_the_closure_as_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The steps that drove a case's end to rest are written as notes, not steps: replay
    drives the end to rest itself, so a closure over its round budget is over it again
    on replay (written as steps, the replayed closure started its budget afresh and the
    counterexample did not reproduce)."""
    from invariants.explore import closure
    from invariants.random_search.replay import QUIESCENCE_NOTE, write

    monkeypatch.setattr(closure, "PER_OBJECT", 0)  # the fixed budget of the false alarm
    trace = read_trace(Path(__file__).parent / "data" / "traces"
                       / "liveness-long-chain-of-timeouts.jsonl")
    checker = {k: trace.header["checker"][k] for k in ("quiescent", "liveness")}
    path = write(tmp_path / "t.jsonl", trace.header["config"], trace.header["clock_start"],
                 trace.steps, checker)
    written = read_trace(path)
    assert len(written.steps) == len(trace.steps)
    notes = [line for line in path.read_text().splitlines() if QUIESCENCE_NOTE in line]
    assert len(notes) > closure.ROUNDS
    result = replay.run(written)
    assert result.violation is not None
    assert result.violation.invariant == "liveness.quiescence"
