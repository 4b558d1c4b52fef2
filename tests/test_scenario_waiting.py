"""Scenarios: asks waiting for the cluster to grow, told ``FAILED`` once (YuniKorn's
inspection of outstanding requests, the signal its shim gives the cluster autoscaler)."""

from __future__ import annotations

from scenario_helpers import RM, SS, Env, config

from scheduler import si

REQUIRED = "yunikorn.apache.org/requiredNode"


def told(env: Env) -> list[tuple[str, str]]:
    """The asks told they wait for the cluster to grow, in order."""
    return [(s.application_id, s.allocation_key) for s in env.shim.scheduling_states
            if s.state == SS.FAILED and s.reason.startswith("waiting for cluster resources")]


def test_an_ask_no_node_has_room_for_is_told_once_a_second_later() -> None:
    """``partition_test.go`` TestCalculateOutstandingRequests and
    ``application_test.go`` TestGetOutstandingRequests_NoSchedulingAttempt: only asks the
    scheduler tried count (one whose application may not start yet is never tried); each
    is told once, reserved or not."""
    env = Env(config("""
- name: a
- name: b
  maxapplications: 1
"""))
    env.add_node("node-1", 50)
    env.add_app("app-1")
    env.ask("app-1", "fits", 30)
    env.ask("app-1", "reserves", 30)
    env.ask("app-1", "too-big", 80)
    env.add_app("app-2", "root.b")
    env.ask("app-2", "small", 10)
    env.add_app("app-3", "root.b")
    env.ask("app-3", "not-tried", 80)
    assert env.schedule() == 2
    assert env.sched_states("app-1", "reserves") == [SS.SKIPPED]  # the reservation delay
    assert env.sched_states("app-1", "too-big") == [SS.FAILED]
    assert env.sched_states("app-3", "not-tried") == [SS.SKIPPED]
    env.clock.advance(0.5)
    env.api.update_allocation(si.AllocationRequest(rm_id=RM))
    env.schedule()
    assert told(env) == []
    env.advance(0.5)
    assert told(env) == [("app-1", "reserves"), ("app-1", "too-big")]
    env.advance(1.0)
    env.advance(5.0)
    assert told(env) == [("app-1", "reserves"), ("app-1", "too-big")]


def test_an_ask_over_its_queue_headroom_is_never_told() -> None:
    """``queue_test.go`` TestGetOutstandingRequestMax and ``application_test.go``
    TestGetOutstandingRequests: an ask that would pass its queue's max waits for the
    queue, not for the cluster; the others below the max are told."""
    env = Env(config("""
- name: a
  resources:
    max: {memory: 40}
- name: b
"""))
    env.add_node("node-1", 30)
    env.add_app("app-1")
    env.ask("app-1", "first", 30)
    env.ask("app-1", "over", 20)
    env.add_app("app-2", "root.b")
    env.ask("app-2", "other", 20)
    assert env.schedule() == 1
    assert env.sched_states("app-1", "over") == [SS.SKIPPED]
    assert env.sched_states("app-2", "other") == [SS.SKIPPED]  # the reservation delay
    for _ in range(3):
        env.advance(1.0)
    assert told(env) == [("app-2", "other")]


def test_an_ask_whose_headroom_shrank_after_its_search_is_not_told() -> None:
    """The headroom is read at the inspection (``queue.go`` getOutStandingRequestsInternal):
    a reload that lowers the max before it keeps the ask from being told."""
    env = Env(config("""
- name: a
  resources:
    max: {memory: 100}
"""))
    env.add_node("node-1", 30)
    env.add_app("app-1")
    env.ask("app-1", "placed", 20)
    env.ask("app-1", "waits", 20)
    assert env.schedule() == 1
    assert env.sched_states("app-1", "waits") == [SS.SKIPPED]  # the reservation delay
    env.update_config(config("""
- name: a
  resources:
    max: {memory: 30}
"""))
    env.advance(1.0)
    env.advance(1.0)
    assert told(env) == []
    env.update_config(config("""
- name: a
  resources:
    max: {memory: 100}
"""))
    env.advance(1.0)
    assert told(env) == []  # noticed at this cycle's end: told a second later
    env.advance(1.0)
    assert told(env) == [("app-1", "waits")]


def test_a_required_node_ask_is_never_told() -> None:
    """``application_test.go``
    TestGetOutstandingRequests_RequestTriggeredPreemptionHasRequiredNode: an ask that must
    run on one node waits for that node, a new node would not help it."""
    env = Env()
    env.add_node("node-1", 30)
    env.add_app("app-1")
    env.ask("app-1", "holder", 30)
    env.schedule()
    env.api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key="daemon", application_id="app-1", partition_name="default",
        resource_ask=si.Resource.of(memory=10), max_allocations=1,
        tags={REQUIRED: "node-1"})]))
    env.schedule()
    assert SS.RESERVED in env.sched_states("app-1", "daemon")
    for _ in range(3):
        env.advance(1.0)
    assert told(env) == []


def test_an_ask_sent_again_is_told_again() -> None:
    """An update replaces the ask (a new ask in YuniKorn too): its flag starts afresh."""
    env = Env()
    env.add_node("node-1", 10)
    env.add_app("app-1")
    env.ask("app-1", "big", 20)
    env.schedule()
    env.advance(1.0)
    assert told(env) == [("app-1", "big")]
    env.ask("app-1", "big", 30)
    env.schedule()
    env.advance(1.0)
    assert told(env) == [("app-1", "big"), ("app-1", "big")]


def test_a_real_ask_with_a_placeholder_left_to_swap_with_is_not_told() -> None:
    """``application_test.go`` TestGetOutstandingRequests_AskReplaceable: a real ask of a
    task group that still has a placeholder (held or asked for) waits for the swap, not
    for the cluster; the placeholder ask itself is told like any ask."""
    env = Env()
    env.add_node("node-1", 30)
    env.add_app("filler", "root.b")
    env.ask("filler", "big", 25)
    env.add_app("app-1", placeholder_ask=si.Resource.of(memory=10))
    env.ask("app-1", "real", 10, task_group="tg")
    env.schedule()
    assert env.sched_states("app-1", "real") == [SS.SKIPPED]  # the reservation delay
    env.clock.advance(0.5)
    env.ask("app-1", "ph", 10, placeholder=True, task_group="tg")
    env.schedule()
    assert env.sched_states("app-1", "ph") == [SS.SKIPPED]  # the reservation delay
    env.advance(0.5)
    assert told(env) == [("app-1", "ph")]
    env.advance(1.0)
    assert told(env) == [("app-1", "ph")]
