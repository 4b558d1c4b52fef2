"""Scenarios: allocation uuids, RM releases, execution timeouts and confirmations."""

from __future__ import annotations

import pytest
from scenario_helpers import TT, Env

from scheduler import si


def script() -> Env:
    """A fixed sequence of calls (two apps, two nodes, repeats, a release, a timeout)."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.add_app("app-2", "root.b")
    env.ask("app-1", "k", 10, repeats=3, timeout_ms=2000)
    env.ask("app-2", "k", 30, repeats=2)
    env.schedule()
    env.release("app-2", env.uuids("app-2")[0])
    env.advance(5)
    env.ask("app-2", "k2", 15)
    env.schedule()
    return env


# ------------------------------------------------------------ determinism


def test_two_identical_runs_give_identical_uuids() -> None:
    first, second = script(), script()
    assert first.uuids() == second.uuids()
    assert len(first.uuids()) == 6
    assert len(set(first.uuids())) == 6


def test_two_identical_runs_give_identical_traffic_and_dumps() -> None:
    first, second = script(), script()
    assert repr(first.shim.messages) == repr(second.shim.messages)
    assert first.api.state_dump() == second.api.state_dump()


def test_allocation_message_matches_dump() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    [msg] = env.shim.allocations
    [alloc] = env.app("app-1")["allocations"]
    assert (msg.uuid, msg.allocation_key, msg.node_id, msg.application_id) == (
        alloc["uuid"], "k", "node-1", "app-1")
    assert msg.resource_per_alloc.as_dict() == alloc["resource"] == {"memory": 10}
    assert (alloc["state"], alloc["released"]) == ("Allocated", False)


# ------------------------------------------------------------- RM releases


def two_allocs() -> Env:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    env.ask("app-1", "j", 20)
    assert env.schedule() == 3
    return env


def test_rm_release_confirmed_with_same_type() -> None:
    env = two_allocs()
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid)
    [rel] = env.shim.released
    assert (rel.uuid, rel.application_id, rel.termination_type) == (
        uuid, "app-1", TT.STOPPED_BY_RM)
    assert uuid not in [a["uuid"] for a in env.app("app-1")["allocations"]]
    assert env.app("app-1")["allocated"] == {"memory": 30}
    assert env.queue("root.a")["allocated"] == {"memory": 30}
    assert env.node("node-1")["allocated"] == {"memory": 30}
    assert env.node("node-1")["available"] == {"memory": 70}


def test_release_with_empty_uuid_releases_all_of_the_application() -> None:
    env = two_allocs()
    uuids = env.uuids()
    env.shim.clear()
    env.release("app-1", "")
    assert sorted(r.uuid for r in env.shim.released) == sorted(uuids)
    assert all(r.termination_type == TT.STOPPED_BY_RM for r in env.shim.released)
    assert env.app("app-1")["allocations"] == []
    assert env.app("app-1")["allocated"] == {}
    assert env.queue("root")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {}


def test_release_with_empty_uuid_leaves_other_apps() -> None:
    env = two_allocs()
    env.add_app("app-2")
    env.ask("app-2", "k", 5)
    env.schedule()
    env.release("app-1", "")
    assert len(env.app("app-2")["allocations"]) == 1
    assert env.queue("root.a")["allocated"] == {"memory": 5}


def test_release_twice_second_is_ignored() -> None:
    env = two_allocs()
    uuid = env.uuids()[0]
    env.release("app-1", uuid)
    before = env.dump()
    env.shim.clear()
    env.release("app-1", uuid)
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert any(e.object_id == uuid for e in env.shim.events)


# -------------------------------------------------------- execution timeout


def timed_env() -> Env:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, timeout_ms=5000)
    assert env.schedule() == 1
    return env


def test_execution_timeout_sends_timeout_release() -> None:
    env = timed_env()
    uuid = env.uuids()[0]
    env.advance(4.999)
    assert env.shim.released == []
    env.advance(0.001)
    [rel] = env.shim.released
    assert (rel.uuid, rel.application_id, rel.termination_type) == (uuid, "app-1", TT.TIMEOUT)


def test_timeout_needs_schedule() -> None:
    env = timed_env()
    env.clock.advance(10)
    assert env.shim.released == []
    env.schedule()
    assert [r.termination_type for r in env.shim.released] == [TT.TIMEOUT]


def test_timed_out_allocation_stays_counted_until_confirmed() -> None:
    env = timed_env()
    env.advance(5)
    [alloc] = env.app("app-1")["allocations"]
    assert (alloc["state"], alloc["released"]) == ("Releasing", True)
    assert env.app("app-1")["allocated"] == {"memory": 10}
    assert env.queue("root.a")["allocated"] == {"memory": 10}
    assert env.node("node-1")["allocated"] == {"memory": 10}
    env.advance(60)
    assert env.app("app-1")["allocated"] == {"memory": 10}
    assert len(env.shim.released) == 1  # not sent again


def test_confirmation_removes_allocation_and_is_not_confirmed_back() -> None:
    env = timed_env()
    env.advance(5)
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid, TT.TIMEOUT)
    assert env.shim.released == []
    assert env.app("app-1")["allocations"] == []
    assert env.app("app-1")["allocated"] == {}
    assert env.queue("root.a")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {}


def test_duplicate_confirmation_changes_nothing() -> None:
    env = timed_env()
    env.advance(5)
    uuid = env.uuids()[0]
    env.release("app-1", uuid, TT.TIMEOUT)
    before = env.dump()
    env.shim.clear()
    env.release("app-1", uuid, TT.TIMEOUT)
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert env.shim.events != []


@pytest.mark.parametrize("ttype", [TT.TIMEOUT, TT.PREEMPTED_BY_SCHEDULER,
                                   TT.PLACEHOLDER_REPLACED])
def test_rm_release_with_a_core_type_removes_the_allocation_unanswered(
        ttype: si.TerminationType) -> None:
    """The RM ends an allocation the core never released, with a type only the core
    starts: it goes as with the RM's own release, and nothing is sent back (YuniKorn's
    ``partition.go`` removeAllocation). A ``PLACEHOLDER_REPLACED`` release of an
    allocation with no replacement swaps nothing in."""
    env = two_allocs()
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid, ttype)
    assert env.shim.released == []
    assert env.shim.allocations == []
    left = [a["uuid"] for a in env.app("app-1")["allocations"]]
    assert len(left) == 2 and uuid not in left
    assert env.node("node-1")["allocated"] == {"memory": 30}
    assert env.queue("root.a")["allocated"] == {"memory": 30}
    # The allocation is gone: the same release again names nothing.
    env.release("app-1", uuid, ttype)
    assert env.shim.released == []
    assert any(e.object_id == uuid for e in env.shim.events)


def test_release_with_another_type_than_the_cores_removes_it_unanswered() -> None:
    """The core timed the allocation out; the RM ends it with another type: it goes,
    nothing is sent back, and the shim's later ``TIMEOUT`` names nothing."""
    env = timed_env()
    env.advance(5)
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid, TT.PREEMPTED_BY_SCHEDULER)
    assert env.shim.released == []
    assert env.app("app-1")["allocations"] == []
    assert env.node("node-1")["allocated"] == {}
    assert env.app_state("app-1") == "Completing"
    env.release("app-1", uuid, TT.TIMEOUT)
    assert env.shim.released == []
    assert any(e.object_id == uuid for e in env.shim.events)


def test_app_completes_after_timeout_confirmed() -> None:
    env = timed_env()
    env.advance(5)
    assert env.app_state("app-1") == "Running"
    env.release("app-1", env.uuids()[0], TT.TIMEOUT)
    assert env.app_state("app-1") == "Completing"
    env.advance(30)
    assert env.app_state("app-1") == "Completed"


def test_rm_release_of_timed_out_allocation_removes_it() -> None:
    """The RM may stop a Releasing allocation itself: processed and confirmed STOPPED_BY_RM."""
    env = timed_env()
    env.advance(5)
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid)
    assert [(r.uuid, r.termination_type) for r in env.shim.released] == [
        (uuid, TT.STOPPED_BY_RM)]
    assert env.app("app-1")["allocations"] == []


def test_released_allocation_timer_does_not_fire() -> None:
    env = timed_env()
    env.release("app-1", env.uuids()[0])
    env.shim.clear()
    env.advance(10)
    assert env.shim.released == []


# ------------------------------------------------------ unknown objects


def test_release_of_unknown_uuid_ignored_with_event() -> None:
    env = two_allocs()
    before = env.dump()
    env.shim.clear()
    env.release("app-1", "no-such-uuid")
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert [e.object_id for e in env.shim.events] == ["no-such-uuid"]


def test_release_for_unknown_application_ignored_with_event() -> None:
    """An allocation uuid of app-1 named with an unknown application id is not app-1's."""
    env = two_allocs()
    uuid = env.uuids()[0]
    before = env.dump()
    env.shim.clear()
    env.release("ghost", "")
    env.release("ghost", uuid)
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert len(env.shim.events) == 2


def test_uuid_under_another_application_is_ignored() -> None:
    """A uuid of app-1 under app-2's id: ignored with an event (the uuid alone does not
    name the allocation)."""
    env = two_allocs()
    env.add_app("app-2")
    uuid = env.uuids()[0]
    before = env.dump()
    env.shim.clear()
    env.release("app-2", uuid)
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert len(env.shim.events) == 1


def test_release_without_a_type_is_the_rms_own() -> None:
    """A release with no termination type is the RM's: the allocation goes and is
    confirmed ``STOPPED_BY_RM``, as YuniKorn answers it."""
    env = two_allocs()
    uuid = env.uuids()[0]
    env.shim.clear()
    env.release("app-1", uuid, TT.UNKNOWN_TERMINATION_TYPE)
    assert [(r.uuid, r.termination_type) for r in env.shim.released] == [
        (uuid, TT.STOPPED_BY_RM)]
    assert uuid not in [a["uuid"] for a in env.app("app-1")["allocations"]]
    assert env.node("node-1")["allocated"] == {"memory": 30}


def test_release_of_a_core_type_without_a_uuid_removes_all_unanswered() -> None:
    """Without a uuid a release means every allocation of the application, whatever its
    type: one the core timed out (this is its confirmation) and one it did not (ended by
    the RM) both go, and nothing is sent back."""
    env = timed_env()
    env.ask("app-1", "j", 20)
    assert env.schedule() == 1
    env.advance(5)
    assert [a["state"] for a in env.app("app-1")["allocations"]] == ["Releasing", "Allocated"]
    env.add_app("app-2", "root.b")
    env.ask("app-2", "k", 10)
    assert env.schedule() == 1
    env.shim.clear()
    env.release("app-1", "", TT.TIMEOUT)
    assert env.shim.released == []
    assert env.app("app-1")["allocations"] == []
    assert env.queue("root.a")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {"memory": 10}
    assert len(env.app("app-2")["allocations"]) == 1
    assert env.app_state("app-1") == "Completing"


def test_release_for_unknown_partition_ignored_with_event() -> None:
    env = two_allocs()
    uuid = env.uuids()[0]
    before = env.dump()
    env.shim.clear()
    env.release("app-1", uuid, partition="nopart")
    assert env.shim.released == []
    assert env.api.state_dump() == before
    assert len(env.shim.events) == 1


def test_ask_release_of_unknown_ask_ignored_with_event() -> None:
    env = two_allocs()
    env.ask("app-1", "pending", 500)
    before = env.dump()
    env.shim.clear()
    env.release_ask("app-1", "no-such-key")
    env.release_ask("ghost", "k")
    assert env.shim.released_asks == []
    assert env.api.state_dump() == before
    assert len(env.shim.events) == 2
