"""Preemption through the public API: Apache YuniKorn's scenarios, and the protocol a shim sees.

Each scenario names the Go test (``apache/yunikorn-core``, v1.5.0; files under
``pkg/scheduler/`` unless another is named) or the k8shim e2e test it ports.
Go unit tests that call internals (candidate lists, feasibility) are ported
as the outcome a shim sees: whether a release with ``PREEMPTED_BY_SCHEDULER``
arrives, for which allocations, and what ``state_dump()`` shows. Resources are
memory unless memory makes the arithmetic easier. Every test ends by running
every registered invariant with a lifecycle recorder attached from the start.
"""

from __future__ import annotations

from typing import Any

import pytest
from scenario_helpers import RM, TT, Env, config

import invariants
from scheduler import Scheduler, si
from scheduler.clock import ManualClock
from scheduler.testing import RecordingShim

REQUIRED = "yunikorn.apache.org/requiredNode"
MSG = "preempting allocations to free up resources to run ask: "
DS_MSG = "preempting allocations to free up resources to run daemon set ask: "


class PEnv(Env):
    """``Env`` with a recorder, asks that carry a preemption policy, and victim views."""

    def __init__(self, config_text: str, shim: RecordingShim | None = None) -> None:
        self.clock = ManualClock(start=0.0)
        self.api = Scheduler(clock=self.clock)
        self.rec = invariants.LifecycleRecorder(self.api)
        self.shim = shim or RecordingShim()
        self.rm = RM
        self.register(config_text)

    def pask(self, app_id: str, key: str, memory: int, *, priority: int = 0,
             other: bool | None = True, self_: bool = True, repeats: int = 1,
             node: str = "", originator: bool = False, placeholder: bool = False,
             task_group: str = "") -> None:
        """An ask; ``other=None`` sends no PreemptionPolicy at all."""
        policy = None if other is None else si.PreemptionPolicy(
            allow_preempt_self=self_, allow_preempt_other=other)
        self.api.update_allocation(si.AllocationRequest(rm_id=self.rm, asks=[
            si.AllocationAsk(
                allocation_key=key, application_id=app_id,
                resource_ask=si.Resource.of(memory=memory), max_allocations=repeats,
                priority=priority, preemption_policy=policy, originator=originator,
                tags={REQUIRED: node} if node else {}, placeholder=placeholder,
                task_group_name=task_group)]))

    def vnode(self, node_id: str, memory: int) -> None:
        self.api.update_node(si.NodeRequest(rm_id=self.rm, nodes=[si.NodeInfo(
            node_id=node_id, action=si.NodeAction.CREATE,
            schedulable_resource=si.Resource.of(memory=memory))]))

    def preempted(self) -> list[si.AllocationRelease]:
        return [r for r in self.shim.released
                if r.termination_type == TT.PREEMPTED_BY_SCHEDULER]

    def uuid_of(self, app_id: str, key: str) -> str:
        found = [a.uuid for a in self.shim.allocations
                 if a.application_id == app_id and a.allocation_key == key]
        assert found, f"no allocation of {app_id}/{key}"
        return found[-1]

    def node_of(self, app_id: str, key: str) -> str:
        return next(a.node_id for a in self.shim.allocations
                    if a.application_id == app_id and a.allocation_key == key)

    def confirm_all(self) -> None:
        for r in self.preempted():
            self.release(r.application_id, r.uuid, TT.PREEMPTED_BY_SCHEDULER)

    def preempting(self, path: str) -> dict[str, int]:
        q = self.queue(path)
        assert q is not None
        result: dict[str, int] = q["preempting"]
        return result

    def reserved(self, node_id: str) -> list[dict[str, Any]]:
        n = self.node(node_id)
        assert n is not None
        result: list[dict[str, Any]] = n["reserved"]
        return result

    def violations(self) -> list[str]:
        ctx = invariants.CheckContext(self.api, recorder=self.rec)
        return [str(v) for v in invariants.check_all(ctx)]


def mem_of(n: int) -> dict[str, int]:
    return {"memory": n} if n else {}


# --------------------------------------------------------------------- TestPreemption

PARENT_MAX = """
- name: parent
  resources: {max: {memory: 10}}
  queues:
    - name: leaf1
      resources: {guaranteed: {memory: 5}}
      properties: {preemption.delay: 1ms}
    - name: leaf2
      resources: {guaranteed: {memory: 5}}
      properties: {preemption.delay: 1ms}
"""


def _test_preemption_env(**kw: Any) -> PEnv:
    env = PEnv(config(PARENT_MAX), **kw)
    env.add_app("app-1", "root.parent.leaf1")
    env.vnode("node-1", 10)
    env.pask("app-1", "alloc-1", 5, priority=2, other=False)
    assert env.schedule() == 1
    env.vnode("node-2", 10)
    env.pask("app-1", "alloc-2", 5, priority=1, other=False)
    assert env.schedule() == 1
    assert env.node_of("app-1", "alloc-1") == "node-1"
    assert env.node_of("app-1", "alloc-2") == "node-2"
    env.add_app("app-2", "root.parent.leaf2")
    env.pask("app-2", "alloc-3", 5, priority=1)
    return env


def test_preemption_partition_flow() -> None:
    """``TestPreemption`` (partition_test.go): the parent's headroom is 0, so alloc-3 of leaf2
    preempts alloc-2 (alloc-1's priority 2 is above the ask's 1; leaf1 stays exactly at its
    guarantee), node-1 is reserved, ``preempting`` shows 5 until the RM confirms, then alloc-3
    runs on node-1 (the shortage was the queue quota, not the node)."""
    env = _test_preemption_env()
    env.clock.advance(1.0)
    assert env.schedule() == 0
    released = env.preempted()
    assert [r.uuid for r in released] == [env.uuid_of("app-1", "alloc-2")]
    assert released[0].message == MSG + "alloc-3"
    # One AllocationResponse carries every victim of the decision.
    assert sum(1 for r in env.shim.of("update_allocation") if r.released) == 1
    assert env.reserved("node-1") == [{"application_id": "app-2", "allocation_key": "alloc-3"}]
    for path in ("root.parent.leaf1", "root.parent", "root"):
        assert env.preempting(path) == mem_of(5)
    assert env.preempting("root.parent.leaf2") == {}
    victim = next(a for a in env.app("app-1")["allocations"] if a["allocation_key"] == "alloc-2")
    assert victim["preempted"] and victim["released"] and victim["state"] == "Releasing"
    # Still counted until confirmed: nothing more happens, however often the core runs.
    env.clock.advance(60.0)
    assert env.schedule() == 0 and len(env.preempted()) == 1
    assert env.queue("root.parent")["allocated"] == mem_of(10)
    env.confirm_all()
    assert env.preempting("root") == {}
    assert env.schedule() == 1
    assert env.node_of("app-2", "alloc-3") == "node-1"
    assert env.reserved("node-1") == []
    assert any(e.message.endswith("(Releasing -> Preempted)") for e in env.shim.events)
    assert env.violations() == []


# ------------------------------------------------------- TestTryAllocatePreemptQueue

SIBLINGS = """
- name: parent
  resources: {max: {memory: 10}}
  queues:
    - name: child1
      resources: {guaranteed: {memory: 5}}
    - name: child2
      resources: {guaranteed: {memory: 5}}
"""


def test_preemption_waits_for_the_delay_then_takes_the_newest() -> None:
    """``TestTryAllocatePreemptQueue`` (objects/application_test.go): with the queue headroom
    exhausted nothing happens before the default 30 s delay; after it the newest allocation
    of the over-guarantee sibling is preempted and the ask holds a reservation."""
    env = PEnv(config(SIBLINGS))
    env.vnode("node-1", 20)
    env.add_app("app-1", "root.parent.child1")
    env.pask("app-1", "alloc1", 5, other=False)
    env.schedule()
    env.pask("app-1", "alloc2", 5, other=False)
    env.schedule()
    env.add_app("app-2", "root.parent.child2")
    env.pask("app-2", "ask3", 5)
    assert env.schedule() == 0
    env.clock.advance(29.0)
    assert env.schedule() == 0 and env.preempted() == []
    env.clock.advance(2.0)
    env.schedule()
    assert [r.uuid for r in env.preempted()] == [env.uuid_of("app-1", "alloc2")]
    assert env.reserved("node-1") == [{"application_id": "app-2", "allocation_key": "ask3"}]
    assert env.violations() == []


# -------------------------------------------------------- TestTryAllocatePreemptNode

NODE_SHORTAGE = """
- name: unlimited
- name: parent
  queues:
    - name: child1
      resources: {guaranteed: {memory: 5}}
    - name: child2
      resources: {guaranteed: {memory: 5}}
"""


def test_preemption_for_a_node_shortage_spares_the_queue_without_guarantee() -> None:
    """``TestTryAllocatePreemptNode`` (objects/application_test.go): two nodes of 20,
    ``root.unlimited`` (no guarantee) holds 11 + 11 and child1 (guarantee 5) 5 + 5. An ask of
    5 in child2 fits no node: at 10 s it only holds a reservation of node-1, at 40 s it
    preempts child1's allocation on node-1; the unlimited queue is never touched."""
    env = PEnv(config(NODE_SHORTAGE))
    env.vnode("node-1", 20)
    env.vnode("node-2", 20)
    env.add_app("big", "root.unlimited")
    env.pask("big", "big", 11, repeats=2, other=False)
    env.schedule()
    env.add_app("app-1", "root.parent.child1")
    env.pask("app-1", "small", 5, repeats=2, other=False)
    env.schedule()
    on_node1 = [a.uuid for a in env.shim.allocations if a.node_id == "node-1"]
    env.add_app("app-2", "root.parent.child2")
    env.pask("app-2", "ask", 5)
    env.clock.advance(10.0)
    env.schedule()
    assert env.preempted() == []
    assert env.reserved("node-1") == [{"application_id": "app-2", "allocation_key": "ask"}]
    env.clock.advance(30.0)
    env.schedule()
    released = env.preempted()
    assert len(released) == 1 and released[0].application_id == "app-1"
    assert released[0].uuid in on_node1
    assert env.preempting("root.unlimited") == {}
    env.confirm_all()
    assert env.schedule() == 1 and env.node_of("app-2", "ask") == "node-1"
    assert env.violations() == []


# --------------------------------------------------- TestFindEligiblePreemptionVictims

def _victims_env(parent1: str = "", leaf1: str = "", parent2: str = "", leaf2: str = "") -> PEnv:
    def props(text: str) -> str:
        return f"properties: {{{text}}}" if text else ""
    yaml = f"""
- name: parent1
  resources: {{guaranteed: {{memory: 40}}, max: {{memory: 200}}}}
  {props(parent1)}
  queues:
    - name: leaf1
      {props(leaf1)}
- name: parent2
  resources: {{guaranteed: {{memory: 40}}, max: {{memory: 200}}}}
  {props(parent2)}
  queues:
    - name: leaf2
      {props(leaf2)}
"""
    env = _victims_base(yaml)
    _ask_and_wait(env)
    return env


def _victims_base(yaml: str) -> PEnv:
    """``yaml`` with a delay of 1 ms on root (properties are inherited, so it is every
    leaf's default); node-1 of 80 filled by two pods of 40 of priority -1000 in
    parent2.leaf2."""
    text = config(yaml).replace(
        "        submitacl:", "        properties: {preemption.delay: 1ms}\n        submitacl:", 1)
    env = PEnv(text)
    env.vnode("node-1", 80)
    env.add_app("victim", "root.parent2.leaf2")
    env.pask("victim", "low", 40, priority=-1000, repeats=2, other=False)
    assert env.schedule() == 2
    return env


def _ask_and_wait(env: PEnv) -> None:
    """An ask of 30 in parent1.leaf1 that may preempt, past its delay."""
    env.add_app("app", "root.parent1.leaf1")
    env.pask("app", "ask", 30, priority=0)
    env.schedule()  # mode (b): this attempt reserves node-1, the next one may preempt
    env.clock.advance(1.0)
    env.schedule()


@pytest.mark.parametrize(("where", "expected"), [
    ({}, 1),
    ({"leaf2": "preemption.policy: disabled"}, 0),
    ({"parent2": "preemption.policy: disabled"}, 0),
    ({"parent1": "preemption.policy: fence"}, 0),
    ({"leaf1": "preemption.policy: fence"}, 0),
    ({"parent2": "priority.offset: 1001"}, 0),
    ({"parent2": "priority.policy: fence, priority.offset: 1"}, 0),
    ({"parent1": "priority.policy: fence, priority.offset: -1001"}, 0),
    ({"parent2": "preemption.policy: fence"}, 1),
    ({"leaf2": "preemption.policy: fence"}, 1),
    ({"parent2": "priority.policy: fence, priority.offset: 0"}, 1),
    ({"parent2": "preemption.policy: nonsense"}, 1),
], ids=lambda v: str(v))
def test_eligible_victims(where: dict[str, str], expected: int) -> None:
    """``TestFindEligiblePreemptionVictims`` (objects/queue_test.go): an ask of priority 0 in
    parent1.leaf1, two allocations of priority -1000 in parent2.leaf2 (each parent guaranteed
    40 here, max 200). Victims vanish when leaf2 (or its parent: ``disabled`` is inherited)
    is disabled, when parent1 or leaf1 is a preemption fence, when parent2's offset 1001 lifts
    them above the ask, when parent2 is priority-fenced above the ask, or when parent1 is
    priority-fenced at -1001; fencing parent2 or leaf2 changes nothing. (Preemption needs one
    of the two here.)"""
    env = _victims_env(**where)
    assert len(env.preempted()) == expected
    assert env.violations() == []


def _max_fence_env(parent1_max: str) -> PEnv:
    yaml = f"""
- name: parent1
  resources: {{max: {parent1_max}}}
  queues:
    - name: leaf1
      resources: {{guaranteed: {{memory: 30}}}}
    - name: leaf3
      resources: {{guaranteed: {{memory: 10}}}}
- name: parent2
  resources: {{guaranteed: {{memory: 40}}, max: {{memory: 200}}}}
  queues:
    - name: leaf2
"""
    env = _victims_base(yaml)
    env.vnode("node-2", 60)
    env.add_app("sibling", "root.parent1.leaf3")
    env.pask("sibling", "low", 20, priority=-1000, repeats=2, other=False)
    assert env.schedule() == 2
    _ask_and_wait(env)
    return env


@pytest.mark.parametrize(("parent1_max", "victims"), [
    ("{memory: 60}", ["sibling"]),
    ("{memory: 70}", ["victim"]),
    ("{memory: 60, vcore: 1}", ["sibling"]),
    ("{vcore: 1}", ["victim"]),
], ids=lambda v: str(v))
def test_a_queue_the_ask_would_take_past_its_max_fences_preemption(
        parent1_max: str, victims: list[str]) -> None:
    """YUNIKORN-3241 (``queue_test.go`` TestFindEligiblePreemptionVictims, its max cases):
    parent1 holds 40 (leaf3, above its guarantee of 10) and the ask of 30 in leaf1 would
    take it to 70. Past a max of 60 parent1 is the fence root: only leaf3's pod goes, not
    parent2's, which could never let the ask in. Reaching the max exactly (70), or a max
    naming no type the usage and ask have, does not fence: the ask fits no node and takes
    parent2's pod on node-1, first by id."""
    env = _max_fence_env(parent1_max)
    assert sorted(r.application_id for r in env.preempted()) == victims
    assert env.violations() == []


def test_required_node_allocations_are_never_general_victims() -> None:
    """``TestFindEligiblePreemptionVictims``: allocations with a required node drop out."""
    env = PEnv(config("""
- name: a
  resources: {guaranteed: {memory: 5}}
  properties: {preemption.delay: 1ms}
- name: b
  resources: {guaranteed: {memory: 5}}
"""))
    env.vnode("node-1", 20)
    env.add_app("ds", "root.b")
    env.pask("ds", "daemon", 10, repeats=2, other=False, node="node-1")
    env.schedule()
    assert len(env.shim.allocations) == 2
    env.add_app("app", "root.a")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert env.preempted() == []
    assert env.violations() == []


# ------------------------------------------------ TestCheckPreemptionQueueGuarantees*

@pytest.mark.parametrize(("leaf_g", "parent_g", "preempts"), [
    (False, False, False), (True, False, True), (False, True, True)])
def test_preempting_leaf_needs_a_guarantee_on_its_path(
        leaf_g: bool, parent_g: bool, preempts: bool) -> None:
    """``TestCheckPreemptionQueueGuaranteesWithNoGuaranteedResources``
    (objects/preemption_test.go): without a guarantee on the ask's leaf or its parent the
    ask never preempts (YUNIKORN-1951); a guarantee on either is enough."""
    g = "resources: {guaranteed: {memory: 10}}"
    env = PEnv(config(f"""
- name: parent
  {g if parent_g else ""}
  properties: {{preemption.delay: 1ms}}
  queues:
    - name: leaf
      {g if leaf_g else ""}
- name: other
  resources: {{guaranteed: {{memory: 2}}}}
"""))
    env.vnode("node-1", 10)
    env.add_app("victim", "root.other")
    env.pask("victim", "v", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.parent.leaf")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert bool(env.preempted()) is preempts
    assert env.violations() == []


def test_ask_larger_than_its_guarantee_never_preempts() -> None:
    """``TestCheckPreemptionQueueGuarantees``: an ask of 25 against guarantee 5 and max 10 is
    never feasible, whatever could be freed."""
    env = PEnv(config("""
- name: leaf
  resources: {guaranteed: {memory: 5}, max: {memory: 10}}
  properties: {preemption.delay: 1ms}
- name: other
  resources: {guaranteed: {memory: 1}}
"""))
    env.vnode("node-1", 30)
    env.add_app("victim", "root.other")
    env.pask("victim", "v", 10, repeats=3, other=False)
    env.schedule()
    env.add_app("app", "root.leaf")
    env.pask("app", "ask", 25)
    env.clock.advance(100.0)
    env.schedule()
    assert env.preempted() == []
    assert env.violations() == []


# ---------------------------------------------------------------- required node

def test_required_node_ask_preempts_its_own_application_once() -> None:
    """``TestPreemptionForRequiredNodeReservedAlloc`` and
    ``…MultipleAttemptsAvoided`` (partition_test.go): app-1 holds 8 of node-1's 10 memory; its
    own 8-memory ask required on node-1 reserves node-1 and preempts that allocation; one
    release only, however many passes; after the confirmation the ask runs on node-1."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.vnode("node-2", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "alloc-1", 8, other=False)
    env.schedule()
    assert env.node_of("app-1", "alloc-1") == "node-1"
    env.pask("app-1", "ds", 8, other=False, node="node-1")
    assert env.schedule() == 0
    for _ in range(3):
        env.clock.advance(20.0)
        env.schedule()
    released = env.preempted()
    assert [r.uuid for r in released] == [env.uuid_of("app-1", "alloc-1")]
    assert released[0].message == DS_MSG + "ds"
    assert env.reserved("node-1") == [{"application_id": "app-1", "allocation_key": "ds"}]
    assert env.preempting("root.a") == mem_of(8)
    env.confirm_all()
    assert env.schedule() == 1 and env.node_of("app-1", "ds") == "node-1"
    assert env.violations() == []


def test_required_node_ask_waits_for_its_node() -> None:
    """``tryRequiredNode``: an unknown required node means waiting, not another node."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app", "root.a")
    env.pask("app", "ds", 2, node="node-9")
    assert env.schedule() == 0
    env.vnode("node-9", 10)
    assert env.schedule() == 1 and env.node_of("app", "ds") == "node-9"
    assert env.violations() == []


def test_required_node_ask_cancels_an_ordinary_reservation() -> None:
    """``TestRequiredNodeCancelNonDSReservations`` (partition_test.go): an ordinary ask holds
    a reservation of node-1; a required-node ask for node-1 cancels it and is allocated at
    once."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "alloc-1", 7, other=False)
    env.pask("app-1", "big", 5, other=False)
    env.wait_to_reserve()
    assert env.reserved("node-1") == [{"application_id": "app-1", "allocation_key": "big"}]
    env.add_app("app-2", "root.a")
    env.pask("app-2", "ds", 2, other=False, node="node-1")
    env.schedule()
    assert env.node_of("app-2", "ds") == "node-1"
    assert env.preempted() == []
    assert env.violations() == []


def test_required_node_ask_larger_than_its_node_leaves_other_reservations_alone() -> None:
    """A required-node ask its node can never hold frees nothing: it reports so and keeps
    its hands off the ordinary reservation there (cancelling it let the ordinary ask reserve
    again, and the two took turns forever inside one ``schedule()``; found by the checker)."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "alloc-1", 7, other=False)
    env.pask("app-1", "big", 5, other=False)
    env.wait_to_reserve()
    env.add_app("app-2", "root.a")
    env.pask("app-2", "ds", 30, other=False, node="node-1")
    assert env.schedule() == 0
    assert env.reserved("node-1") == [{"application_id": "app-1", "allocation_key": "big"}]
    assert env.violations() == []


def test_required_node_asks_share_their_node() -> None:
    """``TestRequiredNodeCancelDSReservations`` (partition_test.go, apache/yunikorn-core
    be3bb48): a required-node ask holds node-1 (it can not preempt the higher-priority
    allocation there); a second required-node ask for node-1 reserves it too, beside the
    first, which keeps its reservation: the node ends with two required-node reservations.
    Once the allocation leaves, the reserved pass places both."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "alloc-1", 7, priority=10, other=False)
    env.schedule()
    env.add_app("app-2", "root.a")
    env.pask("app-2", "ds-1", 5, other=False, node="node-1")
    env.schedule()
    assert env.reserved("node-1") == [{"application_id": "app-2", "allocation_key": "ds-1"}]
    assert env.preempted() == []
    env.add_app("app-3", "root.a")
    env.pask("app-3", "ds-2", 4, other=False, node="node-1")
    env.schedule()
    assert [a.allocation_key for a in env.shim.allocations] == ["alloc-1"]
    assert env.reserved("node-1") == [
        {"application_id": "app-2", "allocation_key": "ds-1"},
        {"application_id": "app-3", "allocation_key": "ds-2"}]
    assert env.sched_states("app-3", "ds-2")[-1] == si.SchedulingState.RESERVED
    assert env.preempted() == []
    assert env.violations() == []
    env.release("app-1", env.uuid_of("app-1", "alloc-1"), TT.STOPPED_BY_RM)
    assert env.schedule() == 2
    assert env.node_of("app-2", "ds-1") == env.node_of("app-3", "ds-2") == "node-1"
    assert env.reserved("node-1") == []
    assert env.violations() == []


def test_required_node_ask_reserves_beside_another_then_takes_the_room() -> None:
    """``TestRequiredNodeReservation`` (partition_test.go, apache/yunikorn-core be3bb48):
    alloc-1 (8 of node-1's 10) is placed; alloc-2 (8) reserves node-1; alloc-3 (1), which
    fits the room left, can not take a node another ask holds, so it reserves node-1 too,
    and YuniKorn's next reserved pass places it. One ``schedule()`` does both: the RM hears
    RESERVED, then the allocation, and alloc-2 keeps its reservation."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "alloc-1", 8, other=False, node="node-1")
    assert env.schedule() == 1
    env.pask("app-1", "alloc-2", 8, other=False, node="node-1")
    assert env.schedule() == 0
    assert env.reserved("node-1") == [{"application_id": "app-1", "allocation_key": "alloc-2"}]
    env.pask("app-1", "alloc-3", 1, other=False, node="node-1")
    assert env.schedule() == 1
    assert env.node_of("app-1", "alloc-3") == "node-1"
    assert env.sched_states("app-1", "alloc-3") == [
        si.SchedulingState.RESERVED, si.SchedulingState.SCHEDULED]
    assert env.reserved("node-1") == [{"application_id": "app-1", "allocation_key": "alloc-2"}]
    assert env.preempted() == []
    assert env.violations() == []


def test_required_node_victims_order() -> None:
    """``TestSortAllocations`` (objects/required_node_preemptor_test.go): regular before
    opted-out before originators, lower priority first, newest first; never a higher
    priority and never another required-node allocation."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    env.add_app("app-1", "root.a")
    env.pask("app-1", "driver", 2, other=False, originator=True)
    env.pask("app-1", "optout", 2, other=False, self_=False)
    env.pask("app-1", "old", 2, other=False)
    env.pask("app-1", "high", 2, priority=5, other=False)
    env.pask("app-1", "new", 2, other=False)
    assert env.schedule() == 5
    env.add_app("app-2", "root.a")
    env.pask("app-2", "ds", 4, priority=1, other=False, node="node-1")
    env.schedule()
    assert [r.allocation_key for r in env.preempted()] == ["new", "old"]
    assert env.violations() == []


# ---------------------------------------------------------------- placeholders

def _gang(env: PEnv, app_id: str, count: int, size: int) -> None:
    env.api.update_application(si.ApplicationRequest(rm_id=env.rm, new=[
        si.AddApplicationRequest(
            application_id=app_id, queue_name="root.a", ugi=si.UserGroupInformation(user="u"),
            placeholder_ask=si.Resource.of(memory=count * size))]))
    for i in range(1, count + 1):
        env.pask(app_id, f"ph-{i}", size, other=False, placeholder=True, task_group="tg")


def test_required_node_preempts_the_newest_placeholder() -> None:
    """``TestPlaceholderDataWithPlaceholderPreemption`` (partition_test.go): a required-node
    ask preempts the newest placeholder on its node; once confirmed the gang keeps the rest
    and its real ask replaces a remaining placeholder."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    _gang(env, "gang", 2, 5)
    assert env.schedule() == 2
    env.add_app("ds-app", "root.a")
    env.pask("ds-app", "ds", 5, other=False, node="node-1")
    env.schedule()
    assert [r.uuid for r in env.preempted()] == [env.uuid_of("gang", "ph-2")]
    env.confirm_all()
    assert env.schedule() == 1 and env.node_of("ds-app", "ds") == "node-1"
    dump = env.app("gang")
    assert [a["allocation_key"] for a in dump["allocations"]] == ["ph-1"]
    env.pask("gang", "real-1", 5, other=False, task_group="tg")
    env.schedule()
    assert [r.termination_type for r in env.shim.released][-1] == TT.PLACEHOLDER_REPLACED
    assert env.violations() == []


def test_preempted_placeholder_is_never_replaced() -> None:
    """``TestPreemptedPlaceholderSkip`` (partition_test.go): a real ask of the group of a
    preempted placeholder waits; the placeholder is never replaced, and once its release is
    confirmed the real ask is allocated as a normal ask."""
    env = PEnv(config("- name: a\n"))
    env.vnode("node-1", 10)
    _gang(env, "gang", 1, 10)
    assert env.schedule() == 1
    env.add_app("ds-app", "root.a")
    env.pask("ds-app", "ds", 10, other=False, node="node-1")
    env.schedule()
    assert len(env.preempted()) == 1
    env.vnode("node-2", 10)
    env.pask("gang", "real", 10, other=False, task_group="tg")
    assert env.schedule() == 0
    assert all(r.termination_type == TT.PREEMPTED_BY_SCHEDULER for r in env.shim.released)
    env.confirm_all()
    assert env.schedule() == 2
    assert env.node_of("gang", "real") == "node-2" and env.node_of("ds-app", "ds") == "node-1"
    assert env.violations() == []


# ------------------------------------------------------------- k8shim e2e scenarios

TWO_QUEUES = """
- name: low
  resources: {{guaranteed: {{memory: {low_g}}}}}
  properties: {{preemption.delay: 1ms{low_props}}}
- name: high
  resources: {{guaranteed: {{memory: 5}}}}
  properties: {{preemption.delay: 1ms{high_props}}}
"""


def _two_queue_env(low_g: int = 2, low_props: str = "", high_props: str = "",
                   priority: int = 0) -> PEnv:
    env = PEnv(config(TWO_QUEUES.format(low_g=low_g, low_props=low_props,
                                        high_props=high_props)))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5, priority=priority)
    env.schedule()  # mode (b): this attempt reserves node-1, the next one may preempt
    env.clock.advance(1.0)
    env.schedule()
    return env


def test_no_preemption_below_the_victims_guarantee() -> None:
    """``Verify_no_preemption_on_resources_less_than_guaranteed_value``
    (k8shim test/e2e/preemption): the victim queue is within its guarantee, the ask waits."""
    env = _two_queue_env(low_g=10)
    assert env.preempted() == []
    env.clock.advance(60.0)
    env.schedule()
    assert env.preempted() == [] and env.violations() == []


def test_no_preemption_outside_the_fence() -> None:
    """``Verify_no_preemption_outside_fence`` (k8shim e2e): the preempting queue is fenced."""
    env = _two_queue_env(high_props=", preemption.policy: fence")
    assert env.preempted() == [] and env.violations() == []


@pytest.mark.parametrize(("offset", "preempts"), [(-100, False), (0, True), (100, True)])
def test_preemption_follows_queue_priority(offset: int, preempts: bool) -> None:
    """``Verify_preemption_on_priority_queue`` (k8shim e2e): the victims run at offset 0; a
    queue at offset -100 can not preempt them, one at 0 or +100 can."""
    env = _two_queue_env(high_props=f", priority.offset: {offset}")
    assert bool(env.preempted()) is preempts
    assert env.violations() == []


def test_opted_in_victim_goes_before_opted_out() -> None:
    """``Verify_allow_preemption_tag`` (k8shim e2e): an allocation that allows preemption is
    taken before one that opted out, even when it is older."""
    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="", high_props="")))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "yes", 5, other=False, self_=True)
    env.pask("sleep", "no", 5, other=False, self_=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert [r.allocation_key for r in env.preempted()] == ["yes"]
    assert env.violations() == []


# ------------------------------------------------------------- switches and policies

@pytest.mark.parametrize(("extra", "preempts"), [
    ("", True), ("    preemption: {enabled: true}\n", True),
    ("    preemption: {enabled: false}\n", False),
    ("    preemption: {enabled: true, quotapreemptionenabled: true}\n", True)])
def test_partition_switch(extra: str, preempts: bool) -> None:
    """``TestUpdatePreemption`` (partition_test.go): preemption is on unless ``enabled: false``
    is set explicitly; ``quotapreemptionenabled``, quota preemption's own switch
    (``test_scenario_quota_preemption.py``), does not govern it."""
    text = config(TWO_QUEUES.format(low_g=2, low_props="", high_props=""), extra=extra)
    env = PEnv(text)
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert bool(env.preempted()) is preempts
    assert env.violations() == []


@pytest.mark.parametrize(("other", "preempts"), [(None, False), (False, False), (True, True)])
def test_only_asks_allowed_to_preempt_do(other: bool | None, preempts: bool) -> None:
    """``common.IsAllowPreemptOther``: an ask without PreemptionPolicy never preempts."""
    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="", high_props="")))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5, other=other)
    env.schedule()
    env.wait_to_reserve()                 # reserves node-1: no preemption in that attempt
    env.clock.advance(100.0)
    env.schedule()
    assert bool(env.preempted()) is preempts


@pytest.mark.parametrize(("delay", "waits"), [
    ("1ms", 0.001), ("2m", 120.0), ("1m30s", 90.0), ("bad", 30.0), ("0s", 30.0),
    ("-5s", 30.0)])
def test_preemption_delay_is_a_go_duration(delay: str, waits: float) -> None:
    """``Queue.UpdateQueueProperties``: ``preemption.delay`` is a Go duration; bad, zero or
    negative is the default 30 s."""
    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="",
                                        high_props=f", preemption.delay: {delay}")
                      .replace("preemption.delay: 1ms, preemption.delay", "preemption.delay")))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(waits * 0.9)
    env.schedule()
    assert env.preempted() == []
    env.clock.advance(waits * 0.1 + 0.001)
    env.schedule()
    assert len(env.preempted()) == 1


# ------------------------------------------------------------- the protocol

def _one_victim_env(**kw: Any) -> PEnv:
    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="", high_props="")), **kw)
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert len(env.preempted()) == 1
    return env


def test_a_shim_that_never_confirms_loses_nothing() -> None:
    """The victim stays counted and Releasing, the ask waits on its reservation, and
    nothing is released twice, however long the core runs."""
    env = _one_victim_env()
    for _ in range(5):
        env.clock.advance(100.0)
        assert env.schedule() == 0
    assert len(env.preempted()) == 1
    assert env.queue("root.low")["allocated"] == mem_of(10)
    assert env.preempting("root.low") == mem_of(5)
    assert env.reserved("node-1") == [{"application_id": "app", "allocation_key": "ask"}]
    assert env.violations() == []


def test_a_victim_stopped_by_the_rm_counts_as_confirmed() -> None:
    """2.5 step 8: a STOPPED_BY_RM release of a victim is accepted; ``preempting`` drops and
    the ask is placed."""
    env = _one_victim_env()
    victim = env.preempted()[0]
    env.release("sleep", victim.uuid, TT.STOPPED_BY_RM)
    assert env.preempting("root.low") == {} and env.preempting("root") == {}
    assert env.schedule() == 1
    assert env.violations() == []


def test_a_release_of_another_type_ends_the_victim_and_a_late_confirmation_is_ignored(
) -> None:
    """The RM ends a victim with another type than the core's (``TIMEOUT``): it goes as the
    RM's release, unanswered, and counts as the confirmation (YuniKorn's removeAllocation);
    the shim's ``PREEMPTED_BY_SCHEDULER`` after it is ignored like any release of an
    unknown allocation."""
    env = _one_victim_env()
    victim = env.preempted()[0]
    env.shim.clear()
    env.release("sleep", victim.uuid, TT.TIMEOUT)
    assert env.shim.released == []
    assert env.preempting("root.low") == {}
    env.release("sleep", victim.uuid, TT.PREEMPTED_BY_SCHEDULER)
    assert env.shim.released == []
    assert any("is not known" in e.message for e in env.shim.events)
    assert env.schedule() == 1
    assert env.violations() == []


def test_preemption_is_reported_as_an_event_and_a_scheduling_state() -> None:
    env = _one_victim_env()
    assert any(e.message.startswith("ask ask of application app preempts 1 allocation(s)")
               for e in env.shim.events)
    states = [s for s in env.shim.scheduling_states if s.allocation_key == "ask"
              and not s.reason.startswith("waiting for cluster resources")]
    assert states[-1].state == si.SchedulingState.RESERVED


def test_preemption_predicates_are_consulted() -> None:
    """``checkPreemptionPredicates``: the RM sees the ask, the node, the victims in order
    and the start index; a refusal means nothing is preempted."""
    seen: list[si.PreemptionPredicatesArgs] = []

    def refuse(args: si.PreemptionPredicatesArgs) -> si.PreemptionPredicatesResponse:
        seen.append(args)
        return si.PreemptionPredicatesResponse(success=False)

    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="", high_props="")),
               shim=RecordingShim(preemption_predicates=refuse))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "a", 5, other=False)
    env.pask("sleep", "b", 5, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert env.preempted() == []
    assert [(s.allocation_key, s.node_id, s.preempt_allocation_keys, s.start_index)
            for s in seen] == [("ask", "node-1", ["b"], 0)]
    assert env.violations() == []


def test_preemption_predicates_choose_the_index() -> None:
    """The RM's index decides how many of the offered victims go (positions 0..index)."""
    def two(args: si.PreemptionPredicatesArgs) -> si.PreemptionPredicatesResponse:
        return si.PreemptionPredicatesResponse(success=True, index=1)

    env = PEnv(config(TWO_QUEUES.format(low_g=1, low_props="", high_props="")),
               shim=RecordingShim(preemption_predicates=two))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    for key in ("a", "b", "c", "d", "e"):
        env.pask("sleep", key, 2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 2)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert [r.allocation_key for r in env.preempted()] == ["e", "d"]
    assert env.violations() == []


def test_preemption_predicates_that_raise_prevent_preemption() -> None:
    def broken(args: si.PreemptionPredicatesArgs) -> si.PreemptionPredicatesResponse:
        raise RuntimeError("boom")

    env = PEnv(config(TWO_QUEUES.format(low_g=2, low_props="", high_props="")),
               shim=RecordingShim(preemption_predicates=broken))
    env.vnode("node-1", 10)
    env.add_app("sleep", "root.low")
    env.pask("sleep", "sleep", 5, repeats=2, other=False)
    env.schedule()
    env.add_app("app", "root.high")
    env.pask("app", "ask", 5)
    env.schedule()
    env.clock.advance(1.0)
    env.schedule()
    assert env.preempted() == []
    assert any("raised RuntimeError" in e.message for e in env.shim.events)


def test_an_ask_preempts_once_ever() -> None:
    """``HasTriggeredPreemption``: the RM stops the ask's node pod before it runs; the ask
    never preempts again, even when the victims' queue fills up again."""
    env = _one_victim_env()
    env.release("sleep", env.preempted()[0].uuid, TT.PREEMPTED_BY_SCHEDULER)
    env.pask("sleep", "refill", 5, other=False)
    env.schedule()
    env.clock.advance(100.0)
    env.schedule()
    assert len(env.preempted()) == 1
