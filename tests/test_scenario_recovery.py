"""Scenarios: recovery after an RM restart from the nodes' existing allocations."""

from __future__ import annotations

from typing import Any

from scenario_helpers import (
    CONFIG,
    SS,
    TT,
    Env,
    alloc_msg,
    assert_node_rejected,
    config,
    res,
    run_to_completion,
)

from scheduler import si


def before_restart() -> Env:
    """Two apps on two nodes; app-2 is a gang app holding placeholders only."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.add_app("app-2", "root.b", placeholder_ask=res(memory=20))
    env.ask("app-1", "k", 10, repeats=3)
    env.ask("app-1", "j", 25)
    env.ask("app-2", "ph", 10, repeats=2, placeholder=True, task_group="tg")
    assert env.schedule() == 6
    return env


def restart(env: Env) -> list[si.Allocation]:
    """Re-register, re-add the applications, re-create the nodes with their allocations."""
    allocations = list(env.shim.allocations)
    env.register(CONFIG)
    env.shim.clear()
    env.add_app("app-1")
    env.add_app("app-2", "root.b", placeholder_ask=res(memory=20))
    for node in ("node-1", "node-2"):
        env.add_node(node, 100, existing=[a for a in allocations if a.node_id == node])
    return allocations


def alloc_view(dump_app: dict[str, Any]) -> list[tuple]:
    return sorted(
        (a["uuid"], a["allocation_key"], a["node_id"], tuple(a["resource"].items()),
         a["placeholder"], a["task_group"], a["released"], a["state"])
        for a in dump_app["allocations"])


def test_recovery_rebuilds_allocations_with_same_identity() -> None:
    env = before_restart()
    before = {a["application_id"]: alloc_view(a) for a in env.partition()["applications"]}
    allocations = restart(env)
    assert env.shim.accepted_nodes == ["node-1", "node-2"]
    assert env.shim.rejected_nodes == []
    after = {a["application_id"]: alloc_view(a) for a in env.partition()["applications"]}
    assert after == before
    assert sum(len(v) for v in after.values()) == len(allocations) == 6
    placeholders = [a for a in after["app-2"] if a[4]]
    assert len(placeholders) == 2 and all(a[5] == "tg" for a in placeholders)


def test_recovery_restores_totals() -> None:
    env = before_restart()
    part = env.partition()
    queues = {q["path"]: q["allocated"] for q in part["queues"]}
    apps = {a["application_id"]: (a["allocated"], a["placeholder_allocated"])
            for a in part["applications"]}
    nodes = {n["node_id"]: (n["allocated"], n["available"]) for n in part["nodes"]}
    restart(env)
    part = env.partition()
    assert {q["path"]: q["allocated"] for q in part["queues"]} == queues
    assert {a["application_id"]: (a["allocated"], a["placeholder_allocated"])
            for a in part["applications"]} == apps
    assert {n["node_id"]: (n["allocated"], n["available"]) for n in part["nodes"]} == nodes
    assert queues["root"] == {"memory": 75}


def test_recovery_restores_application_states() -> None:
    env = before_restart()
    states = {a["application_id"]: a["state"] for a in env.partition()["applications"]}
    assert states == {"app-1": "Running", "app-2": "Accepted"}
    restart(env)
    assert {a["application_id"]: a["state"]
            for a in env.partition()["applications"]} == states


def test_recovered_allocation_can_be_released() -> None:
    env = before_restart()
    restart(env)
    assert env.shim.allocations == []  # recovery is not reported as new allocations
    [first] = [a for a in env.app("app-1")["allocations"] if a["allocation_key"] == "j"]
    env.release("app-1", first["uuid"])
    assert [(r.uuid, r.termination_type) for r in env.shim.released] == [
        (first["uuid"], TT.STOPPED_BY_RM)]
    assert env.app("app-1")["allocated"] == {"memory": 30}


def test_new_allocations_after_recovery_get_fresh_uuids() -> None:
    env = before_restart()
    old = set(env.uuids())
    restart(env)
    env.ask("app-1", "k", 10, repeats=5)  # 3 already allocated: 2 more repeats
    assert env.schedule() == 2
    new = env.uuids()
    assert len(new) == 2 and old.isdisjoint(new)
    live = [a["uuid"] for a in env.app("app-1")["allocations"]]
    assert len(live) == len(set(live)) == 6


def test_recovered_allocations_may_exceed_queue_max() -> None:
    env = Env(config("- name: a\n  resources:\n    max: {memory: 50}"))
    env.add_app("app-1")
    env.add_node("node-1", 100, existing=[
        alloc_msg("app-1", "k1", "u-1", "node-1", 40),
        alloc_msg("app-1", "k2", "u-2", "node-1", 40)])
    assert env.shim.accepted_nodes == ["node-1"]
    queue = env.queue("root.a")
    assert queue["max"] == {"memory": 50}
    assert queue["allocated"] == {"memory": 80}
    assert env.app_state("app-1") == "Running"
    env.ask("app-1", "more", 10)
    assert env.schedule() == 0
    assert env.queue("root.a")["allocated"] == {"memory": 80}
    assert env.sched_states("app-1", "more") == [SS.SKIPPED]


def test_over_max_queue_allocates_again_once_below_max() -> None:
    env = Env(config("- name: a\n  resources:\n    max: {memory: 50}"))
    env.add_app("app-1")
    env.add_node("node-1", 100, existing=[
        alloc_msg("app-1", "k1", "u-1", "node-1", 40),
        alloc_msg("app-1", "k2", "u-2", "node-1", 40)])
    env.ask("app-1", "more", 10)
    env.release("app-1", "u-1")
    assert env.schedule() == 1
    assert env.queue("root.a")["allocated"] == {"memory": 50}


def test_node_with_allocation_of_unknown_application_rejected() -> None:
    env = Env()
    env.add_app("app-1")
    assert_node_rejected(env, "node-1", [alloc_msg("app-1", "k1", "u-1", "node-1", 10),
                                         alloc_msg("ghost", "k1", "u-2", "node-1", 10)],
                         "ghost")


def test_recovered_placeholder_flags_and_task_group_in_dump() -> None:
    env = Env()
    env.add_app("app-1", placeholder_ask=res(memory=20))
    env.add_node("node-1", 100, existing=[
        alloc_msg("app-1", "ph", "u-1", "node-1", 10, task_group="tg", placeholder=True),
        alloc_msg("app-1", "real", "u-2", "node-1", 5, task_group="tg")])
    app = env.app("app-1")
    assert app["placeholder_allocated"] == {"memory": 10}
    assert app["allocated"] == {"memory": 5}
    assert sorted((a["uuid"], a["allocation_key"], a["placeholder"], a["task_group"])
                  for a in app["allocations"]) == [
        ("u-1", "ph", True, "tg"), ("u-2", "real", False, "tg")]
    assert env.queue("root.a")["allocated"] == {"memory": 15}


def test_node_with_duplicate_recovered_uuid_rejected() -> None:
    env = Env()
    env.add_app("app-1")
    env.add_node("node-1", 100, existing=[alloc_msg("app-1", "k1", "u-1", "node-1", 10)])
    assert_node_rejected(env, "node-2", [alloc_msg("app-1", "k2", "u-1", "node-2", 10)], "u-1")


def test_node_reporting_an_allocation_of_another_node_rejected() -> None:
    """001 "Application recovery": each node brings its own allocations."""
    env = Env()
    env.add_app("app-1")
    env.add_node("node-1", 100)
    assert_node_rejected(env, "node-2", [alloc_msg("app-1", "k1", "u-1", "node-1", 10)],
                         "node-1")


def test_node_reporting_an_allocation_of_an_ended_application_rejected() -> None:
    """A Completed application (kept until it expires) takes no recovered allocation: the
    node is refused and the application stays as it was."""
    env = Env()
    run_to_completion(env)
    assert_node_rejected(env, "node-2", [alloc_msg("app-1", "k1", "u-9", "node-2", 10)],
                         "app-1")


def test_recovery_for_app_whose_queue_is_gone_rejects_app_and_node() -> None:
    env = before_restart()
    allocations = list(env.shim.allocations)
    env.register(config("- name: a"))
    env.shim.clear()
    env.add_app("app-1")
    env.add_app("app-2", "root.b", placeholder_ask=res(memory=20))
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-2"]
    node_id = next(a.node_id for a in allocations if a.application_id == "app-2")
    on_node = [a for a in allocations if a.node_id == node_id]
    before = env.dump()
    env.add_node(node_id, 100, existing=on_node)
    assert [r.node_id for r in env.shim.rejected_nodes] == [node_id]
    assert env.api.state_dump() == before
