"""Scenarios: node CREATE, UPDATE, DRAIN_NODE, DRAIN_TO_SCHEDULABLE and DECOMISSION."""

from __future__ import annotations

from scenario_helpers import NA, SS, TT, Env, mem, res

from scheduler import si


def test_create_node_accepted_and_dumped() -> None:
    env = Env()
    env.add_node("node-1", 100, occupied=res(memory=10))
    assert env.shim.accepted_nodes == ["node-1"]
    assert env.node("node-1") == {
        "node_id": "node-1", "state": "Schedulable", "capacity": {"memory": 100},
        "occupied": {"memory": 10}, "allocated": {}, "available": {"memory": 90},
        "reserved": []}


def test_duplicate_create_rejected_with_reason() -> None:
    env = Env()
    env.add_node("node-1", 100)
    before = env.dump()
    env.shim.clear()
    env.add_node("node-1", 500)
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == "node-1" and "node-1" in rej.reason
    assert env.shim.accepted_nodes == []
    assert env.api.state_dump() == before


def test_update_unknown_node_rejected() -> None:
    env = Env()
    env.add_node("node-1", 100)
    before = env.dump()
    env.shim.clear()
    env.node_action("ghost", NA.UPDATE, schedulable_resource=res(memory=10))
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == "ghost" and rej.reason
    assert env.api.state_dump() == before


def test_update_capacity_used_by_next_cycle() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.ask("app-1", "k", 20)
    assert env.schedule() == 0
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=30))
    assert env.node("node-1")["capacity"] == {"memory": 30}
    assert env.node("node-1")["available"] == {"memory": 30}
    assert env.shim.rejected_nodes == []
    assert env.schedule() == 1
    assert env.node("node-1")["available"] == {"memory": 10}


def test_update_shrink_stops_allocation() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 20)
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=10))
    assert env.schedule() == 0
    assert env.sched_states("app-1", "k") == [SS.FAILED]


def test_occupied_counts_as_used() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 20, repeats=5)
    env.node_action("node-1", NA.UPDATE, occupied_resource=res(memory=50))
    node = env.node("node-1")
    assert (node["occupied"], node["available"]) == ({"memory": 50}, {"memory": 50})
    assert env.schedule() == 2
    assert env.node("node-1")["allocated"] == {"memory": 40}
    assert env.node("node-1")["available"] == {"memory": 10}


def test_occupied_on_create_counts_as_used() -> None:
    env = Env()
    env.add_node("node-1", 100, occupied=res(memory=90))
    env.add_app("app-1")
    env.ask("app-1", "k", 20)
    assert env.schedule() == 0


def test_lower_occupied_frees_room() -> None:
    env = Env()
    env.add_node("node-1", 100, occupied=res(memory=90))
    env.add_app("app-1")
    env.ask("app-1", "k", 20)
    assert env.schedule() == 0
    env.node_action("node-1", NA.UPDATE, occupied_resource=res(memory=0))
    assert env.schedule() == 1


def test_update_attributes_only_keeps_resources() -> None:
    env = Env()
    env.add_node("node-1", 100, occupied=res(memory=5))
    before = env.node("node-1")
    env.shim.clear()
    env.node_action("node-1", NA.UPDATE, attributes={"zone": "z1"})
    assert env.shim.rejected_nodes == []
    assert env.node("node-1") == before


# ---------------------------------------------------------------- draining


def drained_env() -> Env:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    assert env.schedule() == 1
    env.node_action("node-1", NA.DRAIN_NODE)
    return env


def test_drain_node_keeps_existing_and_takes_no_new() -> None:
    env = drained_env()
    node = env.node("node-1")
    assert node["state"] == "Draining"
    assert node["allocated"] == {"memory": 10}
    assert len(env.app("app-1")["allocations"]) == 1
    env.ask("app-1", "k2", 10)
    assert env.schedule() == 0
    assert env.node("node-1")["allocated"] == {"memory": 10}


def test_drain_node_sends_new_work_elsewhere() -> None:
    env = drained_env()
    env.add_node("node-2", 100)
    env.ask("app-1", "k2", 10, repeats=3)
    assert env.schedule() == 3
    assert {a.node_id for a in env.shim.allocations[1:]} == {"node-2"}


def test_release_on_draining_node_still_works() -> None:
    env = drained_env()
    env.release("app-1", env.uuids()[0])
    assert env.node("node-1")["allocated"] == {}
    assert env.node("node-1")["state"] == "Draining"


def test_drain_to_schedulable_from_draining() -> None:
    env = drained_env()
    env.ask("app-1", "k2", 10)
    env.node_action("node-1", NA.DRAIN_TO_SCHEDULABLE)
    assert env.shim.rejected_nodes == []
    assert env.node("node-1")["state"] == "Schedulable"
    assert env.schedule() == 1


def test_drain_to_schedulable_from_schedulable_rejected() -> None:
    env = Env()
    env.add_node("node-1", 100)
    before = env.dump()
    env.node_action("node-1", NA.DRAIN_TO_SCHEDULABLE)
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == "node-1" and rej.reason
    assert env.api.state_dump() == before


def test_drain_twice_rejected() -> None:
    env = drained_env()
    before = env.dump()
    env.shim.clear()
    env.node_action("node-1", NA.DRAIN_NODE)
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == "node-1" and rej.reason
    assert env.api.state_dump() == before


def test_unknown_node_action_rejected_and_changes_nothing() -> None:
    """UNKNOWN_ACTION_FROM_RM is not an UPDATE: the node keeps its size."""
    env = Env()
    env.add_node("node-1", 100)
    before = env.dump()
    env.shim.clear()
    env.api.update_node(si.NodeRequest(rm_id=env.rm, nodes=[si.NodeInfo(
        node_id="node-1", action=NA.UNKNOWN_ACTION_FROM_RM,
        schedulable_resource=si.Resource.of(memory=10))]))
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == "node-1" and "not supported" in rej.reason
    assert env.api.state_dump() == before


def test_unknown_node_drain_rejected() -> None:
    env = Env()
    env.node_action("ghost", NA.DRAIN_NODE)
    env.node_action("ghost", NA.DRAIN_TO_SCHEDULABLE)
    env.node_action("ghost", NA.DECOMISSION)
    assert [r.node_id for r in env.shim.rejected_nodes] == ["ghost"] * 3


# ------------------------------------------------------------ decommission


def test_decommission_releases_allocations_from_every_account() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.add_app("app-2", "root.b")
    env.ask("app-1", "k", 10, repeats=2)
    env.ask("app-2", "k", 20, repeats=3)
    assert env.schedule() == 5
    placed = [(a.uuid, a.application_id, a.node_id) for a in env.shim.allocations]
    size = {"app-1": 10, "app-2": 20}
    # The node holding work of both applications leaves (which one depends on the orders).
    target, other = next((n, o) for n, o in (("node-1", "node-2"), ("node-2", "node-1"))
                         if {a for _, a, m in placed if m == n} == {"app-1", "app-2"})
    gone = sorted(u for u, _, n in placed if n == target)
    left = {app: sum(size[app] for _, a, n in placed if a == app and n == other)
            for app in size}
    env.shim.clear()
    env.node_action(target, NA.DECOMISSION)
    released = env.shim.released
    assert sorted(r.uuid for r in released) == gone
    assert all(r.termination_type == TT.STOPPED_BY_RM for r in released)
    assert env.node(target) is None
    assert env.queue("root")["allocated"] == mem(left["app-1"] + left["app-2"])
    assert env.queue("root.a")["allocated"] == mem(left["app-1"])
    assert env.queue("root.b")["allocated"] == mem(left["app-2"])
    assert env.app("app-1")["allocated"] == mem(left["app-1"])
    assert env.app("app-2")["allocated"] == mem(left["app-2"])
    remaining = {a["uuid"] for app in env.partition()["applications"]
                 for a in app["allocations"]}
    assert remaining.isdisjoint(gone)


def test_decommission_draining_node() -> None:
    env = drained_env()
    uuid = env.uuids()[0]
    env.shim.clear()
    env.node_action("node-1", NA.DECOMISSION)
    assert [(r.uuid, r.termination_type) for r in env.shim.released] == [
        (uuid, TT.STOPPED_BY_RM)]
    assert env.partition()["nodes"] == []
    assert env.app("app-1")["allocated"] == {}


def test_decommissioned_node_id_can_be_created_again() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.node_action("node-1", NA.DECOMISSION)
    env.shim.clear()
    env.add_node("node-1", 50)
    assert env.shim.accepted_nodes == ["node-1"]
    assert env.node("node-1")["capacity"] == {"memory": 50}


def test_app_with_all_allocations_on_decommissioned_node_completes() -> None:
    env = drained_env()
    env.node_action("node-1", NA.DECOMISSION)
    assert env.app_state("app-1") == "Completing"


def test_update_that_keeps_a_reserved_ask_fitting_keeps_the_reservation() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 60)
    assert env.schedule() == 1
    env.ask("app-1", "big", 50)                  # fits node-1's capacity, not its free 40
    assert env.wait_to_reserve() == 0
    reserved = [{"application_id": "app-1", "allocation_key": "big"}]
    assert env.node("node-1")["reserved"] == reserved
    env.node_action("node-1", NA.UPDATE, schedulable_resource=si.Resource.of(memory=105),
                    attributes={"zone": "b"})
    assert env.node("node-1")["reserved"] == reserved
    env.node_action("node-1", NA.UPDATE, occupied_resource=si.Resource.of(memory=5))
    assert env.node("node-1")["reserved"] == reserved


def test_node_restored_with_drain_to_schedulable_is_ordered_by_its_current_usage() -> None:
    """Fair node order puts the least used node first; a node drained while half full
    and emptied while draining comes back as empty, not as it was when drained."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "half", 50)
    assert env.schedule() == 1
    env.ask("app-1", "third", 30)
    assert env.schedule() == 1
    assert [(a.allocation_key, a.node_id) for a in env.shim.allocations] == [
        ("half", "node-1"), ("third", "node-2")]
    env.node_action("node-1", NA.DRAIN_NODE)
    env.release("app-1", env.uuids()[0])         # node-1 is empty now
    env.node_action("node-1", NA.DRAIN_TO_SCHEDULABLE)
    env.ask("app-1", "next", 10)
    assert env.schedule() == 1
    assert env.shim.allocations[-1].node_id == "node-1"
