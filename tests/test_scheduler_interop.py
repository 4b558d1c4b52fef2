"""The core as Apache YuniKorn's where a reading of our own would differ.

Each test drives ``Scheduler`` through its public API and reads the state dump
or what the shim was told.
"""

from __future__ import annotations

import pytest
from scenario_helpers import NA, Env, config, res

from invariants.modelshim.world import World
from scheduler import si
from scheduler.trace import Step

# ---------------------------------------------------------------------------
# 20: root's max is the partition's total schedulable resource
# ---------------------------------------------------------------------------


def test_roots_max_in_the_dump_follows_every_node_change() -> None:
    env = Env()
    assert env.queue("root")["max"] is None                    # no nodes: no total yet
    env.add_node("node-1", 100, vcore=4)
    assert env.queue("root")["max"] == {"memory": 100, "vcore": 4}
    env.add_node("node-2", 50)
    assert env.queue("root")["max"] == {"memory": 150, "vcore": 4}
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=70, vcore=2))
    assert env.queue("root")["max"] == {"memory": 120, "vcore": 2}
    env.node_action("node-2", NA.DRAIN_NODE)                   # draining nodes still count
    assert env.queue("root")["max"] == {"memory": 120, "vcore": 2}
    env.node_action("node-1", NA.DECOMISSION)
    assert env.queue("root")["max"] == {"memory": 50}
    env.node_action("node-2", NA.DECOMISSION)
    assert env.queue("root")["max"] is None
    assert env.queue("root.a")["max"] is None                  # other queues keep their own


def test_roots_max_is_reported_not_enforced() -> None:
    """A node shrunk below its allocations keeps root over the total; the other nodes
    still take what fits them (YuniKorn's root headroom would refuse: design notes)."""
    env = Env()
    env.add_node("node-1", 30)
    env.add_app("app-1")
    env.ask("app-1", "big", 30)
    assert env.schedule() == 1
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=10))
    env.add_node("node-2", 30)
    env.ask("app-1", "small", 20)
    assert env.schedule() == 1
    assert env.queue("root")["max"] == {"memory": 40}
    assert env.queue("root")["allocated"] == {"memory": 50}


# ---------------------------------------------------------------------------
# 21: fifo breaks ties of submission time by pending ask priority, then by id
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("first", "second", "later", "served"), [
    (("app-1", 0), ("app-2", 5), 0.0, "app-2"),      # same time: the higher priority
    (("zeta", 0), ("alpha", 0), 0.0, "alpha"),       # same time and priority: the id
    (("app-1", 0), ("app-2", 100), 1.0, "app-1"),    # submission time comes first
])
def test_fifo_order_breaks_ties_of_submission_time_by_priority_then_id(
        first: tuple[str, int], second: tuple[str, int], later: float, served: str) -> None:
    # With application.sort.priority disabled: fifo's own order (by default priority comes
    # first, tests/test_scenario_priority.py).
    env = Env(config("- name: a\n  properties: {application.sort.priority: disabled}\n"))
    env.add_node("node-1", 10)
    env.add_app(first[0])
    env.clock.advance(later)
    env.add_app(second[0])                                     # submitted after the first
    for app_id, priority in (first, second):
        env.ask(app_id, "k", 10, priority=priority)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == [served]


STATEAWARE = config("- name: s\n  properties: {application.sort.policy: stateaware}")


def test_the_checker_reads_fifo_ties_the_same_way() -> None:
    """stateaware starts the first application in fifo order: here app-2 (priority 5),
    whose ask fits no node, so app-1 waits although its ask would fit."""
    world = World()
    ugi = si.UserGroupInformation(user="alice")
    steps = [
        Step("register_resource_manager",
             si.RegisterResourceManagerRequest(rm_id="rm", config=STATEAWARE)),
        Step("update_node", si.NodeRequest(rm_id="rm", nodes=[si.NodeInfo(
            node_id="node-1", action=NA.CREATE, schedulable_resource=res(memory=100))])),
        Step("update_application", si.ApplicationRequest(rm_id="rm", new=[
            si.AddApplicationRequest(application_id=app_id, queue_name="root.s", ugi=ugi)
            for app_id in ("app-1", "app-2")])),
        Step("update_allocation", si.AllocationRequest(rm_id="rm", asks=[
            si.AllocationAsk(allocation_key="k", application_id="app-1",
                             resource_ask=res(memory=10), priority=0),
            si.AllocationAsk(allocation_key="k", application_id="app-2",
                             resource_ask=res(memory=200), priority=5)])),
        Step("schedule"),
    ]
    for step in steps:
        assert world.run(step) == [], step.call
    assert world.api.state_dump()["partitions"][0]["nodes"][0]["allocated"] == {}
