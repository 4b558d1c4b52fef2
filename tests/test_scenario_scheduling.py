"""Scenarios: queue, application and node sorting; skipping; reservations; predicates."""

from __future__ import annotations

import pytest
from scenario_helpers import NA, SS, Env, config, res

from scheduler import Scheduler, si

# ------------------------------------------------------------ queue sorting

GUARANTEED = config("""
- name: a
  resources:
    guaranteed: {memory: 100}
- name: b
  resources:
    guaranteed: {memory: 200}
""")


def test_fair_queue_sorting_by_share_of_guaranteed() -> None:
    """a: 10/100 = 0.1 after its first allocation, b 0 -> b; b: 10/200 < 0.1 -> b again."""
    env = Env(GUARANTEED)
    env.add_node("node-1", 30)
    env.add_app("app-a", "root.a")
    env.add_app("app-b", "root.b")
    env.ask("app-a", "k", 10, repeats=10)
    env.ask("app-b", "k", 10, repeats=10)
    assert env.schedule() == 3
    assert [a.application_id for a in env.shim.allocations] == ["app-a", "app-b", "app-b"]
    assert env.queue("root.a")["allocated"] == {"memory": 10}
    assert env.queue("root.b")["allocated"] == {"memory": 20}


THREE = config("""
- name: a
- name: b
- name: c
""")


def test_queues_tied_on_usage_go_by_more_pending_first() -> None:
    """YuniKorn's ``sortQueuesByPriorityAndFairness`` (``objects/sorters.go``; the
    ``fair - pending resource`` case of ``sorters_test.go`` TestSortQueuesWithGuarantees
    ties four queues on priority and fair share): at equal priority and usage the queue
    with more pending goes first, not the first path. Nothing used yet: b (30 pending)
    before c (20) before a (10); once b uses 10, a and c share the lower usage and c,
    pending more, goes next."""
    env = Env(THREE)
    env.add_node("node-1", 10)
    for q, repeats in (("a", 1), ("b", 3), ("c", 2)):
        env.add_app(f"app-{q}", f"root.{q}")
        env.ask(f"app-{q}", "k", 10, repeats=repeats)
    assert env.schedule() == 1
    env.add_node("node-2", 10)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == ["app-b", "app-c"]


def test_fair_queue_sorting_prefers_less_used_queue() -> None:
    """a holds 50/100 = 0.5 of its guarantee, b 90/200 = 0.45: the single free slot goes to b."""
    env = Env(GUARANTEED)
    env.add_node("node-1", 140)
    env.add_app("app-a", "root.a")
    env.add_app("app-b", "root.b")
    env.ask("app-a", "k", 50)
    assert env.schedule() == 1
    env.ask("app-b", "k", 90)
    assert env.schedule() == 1
    env.ask("app-a", "k2", 10)
    env.ask("app-b", "k2", 10)
    env.add_node("node-2", 10)
    assert env.schedule() == 1
    assert env.shim.allocations[-1].application_id == "app-b"
    assert env.queue("root.b")["allocated"] == {"memory": 100}


def test_queue_without_pending_is_not_chosen() -> None:
    env = Env(GUARANTEED)
    env.add_node("node-1", 100)
    env.add_app("app-a", "root.a")
    env.ask("app-a", "k", 10, repeats=3)
    assert env.schedule() == 3
    assert env.queue("root.b")["allocated"] == {}


# ------------------------------------------------------ application sorting


def app_sort_env(policy: str) -> Env:
    return Env(config(f"""
- name: a
  properties:
    application.sort.policy: {policy}
"""))


def test_fifo_older_application_first() -> None:
    env = app_sort_env("fifo")
    env.add_node("node-1", 10)
    env.add_app("old")
    env.add_app("young")
    env.ask("young", "k", 10)
    env.ask("old", "k", 10)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == ["old"]


def tagged_ask(env: Env, app_id: str, key: str, created: str) -> None:
    env.api.update_allocation(si.AllocationRequest(rm_id=env.rm, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app_id, resource_ask=res(memory=10),
        tags={"creationTime": created})]))


def test_creation_time_tag_moves_submission_back() -> None:
    """YuniKorn ``application_test.go`` TestAppSubmissionTime: an ask or a recovered
    allocation whose ``creationTime`` tag (Unix seconds) is earlier than the application's
    submission moves it back, and fifo order reads it; a later or unreadable tag changes
    nothing. ``young`` (submitted at 1010) asks with a pod created at 500 and goes before
    ``old`` (1000); ``old``'s recovered pod from 100 puts it first again."""
    env = app_sort_env("fifo")
    env.clock.set(1000.0)
    env.add_app("old")
    env.clock.set(1010.0)
    env.add_app("young")
    tagged_ask(env, "old", "k", "900")
    tagged_ask(env, "young", "k", "500")
    tagged_ask(env, "young", "k2", "xyz")
    env.add_node("node-1", 10)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == ["young"]
    env.add_node("node-2", 10, existing=[si.Allocation(
        allocation_key="r", uuid="u-r", node_id="node-2", application_id="old",
        resource_per_alloc=res(memory=5), allocation_tags={"creationTime": "100"})])
    env.add_node("node-3", 10)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == ["young", "old"]


def fair_vs_fifo(policy: str) -> list[str]:
    """app-1 already holds 10; then app-1 and app-2 each ask 10 with room for one."""
    env = app_sort_env(policy)
    env.add_node("node-1", 20)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "first", 10)
    assert env.schedule() == 1
    env.ask("app-1", "second", 10)
    env.ask("app-2", "first", 10)
    assert env.schedule() == 1
    return [a.application_id for a in env.shim.allocations]


def test_fair_less_used_application_first() -> None:
    assert fair_vs_fifo("fair") == ["app-1", "app-2"]


def test_fifo_ignores_usage() -> None:
    assert fair_vs_fifo("fifo") == ["app-1", "app-1"]


def stateaware_blocking(policy: str) -> int:
    """The older app's ask can never fit; the younger one's fits."""
    env = app_sort_env(policy)
    env.add_node("node-1", 100)
    env.add_app("old")
    env.add_app("young")
    env.ask("old", "huge", 1000)
    env.ask("young", "k", 10)
    made = env.schedule()
    assert env.app_state("old") == "Accepted"
    return made


def test_stateaware_admits_one_not_running_application() -> None:
    assert stateaware_blocking("stateaware") == 0


def test_fifo_does_not_block_on_unschedulable_older_app() -> None:
    assert stateaware_blocking("fifo") == 1


def test_stateaware_admits_next_app_once_first_runs() -> None:
    env = app_sort_env("stateaware")
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    assert env.schedule() == 2
    assert [a.application_id for a in env.shim.allocations] == ["app-1", "app-2"]
    assert env.app_state("app-1") == env.app_state("app-2") == "Running"


# ------------------------------------------------------------- node sorting


def node_sort_env(policy: str, weights: str = "") -> Env:
    extra = f"    nodesortpolicy:\n      type: {policy}\n"
    if weights:
        extra += f"      resourceweights: {weights}\n"
    return Env(config("- name: a", extra=extra))


def test_fair_node_sorting_spreads() -> None:
    env = node_sort_env("fair")
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=4)
    assert env.schedule() == 4
    assert [a.node_id for a in env.shim.allocations] == [
        "node-1", "node-2", "node-1", "node-2"]
    assert env.node("node-1")["allocated"] == env.node("node-2")["allocated"] == {"memory": 20}


def test_binpacking_fills_one_node() -> None:
    env = node_sort_env("binpacking")
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=4)
    assert env.schedule() == 4
    assert {a.node_id for a in env.shim.allocations} == {"node-1"}
    assert env.node("node-2")["allocated"] == {}


def test_binpacking_prefers_fullest_node() -> None:
    env = node_sort_env("binpacking")
    env.add_node("node-1", 100)
    env.add_node("node-2", 100, occupied=res(memory=50))
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    assert [a.node_id for a in env.shim.allocations] == ["node-2"]


def test_fair_prefers_emptiest_node() -> None:
    env = node_sort_env("fair")
    env.add_node("node-1", 100, occupied=res(memory=50))
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    assert [a.node_id for a in env.shim.allocations] == ["node-2"]


def weighted_choice(weights: str) -> str:
    """node-1 uses half its memory, node-2 half its vcore; fair picks the less used."""
    env = node_sort_env("fair", weights)
    env.add_node("node-1", 100, vcore=100, occupied=res(memory=50))
    env.add_node("node-2", 100, vcore=100, occupied=res(vcore=50))
    env.add_app("app-1")
    env.ask("app-1", "k", 10, vcore=10)
    assert env.schedule() == 1
    return env.shim.allocations[0].node_id


def test_resourceweights_change_node_choice() -> None:
    assert weighted_choice("{memory: 1.0, vcore: 0.0}") == "node-2"
    assert weighted_choice("{memory: 0.0, vcore: 1.0}") == "node-1"


# ---------------------------------------------------------------- skipping


def test_ask_that_does_not_fit_is_skipped_for_smaller_later_one() -> None:
    env = Env()
    env.add_node("node-1", 50)
    env.add_app("app-1")
    env.ask("app-1", "big", 80, priority=10)
    env.ask("app-1", "small", 20)
    assert env.schedule() == 1
    assert [a.allocation_key for a in env.shim.allocations] == ["small"]
    assert env.sched_states("app-1", "big") == [SS.FAILED]
    asks = {a["allocation_key"]: a["state"] for a in env.app("app-1")["asks"]}
    assert asks == {"big": "Pending", "small": "Allocated"}


def test_skipped_app_does_not_block_other_app() -> None:
    env = Env()
    env.add_node("node-1", 50)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "big", 80)
    env.ask("app-2", "small", 20)
    assert env.schedule() == 1
    assert env.shim.allocations[0].application_id == "app-2"


# ------------------------------------------------------------ reservations


def reserved_env() -> Env:
    """node-1 (100) holds app-1's 60; app-2 asks 50: fits capacity, not the free 40."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.add_app("app-2")
    env.add_app("app-3", "root.b")
    env.ask("app-1", "k", 60)
    assert env.schedule() == 1
    env.ask("app-2", "big", 50)
    assert env.schedule() == 0
    assert env.node("node-1")["reserved"] == []    # younger than the reservation delay
    assert env.wait_to_reserve() == 0
    return env


def test_reservation_shown_in_node_dump() -> None:
    env = reserved_env()
    assert env.node("node-1")["reserved"] == [
        {"application_id": "app-2", "allocation_key": "big"}]
    # then told once it waits for the cluster to grow (its node search found no room)
    assert env.sched_states("app-2", "big") == [SS.SKIPPED, SS.RESERVED, SS.FAILED]


def test_reserved_node_not_used_by_other_applications() -> None:
    env = reserved_env()
    env.ask("app-3", "small", 10)
    assert env.schedule() == 0
    assert env.uuids("app-3") == []
    assert env.node("node-1")["allocated"] == {"memory": 60}


def test_other_applications_use_unreserved_nodes() -> None:
    env = reserved_env()
    env.add_node("node-2", 20)
    env.ask("app-3", "small", 10)
    assert env.schedule() == 1
    assert [a.node_id for a in env.allocs_by("app-3")] == ["node-2"]


def test_reservation_cancelled_when_ask_allocated() -> None:
    env = reserved_env()
    env.ask("app-3", "small", 10)
    env.release("app-1", env.uuids("app-1")[0])
    assert env.schedule() == 2
    assert [a.allocation_key for a in env.shim.allocations[1:]] == ["big", "small"]
    assert env.node("node-1")["reserved"] == []
    assert env.node("node-1")["allocated"] == {"memory": 60}


def test_reservation_cancelled_when_ask_removed() -> None:
    env = reserved_env()
    env.release_ask("app-2", "big")
    assert env.node("node-1")["reserved"] == []
    env.ask("app-3", "small", 10)
    assert env.schedule() == 1
    assert [a.node_id for a in env.allocs_by("app-3")] == ["node-1"]


def test_reservation_cancelled_when_app_removed() -> None:
    env = reserved_env()
    env.remove_app("app-2")
    assert env.node("node-1")["reserved"] == []


def test_reservation_cancelled_when_node_shrinks() -> None:
    env = reserved_env()
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=45))
    env.schedule()
    assert env.node("node-1")["reserved"] == []
    assert env.sched_states("app-2", "big")[-1] == SS.FAILED


def test_reservation_cancelled_when_occupied_grows() -> None:
    env = reserved_env()
    env.node_action("node-1", NA.UPDATE, occupied_resource=res(memory=60))
    env.schedule()
    assert env.node("node-1")["reserved"] == []


def test_reservation_cancelled_when_node_drained() -> None:
    env = reserved_env()
    env.node_action("node-1", NA.DRAIN_NODE)
    assert env.node("node-1")["reserved"] == []
    env.add_node("node-2", 100)
    assert env.schedule() == 1
    assert [a.node_id for a in env.allocs_by("app-2")] == ["node-2"]


def test_reservation_cancelled_when_node_decommissioned() -> None:
    env = reserved_env()
    env.node_action("node-1", NA.DECOMISSION)
    env.add_node("node-2", 100)
    assert env.schedule() == 1
    assert env.node("node-2")["reserved"] == []
    assert [a.node_id for a in env.allocs_by("app-2")] == ["node-2"]


def test_reservation_moves_on_when_a_free_node_appears() -> None:
    """A new node with room: the reserved ask may be placed there (any node that fits)."""
    env = reserved_env()
    env.add_node("node-2", 100)
    assert env.schedule() == 1
    assert [a.node_id for a in env.allocs_by("app-2")] == ["node-2"]
    assert env.node("node-1")["reserved"] == []


# -------------------------------------------------------------- predicates


def test_a_reservation_given_up_mid_cycle_frees_its_node_in_that_cycle() -> None:
    """An ask that found every node taken fails for this cycle; when a reservation ends
    in the same cycle (its ask went to another node), the node is open again and the
    failed ask is tried once more before the cycle ends (004 "Implementation": skip what
    can not be satisfied *now*)."""
    env = Env()
    env.add_node("node-1", 10, vcore=10)
    env.add_app("app-0")
    env.ask("app-0", "x", 6, vcore=1)
    assert env.schedule() == 1
    env.add_node("node-2", 10, vcore=5)
    env.ask("app-0", "y2", 2, vcore=4)
    env.ask("app-0", "y1", 8, vcore=1)
    assert env.schedule() == 2
    y1 = next(a.uuid for a in env.allocs_by("app-0") if a.allocation_key == "y1")
    assert next(a.node_id for a in env.allocs_by("app-0") if a.allocation_key == "y1") == \
        "node-2"
    env.add_app("app-b")
    env.add_app("app-c")
    env.ask("app-c", "a", 8, vcore=1)          # fits no node's room: reserves node-1
    assert env.wait_to_reserve() == 0
    assert env.node("node-1")["reserved"] == [{"application_id": "app-c", "allocation_key": "a"}]
    env.release("app-0", y1)                   # node-2 has {memory 8, vcore 1} again
    env.ask("app-b", "b", 1, vcore=9)          # fits node-1 only, reserved for "a"
    assert env.schedule() == 2                 # "a" on node-2, then "b" on node-1
    assert {a.allocation_key: a.node_id for a in env.shim.allocations
            if a.application_id in ("app-b", "app-c")} == {"a": "node-2", "b": "node-1"}


def test_node_failing_predicates_is_never_used() -> None:
    seen: list[si.PredicatesArgs] = []

    def predicates(args: si.PredicatesArgs) -> bool:
        seen.append(args)
        return args.node_id != "node-1"

    env = Env(predicates=predicates)
    env.add_node("node-1", 1000)
    env.add_node("node-2", 30)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=5)
    assert env.schedule() == 3
    assert {a.node_id for a in env.shim.allocations} == {"node-2"}
    assert env.node("node-1")["allocated"] == {}
    assert env.node("node-1")["reserved"] == []
    assert seen and all(a.allocation_key == "k" for a in seen)


def test_node_failing_predicates_is_not_reserved() -> None:
    env = Env(predicates=lambda args: args.node_id != "node-1")
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    assert env.schedule() == 0
    assert env.wait_to_reserve() == 0
    assert env.node("node-1")["reserved"] == []
    assert env.sched_states("app-1", "k") == [SS.SKIPPED, SS.FAILED, SS.FAILED]
    assert env.shim.scheduling_states[-1].reason.startswith("waiting for cluster resources")


def test_raising_predicates_does_not_break_scheduling() -> None:
    def predicates(args: si.PredicatesArgs) -> bool:
        if args.node_id == "node-1":
            raise RuntimeError("shim bug")
        return True

    env = Env(predicates=predicates)
    env.add_node("node-1", 1000)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    assert env.schedule() == 2
    assert {a.node_id for a in env.shim.allocations} == {"node-2"}
    assert any(e.object_id == "node-1" and "RuntimeError" in e.message
               for e in env.shim.events)


def test_always_raising_predicates_allocates_nothing_without_exception() -> None:
    def predicates(args: si.PredicatesArgs) -> bool:
        raise ValueError("broken")

    env = Env(predicates=predicates)
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    assert env.schedule() == 0
    assert env.app("app-1")["allocations"] == []


# ------------------------------------------------------- scheduling states


def test_scheduling_state_skipped_on_queue_quota() -> None:
    env = Env(config("- name: a\n  resources:\n    max: {memory: 10}"))
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 20)
    env.schedule()
    [msg] = env.shim.scheduling_states
    assert (msg.application_id, msg.allocation_key, msg.state) == ("app-1", "k", SS.SKIPPED)
    assert msg.reason


def test_scheduling_state_reserved() -> None:
    env = reserved_env()
    waiting, msg, told = [m for m in env.shim.scheduling_states if m.allocation_key == "big"]
    assert (waiting.state, waiting.reason) == (
        SS.SKIPPED, "waiting for the reservation delay (2 s from its arrival): no node has "
        "room for it now")
    assert (msg.application_id, msg.state) == ("app-2", SS.RESERVED)
    assert (told.state, told.reason) == (
        SS.FAILED, "waiting for cluster resources to become available")


def test_scheduling_state_failed_when_no_node_can_ever_fit() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 150)
    assert env.schedule() == 0
    [msg] = env.shim.scheduling_states
    assert (msg.application_id, msg.allocation_key, msg.state) == ("app-1", "k", SS.FAILED)
    assert env.node("node-1")["reserved"] == env.node("node-2")["reserved"] == []


def test_scheduling_state_not_repeated_every_cycle() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 150)
    for _ in range(3):
        env.schedule()
    assert env.sched_states("app-1", "k") == [SS.FAILED]


def test_fair_sorting_between_parent_queues() -> None:
    """p1 holds 60/100 of its guarantee and p2 40/100: p2's leaf gets the next slot."""
    env = Env(config("""
- name: p1
  resources:
    guaranteed: {memory: 100}
  queues:
    - name: x
- name: p2
  resources:
    guaranteed: {memory: 100}
  queues:
    - name: y
"""))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.p1.x")
    env.add_app("app-2", "root.p2.y")
    env.ask("app-1", "k", 60)
    env.schedule()
    env.ask("app-2", "k", 40)
    env.schedule()
    env.ask("app-1", "k2", 10)
    env.ask("app-2", "k2", 10)
    env.add_node("node-2", 10)
    assert env.schedule() == 1
    assert env.shim.allocations[-1].application_id == "app-2"


def test_predicates_told_whether_it_is_an_allocation_or_a_reservation() -> None:
    seen: list[tuple[str, str, bool]] = []

    def predicates(args: si.PredicatesArgs) -> bool:
        seen.append((args.allocation_key, args.node_id, args.allocate))
        return True

    env = Env(predicates=predicates)
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "small", 60)
    env.schedule()
    assert ("small", "node-1", True) in seen
    seen.clear()
    env.ask("app-1", "big", 50)
    env.wait_to_reserve()
    assert seen[-1] == ("big", "node-1", False)
    assert env.node("node-1")["reserved"] == [
        {"application_id": "app-1", "allocation_key": "big"}]


def test_an_ask_reserves_only_once_it_has_waited_the_reservation_delay() -> None:
    """YuniKorn's ``tryNodes`` (``objects/application.go``; its tests set the delay with
    ``SetReservationDelay``, ``partition_test.go`` ``TestRequiredNodeReservation``): an
    ask that fits no node's free room reserves only when it is older than the delay,
    counted from its arrival; an ask re-sent changed is a new ask and waits again."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 60)
    assert env.schedule() == 1
    env.ask("app-1", "big", 50)
    assert env.advance(1.9) == 0
    assert env.node("node-1")["reserved"] == []
    assert env.advance(0.1) == 0
    assert env.node("node-1")["reserved"] == [
        {"application_id": "app-1", "allocation_key": "big"}]
    env.ask("app-1", "big", 45)                    # changed: a new ask
    assert env.schedule() == 0
    assert env.node("node-1")["reserved"] == []
    assert env.wait_to_reserve() == 0
    assert env.node("node-1")["reserved"] == [
        {"application_id": "app-1", "allocation_key": "big"}]


def test_a_zero_reservation_delay_reserves_at_once_and_a_negative_one_is_refused() -> None:
    env = Env()
    env.api = Scheduler(clock=env.clock, reservation_delay=0.0)
    env.register()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 60)
    env.ask("app-1", "big", 50)
    assert env.schedule() == 1
    assert env.node("node-1")["reserved"] == [
        {"application_id": "app-1", "allocation_key": "big"}]
    with pytest.raises(ValueError, match="reservation_delay"):
        Scheduler(reservation_delay=-1.0)


# ------------------------------------------------------- application backoff


def backoff_env(props: str, asks: int = 3) -> Env:
    """``partition_test.go`` TestApplicationBackoff: two nodes of 10, an application whose
    asks of 15 fit neither, in a leaf with the backoff properties ``props``."""
    env = Env(config(f"""
- name: p
  properties: {{{props}}}
  queues:
    - name: a
"""))
    env.add_node("node-1", 10)
    env.add_node("node-2", 10)
    env.add_app("app-1", "root.p.a")
    for i in range(asks):
        env.ask("app-1", f"alloc-{i + 1}", 15)
    assert env.schedule() == 0
    env.add_node("node-3", 20)
    return env


def test_application_backs_off_after_its_unschedulable_asks() -> None:
    """TestApplicationBackoff: with ``application.unschedasks.backoff: 2`` (set on the parent:
    inherited, TestQueueBackoffProperties) two asks found no node, so when the third is
    reached the application is skipped for the default 30 s: a node with room that joins
    meanwhile is not used before then."""
    env = backoff_env('application.unschedasks.backoff: "2"')
    assert env.schedule() == 0
    assert env.advance(29.0) == 0
    assert env.advance(1.0) == 1


def test_backoff_delay_and_unreadable_settings() -> None:
    """TestQueueBackoffProperties: ``application.unschedasks.backoff.delay`` sets how long
    (a Go duration); a threshold that is not a decimal unsigned integer turns backoff off."""
    env = backoff_env('application.unschedasks.backoff: "2", '
                      'application.unschedasks.backoff.delay: "5s"')
    assert env.schedule() == 0
    assert env.advance(5.0) == 1
    assert backoff_env('application.unschedasks.backoff: "-4"').schedule() == 1
    assert backoff_env('application.unschedasks.backoff: "2", '
                       'application.unschedasks.backoff.delay: "xyz"').advance(29.0) == 0


def test_no_backoff_without_a_request_after_the_threshold() -> None:
    """YuniKorn checks the count when it reaches the next request: with two asks and a
    threshold of two, both fail and the application is not held back."""
    env = backoff_env('application.unschedasks.backoff: "2"', asks=2)
    assert env.schedule() == 1
