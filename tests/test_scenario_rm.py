"""Scenarios: the resource manager lifecycle (register, re-register, pause, stop)."""

from __future__ import annotations

import pytest
from scenario_helpers import CONFIG, RM, Env

from scheduler import Scheduler, si
from scheduler.clock import ManualClock
from scheduler.errors import ConfigError, UnknownResourceManager
from scheduler.testing import RecordingShim


def busy_env() -> Env:
    """An RM with a node, an application, an allocation and a pending ask."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 30)
    assert env.schedule() == 1
    env.ask("app-1", "k2", 500)
    return env


def test_register_moves_rm_to_running_and_creates_partition() -> None:
    env = Env()
    dump = env.api.state_dump()
    assert dump["rms"] == [{"rm_id": RM, "state": "Running"}]
    assert [(p["name"], p["rm_id"], p["state"]) for p in dump["partitions"]] == [
        ("default", RM, "Active")]
    assert {q["path"] for q in dump["partitions"][0]["queues"]} == {
        "root", "root.a", "root.b"}


def test_register_returns_response() -> None:
    api = Scheduler(clock=ManualClock())
    resp = api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=RM, config=CONFIG), RecordingShim())
    assert isinstance(resp, si.RegisterResourceManagerResponse)


def test_reregister_removes_everything_the_rm_owned() -> None:
    env = busy_env()
    assert env.app("app-1") is not None
    env.register(CONFIG)
    dump = env.api.state_dump()
    assert dump["rms"] == [{"rm_id": RM, "state": "Running"}]
    part = env.partition()
    assert part["applications"] == []
    assert part["nodes"] == []
    for q in part["queues"]:
        assert q["allocated"] == {} and q["pending"] == {}, q


def test_resync_after_reregister_schedules_again() -> None:
    env = busy_env()
    env.register(CONFIG)
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 30)
    assert env.schedule() == 1
    app = env.app("app-1")
    assert app is not None and app["allocated"] == {"memory": 30}
    assert env.queue("root.a")["allocated"] == {"memory": 30}
    assert env.node("node-1")["allocated"] == {"memory": 30}


def test_reregister_with_new_config_replaces_queues() -> None:
    env = busy_env()
    env.register(CONFIG.replace("name: b", "name: c"))
    assert {q["path"] for q in env.partition()["queues"]} == {"root", "root.a", "root.c"}


def test_connection_lost_pauses_rm() -> None:
    env = Env()
    env.api.connection_lost(RM)
    assert env.api.state_dump()["rms"] == [{"rm_id": RM, "state": "Paused"}]


def test_paused_rm_application_request_rejected_and_nothing_changes() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    before = env.dump()
    env.shim.clear()
    env.add_app("app-2")
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-2"]
    assert env.shim.rejected_apps[0].reason
    assert env.shim.accepted_apps == []
    assert env.api.state_dump() == before


def test_paused_rm_node_request_rejected_and_nothing_changes() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    before = env.dump()
    env.shim.clear()
    env.add_node("node-2", 100)
    assert [r.node_id for r in env.shim.rejected_nodes] == ["node-2"]
    assert env.shim.rejected_nodes[0].reason
    assert env.shim.accepted_nodes == []
    assert env.api.state_dump() == before


def test_paused_rm_ask_rejected_and_nothing_changes() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    before = env.dump()
    env.shim.clear()
    env.ask("app-1", "k3", 10)
    assert [(r.application_id, r.allocation_key) for r in env.shim.rejected_asks] == [
        ("app-1", "k3")]
    assert env.shim.rejected_asks[0].reason
    assert env.api.state_dump() == before


def test_paused_rm_release_changes_nothing() -> None:
    env = busy_env()
    uuid = env.uuids()[0]
    env.api.connection_lost(RM)
    before = env.dump()
    env.release("app-1", uuid)
    assert env.api.state_dump() == before


def test_a_paused_rms_timers_do_not_fire() -> None:
    """A pod's execution timeout falls due while its RM is paused: nothing is released and
    nothing is sent until the RM registers again (which starts its state afresh)."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 10, timeout_ms=5_000)
    assert env.schedule() == 1
    env.api.connection_lost(RM)
    before = env.dump()
    env.shim.clear()
    env.advance(60)
    assert env.shim.messages == []
    assert env.api.state_dump() == before


def test_paused_rm_can_register_again() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    env.register(CONFIG)
    assert env.api.state_dump()["rms"] == [{"rm_id": RM, "state": "Running"}]
    assert env.partition()["applications"] == []
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 30)
    assert env.schedule() == 1


def test_unregister_stops_rm_and_removes_partitions() -> None:
    env = busy_env()
    env.api.unregister_resource_manager(RM)
    dump = env.api.state_dump()
    assert dump["rms"] == [{"rm_id": RM, "state": "Stopped"}]
    assert dump["partitions"] == []


def test_unregister_of_paused_rm_stops_it() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    env.api.unregister_resource_manager(RM)
    dump = env.api.state_dump()
    assert dump["rms"] == [{"rm_id": RM, "state": "Stopped"}]
    assert dump["partitions"] == []


def test_stopped_rm_requests_are_refused() -> None:
    env = busy_env()
    env.api.unregister_resource_manager(RM)
    before = env.dump()
    env.shim.clear()
    env.add_app("app-9")
    env.add_node("node-9", 10)
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-9"]
    assert [r.node_id for r in env.shim.rejected_nodes] == ["node-9"]
    assert env.api.state_dump() == before


def test_other_rm_unaffected_by_unregister() -> None:
    env = busy_env()
    other = RecordingShim()
    env.api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id="rm-2", config=CONFIG), other)
    env.api.unregister_resource_manager("rm-2")
    dump = env.api.state_dump()
    assert {r["rm_id"]: r["state"] for r in dump["rms"]} == {RM: "Running", "rm-2": "Stopped"}
    assert [p["rm_id"] for p in dump["partitions"]] == [RM]
    assert env.app("app-1") is not None


def test_unknown_rm_requests_raise_and_change_nothing() -> None:
    """Requests from a never-registered rm_id raise ``UnknownResourceManager``.

    There is no callback to answer through, so the shim hears it as an
    exception naming the RM; nothing changes. ``connection_lost`` and
    ``unregister_resource_manager`` of an unknown RM are no-ops.
    """
    env = busy_env()
    env.schedule()
    before = env.dump()
    env.shim.clear()
    for attempt in (lambda: env.add_app("ghost-app", rm_id="ghost"),
                    lambda: env.add_node("ghost-node", 100, rm_id="ghost"),
                    lambda: env.ask("app-1", "ghost-ask", 10, rm_id="ghost"),
                    lambda: env.api.update_configuration(
                        si.UpdateConfigurationRequest(rm_id="ghost", config=CONFIG))):
        with pytest.raises(UnknownResourceManager, match="'ghost' is not registered"):
            attempt()
    env.api.connection_lost("ghost")
    env.api.unregister_resource_manager("ghost")
    assert env.schedule() == 0
    assert env.api.state_dump() == before
    assert env.shim.messages == []


def test_invalid_config_on_first_register_raises_and_changes_nothing() -> None:
    api = Scheduler(clock=ManualClock())
    shim = RecordingShim()
    before = api.state_dump()
    with pytest.raises(ConfigError):
        api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id=RM, config="partitions: [ {name: x"),
            shim)
    assert api.state_dump() == before == {"rms": [], "partitions": []}
    assert shim.messages == []


def test_invalid_config_on_reregister_raises_and_changes_nothing() -> None:
    env = busy_env()
    before = env.dump()
    bad = CONFIG.replace("name: b", "name: b\n            unknownkey: 1")
    with pytest.raises(ConfigError):
        env.register(bad)
    assert env.api.state_dump() == before
    # the RM still works as before
    env.add_node("node-2", 500)
    assert env.schedule() == 1


def test_semantically_invalid_config_on_register_raises() -> None:
    env = busy_env()
    before = env.dump()
    bad = CONFIG.replace(
        "- name: a",
        "- name: a\n            resources:\n              guaranteed: {memory: 20}\n"
        "              max: {memory: 10}")
    with pytest.raises(ConfigError):
        env.register(bad)
    assert env.api.state_dump() == before


def test_paused_rm_removals_and_releases_change_nothing() -> None:
    env = busy_env()
    env.api.connection_lost(RM)
    before = env.dump()
    env.remove_app("app-1")
    env.release_ask("app-1", "k2")
    env.node_action("node-1", si.NodeAction.DECOMISSION)
    assert env.api.state_dump() == before


def test_timers_of_previous_registration_do_not_touch_resynced_state() -> None:
    """Completing and execution timers set before a re-register never fire on the new state."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "t", 10, timeout_ms=10_000)
    env.schedule()
    env.release("app-1", env.uuids("app-1")[0])  # app-1 Completing: timer at t=30
    kept = env.allocs_by("app-2")                  # execution timer at t=10
    env.register(CONFIG)
    env.add_app("app-1")
    env.add_app("app-2")
    env.add_node("node-1", 100, existing=kept)
    env.ask("app-1", "k", 10)
    env.shim.clear()
    env.advance(60)
    assert env.app_state("app-1") == "Running"
    assert env.shim.released == []
    [alloc] = env.app("app-2")["allocations"]
    assert (alloc["uuid"], alloc["state"]) == (kept[0].uuid, "Allocated")
