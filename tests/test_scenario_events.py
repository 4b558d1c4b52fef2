"""Scenarios: lifecycle transitions and rejections reported through ``send_event``."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from scenario_helpers import NA, TT, Env, config, run_to_completion

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


def test_event_records_are_the_messages_validation_builds() -> None:
    """The outbox builds records without pydantic's checks (``construct_exact``): each must
    equal the record validated from its own dump, every field set, ask events included."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 10, repeats=2)
    env.schedule()
    kinds = {e.type for e in env.shim.events}
    assert {ET.APP, ET.NODE, ET.REQUEST} <= kinds
    for e in env.shim.events:
        assert si.EventRecord.model_validate(e.model_dump()) == e
        assert e.model_fields_set == set(si.EventRecord.model_fields)
        if e.event_change_type == si.EventChangeType.SET:  # a transition: "(A -> B)" last
            assert re.search(r": .+ \(\w+ -> \w+\)$", e.message), e.message


def test_event_records_of_one_call_stay_independent() -> None:
    """Records built in one call share their (full) ``model_fields_set``: assigning to or
    copying one record must leave every other record as it was."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 10, repeats=3)
    env.schedule()
    first, *others = env.shim.events
    before = [e.model_dump() for e in others]
    first.message = "changed by the shim"
    copied = first.model_copy(update={"object_id": "other"})
    assert copied.object_id == "other" and first.object_id != "other"
    assert [e.model_dump() for e in others] == before
    full = set(si.EventRecord.model_fields)
    assert all(e.model_fields_set == full for e in [first, copied, *others])


def test_application_transitions_reported() -> None:
    env = Env()
    run_to_completion(env)
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


def add_hard_gang(env: Env, placeholder_memory: int) -> None:
    """Application ``g`` in ``root.a``: a Hard gang of ``placeholder_memory`` in total."""
    env.api.update_application(si.ApplicationRequest(rm_id=env.rm, new=[
        si.AddApplicationRequest(application_id="g", queue_name="root.a",
                                 ugi=si.UserGroupInformation(user="alice"),
                                 placeholder_ask=si.Resource.of(memory=placeholder_memory),
                                 gang_scheduling_style="Hard")]))


def gang_life(emit_events: bool) -> Env:
    """A gang's whole life, with rejections and ignored requests on the way."""
    env = Env()
    env.api = Scheduler(clock=env.clock, emit_events=emit_events)
    env.register()
    env.add_node("node-1", 100)
    add_hard_gang(env, 40)
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


# -- human-readable texts -----------------------------------------------------------


def test_every_update_and_event_of_a_gang_life_names_its_object_and_says_why() -> None:
    env = gang_life(emit_events=True)
    updates = env.shim.app_updates
    assert [u.state for u in updates if u.application_id == "g"] == [
        "Accepted", "Running", "Completing", "Completed", "Expired"]
    for u in updates:
        head, _, why = u.message.partition(": ")
        assert head == f"application {u.application_id} {u.state.lower()}" or \
            head.startswith(f"application {u.application_id} {u.state.lower()} into "), u
        assert why.strip(), u
    for e in env.shim.events:
        assert e.object_id in e.message and e.message[0].islower(), e
    assert "application g accepted into root.a: its first ask arrived" in [
        u.message for u in updates]


def test_application_updates_say_why_for_a_gang_timeout() -> None:
    env = Env()
    env.add_node("node-1", 100)
    add_hard_gang(env, 300)
    env.ask("g", "ph", 100, repeats=3, placeholder=True, task_group="tg")
    env.schedule()
    env.shim.clear()
    env.advance(15 * 60)
    [failing] = env.shim.app_updates
    assert failing.message == ("application g failing: the placeholder timeout passed (gang "
                               "style Hard); everything it holds is being released")


def test_partition_events_say_partition() -> None:
    two = config("- name: a") + """  - name: gpu
    queues:
      - name: root
        submitacl: "*"
"""
    env = Env(two)
    env.shim.clear()
    env.update_config(config("- name: a"))
    events = [e for e in env.shim.events if e.object_id == "gpu"]
    assert {e.type for e in events} == {ET.QUEUE}          # the spec has no partition type
    assert [e.message for e in events] == [
        "partition gpu draining: it was removed from the configuration (Active -> Draining)",
        "partition gpu stopped: it is empty after its removal from the configuration "
        "(Draining -> Stopped)"]
    assert all(e.message.startswith("queue ") for e in env.shim.events if e.object_id != "gpu")


def failed_reason(env: Env, key: str) -> str:
    [state] = [s for s in env.shim.scheduling_states if s.allocation_key == key]
    assert state.state == si.SchedulingState.FAILED
    return state.reason


def test_failed_names_the_node_reserved_for_another_ask() -> None:
    env = Env()
    env.add_node("node-1", 100)
    for app in ("app-1", "app-2", "app-3"):
        env.add_app(app)
    env.ask("app-1", "k1", 60)
    env.schedule()
    env.ask("app-2", "k2", 50)
    env.ask("app-3", "k3", 50)
    env.wait_to_reserve()
    assert failed_reason(env, "k3") == (
        "the only node that fits (node-1) is reserved for another ask (k2 of application app-2)")


def test_failed_names_a_too_large_ask_and_an_empty_partition() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k1", 10)
    env.schedule()
    assert failed_reason(env, "k1") == "partition default has no schedulable node"
    env.add_node("node-1", 100)
    env.ask("app-1", "big", 500)
    env.schedule()
    assert failed_reason(env, "big") == (
        "ask big needs {memory:500}, more than any of the 1 schedulable nodes can hold")


def test_failed_names_the_predicates() -> None:
    env = Env(predicates=lambda args: False)
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 10)
    env.wait_to_reserve()
    assert failed_reason(env, "k1") == "the shim's predicates refused every node that fits (node-1)"
