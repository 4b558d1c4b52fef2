"""Scenarios: lifecycle transitions and rejections reported through ``send_event``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from scenario_helpers import NA, TT, Env, config

from scheduler import Scheduler, si

ET = si.EventRecordType


def events_about(env: Env, kind: si.EventRecordType, object_id: str) -> list[si.EventRecord]:
    return [e for e in env.shim.events if e.type == kind and e.object_id == object_id]


def test_events_are_event_records() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    assert env.shim.events
    assert all(isinstance(e, si.EventRecord) for e in env.shim.events)
    assert all(e.message for e in env.shim.events)


def test_application_transitions_reported() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    env.advance(30)
    messages = [e.message for e in events_about(env, ET.APP, "app-1")]
    for state in ("Accepted", "Running", "Completing", "Completed"):
        assert any(state in m for m in messages), (state, messages)


def test_application_added_event() -> None:
    env = Env()
    env.add_app("app-1")
    [event] = events_about(env, ET.APP, "app-1")
    assert event.event_change_type == si.EventChangeType.ADD


def test_node_transitions_reported() -> None:
    env = Env()
    env.add_node("node-1", 100)
    assert events_about(env, ET.NODE, "node-1")
    env.shim.clear()
    env.node_action("node-1", NA.DRAIN_NODE)
    assert any("Draining" in e.message for e in events_about(env, ET.NODE, "node-1"))
    env.shim.clear()
    env.node_action("node-1", NA.DECOMISSION)
    assert any("Removed" in e.message for e in events_about(env, ET.NODE, "node-1"))


def test_allocation_reported_as_request_event() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.shim.clear()
    env.schedule()
    uuid = env.uuids()[0]
    [event] = [e for e in env.shim.events if e.object_id == uuid]
    assert event.type == ET.REQUEST
    assert event.reference_id == "app-1"


def test_queue_draining_reported() -> None:
    env = Env()
    env.add_app("app-1", "root.b")
    env.shim.clear()
    env.update_config(config("- name: a"))
    assert any("Draining" in e.message for e in events_about(env, ET.QUEUE, "root.b"))


def test_event_timestamps_follow_the_clock() -> None:
    env = Env()
    env.clock.advance(7)
    env.add_app("app-1")
    [event] = events_about(env, ET.APP, "app-1")
    assert event.timestamp_nano == 7 * 10**9


REJECTIONS: dict[str, tuple[Callable[[Env], None], si.EventRecordType, str]] = {
    "app-unknown-queue": (lambda env: env.add_app("app-x", "root.nope"), ET.APP, "app-x"),
    "app-duplicate": (lambda env: env.add_app("app-1"), ET.APP, "app-1"),
    "app-unknown-partition": (
        lambda env: env.add_app("app-x", partition="nopart"), ET.APP, "app-x"),
    "ask-unknown-app": (lambda env: env.ask("ghost", "kx", 10), ET.REQUEST, "kx"),
    "ask-zero": (lambda env: env.ask("app-1", "kx", 0), ET.REQUEST, "kx"),
    "ask-unknown-partition": (
        lambda env: env.ask("app-1", "kx", 10, partition="nopart"), ET.REQUEST, "kx"),
    "node-duplicate": (lambda env: env.add_node("node-1", 10), ET.NODE, "node-1"),
    "node-unknown": (
        lambda env: env.node_action("ghost", NA.DRAIN_NODE), ET.NODE, "ghost"),
    "node-drain-to-schedulable": (
        lambda env: env.node_action("node-1", NA.DRAIN_TO_SCHEDULABLE), ET.NODE, "node-1"),
}


@pytest.mark.parametrize("case", list(REJECTIONS))
def test_rejection_is_also_an_event(case: str) -> None:
    send, kind, object_id = REJECTIONS[case]
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.shim.clear()
    send(env)
    rejections = env.shim.rejected_apps + env.shim.rejected_asks + env.shim.rejected_nodes
    assert len(rejections) == 1
    assert events_about(env, kind, object_id), [
        (e.type, e.object_id, e.message) for e in env.shim.events]


def gang_life(emit_events: bool) -> Env:
    """A gang's whole life, with rejections and ignored requests on the way."""
    env = Env()
    env.api = Scheduler(clock=env.clock, emit_events=emit_events)
    env.register()
    env.add_node("node-1", 100)
    env.api.update_application(si.ApplicationRequest(rm_id=env.rm, new=[
        si.AddApplicationRequest(application_id="g", queue_name="root.a",
                                 ugi=si.UserGroupInformation(user="alice"),
                                 placeholder_ask=si.Resource.of(memory=40),
                                 gang_scheduling_style="Hard")]))
    env.add_app("x", "root.nope")                                   # rejected
    env.ask("ghost", "k", 10)                                       # rejected
    env.ask("g", "ph", 20, repeats=2, placeholder=True, task_group="tg")
    env.schedule()
    env.ask("g", "real", 20, task_group="tg")
    env.schedule()
    for r in list(env.shim.released):
        env.release("g", r.uuid, r.termination_type)                 # replacement confirmed
    env.release("g", "no-such-uuid", TT.TIMEOUT)                    # ignored
    env.node_action("node-1", NA.DRAIN_NODE)
    env.node_action("node-1", NA.DRAIN_TO_SCHEDULABLE)
    env.advance(15 * 60)                                            # leftover placeholder goes
    for r in env.shim.released[1:]:
        env.release("g", r.uuid, r.termination_type)
    env.release("g", env.shim.allocations[-1].uuid)                 # the real pod ends
    env.advance(30)
    env.update_config(config("- name: b"))
    env.advance(4 * 24 * 3600)
    return env


def test_no_events_when_emit_events_is_off() -> None:
    quiet, loud = gang_life(emit_events=False), gang_life(emit_events=True)
    assert loud.shim.events
    assert quiet.shim.of("send_event") == []
    assert quiet.shim.messages == [m for m in loud.shim.messages if m[0] != "send_event"]
