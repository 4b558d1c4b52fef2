"""The checker drives and judges today's SI (``invariants/modelshim/bridge.py``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from invariants.actions import Gen, Scenario
from invariants.explore import closure
from invariants.modelshim import bridge
from invariants.modelshim.world import World
from invariants.properties.coverage import GOALS, Coverage
from invariants.random_search import replay
from invariants.random_search.runner import (
    CLOCK_START,
    Options,
    case_seed,
    run_case,
    scheduler_options,
)
from scheduler import si
from scheduler.si import today as t
from scheduler.trace import Step, header, parse_lines, read_trace

CONFIG = ("partitions: [{name: default, queues: [{name: root, submitacl: '*', "
          "queues: [{name: a}]}]}]")
RM = "rm"


def _steps() -> list[Step]:
    app = si.AddApplicationRequest(application_id="app-1", queue_name="root.a",
                                   ugi=si.UserGroupInformation(user="u"))
    size = si.Resource.of(memory=10, vcore=1000)
    return [
        Step("register_resource_manager", request=si.RegisterResourceManagerRequest(
            rm_id=RM, config=CONFIG), extra={bridge.REGISTERS: "today"}),
        Step("update_node", request=t.NodeRequest(rm_id=RM, nodes=[t.NodeInfo(
            node_id="n1", action=t.NodeAction.CREATE_DRAIN,
            schedulable_resource=si.Resource.of(memory=100, vcore=8000))])),
        Step("update_application", request=si.ApplicationRequest(rm_id=RM, new=[app])),
        Step("update_allocation", request=t.AllocationRequest(rm_id=RM, allocations=[
            t.Allocation(allocation_key="daemon", node_id="n1", resource_per_alloc=size,
                         allocation_tags={t.FOREIGN_TAG: t.FOREIGN_DEFAULT}),
            t.Allocation(allocation_key="old", application_id="app-1", node_id="n1",
                         resource_per_alloc=size),
            t.Allocation(allocation_key="new", application_id="app-1",
                         resource_per_alloc=size)])),
        Step("update_node", request=t.NodeRequest(rm_id=RM, nodes=[t.NodeInfo(
            node_id="n1", action=t.NodeAction.DRAIN_TO_SCHEDULABLE)])),
        Step.schedule(),
        Step("update_allocation", request=t.AllocationRequest(rm_id=RM, allocations=[
            t.Allocation(allocation_key="new", application_id="app-1",
                         resource_per_alloc=si.Resource.of(memory=20, vcore=1000))])),
        Step("update_allocation", request=t.AllocationRequest(
            rm_id=RM, releases=t.AllocationReleasesRequest(allocations_to_release=[
                t.AllocationRelease(application_id="app-1", allocation_key="old",
                                    termination_type=t.TerminationType.STOPPED_BY_RM),
                t.AllocationRelease(
                    application_id="app-1", allocation_key="new",
                    termination_type=t.TerminationType.SCHEDULING_FAILED_ON_RM)]))),
        Step.schedule(),
    ]


def test_todays_paths_are_judged_and_reach_their_goals() -> None:
    coverage = Coverage()
    world = World(0.0, coverage=coverage)
    for step in _steps():
        assert world.run(step) == [], step
    assert world.api.dialect(RM) == "today"
    rv = world.shim.rms[RM]
    assert rv.nodes["n1"].occupied == {"memory": 10, "vcore": 1000}
    assert sorted(a.key for a in rv.allocs.values()) == ["new"]
    reached = {name for name in GOALS if name.startswith("today.") and coverage.goals[name]}
    assert reached == {"today.bound", "today.foreign", "today.create_drain",
                       "today.release_by_key", "today.resize", "today.rollback"}


def test_a_trace_of_todays_steps_replays_and_is_judged(tmp_path: Path) -> None:
    lines = [json.dumps(header(CONFIG, 0.0)), *(json.dumps(s.to_json()) for s in _steps())]
    trace = parse_lines(lines)
    assert trace.steps[0].extra[bridge.REGISTERS] == "today"
    judged = replay.run(trace)
    assert judged.violation is None and judged.steps == len(_steps())


def test_a_bound_pod_of_an_unknown_application_is_refused_and_judged() -> None:
    world = World(0.0)
    steps = _steps()
    for step in steps[:3]:
        world.run(step)
    # A bound pod of an application the RM does not run must be refused.
    bad = Step("update_allocation", request=t.AllocationRequest(rm_id=RM, allocations=[
        t.Allocation(allocation_key="x", application_id="ghost", node_id="n1",
                     resource_per_alloc=si.Resource.of(memory=1))]))
    assert world.run(bad) == []
    assert world.shim.rms[RM].allocs == {}


def test_registrations_draw_their_dialect_from_a_stream_of_their_own() -> None:
    spoken = {"seed": 0, "today": 0}
    for case in range(40):
        seed = case_seed(7, 0, case)
        scenario = Scenario.draw(seed)
        world = World(CLOCK_START, scenario.predicate(),
                      scheduler_options=scheduler_options(scenario))
        gen = Gen(world, scenario, random.Random(seed ^ 0x5EED))
        first = next(gen.steps())
        spoken[gen.drawn] += 1
        assert (first.extra.get(bridge.REGISTERS) == "today") <= (gen.drawn == "today")
    assert spoken["seed"] and spoken["today"]


def test_a_short_run_with_todays_rms_holds_every_rule() -> None:
    opts = Options(seed=3, steps=60)
    for case in range(12):
        _world, problems, _ = run_case(case_seed(3, 0, case), opts)
        assert problems == []


def test_a_case_end_confirms_in_todays_words() -> None:
    """Case 20 of seed 1 ends with a today's RM owing TIMEOUT confirmations of a gang's
    placeholders: driving it to rest confirms them by key (a seed's confirmation would not
    reach the core, which would hold them while the shim thought them gone)."""
    world, problems, _ = run_case(case_seed(1, 0, 20), Options(seed=1, liveness=False))
    assert problems == [] and world.today == {"checker-rm"}
    end = closure.settle(world)
    confirmations = [s for s in end.steps if s.call == "update_allocation"]
    assert confirmations and all(bridge.is_today(s) for s in confirmations)
    assert not [v for v in end.violations if not v.invariant.startswith("liveness.")]


def test_releasing_everything_confirms_every_ask_before_the_application_ends() -> None:
    """A fresh-seed check found it: today's RM releases every pod of an application whose
    last placeholder the core had just released with TIMEOUT; the allocation's release
    ended the application, whose asks then went unconfirmed. Asks go first now."""
    trace = read_trace(Path(__file__).parent / "data" / "today" /
                       "release-everything-after-a-timeout.jsonl")
    result = replay.run(trace)
    assert result.violation is None and result.steps == len(trace.steps)


def test_one_key_twice_in_one_request_is_judged_in_order() -> None:
    """Each entry of a key sent twice in one request is read against what the entries
    before it left (YuniKorn's processAllocations loop): a pod recovered by the first and
    named on an unknown node by the second is refused once, resized by a third; a
    placeholder keeps its size; a pending key sent twice is one ask, the second."""
    world = World(0.0)
    steps = _steps()
    for step in steps[:3]:
        assert world.run(step) == []
    world.run(Step("update_node", request=t.NodeRequest(rm_id=RM, nodes=[t.NodeInfo(
        node_id="n2", action=t.NodeAction.CREATE,
        schedulable_resource=si.Resource.of(memory=100, vcore=8000))])))
    gang = si.AddApplicationRequest(application_id="gang", queue_name="root.a",
                                    ugi=si.UserGroupInformation(user="u"),
                                    placeholder_ask=si.Resource.of(memory=40, vcore=4000))
    assert world.run(Step("update_application", request=si.ApplicationRequest(
        rm_id=RM, new=[gang]))) == []

    def pod(key: str, memory: int, node: str = "", app: str = "app-1", **more: object
            ) -> t.Allocation:
        return t.Allocation(allocation_key=key, application_id=app, node_id=node,
                            resource_per_alloc=si.Resource.of(memory=memory, vcore=1000),
                            **more)

    placeholder = {"placeholder": True, "task_group_name": "tg"}
    assert world.run(Step("update_allocation", request=t.AllocationRequest(
        rm_id=RM, allocations=[
            pod("pod-1", 60, "n1"), pod("pod-1", 30, "n9"), pod("pod-1", 30, "n2"),
            pod("ph-1", 20, "n2", "gang", **placeholder),
            pod("ph-1", 10, "n9", "gang", **placeholder),
            pod("ph-1", 10, "n2", "gang", **placeholder),
            pod("ask-1", 500), pod("ask-1", 400)]))) == []
    rv = world.shim.rms[RM]
    assert sorted((a.key, a.node, a.resource["memory"]) for a in rv.allocs.values()) == [
        ("ph-1", "n2", 20), ("pod-1", "n1", 30)]
    assert rv.asks[("app-1", "ask-1")].resource["memory"] == 400
    assert world.run(Step.schedule()) == []


def test_one_key_twice_in_one_seed_request_is_judged_in_order() -> None:
    """The seed's ``asks`` with one key twice: the second updates the first (``003`` "ask
    add"); refused, it leaves the first in place, not the state before the request."""
    world = World(0.0)
    gang = si.AddApplicationRequest(application_id="gang", queue_name="root.a",
                                    ugi=si.UserGroupInformation(user="u"),
                                    placeholder_ask=si.Resource.of(memory=20, vcore=2000))
    for step in [
        Step("register_resource_manager", request=si.RegisterResourceManagerRequest(
            rm_id=RM, config=CONFIG), extra={bridge.REGISTERS: "seed"}),
        Step("update_node", request=si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
            node_id="n1", action=si.NodeAction.CREATE,
            schedulable_resource=si.Resource.of(memory=100, vcore=8000))])),
        Step("update_application", request=si.ApplicationRequest(rm_id=RM, new=[gang]))]:
        assert world.run(step) == []

    def ask(memory: int, timeout: int = 0) -> si.AllocationAsk:
        return si.AllocationAsk(
            allocation_key="ph", application_id="gang", max_allocations=1,
            resource_ask=si.Resource.of(memory=memory, vcore=1000), task_group_name="tg",
            placeholder=True, execution_timeout_milli_seconds=timeout)

    # The second is over the placeholderAsk, the third has a negative timeout: refused.
    assert world.run(Step("update_allocation", request=si.AllocationRequest(
        rm_id=RM, asks=[ask(10), ask(30), ask(5, timeout=-1)]))) == []
    assert world.shim.rms[RM].asks[("gang", "ph")].resource["memory"] == 10
    assert world.run(Step.schedule()) == []
    assert [a.key for a in world.shim.rms[RM].allocs.values()] == ["ph"]
