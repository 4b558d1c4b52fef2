"""A shim that misbehaves harms no one: not the core, not itself later, not another RM.

A callback that lacks a method is refused at registration; a callback that
raises costs only that message; the wrong argument type is refused with the
type the call takes. In every case nothing changes.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scenario_helpers import CONFIG, res

from scheduler import ManualClock, Scheduler, si
from scheduler.testing import RecordingShim


def _register(api: Scheduler, rm: str, callback: Any) -> None:
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=rm, policy_group="queues", config=CONFIG), callback)


def _work(api: Scheduler, rm: str) -> None:
    api.update_node(si.NodeRequest(rm_id=rm, nodes=[si.NodeInfo(
        node_id=f"{rm}-n", action=si.NodeAction.CREATE, schedulable_resource=res(memory=100))]))
    api.update_application(si.ApplicationRequest(rm_id=rm, new=[si.AddApplicationRequest(
        application_id=f"{rm}-app", queue_name="root.a", ugi=si.UserGroupInformation(user="u"))]))
    api.update_allocation(si.AllocationRequest(rm_id=rm, asks=[si.AllocationAsk(
        allocation_key="k", application_id=f"{rm}-app", resource_ask=res(memory=10),
        max_allocations=2)]))


class _NoSchedulingState:
    """A shim written from an old guide: it never implemented scheduling states."""

    def update_allocation(self, response: si.AllocationResponse) -> None: ...
    def update_application(self, response: si.ApplicationResponse) -> None: ...
    def update_node(self, response: si.NodeResponse) -> None: ...
    def send_event(self, events: list[si.EventRecord]) -> None: ...


def test_a_callback_without_a_method_the_core_calls_is_refused_at_registration() -> None:
    api = Scheduler(clock=ManualClock())
    with pytest.raises(TypeError) as info:
        _register(api, "rm", _NoSchedulingState())
    assert "update_container_scheduling_state" in str(info.value)
    assert api.state_dump() == {"rms": [], "partitions": []}
    shim = RecordingShim()
    _register(api, "rm", shim)  # the RM can register once it brings a whole callback
    _work(api, "rm")
    api.schedule()
    assert len(shim.allocations) == 2


def test_a_callback_whose_predicates_is_not_callable_is_refused() -> None:
    shim = RecordingShim()
    shim.predicates = "yes"  # type: ignore[assignment]
    with pytest.raises(TypeError, match="predicates"):
        _register(Scheduler(clock=ManualClock()), "rm", shim)


class _Raising(RecordingShim):
    def update_allocation(self, response: si.AllocationResponse) -> None:
        super().update_allocation(response)
        raise RuntimeError("the shim's own bug")


def test_a_raising_callback_costs_only_that_message(caplog: pytest.LogCaptureFixture) -> None:
    api = Scheduler(clock=ManualClock())
    bad, good = _Raising(), RecordingShim()
    _register(api, "bad", bad)
    _register(api, "good", good)
    _work(api, "bad")
    _work(api, "good")
    with caplog.at_level(logging.ERROR, logger="yunikorn_fsm"):
        assert api.schedule() == 4
    failures = [r.getMessage() for r in caplog.records if "raised" in r.getMessage()]
    # Logged once per message that raised, naming the RM and the method.
    assert len(failures) == len(bad.of("update_allocation")) >= 1
    assert all("resource manager bad" in f and "update_allocation" in f for f in failures)
    # The rest of the batch reached both RMs, and the other RM lost nothing.
    assert len(bad.allocations) == 2 and len(good.allocations) == 2
    assert bad.app_updates and bad.events and good.app_updates and good.events
    # Later calls work, for both.
    api.update_allocation(si.AllocationRequest(rm_id="good", asks=[si.AllocationAsk(
        allocation_key="k2", application_id="good-app", resource_ask=res(memory=10))]))
    assert api.schedule() == 1
    assert len(good.allocations) == 3


@pytest.mark.parametrize("call, argument, wanted", [
    ("update_allocation", {"rmID": "rm"}, "si.AllocationRequest"),
    ("update_allocation", None, "si.AllocationRequest"),
    ("update_application", si.NodeRequest(rm_id="rm"), "si.ApplicationRequest"),
    ("update_node", si.AllocationRequest(rm_id="rm"), "si.NodeRequest"),
    ("update_configuration", "partitions: []", "si.UpdateConfigurationRequest"),
    ("connection_lost", None, "an rm_id string"),
    ("unregister_resource_manager", 7, "an rm_id string"),
])
def test_the_wrong_argument_is_refused_naming_what_the_call_takes(
        call: str, argument: Any, wanted: str) -> None:
    api = Scheduler(clock=ManualClock())
    shim = RecordingShim()
    _register(api, "rm", shim)
    _work(api, "rm")
    before = api.state_dump()
    with pytest.raises(TypeError) as info:
        getattr(api, call)(argument)
    assert wanted in str(info.value) and call in str(info.value)
    assert api.state_dump() == before
    api.schedule()
    assert len(shim.allocations) == 2


def test_a_registration_with_the_wrong_request_type_changes_nothing() -> None:
    api = Scheduler(clock=ManualClock())
    with pytest.raises(TypeError, match=r"si\.RegisterResourceManagerRequest"):
        api.register_resource_manager({"rmID": "rm"}, RecordingShim())  # type: ignore[arg-type]
    assert api.state_dump() == {"rms": [], "partitions": []}
