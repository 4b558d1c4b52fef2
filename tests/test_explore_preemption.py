"""Preemption in the explorer: the scope, its ``wait`` action, the ages in the fingerprint, the
liveness property ``liveness.preemption_serves`` and the checker's goal of a refusal."""

from __future__ import annotations

import pytest

from invariants.explore import SCOPES, Options, search
from invariants.explore.closure import run as quiesce
from invariants.explore.fingerprint import fingerprint
from invariants.explore.search import replay_path, root, take
from invariants.explore.texts import PREEMPTION
from invariants.modelshim.world import World
from invariants.properties import liveness
from invariants.properties.coverage import Coverage
from invariants.selftest.mutants import STALLED, applied, by_name
from scheduler import si
from scheduler.trace import Step

SCOPE = SCOPES["preemption"]
BASE = ("node node-1", "node node-2", "submit hog", "submit late", "ask hog/k1",
        "ask hog/vip", "schedule", "ask late/k1")
"""The hog over its guarantee on both nodes, the late ask sent: preemption must follow."""


def _walk(*labels: str, world: World | None = None) -> World:
    alphabet = {a.label: a for a in SCOPE.alphabet()}
    if world is None:
        world, problems = root(SCOPE)
        assert not problems
    for label in labels:
        problems, _ = take(world, alphabet[label])
        assert not problems, (label, problems)
    return world


def _rest(world: World) -> World:
    closure, _ = quiesce(world, lambda w: fingerprint(w))
    assert not closure.safety, closure.violations
    return world


def test_the_scope_holds_every_rule_to_depth_9() -> None:
    """The whole scope is exhausted at depth 19 in ~40 s (docs/performance.md); its first
    preemption is at depth 9 (``BASE`` and a ``wait``)."""
    result = search(Options(SCOPE, 9))
    assert result.found is None, result.found
    assert result.stats.distinct_by["wait"] > 0


def test_wait_passes_the_delay_the_shim_knows_then_a_cycle() -> None:
    world = _walk(*BASE[:-1])
    assert not SCOPE.alphabet()[[a.label for a in SCOPE.alphabet()].index("wait")].enabled(world)
    _walk("ask late/k1", world=world)
    sent = world.clock.now()
    rv = world.shim.rms["explore-rm"]

    def preempted() -> list[tuple[str, str]]:
        return [(a.app, a.key) for a in rv.allocs.values()
                if a.releasing == si.TerminationType.PREEMPTED_BY_SCHEDULER]

    _walk("wait", world=world)
    assert world.clock.now() == sent + 30.0  # the default preemption.delay
    assert [s.call for s in world.steps[-2:]] == ["advance", "schedule"]
    assert preempted() == []  # that cycle reserved a node for it: no preemption (YuniKorn)
    _walk("wait", world=world)  # past its delay: the 15 s between two checks
    assert world.clock.now() == sent + 45.0
    assert preempted() == [("hog", "k1")]


def test_the_fingerprint_tells_an_ask_before_its_delay_from_one_past_it() -> None:
    young = _walk(*BASE)
    old = _walk(*BASE)
    old.run(Step.advance(10))
    older = _walk(*BASE)
    older.run(Step.advance(31))
    oldest = _walk(*BASE)
    oldest.run(Step.advance(300))
    assert len({fingerprint(young), fingerprint(old), fingerprint(older)}) == 3
    assert fingerprint(older) == fingerprint(oldest)  # past every delay: alike


def test_the_property_holds_where_the_core_preempts() -> None:
    world = _rest(_walk(*BASE))
    ask = world.shim.rms["explore-rm"].asks[("late", "k1")]
    assert ask.preempted and ask.allocated == 1  # once per ask: its other repeats wait
    assert liveness.judge(world) == []


def test_the_property_fires_on_a_core_that_never_preempts_for_want_of_a_node() -> None:
    with applied(by_name("preemption.node_shortage_ignored")):
        world = _rest(_walk(*BASE))
        broken = [v for v in liveness.judge(world) if v.invariant == "liveness.preemption_serves"]
    assert [v.subject for v in broken] == ["ask late/k1"]
    assert "within its guarantee" in broken[0].explanation \
        and "hog/k1" in broken[0].explanation


@pytest.mark.parametrize("labels", [
    (*BASE[:-3], "schedule", "ask late/k1"),  # the hog at 20 of 40: the ask fits, no claim
    ("node node-1", "submit hog", "submit late", "ask hog/k1", "schedule", "ask late/k1"),
])
def test_the_property_claims_nothing_where_yunikorn_may_not_preempt(
        labels: tuple[str, ...]) -> None:
    """On one node the hog holds 20 over a guarantee of 15: taking 10 would leave it below."""
    with applied(by_name("preemption.node_shortage_ignored")):
        world = _rest(_walk(*labels))
        assert not [v for v in liveness.judge(world)
                    if v.invariant == "liveness.preemption_serves"]


def test_the_explorer_finds_the_stalled_core_with_a_shortest_counterexample() -> None:
    assert [m.name for m in STALLED] == ["preemption.node_shortage_ignored"]
    labels = [a.label for a in SCOPE.alphabet()]
    with applied(by_name("preemption.node_shortage_ignored")):
        found = search(Options(SCOPE, 8)).found
        shallower = search(Options(SCOPE, 7)).found
        assert found is not None and found.liveness
        assert found.verdict == ("liveness.preemption_serves",)
        assert [labels[i] for i in found.path] == list(BASE)
        _, violations = replay_path(SCOPE, found.path, liveness=True)
        assert [v.invariant for v in violations] == ["liveness.preemption_serves"]
    assert shallower is None
    assert not replay_path(SCOPE, found.path, liveness=True)[1]




def _refusal(hog: int, other: int) -> tuple[World, Coverage]:
    """One node of 40: the hog holds ``hog`` x 10 over its guarantee of 15, a leaf without a
    guarantee (never a victim source) the rest; the late ask goes past its 30 s delay."""
    coverage = Coverage()
    world = World(coverage=coverage)
    config = PREEMPTION + "          - name: open\n"

    def ask(app_id: str, repeats: int, **fields: object) -> Step:
        return Step("update_allocation", si.AllocationRequest(rm_id="rm", asks=[
            si.AllocationAsk(allocation_key="k1", application_id=app_id,
                             partition_name="default", max_allocations=repeats,
                             resource_ask=si.Resource.of(memory=10, vcore=1000), **fields)]))

    steps = [Step("register_resource_manager", si.RegisterResourceManagerRequest(
        rm_id="rm", policy_group="q", config=config)),
        Step("update_node", si.NodeRequest(rm_id="rm", nodes=[si.NodeInfo(
            node_id="n1", action=si.NodeAction.CREATE,
            schedulable_resource=si.Resource.of(memory=40, vcore=8000))]))]
    steps += [Step("update_application", si.ApplicationRequest(rm_id="rm", new=[
        si.AddApplicationRequest(application_id=app_id, queue_name=f"root.{app_id}",
                                 partition_name="default",
                                 ugi=si.UserGroupInformation(user="u"))]))
        for app_id in ("hog", "late", "open")]
    steps += [ask("hog", hog), ask("open", other), Step.schedule(),
              ask("late", 1, preemption_policy=si.PreemptionPolicy(
                  allow_preempt_self=True, allow_preempt_other=True)),
              Step.schedule()]
    for step in steps:
        assert world.run(step) == [], step
    assert coverage.goals["preemption.refused_guarantee"] == 0  # not past its delay yet
    # past the reservation delay the first cycle reserves, the next preempts (or refuses)
    for step in (Step.advance(31), Step.schedule(), Step.schedule()):
        assert world.run(step) == []
    return world, coverage


def test_goal_a_preemption_refused_for_the_victim_queue_guarantee() -> None:
    """At 20 over 15, taking any hog allocation would leave it at 10: the ask waits."""
    world, coverage = _refusal(2, 2)
    assert coverage.goals["preemption.refused_guarantee"] == 1
    assert not [a for a in world.shim.rms["rm"].allocs.values() if a.releasing is not None]


def test_no_refusal_goal_where_the_preemption_happens() -> None:
    """At 30 over 15 one victim leaves 20: the preemption happens, no refusal is counted."""
    world, coverage = _refusal(3, 1)
    assert coverage.goals["preemption.refused_guarantee"] == 0
    assert [a.app for a in world.shim.rms["rm"].allocs.values() if a.releasing is not None] \
        == ["hog"]


def test_every_core_said_to_be_beyond_the_scopes_is_a_broken_core_of_the_self_test() -> None:
    """The explorer's self-test excuses these misses; a renamed or removed core must not
    leave an excuse behind, and each excuse says why."""
    from invariants.selftest.explore_kills import BEYOND_SCOPES
    from invariants.selftest.mutants import MUTANTS

    names = {m.name for m in MUTANTS}
    assert set(BEYOND_SCOPES) <= names
    assert all(reason.strip() for reason in BEYOND_SCOPES.values())
