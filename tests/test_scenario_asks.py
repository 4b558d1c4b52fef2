"""Scenarios: asks added, replaced, repeated, ordered, released and rejected."""

from __future__ import annotations

import pytest
from scenario_helpers import TT, Env, run_to_completion

from scheduler import si


def pending(env: Env, app_id: str = "app-1") -> tuple[dict, dict, dict]:
    app = env.app(app_id)
    assert app is not None
    return app["pending"], env.queue(app["queue"])["pending"], env.queue("root")["pending"]


def test_add_ask_is_pending_everywhere() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=3)
    [ask] = env.app("app-1")["asks"]
    assert ask == {"allocation_key": "k", "pending_repeats": 3, "resource": {"memory": 10},
                   "placeholder": False, "task_group": "", "state": "Pending"}
    assert pending(env) == ({"memory": 30},) * 3
    assert env.shim.rejected_asks == []


def test_replace_same_key_adjusts_pending_without_double_count() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    env.ask("app-1", "k", 30, repeats=1)
    asks = env.app("app-1")["asks"]
    assert [(a["allocation_key"], a["pending_repeats"], a["resource"]) for a in asks] == [
        ("k", 1, {"memory": 30})]
    assert pending(env) == ({"memory": 30},) * 3
    assert env.shim.rejected_asks == []


def test_replace_after_partial_allocation_counts_allocated_repeats() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=3)
    assert env.schedule() == 1
    assert pending(env) == ({"memory": 20},) * 3
    env.ask("app-1", "k", 10, repeats=2)
    [ask] = env.app("app-1")["asks"]
    assert ask["pending_repeats"] == 1
    assert pending(env) == ({"memory": 10},) * 3
    assert env.app("app-1")["allocated"] == {"memory": 10}


def test_replace_keeps_other_asks() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k1", 10)
    env.ask("app-1", "k2", 5, repeats=2)
    env.ask("app-1", "k1", 20)
    assert pending(env) == ({"memory": 30},) * 3


def test_max_allocations_repeats() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=3)
    assert env.schedule() == 3
    allocs = env.allocs_by("app-1")
    assert [a.allocation_key for a in allocs] == ["k", "k", "k"]
    assert len({a.uuid for a in allocs}) == 3
    [ask] = env.app("app-1")["asks"]
    assert (ask["state"], ask["pending_repeats"]) == ("Allocated", 0)
    assert env.app("app-1")["allocated"] == {"memory": 30}
    assert pending(env) == ({},) * 3


def test_priority_orders_asks_within_application() -> None:
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.ask("app-1", "low", 10, priority=1)
    env.ask("app-1", "high", 10, priority=10)
    env.ask("app-1", "mid", 10, priority=5)
    assert env.schedule() == 1
    assert [a.allocation_key for a in env.shim.allocations] == ["high"]
    env.release("app-1", env.uuids()[0])
    env.schedule()
    assert [a.allocation_key for a in env.shim.allocations] == ["high", "mid"]


def test_equal_priority_keeps_arrival_order() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    for key in ("k3", "k1", "k2"):
        env.ask("app-1", key, 10)
    env.schedule()
    assert [a.allocation_key for a in env.shim.allocations] == ["k3", "k1", "k2"]


def test_release_ask_by_rm_is_confirmed() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    env.ask("app-1", "other", 5)
    env.release_ask("app-1", "k")
    [rel] = env.shim.released_asks
    assert (rel.application_id, rel.allocation_key, rel.termination_type) == (
        "app-1", "k", TT.STOPPED_BY_RM)
    assert [a["allocation_key"] for a in env.app("app-1")["asks"]] == ["other"]
    assert pending(env) == ({"memory": 5},) * 3


def test_release_all_asks_of_application() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k1", 10)
    env.ask("app-1", "k2", 5)
    env.release_ask("app-1", "")
    assert sorted(r.allocation_key for r in env.shim.released_asks) == ["k1", "k2"]
    assert env.app("app-1")["asks"] == []
    assert pending(env) == ({},) * 3


@pytest.mark.parametrize("ttype", [TT.TIMEOUT, TT.PREEMPTED_BY_SCHEDULER,
                                   TT.PLACEHOLDER_REPLACED])
def test_ask_release_of_a_type_only_the_core_starts_changes_nothing(
        ttype: si.TerminationType) -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k1", 10)
    env.ask("app-1", "k2", 5)
    before = env.dump()
    env.shim.clear()
    env.release_ask("app-1", "k1", ttype)
    assert env.shim.released_asks == []
    assert env.api.state_dump() == before
    assert any("ask release" in e.message for e in env.shim.events)


def test_released_ask_is_never_allocated() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.release_ask("app-1", "k")
    env.add_node("node-1", 100)
    assert env.schedule() == 0
    assert env.shim.allocations == []


def assert_rejected_without_change(env: Env, app_id: str, key: str, send) -> str:
    before = env.dump()
    env.shim.clear()
    send()
    [rej] = env.shim.rejected_asks
    assert (rej.application_id, rej.allocation_key) == (app_id, key)
    assert rej.reason
    assert env.api.state_dump() == before
    return rej.reason


def test_ask_for_unknown_application_rejected() -> None:
    env = Env()
    env.add_app("app-1")
    reason = assert_rejected_without_change(
        env, "ghost", "k", lambda: env.ask("ghost", "k", 10))
    assert "ghost" in reason


def test_ask_for_completed_application_rejected() -> None:
    env = Env()
    run_to_completion(env)
    assert_rejected_without_change(env, "app-1", "k2", lambda: env.ask("app-1", "k2", 10))


def test_ask_for_rejected_application_rejected() -> None:
    env = Env()
    env.add_app("app-1", "root.nope")
    assert_rejected_without_change(env, "app-1", "k", lambda: env.ask("app-1", "k", 10))


def test_ask_for_unknown_partition_rejected() -> None:
    env = Env()
    env.add_app("app-1")
    reason = assert_rejected_without_change(
        env, "app-1", "k", lambda: env.ask("app-1", "k", 10, partition="nopart"))
    assert "nopart" in reason


def test_ask_with_zero_resource_rejected() -> None:
    env = Env()
    env.add_app("app-1")
    assert_rejected_without_change(env, "app-1", "k", lambda: env.ask("app-1", "k", 0))


def test_ask_with_empty_resource_rejected() -> None:
    env = Env()
    env.add_app("app-1")

    def send() -> None:
        env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[
            si.AllocationAsk(allocation_key="k", application_id="app-1",
                             resource_ask=si.Resource())]))

    assert_rejected_without_change(env, "app-1", "k", send)


def test_rejected_ask_does_not_move_new_app_to_accepted() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 0)
    assert env.app_state("app-1") == "New"
    assert env.shim.app_updates == []


def test_rejected_replacement_keeps_original_ask() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    assert_rejected_without_change(env, "app-1", "k", lambda: env.ask("app-1", "k", 0))
    assert pending(env) == ({"memory": 20},) * 3


def test_ask_tags_reach_the_allocation() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    tags = {"kubernetes.io/label/app": "web", "kubernetes.io/meta/namespace": "dev"}
    env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[si.AllocationAsk(
        allocation_key="pod-1", application_id="app-1", tags=tags,
        resource_ask=si.Resource.of(memory=10), max_allocations=2)]))
    assert env.schedule() == 2
    assert [a.allocation_tags for a in env.shim.allocations] == [tags, tags]
    assert env.shim.allocations[0].allocation_tags is not env.shim.allocations[1].allocation_tags


def test_the_allocation_carries_its_asks_priority() -> None:
    """002 Allocation.priority is the "Priority of ask"."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "high", 10, priority=7)
    env.ask("app-1", "low", 10, priority=-3)
    assert env.schedule() == 2
    assert [(a.allocation_key, a.priority) for a in env.shim.allocations] == [
        ("high", 7), ("low", -3)]
