"""One server, both dialects: RMs of the seed's SI and of today's driving one server at once.

With the Python ``Client`` in each dialect, with raw frames (reopened streams,
bad input) and with clients compiled from each proto by ``grpc_tools.protoc``
(``package si.v1``, as a shim compiles it) in their own processes.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

pytest.importorskip("grpc")

import grpc
from rpc_helpers import (
    CONFIG,
    app,
    ask,
    channel,
    frame,
    nodes,
    raw_stream,
    raw_unary,
    register,
    release,
    serve,
    status_of,
    wait_until,
)

from scheduler import si
from scheduler.dialect import Dialect
from scheduler.rpc import PROTO_DIR, Client, Server
from scheduler.rpc._generated import si_today_pb2 as T
from scheduler.rpc.wire import SCHEDULER_SERVICE, method
from scheduler.si import today as t
from scheduler.testing import RecordingShim

TT = si.TerminationType
INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture
def server() -> Iterator[Server]:
    srv = serve()
    yield srv
    srv.stop(grace=0)


def pod(key: str, app_id: str = "app-1", memory: int = 10, node: str = "",
        **extra: Any) -> t.Allocation:
    return t.Allocation(allocation_key=key, application_id=app_id, node_id=node,
                        resource_per_alloc=si.Resource.of(memory=memory), **extra)


def pods(rm_id: str, *items: t.Allocation) -> t.AllocationRequest:
    return t.AllocationRequest(rm_id=rm_id, allocations=list(items))


def release_keys(rm_id: str, *keys: str, app_id: str = "app-1",
                 kind: si.TerminationType = TT.STOPPED_BY_RM) -> t.AllocationRequest:
    return t.AllocationRequest(rm_id=rm_id, releases=t.AllocationReleasesRequest(
        allocations_to_release=[t.AllocationRelease(application_id=app_id, allocation_key=k,
                                                    termination_type=kind) for k in keys]))


def plain_nodes(rm_id: str, *node_ids: str, memory: int = 100) -> t.NodeRequest:
    return t.NodeRequest(rm_id=rm_id, nodes=[
        t.NodeInfo(node_id=n, action=t.NodeAction.CREATE,
                   schedulable_resource=si.Resource.of(memory=memory)) for n in node_ids])


def _held(server: Server, rm_id: str, what: str, key: str, value: str) -> dict[str, Any]:
    """One node or application of ``rm_id`` in the core's state dump."""
    for partition in server.api.state_dump()["partitions"]:
        if partition["rm_id"] == rm_id:
            for item in partition[what]:
                if item[key] == value:
                    found: dict[str, Any] = item
                    return found
    raise AssertionError(f"no {what} {value} of {rm_id}")


def _node(server: Server, rm_id: str, node_id: str) -> dict[str, Any]:
    return _held(server, rm_id, "nodes", "node_id", node_id)


def _app(server: Server, rm_id: str, app_id: str) -> dict[str, Any]:
    return _held(server, rm_id, "applications", "application_id", app_id)


def test_two_rms_of_different_dialects_are_served_side_by_side(server: Server) -> None:
    target = f"127.0.0.1:{server.port}"
    seed_shim, today_shim = RecordingShim(), RecordingShim()
    with Client(target) as old, Client(target, dialect="today") as new:
        old.register_resource_manager(register("rm-seed"), seed_shim)
        new.register_resource_manager(register("rm-today"), today_shim)
        # today's shim adds plain nodes first: shared fields decide nothing yet
        new.update_node(plain_nodes("rm-today", "node-1"))
        new.update_application(app("rm-today", "app-1"))
        old.update_node(nodes("rm-seed", "node-1"))
        old.update_application(app("rm-seed", "app-1"))
        wait_until(lambda: today_shim.accepted_nodes and today_shim.accepted_apps
                   and seed_shim.accepted_nodes and seed_shim.accepted_apps, what="set-up")
        assert server.api.dialect("rm-today") is None

        new.update_allocation(pods("rm-today", pod("pod-1"), pod("pod-2")))
        old.update_allocation(ask("rm-seed", "app-1", "ask", repeat=2))
        wait_until(lambda: len(today_shim.allocations) == 2 and len(seed_shim.allocations) == 2,
                   what="both RMs allocated")
        assert (server.api.dialect("rm-today"), server.api.dialect("rm-seed")) == (
            Dialect.TODAY, Dialect.SEED)
        assert all(isinstance(a, t.Allocation) for a in cast(Any, today_shim.allocations))
        assert sorted((a.allocation_key, a.node_id) for a in today_shim.allocations) == [
            ("pod-1", "node-1"), ("pod-2", "node-1")]
        assert all(type(a) is si.Allocation and a.uuid for a in seed_shim.allocations)

        # releases, and their confirmations, each in its RM's dialect
        new.update_allocation(release_keys("rm-today", "pod-1"))
        old.update_allocation(release("rm-seed", seed_shim.allocations[0]))
        wait_until(lambda: today_shim.released and seed_shim.released, what="confirmations")
        [mine] = cast(list[Any], today_shim.released)
        assert (type(mine), mine.allocation_key, mine.termination_type) == (
            t.AllocationRelease, "pod-1", t.TerminationType.STOPPED_BY_RM)
        [theirs] = seed_shim.released
        assert (type(theirs), theirs.uuid) == (si.AllocationRelease,
                                               seed_shim.allocations[0].uuid)

        # a bound pod takes room on its node and is heard back
        new.update_allocation(pods("rm-today", pod("bound", memory=60, node="node-1")))
        wait_until(lambda: any(a.allocation_key == "bound" for a in today_shim.allocations),
                   what="the bound pod heard back")
        assert _node(server, "rm-today", "node-1")["allocated"]["memory"] == 70
        new.update_allocation(pods("rm-today", pod("fits", memory=30)))
        wait_until(lambda: any(a.allocation_key == "fits" for a in today_shim.allocations),
                   what="the pod that fits in what the bound pod left")
        assert _node(server, "rm-today", "node-1")["allocated"]["memory"] == 100
        assert server.api.state_dump() == new.state_dump() == old.state_dump()


def test_gang_placeholders_are_replaced_in_todays_dialect(server: Server) -> None:
    shim = RecordingShim()
    with Client(f"127.0.0.1:{server.port}", dialect="today") as client:
        client.register_resource_manager(register("rm-gang"), shim)
        client.update_node(plain_nodes("rm-gang", "node-1"))
        client.update_application(si.ApplicationRequest(rm_id="rm-gang", new=[
            si.AddApplicationRequest(application_id="gang", queue_name="root.apps",
                                     ugi=si.UserGroupInformation(user="alice"),
                                     placeholder_ask=si.Resource.of(memory=40))]))
        wait_until(lambda: shim.accepted_apps and shim.accepted_nodes, what="set-up")
        client.update_allocation(pods("rm-gang", *(
            pod(f"ph-{i}", "gang", memory=20, placeholder=True, task_group_name="tg")
            for i in (1, 2))))
        wait_until(lambda: len(shim.allocations) == 2, what="placeholders")
        client.update_allocation(pods("rm-gang", pod("real-1", "gang", memory=20,
                                                     task_group_name="tg")))
        wait_until(lambda: any(r.termination_type.name == "PLACEHOLDER_REPLACED"
                               for r in shim.released), what="the replacement")
        [swap] = [r for r in shim.released if r.termination_type.name == "PLACEHOLDER_REPLACED"]
        assert swap.allocation_key in ("ph-1", "ph-2")
        client.update_allocation(release_keys("rm-gang", swap.allocation_key, app_id="gang",
                                              kind=TT.PLACEHOLDER_REPLACED))
        wait_until(lambda: any(a.allocation_key == "real-1" for a in shim.allocations),
                   what="the real pod placed")
        real = [a for a in _app(server, "rm-gang", "gang")["allocations"]
                if not a["placeholder"]]
        assert [a["allocation_key"] for a in real] == ["real-1"]


def test_recovery_after_registering_again_resets_and_relearns_the_dialect(
        server: Server) -> None:
    shim = RecordingShim()
    with Client(f"127.0.0.1:{server.port}", dialect="today") as client:
        client.register_resource_manager(register("rm-r"), shim)
        client.update_node(plain_nodes("rm-r", "node-1"))
        client.update_application(app("rm-r", "app-1"))
        wait_until(lambda: shim.accepted_nodes and shim.accepted_apps, what="set-up")
        client.update_allocation(pods("rm-r", pod("pod-1"), pod("pod-2")))
        wait_until(lambda: len(shim.allocations) == 2, what="allocations")
        placed = sorted((a.allocation_key, a.node_id) for a in shim.allocations)

        again = RecordingShim()
        client.register_resource_manager(register("rm-r"), again)
        assert server.api.dialect("rm-r") is None
        client.update_node(t.NodeRequest(rm_id="rm-r", nodes=[t.NodeInfo(
            node_id="node-1", action=t.NodeAction.CREATE_DRAIN,
            schedulable_resource=si.Resource.of(memory=100))]))
        client.update_application(app("rm-r", "app-1"))
        wait_until(lambda: again.accepted_nodes and again.accepted_apps, what="resync set-up")
        client.update_allocation(pods("rm-r", *(pod(k, node=n) for k, n in placed)))
        client.update_node(t.NodeRequest(rm_id="rm-r", nodes=[t.NodeInfo(
            node_id="node-1", action=t.NodeAction.DRAIN_TO_SCHEDULABLE)]))
        wait_until(lambda: len(again.allocations) == 2, what="recovered pods heard back")
        assert sorted((a.allocation_key, a.node_id) for a in again.allocations) == placed
        assert server.api.dialect("rm-r") is Dialect.TODAY
        assert _node(server, "rm-r", "node-1")["allocated"]["memory"] == 20


def _today_pod_frame(rm_id: str, key: str) -> bytes:
    return T.AllocationRequest(rmID=rm_id, allocations=[T.Allocation(
        allocationKey=key, applicationID="app-1",
        resourcePerAlloc=T.Resource(resources={"memory": T.Quantity(value=10)}))]
    ).SerializeToString()


def _next(call: Any, cls: Any) -> Any:
    """The next response of a raw stream, parsed with ``cls``; unknown fields must be none."""
    message = cls.FromString(next(call))
    size = message.ByteSize()
    message.DiscardUnknownFields()
    assert message.ByteSize() == size, "a field the RM's dialect does not know"
    return message


def test_bad_input_is_refused_and_the_dialect_survives_a_reopened_stream(
        server: Server) -> None:
    chan = channel(server)
    seed_shim = RecordingShim()
    with Client(f"127.0.0.1:{server.port}") as other:
        other.register_resource_manager(register("rm-seed"), seed_shim)
        other.update_node(nodes("rm-seed", "node-s"))
        other.update_application(app("rm-seed", "app-1"))
        raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", frame(register("rm-t")))
        node_call = raw_stream(chan, "UpdateNode", [frame(plain_nodes("rm-t", "node-1"))])
        app_call = raw_stream(chan, "UpdateApplication", [frame(app("rm-t", "app-1"))])
        for call in (node_call, app_call):
            next(call)                                  # accepted
        # both dialects in one request: refused whole, naming the fields
        mixed = frame(ask("rm-t", "app-1", "ask")) + _today_pod_frame("rm-t", "pod-2")
        frames: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        frames.put(_today_pod_frame("rm-t", "pod-1"))
        call = cast(Any, chan).stream_stream(method(SCHEDULER_SERVICE, "UpdateAllocation"))(
            iter(frames.get, b"end"))
        placed = _next(call, T.AllocationResponse)
        assert [(a.allocationKey, a.nodeID) for a in placed.new] == [("pod-1", "node-1")]
        frames.put(mixed)
        code, details = status_of(call)
        assert (code, details) == (INVALID, (
            "asks of the seed's SI (f59a9f4) and allocations of today's SI (2858f4d) in one "
            "request: send the fields of one SI"))
        assert server.sessions()["rm-t"] == "running"    # a bad request pauses nobody
        held = server.api.state_dump()

        # the stream reopened after the error: the RM still speaks today's SI
        call = raw_stream(chan, "UpdateAllocation", [frame(ask("rm-t", "app-1", "ask"))])
        code, details = status_of(call)
        assert code is INVALID and details.startswith(
            "resource manager rm-t speaks today's SI (2858f4d), and this request uses the "
            "seed's SI (f59a9f4) (asks)")
        assert server.api.state_dump() == held
        # a release that looks alike in both is read, and answered, in today's SI
        call = raw_stream(chan, "UpdateAllocation", [frame(release_keys("rm-t", "pod-1"))])
        confirmed = _next(call, T.AllocationResponse)
        assert [(r.allocationKey, r.terminationType) for r in confirmed.released] == [
            ("pod-1", T.STOPPED_BY_RM)]
        call.cancel()

        # the other RM is served all along
        other.update_allocation(ask("rm-seed", "app-1", "ask"))
        wait_until(lambda: len(seed_shim.allocations) == 1, what="the seed RM's allocation")
    for c in (node_call, app_call):
        c.cancel()
    chan.close()


# ------------------------------------------------------------------ compiled clients

_SHIM = textwrap.dedent('''
    """A shim of one dialect, compiled from its proto; prints what it heard as JSON."""
    import json, queue, sys, threading
    import grpc
    sys.path.insert(0, sys.argv[1])
    import si_pb2 as pb
    target, dialect, rm = sys.argv[2], sys.argv[3], sys.argv[4]
    chan = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
    base = "/si.v1.Scheduler/"
    chan.unary_unary(base + "RegisterResourceManager",
                     request_serializer=pb.RegisterResourceManagerRequest.SerializeToString,
                     response_deserializer=pb.RegisterResourceManagerResponse.FromString)(
        pb.RegisterResourceManagerRequest(rmID=rm, config=sys.stdin.read()), timeout=10)

    def open_stream(name, req_cls, resp_cls):
        q = queue.SimpleQueue()
        def gen():
            while True:
                item = q.get()
                if item is None:
                    return
                yield item
        call = chan.stream_stream(base + name, request_serializer=req_cls.SerializeToString,
                                  response_deserializer=resp_cls.FromString)(gen())
        return q, call

    mem = lambda v: pb.Resource(resources={"memory": pb.Quantity(value=v)})
    nq, ncall = open_stream("UpdateNode", pb.NodeRequest, pb.NodeResponse)
    aq, acall = open_stream("UpdateApplication", pb.ApplicationRequest, pb.ApplicationResponse)
    xq, xcall = open_stream("UpdateAllocation", pb.AllocationRequest, pb.AllocationResponse)
    nq.put(pb.NodeRequest(rmID=rm, nodes=[pb.NodeInfo(nodeID="node-1", action=1,
                                                      schedulableResource=mem(100))]))
    accepted = [n.nodeID for n in next(ncall).accepted]
    aq.put(pb.ApplicationRequest(rmID=rm, new=[pb.AddApplicationRequest(
        applicationID="app-1", queueName="root.apps",
        ugi=pb.UserGroupInformation(user="alice"))]))
    apps = [a.applicationID for a in next(acall).accepted]
    if dialect == "seed":
        xq.put(pb.AllocationRequest(rmID=rm, asks=[pb.AllocationAsk(
            allocationKey="pod-1", applicationID="app-1", resourceAsk=mem(10))]))
    else:
        xq.put(pb.AllocationRequest(rmID=rm, allocations=[pb.Allocation(
            allocationKey="pod-1", applicationID="app-1", resourcePerAlloc=mem(10))]))
    new = []
    while not new:
        new = list(next(xcall).new)
    rel = dict(applicationID="app-1", terminationType=pb.STOPPED_BY_RM)
    if dialect == "seed":
        rel["UUID"] = new[0].UUID
    else:
        rel["allocationKey"] = "pod-1"
    xq.put(pb.AllocationRequest(rmID=rm, releases=pb.AllocationReleasesRequest(
        allocationsToRelease=[pb.AllocationRelease(**rel)])))
    released = []
    while not released:
        released = list(next(xcall).released)
    print(json.dumps({"nodes": accepted, "apps": apps,
                      "new": [[a.allocationKey, a.nodeID] for a in new],
                      "released": [[r.allocationKey, r.terminationType] for r in released]}),
          flush=True)
    # wait for the server to end the streams (SIGTERM): UNAVAILABLE
    try:
        for _ in xcall:
            pass
    except grpc.RpcError as error:
        print(error.code().name, flush=True)
''')


def _compile(proto: str, into: Path) -> Path:
    """``proto`` compiled as a shim compiles it: ``package si.v1``, into its own directory."""
    from grpc_tools import protoc  # type: ignore[import-untyped]

    into.mkdir()
    text = (PROTO_DIR / proto).read_text("utf-8")
    text = text.replace("package si.today.v1;", "package si.v1;")
    (into / "si.proto").write_text(text, "utf-8")
    import grpc_tools

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    assert protoc.main(["protoc", f"-I{into}", f"-I{well_known}", f"--python_out={into}",
                        "si.proto"]) == 0
    return into


def test_clients_compiled_from_each_proto_drive_one_server_at_once(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    seed_dir = _compile("si.proto", tmp_path / "seed")
    today_dir = _compile("si_today.proto", tmp_path / "today")
    script = tmp_path / "shim.py"
    script.write_text(_SHIM, "utf-8")
    server = subprocess.Popen([sys.executable, "-m", "scheduler", "serve", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        target = server.stdout.readline().strip().removeprefix("listening on ")
        shims = {
            dialect: subprocess.Popen(
                [sys.executable, str(script), str(where), target, dialect, f"rm-{dialect}"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
            for dialect, where in (("seed", seed_dir), ("today", today_dir))}
        heard: dict[str, dict[str, Any]] = {}
        for proc in shims.values():
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(CONFIG)
            proc.stdin.close()
        lines: dict[str, str] = {}

        def first_line(dialect: str, proc: subprocess.Popen[str]) -> None:
            assert proc.stdout is not None
            lines[dialect] = proc.stdout.readline()

        readers = [threading.Thread(target=first_line, args=item) for item in shims.items()]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout=60)
        for dialect, proc in shims.items():
            assert lines.get(dialect), (dialect, proc.stderr.read() if proc.stderr else "")
            heard[dialect] = json.loads(lines[dialect])
        for dialect in ("seed", "today"):
            assert heard[dialect]["nodes"] == ["node-1"]
            assert heard[dialect]["apps"] == ["app-1"]
            assert heard[dialect]["new"] == [["pod-1", "node-1"]]
            assert heard[dialect]["released"] == [["pod-1", 1]]   # STOPPED_BY_RM

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        for proc in shims.values():
            assert proc.stdout is not None
            assert proc.stdout.read().strip() == "UNAVAILABLE"   # the shutdown, on its stream
            assert proc.wait(timeout=30) == 0
    finally:
        for proc in [server, *locals().get("shims", {}).values()]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
