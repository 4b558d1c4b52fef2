"""A scheduler can be copied (``pickle``, ``copy.deepcopy``): the state, not the locks or thread.

The explorer restores states this way. A copy must behave exactly like the
original from then on, and the two must not share anything that changes.
"""

from __future__ import annotations

import copy
import pickle

import pytest
from scenario_helpers import CONFIG, RM, res

from scheduler import Scheduler, si
from scheduler.clock import ManualClock
from scheduler.testing import RecordingShim


def _world() -> tuple[Scheduler, ManualClock, RecordingShim]:
    clock = ManualClock(start=100.0)
    api = Scheduler(clock=clock)
    shim = RecordingShim()
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=RM, policy_group="queues", config=CONFIG), shim)
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id="n1", action=si.NodeAction.CREATE, schedulable_resource=res(memory=100))]))
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id="app", queue_name="root.a", partition_name="default",
        ugi=si.UserGroupInformation(user="u"))]))
    return api, clock, shim


def _ask(api: Scheduler, key: str) -> None:
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key=key, application_id="app", partition_name="default",
        resource_ask=res(memory=10), max_allocations=2)]))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copy_goes_on_exactly_like_the_original(how: str) -> None:
    api, clock, shim = _world()
    _ask(api, "k1")
    api.schedule()
    bundle = (api, clock, shim)
    twin_api, twin_clock, twin_shim = (pickle.loads(pickle.dumps(bundle)) if how == "pickle"
                                       else copy.deepcopy(bundle))
    assert twin_api.state_dump() == api.state_dump()
    for a, c in ((api, clock), (twin_api, twin_clock)):
        _ask(a, "k2")
        c.advance(5)
        a.schedule()
    assert twin_api.state_dump() == api.state_dump()
    assert len(twin_shim.allocations) == len(shim.allocations) == 4
    assert twin_clock.now() == clock.now() == 105.0


def test_a_copy_shares_nothing_that_changes() -> None:
    api, clock, shim = _world()
    twin_api, twin_clock, _ = pickle.loads(pickle.dumps((api, clock, shim)))
    _ask(twin_api, "k1")
    twin_api.schedule()
    twin_clock.advance(60)
    assert [a["asks"] for p in api.state_dump()["partitions"] for a in p["applications"]] \
        == [[]]
    assert not shim.allocations
    assert clock.now() == 100.0


def test_a_running_scheduler_can_not_be_copied() -> None:
    api, _, _ = _world()
    api.start(interval=0.01)
    try:
        with pytest.raises(RuntimeError, match="background loop"):
            pickle.dumps(api)
    finally:
        api.stop()
    assert pickle.loads(pickle.dumps(api)).state_dump() == api.state_dump()
