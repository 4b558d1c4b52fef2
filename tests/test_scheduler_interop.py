"""The core as Apache YuniKorn's where it differed (issue 11, items 20 and 21).

Each test drives ``Scheduler`` through its public API and reads the state dump
or what the shim was told.
"""

from __future__ import annotations

from scenario_helpers import NA, Env, res

from invariants.world import World
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


def test_roots_max_is_no_quota_beyond_what_the_nodes_hold() -> None:
    """The total bounds the root's usage anyway: everything that fits a node is placed."""
    env = Env()
    env.add_node("node-1", 30)
    env.add_node("node-2", 30)
    env.add_app("app-1")
    env.ask("app-1", "k", 20, repeats=3)
    assert env.schedule() == 2                                 # 20 + 20 of 60: one per node
    assert env.queue("root")["max"] == {"memory": 60}
    assert env.queue("root")["allocated"] == {"memory": 40}


# ---------------------------------------------------------------------------
# 21: fifo breaks ties of submission time by pending ask priority, then by id
# ---------------------------------------------------------------------------


def placed_order(env: Env) -> list[str]:
    return [a.application_id for a in env.shim.allocations]


def test_fifo_at_the_same_submission_time_serves_the_higher_priority_first() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.add_app("app-2")                                       # same time, submitted later
    env.ask("app-1", "k", 10, priority=0)
    env.ask("app-2", "k", 10, priority=5)
    assert env.schedule() == 1
    assert placed_order(env) == ["app-2"]


def test_fifo_at_the_same_time_and_priority_goes_by_id() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("zeta")
    env.add_app("alpha")
    env.ask("zeta", "k", 10)
    env.ask("alpha", "k", 10)
    assert env.schedule() == 1
    assert placed_order(env) == ["alpha"]


def test_fifo_submission_time_comes_before_priority() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.clock.advance(1)
    env.add_app("app-2")
    env.ask("app-1", "k", 10, priority=0)
    env.ask("app-2", "k", 10, priority=100)
    assert env.schedule() == 1
    assert placed_order(env) == ["app-1"]


STATEAWARE = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: s
            properties: {application.sort.policy: stateaware}
"""


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
