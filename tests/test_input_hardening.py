"""Bad input gets a reason and changes nothing; a harmless repeat is not refused.

Covered: an empty user, negative timeouts, totals past int64, and an informer resync
that sends a running ask again.
"""

from __future__ import annotations

import pytest
from scenario_helpers import CONFIG, RM, res

from scheduler import ManualClock, Scheduler, si
from scheduler.testing import RecordingShim

INT64_MAX = 2**63 - 1


@pytest.fixture
def env() -> tuple[Scheduler, RecordingShim]:
    api = Scheduler(clock=ManualClock())
    shim = RecordingShim()
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=RM, policy_group="queues", config=CONFIG), shim)
    return api, shim


def _node(node_id: str, **quantities: int) -> si.NodeRequest:
    return si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id=node_id, action=si.NodeAction.CREATE, schedulable_resource=res(**quantities))])


def _app(app_id: str, user: str = "u", timeout: int = 0) -> si.ApplicationRequest:
    return si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id=app_id, queue_name="root.a", ugi=si.UserGroupInformation(user=user),
        execution_timeout_milli_seconds=timeout)])


def _ask(key: str, memory: int = 10, repeats: int = 1, timeout: int = 0,
         priority: int = 0) -> si.AllocationAsk:
    return si.AllocationAsk(allocation_key=key, application_id="app",
                            resource_ask=res(memory=memory), max_allocations=repeats,
                            execution_timeout_milli_seconds=timeout, priority=priority)


@pytest.mark.parametrize("user", ["", "   "])
def test_an_application_with_an_empty_user_is_rejected(
        env: tuple[Scheduler, RecordingShim], user: str) -> None:
    api, shim = env
    api.update_application(_app("app", user=user))
    rejected = shim.rejected_apps
    assert [r.application_id for r in rejected] == ["app"]
    assert "empty user" in rejected[0].reason
    assert not shim.accepted_apps


def test_a_negative_application_timeout_is_rejected(env: tuple[Scheduler, RecordingShim]) -> None:
    api, shim = env
    api.update_application(_app("app", timeout=-1))
    assert [r.application_id for r in shim.rejected_apps] == ["app"]
    assert "negative" in shim.rejected_apps[0].reason


def test_a_negative_ask_timeout_is_rejected_and_changes_nothing(
        env: tuple[Scheduler, RecordingShim]) -> None:
    api, shim = env
    api.update_node(_node("n", memory=100))
    api.update_application(_app("app"))
    before = api.state_dump()
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", timeout=-5)]))
    assert [(r.allocation_key, "negative" in r.reason) for r in shim.rejected_asks] == \
        [("k", True)]
    assert api.state_dump() == before


def test_a_node_that_would_take_the_partition_past_int64_is_rejected(
        env: tuple[Scheduler, RecordingShim]) -> None:
    api, shim = env
    api.update_node(_node("big", memory=INT64_MAX - 10))
    before = api.state_dump()
    api.update_node(_node("more", memory=11))
    assert [(r.node_id, "int64" in r.reason) for r in shim.rejected_nodes] == [("more", True)]
    assert api.state_dump() == before
    api.update_node(_node("fits", memory=10))
    assert shim.accepted_nodes == ["big", "fits"]
    totals = [n["capacity"].get("memory", 0) for p in api.state_dump()["partitions"]
              for n in p["nodes"]]
    assert sum(totals) == INT64_MAX
    # An UPDATE that would grow past the limit is refused too and changes nothing.
    before = api.state_dump()
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id="fits", action=si.NodeAction.UPDATE, schedulable_resource=res(memory=11))]))
    assert shim.rejected_nodes[-1].node_id == "fits"
    assert api.state_dump() == before


def test_recovered_allocations_that_would_pass_int64_usage_reject_their_node(
        env: tuple[Scheduler, RecordingShim]) -> None:
    """A node registered with existing allocations (recovery) is all or nothing: when
    their sizes would take the partition's usage past int64, the node is rejected with
    the index of the allocation and nothing is recovered."""
    api, shim = env
    api.update_application(_app("app"))

    def node(node_id: str, *allocs: tuple[str, int]) -> si.NodeRequest:
        return si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
            node_id=node_id, action=si.NodeAction.CREATE,
            schedulable_resource=res(memory=INT64_MAX // 2),
            existing_allocations=[si.Allocation(
                allocation_key=uuid, uuid=uuid, application_id="app", node_id=node_id,
                resource_per_alloc=res(memory=memory)) for uuid, memory in allocs])])

    before = api.state_dump()
    api.update_node(node("n1", ("a", INT64_MAX - 5), ("b", 6)))
    assert [(r.node_id, "existingAllocations[1]" in r.reason and "int64" in r.reason)
            for r in shim.rejected_nodes] == [("n1", True)]
    assert api.state_dump() == before
    api.update_node(node("n1", ("a", INT64_MAX - 5)))
    api.update_node(node("n2", ("c", 6)))
    assert shim.accepted_nodes == ["n1"]
    assert [r.node_id for r in shim.rejected_nodes] == ["n1", "n2"]
    assert "existingAllocations[0]" in shim.rejected_nodes[1].reason
    api.update_node(node("n3", ("d", 5)))
    assert shim.accepted_nodes == ["n1", "n3"]
    root = next(q for q in api.state_dump()["partitions"][0]["queues"] if q["path"] == "root")
    assert root["allocated"] == {"memory": INT64_MAX}


def test_an_ask_whose_repeats_would_pass_int64_pending_is_rejected(
        env: tuple[Scheduler, RecordingShim]) -> None:
    api, shim = env
    api.update_application(_app("app"))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[
        _ask("k", memory=2**62, repeats=2)]))
    assert [r.allocation_key for r in shim.rejected_asks] == ["k"]
    assert "int64" in shim.rejected_asks[0].reason
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[
        _ask("k", memory=2**62, repeats=1)]))
    assert len(shim.rejected_asks) == 1


def test_an_unchanged_resend_of_a_running_ask_is_a_no_op(
        env: tuple[Scheduler, RecordingShim]) -> None:
    """An informer resync re-sends what runs; rejecting it would make a shim kill the pod."""
    api, shim = env
    api.update_node(_node("n", memory=100))
    api.update_application(_app("app"))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=2,
                                                                    priority=3)]))
    api.schedule()
    assert len(shim.allocations) == 2
    before = api.state_dump()
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=2,
                                                                    priority=3)]))
    assert not shim.rejected_asks
    assert api.state_dump() == before
    api.schedule()
    assert len(shim.allocations) == 2
    # A changed ask keeps today's rules: fewer repeats than already run is refused.
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=2,
                                                                    priority=4)]))
    assert [r.allocation_key for r in shim.rejected_asks] == ["k"]


def test_a_resized_resend_of_a_running_ask_is_refused_and_changes_nothing(
        env: tuple[Scheduler, RecordingShim]) -> None:
    """A pod resized in place comes back as the same key with another size: it asks for no
    repeat beyond those running, so the update is refused and the running ask kept."""
    api, shim = env
    api.update_node(_node("n", memory=100))
    api.update_application(_app("app"))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=2)]))
    api.schedule()
    before = api.state_dump()
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", memory=15,
                                                                    repeats=2)]))
    assert [r.allocation_key for r in shim.rejected_asks] == ["k"]
    assert "not above" in shim.rejected_asks[0].reason
    assert api.state_dump() == before


def test_an_update_below_the_repeats_allocated_is_refused_and_the_old_ask_kept(
        env: tuple[Scheduler, RecordingShim]) -> None:
    """Of three repeats two run (the node has room for two): an update to two repeats asks
    for none beyond them, so it is refused and the third stays pending."""
    api, shim = env
    api.update_node(_node("n", memory=20))
    api.update_application(_app("app"))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=3)]))
    api.schedule()
    assert len(shim.allocations) == 2
    before = api.state_dump()
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[_ask("k", repeats=2)]))
    assert [r.allocation_key for r in shim.rejected_asks] == ["k"]
    assert api.state_dump() == before
    app = before["partitions"][0]["applications"][0]
    assert app["pending"] == {"memory": 10}
