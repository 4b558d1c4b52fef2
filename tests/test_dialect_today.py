"""Today's SI (``scheduler.si.today``, interface ``2858f4d``) through the in-process API.

A shim written against today's interface sends pods by key and hears back
pods by key; the core underneath speaks the seed's model. Every scenario goes
through ``Scheduler`` with today's messages and asserts what the shim heard and
what the core holds; every scenario ends with every invariant held.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from scenario_helpers import CONFIG, TT

import invariants
from scheduler import ManualClock, Scheduler, si
from scheduler.dialect import Dialect
from scheduler.si import today as t
from scheduler.testing import RecordingShim


def res(memory: int, vcore: int = 1) -> si.Resource:
    return si.Resource.of(memory=memory, vcore=vcore)


class Today:
    """One RM speaking today's SI, its recording shim and the core."""

    def __init__(self, rm: str = "rm-today", api: Scheduler | None = None,
                 dialect: Dialect | None = None) -> None:
        self.clock = ManualClock(start=0.0)
        self.api = api if api is not None else Scheduler(clock=self.clock)
        self.rec = invariants.LifecycleRecorder(self.api)
        self.rm = rm
        self.shim = RecordingShim()
        self.api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id=rm, config=CONFIG), self.shim, dialect)

    def nodes(self, *infos: t.NodeInfo) -> None:
        self.api.update_node(t.NodeRequest(rm_id=self.rm, nodes=list(infos)))

    def app(self, app_id: str, queue: str = "root.a", placeholder_ask: int = 0) -> None:
        self.api.update_application(si.ApplicationRequest(rm_id=self.rm, new=[
            si.AddApplicationRequest(
                application_id=app_id, queue_name=queue,
                ugi=si.UserGroupInformation(user="alice"),
                placeholder_ask=res(placeholder_ask, 10) if placeholder_ask else None)]))

    def pods(self, *pods: t.Allocation) -> None:
        self.api.update_allocation(t.AllocationRequest(rm_id=self.rm, allocations=list(pods)))

    def release(self, *rels: t.AllocationRelease) -> None:
        self.api.update_allocation(t.AllocationRequest(
            rm_id=self.rm, releases=t.AllocationReleasesRequest(allocations_to_release=list(rels))))

    def partition(self) -> dict[str, Any]:
        dump = self.api.state_dump()
        return next(p for p in dump["partitions"] if p["rm_id"] == self.rm)

    def node(self, node_id: str) -> dict[str, Any]:
        return next(n for n in self.partition()["nodes"] if n["node_id"] == node_id)

    def application(self, app_id: str) -> dict[str, Any]:
        return next(a for a in self.partition()["applications"] if a["application_id"] == app_id)

    def responses(self) -> list[t.AllocationResponse]:
        return list(self.shim.of("update_allocation"))

    def check(self) -> None:
        ctx = invariants.CheckContext(self.api, recorder=self.rec)
        assert [str(v) for v in invariants.check_all(ctx)] == []


def create(node_id: str, memory: int = 100, action: t.NodeAction = t.NodeAction.CREATE
           ) -> t.NodeInfo:
    return t.NodeInfo(node_id=node_id, action=action, schedulable_resource=res(memory, 10))


def pod(key: str, app: str = "app-1", memory: int = 10, node: str = "", **more: Any
        ) -> t.Allocation:
    return t.Allocation(allocation_key=key, application_id=app,
                        resource_per_alloc=res(memory), node_id=node, **more)


def stop(key: str, app: str = "app-1", ttype: Any = TT.STOPPED_BY_RM) -> t.AllocationRelease:
    return t.AllocationRelease(application_id=app, allocation_key=key, termination_type=ttype)


# ----------------------------------------------------------------------- messages

def test_todays_messages_validate_naming_the_field_and_speak_the_protos_json_names() -> None:
    a = t.Allocation.model_validate({"allocationKey": "k", "applicationID": "a",
                                     "nodeID": "n", "originator": True})
    assert (a.allocation_key, a.node_id, a.originator) == ("k", "n", True)
    assert a.model_dump(by_alias=True)["preemptionPolicy"] is None
    with pytest.raises(pydantic.ValidationError, match="UUID"):
        t.Allocation.model_validate({"allocationKey": "k", "UUID": "u"})
    with pytest.raises(pydantic.ValidationError, match="maxAllocations"):
        t.Allocation.model_validate({"allocationKey": "k", "maxAllocations": 2})
    with pytest.raises(pydantic.ValidationError, match="allocationKey"):
        t.Allocation.model_validate({"applicationID": "a"})
    with pytest.raises(pydantic.ValidationError, match="occupiedResource"):
        t.NodeInfo.model_validate({"nodeID": "n", "occupiedResource": {}})
    assert t.NodeInfo(node_id="n", action="CREATE_DRAIN").action is t.NodeAction.CREATE_DRAIN
    state = t.UpdateContainerSchedulingStateRequest.model_validate(
        {"applicationID": "a", "allocationKey": "k", "state": "FAILED"})
    assert state.model_dump(by_alias=True)["applicationID"] == "a"
    event = t.EventRecord(event_change_detail="APP_RUNNING", type="USERGROUP")
    assert event.model_dump(mode="json", by_alias=True)["eventChangeDetail"] == "APP_RUNNING"


def test_shared_messages_are_the_seeds_own_classes() -> None:
    assert t.AddApplicationRequest is si.AddApplicationRequest
    assert t.NodeResponse is si.NodeResponse
    assert {m.__name__ for m in t.OWN_MODELS} == {
        "Allocation", "AllocationRelease", "AllocationReleasesRequest", "AllocationRequest",
        "AllocationResponse", "EventRecord", "NodeInfo", "NodeRequest", "RejectedAllocation",
        "UpdateContainerSchedulingStateRequest"}


# ----------------------------------------------------------------------- the flows

def test_a_pod_is_an_ask_of_one_allocated_and_heard_back_by_key() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"), pod("pod-2", memory=20))
    assert env.api.dialect(env.rm) is Dialect.TODAY
    assert env.api.schedule() == 2
    placed = env.shim.allocations
    assert [(a.allocation_key, a.node_id) for a in placed] == [("pod-1", "node-1"),
                                                                 ("pod-2", "node-1")]
    assert all(isinstance(a, t.Allocation) for a in placed)
    assert env.application("app-1")["allocated"] == {"memory": 30, "vcore": 2}
    assert [a["pending_repeats"] for a in env.application("app-1")["asks"]] == [0, 0]
    env.check()


def test_a_pod_waiting_for_the_cluster_to_grow_is_told_failed_once() -> None:
    """YuniKorn's inspection of outstanding requests (``scheduler.go``
    inspectOutstandingRequests) tells today's shim FAILED once for a pod no node has room
    for, the signal its cluster autoscaler scales up on."""
    env = Today()
    env.nodes(create("node-1", 10))
    env.app("app-1")
    env.pods(pod("big", memory=20))
    env.api.schedule()
    for _ in range(3):
        env.clock.advance(1.0)
        env.api.schedule()
    waiting = [s for s in env.shim.scheduling_states
               if s.reason.startswith("waiting for cluster resources")]
    assert [(s.allocation_key, s.state.name) for s in waiting] == [("big", "FAILED")]
    assert isinstance(waiting[0], t.UpdateContainerSchedulingStateRequest)
    env.check()


def test_release_by_key_is_processed_and_confirmed_by_key() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"), pod("pod-2", memory=1000))     # pod-2 never fits
    env.api.schedule()
    env.shim.clear()
    env.release(stop("pod-1"), stop("pod-2"))
    released = env.shim.released
    assert [(r.allocation_key, r.termination_type) for r in released] == [
        ("pod-1", t.TerminationType.STOPPED_BY_RM), ("pod-2", t.TerminationType.STOPPED_BY_RM)]
    assert all(isinstance(r, t.AllocationRelease) for r in released)
    assert env.node("node-1")["allocated"] == {}
    assert env.application("app-1")["pending"] == {}
    assert env.application("app-1")["asks"] == [a for a in env.application("app-1")["asks"]
                                                if a["allocation_key"] == "pod-1"]
    env.check()


def test_create_drain_joins_unschedulable_until_drain_to_schedulable() -> None:
    env = Today()
    env.nodes(create("node-1", action=t.NodeAction.CREATE_DRAIN))
    assert env.shim.accepted_nodes == ["node-1"]
    assert env.node("node-1")["state"] == "Draining"
    env.app("app-1")
    env.pods(pod("pod-1"))
    assert env.api.schedule() == 0
    env.nodes(t.NodeInfo(node_id="node-1", action=t.NodeAction.DRAIN_TO_SCHEDULABLE))
    assert env.node("node-1")["state"] == "Schedulable"
    assert env.api.schedule() == 1
    env.check()


def test_create_drain_of_a_refused_node_is_rejected_once() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.shim.clear()
    env.nodes(create("node-1", action=t.NodeAction.CREATE_DRAIN))
    assert [r.node_id for r in env.shim.rejected_nodes] == ["node-1"]
    assert env.node("node-1")["state"] == "Schedulable"
    env.check()


def test_a_bound_pod_takes_room_on_its_node_and_is_heard_back() -> None:
    env = Today()
    env.nodes(create("node-1", memory=100))
    env.app("app-1")
    env.pods(pod("bound-1", memory=60, node="node-1"))
    assert [(a.allocation_key, a.node_id) for a in env.shim.allocations] == [
        ("bound-1", "node-1")]
    assert env.node("node-1")["allocated"] == {"memory": 60, "vcore": 1}
    assert env.application("app-1")["state"] == "Running"
    env.pods(pod("pod-2", memory=50))
    assert env.api.schedule() == 0                      # 60 + 50 > 100
    env.check()


def test_a_bound_pod_sent_again_changes_nothing() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("bound-1", memory=60, node="node-1"))
    before = env.partition()
    env.shim.clear()
    env.pods(pod("bound-1", memory=60, node="node-1"), pod("bound-1", memory=60))
    assert env.partition() == before
    assert env.shim.allocations == [] and env.shim.of("update_allocation") == []
    env.check()


def test_a_pending_pod_bound_by_the_rm_stops_being_pending() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1", memory=1000))                 # too large for the cycle
    env.pods(pod("pod-1", memory=1000, node="node-1"))  # the RM placed it anyway
    app = env.application("app-1")
    assert app["pending"] == {}
    assert [(a["allocation_key"], a["node_id"]) for a in app["allocations"]] == [
        ("pod-1", "node-1")]
    env.check()


def test_foreign_pods_are_counted_on_their_node_only() -> None:
    env = Today()
    env.nodes(create("node-1", memory=100))
    env.app("app-1")
    env.pods(t.Allocation(allocation_key="kube-proxy", node_id="node-1",
                          allocation_tags={t.FOREIGN_TAG: t.FOREIGN_STATIC},
                          resource_per_alloc=res(70)))
    assert env.node("node-1")["occupied"] == {"memory": 70, "vcore": 1}
    assert env.shim.allocations == []                   # never heard back
    assert env.application("app-1")["allocated"] == {}
    env.pods(pod("pod-1", memory=40))
    assert env.api.schedule() == 0
    env.release(t.AllocationRelease(allocation_key="kube-proxy",
                                    termination_type=TT.STOPPED_BY_RM))
    assert env.node("node-1")["occupied"] == {}
    assert env.api.schedule() == 1
    env.check()


def test_a_foreign_pod_moving_nodes_frees_the_old_one() -> None:
    env = Today()
    env.nodes(create("node-1"), create("node-2"))
    foreign = {t.FOREIGN_TAG: t.FOREIGN_DEFAULT}
    env.pods(t.Allocation(allocation_key="f", node_id="node-1", allocation_tags=foreign,
                          resource_per_alloc=res(30)))
    env.pods(t.Allocation(allocation_key="f", node_id="node-2", allocation_tags=foreign,
                          resource_per_alloc=res(20)))
    assert env.node("node-1")["occupied"] == {}
    assert env.node("node-2")["occupied"] == {"memory": 20, "vcore": 1}
    env.check()


def test_gang_placeholders_are_replaced_and_the_swap_confirmed_by_key() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("gang", placeholder_ask=40)
    env.pods(*(pod(f"ph-{i}", app="gang", memory=20, placeholder=True, task_group_name="tg")
               for i in (1, 2)))
    assert env.api.schedule() == 2
    assert env.application("gang")["placeholder_allocated"] == {"memory": 40, "vcore": 2}
    env.shim.clear()
    env.pods(pod("real-1", app="gang", memory=20, task_group_name="tg"))
    env.api.schedule()
    swaps = [r for r in env.shim.released
             if r.termination_type is t.TerminationType.PLACEHOLDER_REPLACED]
    assert len(swaps) == 1 and swaps[0].allocation_key in ("ph-1", "ph-2")
    env.shim.clear()
    env.release(stop(swaps[0].allocation_key, app="gang", ttype=TT.PLACEHOLDER_REPLACED))
    env.api.schedule()
    app = env.application("gang")
    real = [a for a in app["allocations"] if not a["placeholder"]]
    assert [a["allocation_key"] for a in real] == ["real-1"]
    assert app["placeholder_allocated"] == {"memory": 20, "vcore": 1}
    assert app["state"] == "Running"
    env.check()


def test_recovery_after_registering_again_from_bound_pods() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"), pod("pod-2"))
    env.api.schedule()
    placed = [(a.allocation_key, a.node_id) for a in env.shim.allocations]
    # the scheduler restarts: the RM registers again and resyncs what runs
    env.shim = RecordingShim()
    env.api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=env.rm, config=CONFIG), env.shim)
    assert env.api.dialect(env.rm) is None
    env.nodes(create("node-1", action=t.NodeAction.CREATE_DRAIN))
    env.app("app-1")
    env.pods(*(pod(key, node=node) for key, node in placed))
    env.nodes(t.NodeInfo(node_id="node-1", action=t.NodeAction.DRAIN_TO_SCHEDULABLE))
    assert [(a.allocation_key, a.node_id) for a in env.shim.allocations] == placed
    assert env.application("app-1")["state"] == "Running"
    assert env.node("node-1")["allocated"] == {"memory": 20, "vcore": 2}
    env.check()


# ----------------------------------------------------------------------- refusals

def test_bad_pods_are_rejected_by_key_with_a_reason_and_change_nothing() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    before = env.partition()
    env.pods(pod("on-nowhere", node="node-9"),
             t.Allocation(allocation_key="orphan", node_id="node-1",
                          resource_per_alloc=res(5)),
             t.Allocation(allocation_key="floating", allocation_tags={t.FOREIGN_TAG: "default"},
                          resource_per_alloc=res(5)),
             pod("elsewhere", partition_name="gpu"),
             pod("stranger", app="app-9"))
    rejected = env.shim.rejected_allocations
    assert [r.allocation_key for r in rejected] == [
        "on-nowhere", "orphan", "floating", "elsewhere", "stranger"]
    assert "node node-9 is not known" in rejected[0].reason
    assert "no application" in rejected[1].reason
    assert "no node" in rejected[2].reason
    assert "partition gpu does not exist" in rejected[3].reason
    assert "app-9" in rejected[4].reason
    assert env.partition()["nodes"] == before["nodes"]
    assert env.application("app-1")["asks"] == []
    env.check()


def test_a_running_pod_sent_again_with_other_resources_is_resized_in_place() -> None:
    env = Today()
    env.nodes(create("node-1", memory=100))
    env.app("app-1")
    env.pods(pod("pod-1"))
    env.api.schedule()
    env.shim.clear()
    env.pods(pod("pod-1", memory=30))
    assert env.shim.rejected_allocations == [] and env.shim.allocations == []
    assert env.application("app-1")["allocated"] == {"memory": 30, "vcore": 1}
    assert env.node("node-1")["allocated"] == {"memory": 30, "vcore": 1}
    queue = next(q for q in env.partition()["queues"] if q["path"] == "root.a")
    assert queue["allocated"] == {"memory": 30, "vcore": 1}
    env.pods(pod("pod-1", memory=130, node="node-1"))   # at any cost, as YuniKorn
    assert env.node("node-1")["allocated"] == {"memory": 130, "vcore": 1}
    env.release(stop("pod-1"))
    assert env.node("node-1")["allocated"] == {} and env.application("app-1")["allocated"] == {}
    env.check()


def test_one_key_twice_in_one_request_is_read_in_order() -> None:
    """Entries of one request are processed in order, a key already there being an update
    of its allocation: a node that is not known refuses the entry, a known other node is
    no move, another size resizes it; a pending key sent twice is one ask, updated.
    Mirrors YuniKorn's ``TestUpdateAllocation`` and ``TestUpdateAllocationWithAsk``
    (apache/yunikorn-core be3bb48 pkg/scheduler/partition_test.go)."""
    env = Today()
    env.nodes(create("node-1"), create("node-2"))
    env.app("app-1")
    env.app("gang", placeholder_ask=40)
    env.pods(pod("pod-1", memory=60, node="node-1"),
             pod("pod-1", memory=30, node="node-9"),     # node unknown: refused
             pod("pod-1", memory=30, node="node-2"),     # a resize, not a move
             pod("ph-1", app="gang", memory=20, node="node-2", placeholder=True,
                 task_group_name="tg"),
             pod("ph-1", app="gang", memory=10, node="node-2", placeholder=True,
                 task_group_name="tg"),                  # a placeholder keeps its size
             pod("ask-1", memory=500), pod("ask-1", memory=400))
    assert [(a.allocation_key, a.node_id, a.resource_per_alloc.as_dict()["memory"])
            for a in env.shim.allocations] == [("pod-1", "node-1", 30), ("ph-1", "node-2", 20)]
    rejected = env.shim.rejected_allocations
    assert [r.allocation_key for r in rejected] == ["pod-1", "ph-1"]
    assert "node node-9 is not known" in rejected[0].reason
    assert "keeps its task group's size" in rejected[1].reason
    assert env.node("node-1")["allocated"] == {"memory": 30, "vcore": 1}
    assert env.node("node-2")["allocated"] == {"memory": 20, "vcore": 1}
    assert env.application("app-1")["pending"] == {"memory": 400, "vcore": 1}
    env.check()


def test_a_pod_being_released_can_not_be_resized() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("gang", placeholder_ask=20)
    env.pods(pod("ph-1", app="gang", memory=20, placeholder=True, task_group_name="tg"))
    env.api.schedule()
    env.pods(pod("real-1", app="gang", memory=20, task_group_name="tg"))
    env.api.schedule()                                  # ph-1 released, awaiting confirmation
    assert [r.allocation_key for r in env.shim.released] == ["ph-1"]
    env.shim.clear()
    env.pods(pod("ph-1", app="gang", memory=10, placeholder=True, task_group_name="tg"))
    assert [r.allocation_key for r in env.shim.rejected_allocations] == ["ph-1"]
    assert "being released" in env.shim.rejected_allocations[0].reason
    env.check()


def test_one_registration_speaks_one_dialect() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"))
    before = env.partition()
    env.shim.clear()
    env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[
        si.AllocationAsk(allocation_key="seed-ask", application_id="app-1",
                         resource_ask=res(5))]))
    env.api.update_node(si.NodeRequest(rm_id=env.rm, nodes=[si.NodeInfo(
        node_id="node-2", action=si.NodeAction.CREATE, schedulable_resource=res(10),
        occupied_resource=res(1))]))
    rejected = env.shim.rejected_allocations
    assert [r.allocation_key for r in rejected] == ["seed-ask"]
    assert "speaks today's SI (2858f4d)" in rejected[0].reason
    assert "asks" in rejected[0].reason
    assert [n.node_id for n in env.shim.rejected_nodes] == ["node-2"]
    assert "occupiedResource" in env.shim.rejected_nodes[0].reason
    assert env.partition()["nodes"] == before["nodes"]


def test_a_seed_rm_refuses_todays_messages() -> None:
    env = Today(rm="rm-seed")
    env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[
        si.AllocationAsk(allocation_key="k", application_id="app-1", resource_ask=res(5))]))
    assert env.api.dialect(env.rm) is Dialect.SEED
    env.nodes(create("node-1"))
    assert [n.node_id for n in env.shim.rejected_nodes] == ["node-1"]
    assert "speaks the seed's SI (f59a9f4)" in env.shim.rejected_nodes[0].reason
    assert env.partition()["nodes"] == []


def test_requests_both_dialects_can_say_decide_nothing_and_follow_the_rm() -> None:
    env = Today()
    env.api.update_node(si.NodeRequest(rm_id=env.rm, nodes=[si.NodeInfo(
        node_id="node-1", action=si.NodeAction.CREATE, schedulable_resource=res(100))]))
    env.app("app-1")
    assert env.api.dialect(env.rm) is None
    env.pods(pod("pod-1"))
    env.api.schedule()
    env.shim.clear()
    # a release by key in the seed's class: today's RM means its pod
    env.api.update_allocation(si.AllocationRequest(
        rm_id=env.rm, releases=si.AllocationReleasesRequest(allocations_to_release=[
            si.AllocationRelease(application_id="app-1", allocation_key="pod-1",
                                 termination_type=TT.STOPPED_BY_RM)])))
    assert [r.allocation_key for r in env.shim.released] == ["pod-1"]
    assert env.node("node-1")["allocated"] == {}
    env.check()


def test_the_dialect_can_be_fixed_at_registration() -> None:
    env = Today(dialect=Dialect.TODAY)
    assert env.api.dialect(env.rm) is Dialect.TODAY
    env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[
        si.AllocationAsk(allocation_key="k", application_id="app-1", resource_ask=res(5))]))
    assert isinstance(env.responses()[0], t.AllocationResponse)
    with pytest.raises(ValueError):
        Today(rm="other", dialect="klingon")


def test_two_rms_of_different_dialects_side_by_side() -> None:
    today = Today(rm="rm-today")
    seed_shim = RecordingShim()
    today.api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id="rm-seed", config=CONFIG.replace("name: default", "name: other")), seed_shim)
    today.nodes(create("node-t"))
    today.app("app-t")
    today.pods(pod("pod-t", app="app-t"))
    api = today.api
    api.update_node(si.NodeRequest(rm_id="rm-seed", nodes=[si.NodeInfo(
        node_id="node-s", action=si.NodeAction.CREATE, schedulable_resource=res(100, 10),
        occupied_resource=si.Resource.of(memory=0),
        attributes={"si/node-partition": "other"})]))
    api.update_application(si.ApplicationRequest(rm_id="rm-seed", new=[si.AddApplicationRequest(
        application_id="app-s", queue_name="root.a", partition_name="other",
        ugi=si.UserGroupInformation(user="bob"))]))
    api.update_allocation(si.AllocationRequest(rm_id="rm-seed", asks=[si.AllocationAsk(
        allocation_key="ask-s", application_id="app-s", partition_name="other",
        resource_ask=res(10), max_allocations=2)]))
    assert api.schedule() == 3
    assert (api.dialect("rm-today"), api.dialect("rm-seed")) == (Dialect.TODAY, Dialect.SEED)
    assert all(isinstance(r, t.AllocationResponse) for r in today.shim.of("update_allocation"))
    assert all(isinstance(r, si.AllocationResponse) for r in seed_shim.of("update_allocation"))
    assert [a.uuid for a in seed_shim.allocations] == ["app-s-ask-s-2", "app-s-ask-s-3"]
    today.check()


def test_events_carry_todays_change_detail() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"))
    env.api.schedule()
    details = {(e.object_id, e.event_change_detail) for e in env.shim.events}
    assert all(isinstance(e, t.EventRecord) for e in env.shim.events)
    assert ("app-1", t.EventChangeDetail.APP_ACCEPTED) in details
    assert ("app-1", t.EventChangeDetail.APP_RUNNING) in details
    assert ("pod-1", t.EventChangeDetail.REQUEST_ALLOC) in details


def test_scheduling_states_are_todays_message() -> None:
    env = Today()
    env.nodes(create("node-1", memory=5))
    env.app("app-1")
    env.pods(pod("pod-1", memory=50))
    env.api.schedule()
    states = env.shim.scheduling_states
    assert states and all(isinstance(s, t.UpdateContainerSchedulingStateRequest) for s in states)
    assert states[0].model_dump(by_alias=True)["applicationID"] == "app-1"


def test_the_api_names_both_classes_when_given_something_else() -> None:
    api = Scheduler(clock=ManualClock(0.0))
    with pytest.raises(TypeError, match=r"si\.AllocationRequest or si\.today\.AllocationRequest"):
        api.update_allocation(t.NodeRequest(rm_id="x"))


# ----------------------------------------------------------------------- traces, schema

def test_a_trace_records_todays_steps_and_reads_them_back(tmp_path: Any) -> None:
    from scheduler.trace import Step, TraceError, header, parse_lines

    step = Step("update_allocation", request=t.AllocationRequest(
        rm_id="rm", allocations=[pod("pod-1")]))
    line = step.to_json()
    assert line["dialect"] == "today"
    assert line["request"]["allocations"][0]["allocationKey"] == "pod-1"
    import json
    lines = [json.dumps(header(CONFIG, 0.0)), json.dumps(line),
             json.dumps({"call": "update_node", "request": {
                 "rmID": "rm", "nodes": [{"nodeID": "n", "action": "CREATE_DRAIN"}]}})]
    with pytest.raises(TraceError, match="line 3"):
        parse_lines(lines)                    # the header says seed: CREATE_DRAIN is not
    head = header(CONFIG, 0.0, dialect="today")
    trace = parse_lines([json.dumps(head), *lines[1:]])
    assert [type(s.request) for s in trace.steps] == [t.AllocationRequest, t.NodeRequest]
    with pytest.raises(TraceError, match="dialect"):
        parse_lines([json.dumps(header(CONFIG, 0.0, dialect="klingon"))])

    from invariants.random_search import replay
    judged = replay.run(trace)                # judged through the checker's own reading
    assert judged.violation is None and judged.steps == 2


def test_schema_writes_todays_messages(tmp_path: Any) -> None:
    from scheduler.cli import main

    assert main(["schema", "--out", str(tmp_path), "--dialect", "today"]) == 0
    import json
    alloc = json.loads((tmp_path / "Allocation.schema.json").read_text())
    assert {"allocationKey", "nodeID", "originator", "preemptionPolicy"} <= set(
        alloc["properties"])
    assert "UUID" not in alloc["properties"]
    assert (tmp_path / "RejectedAllocation.schema.json").exists()
    assert not (tmp_path / "AllocationAsk.schema.json").exists()


def test_a_pod_the_rm_could_not_bind_is_scheduled_again() -> None:
    env = Today()
    env.nodes(create("node-1"), create("node-2"))
    env.app("app-1")
    env.pods(pod("pod-1", memory=60))
    env.api.schedule()
    first = env.shim.allocations[-1].node_id
    env.shim.clear()
    env.release(stop("pod-1", ttype=t.TerminationType.SCHEDULING_FAILED_ON_RM))
    assert env.shim.released == []                      # nothing back: the RM knows
    app = env.application("app-1")
    assert app["allocated"] == {} and app["pending"] == {"memory": 60, "vcore": 1}
    assert env.node(first)["allocated"] == {}
    assert env.api.schedule() == 1
    assert env.shim.allocations[-1].allocation_key == "pod-1"
    assert env.application("app-1")["allocated"] == {"memory": 60, "vcore": 1}
    env.shim.clear()
    env.release(stop("nope", ttype=t.TerminationType.SCHEDULING_FAILED_ON_RM))
    assert any("nothing to roll back" in e.message for e in env.shim.events)
    env.check()


def test_a_key_whose_pod_ended_is_a_new_pod_when_it_comes_again() -> None:
    env = Today()
    env.nodes(create("node-1"))
    env.app("app-1")
    env.pods(pod("pod-1"))
    env.api.schedule()
    env.release(stop("pod-1"))
    assert env.application("app-1")["state"] == "Completing"
    env.shim.clear()
    env.pods(pod("pod-1", memory=20))
    assert env.application("app-1")["pending"] == {"memory": 20, "vcore": 1}
    assert env.api.schedule() == 1
    assert [(a.allocation_key, a.resource_per_alloc.as_dict()) for a in env.shim.allocations] \
        == [("pod-1", {"memory": 20, "vcore": 1})]
    assert env.application("app-1")["state"] == "Running"
    env.check()
