"""The core over gRPC with the Python client: the protocol, several RMs, lost and killed clients."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("grpc")

import grpc
from rpc_helpers import (
    CONFIG,
    app,
    ask,
    nodes,
    register,
    release,
    serve,
    wait_until,
)
from scenario_helpers import config

from scheduler import ConfigError, Scheduler, UnknownResourceManager, si
from scheduler.rpc import Client, Disconnected, Server
from scheduler.testing import RecordingShim


@pytest.fixture
def server() -> Iterator[Server]:
    srv = serve()
    yield srv
    srv.stop(grace=0)


def connect(server: Server, **kwargs: Any) -> Client:
    return Client(f"127.0.0.1:{server.port}", **kwargs)


def start_rm(client: Client, rm_id: str, shim: RecordingShim, *node_ids: str) -> None:
    """Register, add app-1 and nodes, and wait until the core accepted them."""
    client.register_resource_manager(register(rm_id), shim)
    client.update_application(app(rm_id, "app-1"))
    client.update_node(nodes(rm_id, *node_ids))
    wait_until(lambda: shim.accepted_apps == ["app-1"]
               and sorted(shim.accepted_nodes) == sorted(node_ids), what="set-up")


def test_register_ask_allocate_release_confirm(server: Server) -> None:
    shim = RecordingShim()
    with connect(server) as client:
        start_rm(client, "rm-1", shim, "node-1", "node-2")
        client.update_allocation(ask("rm-1", "app-1", "pod", repeat=3))
        wait_until(lambda: len(shim.allocations) == 3, what="three allocations")
        assert {a.allocation_key for a in shim.allocations} == {"pod"}
        assert [u.state for u in shim.app_updates] == ["Accepted", "Running"]

        first = shim.allocations[0]
        client.update_allocation(release("rm-1", first))
        wait_until(lambda: shim.released, what="the release confirmation")
        [confirmed] = shim.released
        assert (confirmed.uuid, confirmed.termination_type) == (
            first.uuid, si.TerminationType.STOPPED_BY_RM)
        dump = client.state_dump()
        assert dump == server.api.state_dump()
        held = {a["uuid"] for a in dump["partitions"][0]["applications"][0]["allocations"]}
        assert held == {a.uuid for a in shim.allocations[1:]}


def test_responses_keep_decision_order_per_stream(server: Server) -> None:
    """The same requests in-process and over the wire give the same messages per stream.

    One call may answer with several messages of one kind (decision order): a
    refused ask then a release are two AllocationResponses; each is forwarded.
    """
    from scheduler import ManualClock

    def stray_and_release(first: si.Allocation) -> si.AllocationRequest:
        request = ask("rm-1", "no-such-app", "stray")
        request.releases = release("rm-1", first).releases
        return request

    def traffic(shim: RecordingShim) -> dict[str, list[Any]]:
        return {kind: [m for k, m in shim.messages if k == kind]
                for kind in ("update_allocation", "update_application", "update_node")}

    local = RecordingShim()
    api = Scheduler(clock=ManualClock())
    api.register_resource_manager(register("rm-1"), local)
    api.update_application(app("rm-1", "app-1"))
    api.update_node(nodes("rm-1", "node-1", "node-2"))
    api.update_allocation(ask("rm-1", "app-1", "pod", memory=60, repeat=3))
    api.schedule()
    before = len(local.messages)
    api.update_allocation(stray_and_release(local.allocations[0]))
    assert [k for k, _ in local.messages[before:]][:2] == ["update_allocation"] * 2
    api.schedule()                               # the third pod takes the freed room

    remote = RecordingShim()
    with connect(server) as client:
        start_rm(client, "rm-1", remote, "node-1", "node-2")
        client.update_allocation(ask("rm-1", "app-1", "pod", memory=60, repeat=3))
        wait_until(lambda: len(remote.allocations) == 2, what="two allocations")
        client.update_allocation(stray_and_release(remote.allocations[0]))
        wait_until(lambda: len(remote.allocations) == 3, what="the third allocation")

    def strip(messages: dict[str, list[Any]]) -> dict[str, list[Any]]:
        # timestamps come from different clocks
        out = {}
        for kind, msgs in messages.items():
            out[kind] = [m.model_dump(exclude={"updated": {"__all__": {
                "state_transition_timestamp"}}}) for m in msgs]
        return out

    assert strip(traffic(remote)) == strip(traffic(local))


def test_gang_placeholders_are_replaced(server: Server) -> None:
    shim = RecordingShim()
    rm = "rm-gang"
    with connect(server) as client:
        client.register_resource_manager(register(rm), shim)
        client.update_application(si.ApplicationRequest(rm_id=rm, new=[si.AddApplicationRequest(
            application_id="gang", queue_name="root.apps",
            ugi=si.UserGroupInformation(user="alice"),
            placeholder_ask=si.Resource.of(memory=20))]))
        client.update_node(nodes(rm, "node-1"))
        wait_until(lambda: shim.accepted_apps and shim.accepted_nodes, what="set-up")
        client.update_allocation(ask(rm, "gang", "ph", repeat=2, task_group_name="tg",
                                     placeholder=True))
        wait_until(lambda: len(shim.allocations) == 2, what="two placeholders")
        assert all(a.placeholder for a in shim.allocations)
        client.update_allocation(ask(rm, "gang", "real", task_group_name="tg"))
        wait_until(lambda: shim.released, what="the placeholder release")
        [replaced] = shim.released
        assert replaced.termination_type == si.TerminationType.PLACEHOLDER_REPLACED
        client.update_allocation(release(rm, si.Allocation(
            allocation_key="ph", uuid=replaced.uuid, application_id="gang", node_id="node-1"),
            kind=si.TerminationType.PLACEHOLDER_REPLACED))
        wait_until(lambda: any(not a.placeholder for a in shim.allocations),
                   what="the real allocation")
        real = next(a for a in shim.allocations if not a.placeholder)
        assert real.allocation_key == "real"


def test_events_and_scheduling_states_with_a_subscription(server: Server) -> None:
    shim = RecordingShim()
    with connect(server, events=True) as client:
        start_rm(client, "rm-1", shim, "node-1")
        client.update_allocation(ask("rm-1", "app-1", "huge", memory=1000))
        wait_until(lambda: shim.scheduling_states, what="a scheduling state")
        [state] = shim.scheduling_states
        assert (state.allocation_key, state.state) == ("huge", si.SchedulingState.FAILED)
        assert any(e.object_id == "app-1" for e in shim.events)


def test_invalid_config_raises_config_error_and_changes_nothing(server: Server) -> None:
    shim = RecordingShim()
    bad = config("- name: apps\n  resources: {max: {memory: -1}}")
    with connect(server) as client:
        start_rm(client, "rm-1", shim, "node-1")
        before = server.api.state_dump()
        for call in (
            lambda: client.register_resource_manager(
                si.RegisterResourceManagerRequest(rm_id="rm-1", config=bad), RecordingShim()),
            lambda: client.update_configuration(
                si.UpdateConfigurationRequest(rm_id="rm-1", config=bad)),
        ):
            with pytest.raises(ConfigError) as caught:
                call()
            assert caught.value.path == "partitions[0].queues[0].queues[0].resources.max.memory"
            assert "negative" in caught.value.reason
        assert server.api.state_dump() == before
        client.update_allocation(ask("rm-1", "app-1", "pod"))   # the old streams still work
        wait_until(lambda: shim.allocations, what="an allocation after the refused config")


def test_two_rms_are_isolated(server: Server) -> None:
    one, two = RecordingShim(), RecordingShim()
    with connect(server) as c1, connect(server) as c2:
        start_rm(c1, "rm-1", one, "node-a")
        start_rm(c2, "rm-2", two, "node-b")
        c1.update_allocation(ask("rm-1", "app-1", "pod", repeat=2))
        c2.update_allocation(ask("rm-2", "app-1", "pod", repeat=3))
        wait_until(lambda: len(one.allocations) == 2 and len(two.allocations) == 3)
        assert {a.node_id for a in one.allocations} == {"node-a"}
        assert {a.node_id for a in two.allocations} == {"node-b"}

        c1.close()                                       # rm-1 drops its streams
        wait_until(lambda: server.sessions().get("rm-1") == "paused", what="rm-1 paused")
        assert {r["rm_id"]: r["state"] for r in server.api.state_dump()["rms"]} == {
            "rm-1": "Paused", "rm-2": "Running"}
        c2.update_allocation(ask("rm-2", "app-1", "more"))
        wait_until(lambda: len(two.allocations) == 4, what="rm-2 goes on")
        assert len(one.allocations) == 2


def test_lost_client_pauses_and_a_new_registration_resyncs(server: Server) -> None:
    shim = RecordingShim()
    client = connect(server)
    start_rm(client, "rm-1", shim, "node-1")
    client.update_allocation(ask("rm-1", "app-1", "pod", repeat=2))
    wait_until(lambda: len(shim.allocations) == 2)
    running = list(shim.allocations)
    client.close()
    wait_until(lambda: server.sessions() == {"rm-1": "paused"}, what="paused")

    # a request from the paused RM's id on a new stream is refused before the core
    again = connect(server)
    with pytest.raises(grpc.RpcError) as caught:
        again.update_configuration(si.UpdateConfigurationRequest(rm_id="rm-1", config=CONFIG))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "paused; register again" in (caught.value.details() or "")

    fresh = RecordingShim()
    again.register_resource_manager(register("rm-1"), fresh)
    again.update_application(app("rm-1", "app-1"))
    wait_until(lambda: fresh.accepted_apps, what="app accepted again")
    node = nodes("rm-1", "node-1")
    node.nodes[0].existing_allocations = running
    again.update_node(node)
    wait_until(lambda: fresh.accepted_nodes == ["node-1"], what="node recovered")
    dump = server.api.state_dump()
    assert dump["rms"] == [{"rm_id": "rm-1", "state": "Running"}]
    held = {a["uuid"] for a in dump["partitions"][0]["applications"][0]["allocations"]}
    assert held == {a.uuid for a in running}
    again.close()


def test_a_killed_client_process_pauses_its_rm(server: Server) -> None:
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from rpc_helpers import app, nodes, register, wait_until
        from scheduler.rpc import Client
        from scheduler.testing import RecordingShim
        shim = RecordingShim()
        client = Client("127.0.0.1:{server.port}")
        client.register_resource_manager(register("rm-k"), shim)
        client.update_application(app("rm-k", "app-1"))
        client.update_node(nodes("rm-k", "node-1"))
        wait_until(lambda: shim.accepted_nodes)
        print("ready", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert server.sessions() == {"rm-k": "running"}
        os.kill(proc.pid, signal.SIGKILL)
        wait_until(lambda: server.sessions() == {"rm-k": "paused"}, what="paused after kill")
        assert server.api.state_dump()["rms"] == [{"rm_id": "rm-k", "state": "Paused"}]
        # its state is kept for the resync
        assert server.api.state_dump()["partitions"][0]["nodes"][0]["node_id"] == "node-1"
    finally:
        proc.kill()
        proc.wait()


def test_the_cores_pause_timeout_stops_a_paused_rm() -> None:
    """The paused-RM timeout is the core's: the server forgets the session it stopped."""
    server = serve(Scheduler(rm_pause_timeout=0.2))
    try:
        shim = RecordingShim()
        client = connect(server)
        start_rm(client, "rm-1", shim, "node-1")
        client.close()
        wait_until(lambda: server.sessions() == {}, what="forgotten after the timeout")
        assert server.api.state_dump() == {"rms": [{"rm_id": "rm-1", "state": "Stopped"}],
                                           "partitions": []}
        again = connect(server)                  # and it may come back
        start_rm(again, "rm-1", RecordingShim(), "node-1")
        assert server.sessions() == {"rm-1": "running"}
        again.close()
    finally:
        server.stop(grace=0)


def test_reregistering_in_time_keeps_the_rm() -> None:
    server = serve(Scheduler(rm_pause_timeout=0.3))
    try:
        client = connect(server)
        start_rm(client, "rm-1", RecordingShim(), "node-1")
        client.close()
        wait_until(lambda: server.sessions() == {"rm-1": "paused"})
        again = connect(server)
        again.register_resource_manager(register("rm-1"), RecordingShim())
        time.sleep(0.6)
        assert server.sessions() == {"rm-1": "running"}
        assert server.api.state_dump()["rms"] == [{"rm_id": "rm-1", "state": "Running"}]
        again.close()
    finally:
        server.stop(grace=0)


def test_an_rm_the_core_does_not_know_ends_the_stream_with_failed_precondition(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """A core that raises UnknownResourceManager (a race) ends the stream, not the server."""
    def unknown(request: si.NodeRequest) -> None:
        raise UnknownResourceManager(request.rm_id)

    monkeypatch.setattr(server.api, "update_node", unknown)
    seen: list[tuple[str, grpc.StatusCode, str]] = []
    with connect(server, on_disconnect=lambda *args: seen.append(args)) as client:
        client.register_resource_manager(register("rm-1"), RecordingShim())
        client.update_node(nodes("rm-1", "node-1"))
        wait_until(lambda: seen, what="the stream's end")
        rm_id, code, details = seen[0]
        assert (rm_id, code) == ("rm-1", grpc.StatusCode.FAILED_PRECONDITION)
        assert "'rm-1' is not registered" in details
    monkeypatch.undo()
    with connect(server) as client:              # the server carries on
        start_rm(client, "rm-2", RecordingShim(), "node-2")


def test_unregister_stops_the_rm_and_closes_its_streams(server: Server) -> None:
    with connect(server) as client:
        start_rm(client, "rm-1", RecordingShim(), "node-1")
        client.unregister_resource_manager("rm-1")
        assert server.api.state_dump() == {"rms": [{"rm_id": "rm-1", "state": "Stopped"}],
                                           "partitions": []}
        assert server.sessions() == {}
        with pytest.raises(Disconnected):
            client.update_node(nodes("rm-1", "node-2"))


def test_server_shutdown_ends_the_streams_with_unavailable() -> None:
    server = serve()
    seen: list[tuple[str, grpc.StatusCode, str]] = []
    client = connect(server, on_disconnect=lambda *args: seen.append(args))
    start_rm(client, "rm-1", RecordingShim(), "node-1")
    server.stop(grace=1)
    wait_until(lambda: seen, what="the disconnect")
    assert seen[0][:2] == ("rm-1", grpc.StatusCode.UNAVAILABLE)
    assert not client.connected("rm-1")
    client.close()


def test_a_raising_callback_is_logged_and_delivery_goes_on(
        server: Server, caplog: pytest.LogCaptureFixture) -> None:
    class Flaky(RecordingShim):
        def update_application(self, response: si.ApplicationResponse) -> None:
            super().update_application(response)
            raise RuntimeError("shim bug")

    shim = Flaky()
    with connect(server) as client:
        start_rm(client, "rm-1", shim, "node-1")
        client.update_allocation(ask("rm-1", "app-1", "pod"))
        wait_until(lambda: shim.allocations and len(shim.app_updates) == 2)
    assert any("callback for application raised" in r.getMessage() for r in caplog.records)


def test_a_second_registration_takes_the_rm_over(server: Server) -> None:
    seen: list[tuple[str, grpc.StatusCode, str]] = []
    first = connect(server, on_disconnect=lambda *args: seen.append(args))
    start_rm(first, "rm-1", RecordingShim(), "node-1")
    second, shim = connect(server), RecordingShim()
    start_rm(second, "rm-1", shim, "node-1")           # the core wiped rm-1: a full resync
    wait_until(lambda: seen, what="the first client told")
    assert seen[0][:2] == ("rm-1", grpc.StatusCode.ABORTED)
    assert "registered again" in seen[0][2]
    assert server.sessions() == {"rm-1": "running"}    # the old streams' end paused nothing
    second.update_allocation(ask("rm-1", "app-1", "pod"))
    wait_until(lambda: shim.allocations, what="the new registration served")
    with pytest.raises(Disconnected):
        first.update_allocation(ask("rm-1", "app-1", "other"))
    first.close()
    second.close()
