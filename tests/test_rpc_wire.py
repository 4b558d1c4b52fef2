"""Bad input over the wire, slow readers, tokens and TLS: statuses, never a crash or a change."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest

pytest.importorskip("grpc")

import grpc
from hypothesis import given, settings
from hypothesis import strategies as st
from rpc_helpers import (
    app,
    ask,
    channel,
    drained_status,
    frame,
    nodes,
    raw_stream,
    raw_unary,
    register,
    serve,
    status_of,
    wait_until,
)

from scheduler import si
from scheduler.rpc import Client, Server
from scheduler.rpc.status import Abort
from scheduler.rpc.streams import End, Outbox, Stream, drain
from scheduler.rpc.wire import EXT_SERVICE, SCHEDULER_SERVICE
from scheduler.testing import RecordingShim

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = serve()
    yield srv
    srv.stop(grace=0)


@pytest.fixture
def rm(server: Server) -> Iterator[tuple[Client, RecordingShim, str]]:
    """A running RM (its own id per test) with app-1 and node-1."""
    rm_id = f"rm-{len(server.sessions())}-{id(object())}"
    shim = RecordingShim()
    client = Client(f"127.0.0.1:{server.port}")
    client.register_resource_manager(register(rm_id), shim)
    client.update_application(app(rm_id, "app-1"))
    client.update_node(nodes(rm_id, "node-1"))
    wait_until(lambda: shim.accepted_apps and shim.accepted_nodes, what="set-up")
    yield client, shim, rm_id
    client.close()


def _bad_asks(rm_id: str) -> list[tuple[bytes, str]]:
    """(wire frame, expected start of the details) of invalid AllocationRequests."""
    from scheduler.rpc._generated import si_pb2

    negative = si_pb2.AllocationRequest(rmID=rm_id, asks=[si_pb2.AllocationAsk(
        allocationKey="k", applicationID="app-1",
        resourceAsk=si_pb2.Resource(resources={"memory": si_pb2.Quantity(value=-5)}))])
    no_key = si_pb2.AllocationRequest(rmID=rm_id, asks=[si_pb2.AllocationAsk(
        applicationID="app-1")])
    bad_enum = si_pb2.AllocationRequest(rmID=rm_id, releases=si_pb2.AllocationReleasesRequest(
        allocationsToRelease=[si_pb2.AllocationRelease(terminationType=9)]))  # type: ignore[arg-type]
    return [
        (negative.SerializeToString(), "asks[0].resourceAsk.resources.memory.value: "),
        (no_key.SerializeToString(), "asks[0].allocationKey: Field required"),
        (bad_enum.SerializeToString(),
         "releases.allocationsToRelease[0].terminationType: "),
        (b"\xff\xff\xff", "malformed AllocationRequest"),
    ]


def test_invalid_requests_end_the_stream_and_change_nothing(
        server: Server, rm: tuple[Client, RecordingShim, str]) -> None:
    client, _shim, rm_id = rm
    chan = channel(server)
    before = server.api.state_dump()
    for index, (data, details) in enumerate(_bad_asks(rm_id)):
        code, text = status_of(raw_stream(chan, "UpdateAllocation", [data]))
        assert code == INVALID, (index, text)
        assert text.startswith(details), (index, text)
    assert server.api.state_dump() == before
    assert server.sessions()[rm_id] == "running"
    assert client.connected(rm_id)              # the RM's own streams are untouched
    chan.close()


def test_a_bad_message_on_an_attached_stream_leaves_the_rm_running(server: Server) -> None:
    rm_id = "rm-attached"
    shim = RecordingShim()
    client = Client(f"127.0.0.1:{server.port}")
    client.register_resource_manager(register(rm_id), shim)
    # a second, raw node stream would be ALREADY_EXISTS: use the raw one for allocations only
    client.update_application(app(rm_id, "app-1"))
    client.update_node(nodes(rm_id, "node-1"))
    wait_until(lambda: shim.accepted_nodes)
    chan = channel(server)
    dup = raw_stream(chan, "UpdateNode", [frame(si.NodeRequest(rm_id=rm_id))])
    code, text = status_of(dup)
    assert code == grpc.StatusCode.ALREADY_EXISTS and "open node stream" in text

    other = raw_stream(chan, "UpdateAllocation", [frame(si.AllocationRequest(rm_id="rm-other"))])
    assert status_of(other)[0] == grpc.StatusCode.FAILED_PRECONDITION
    assert server.sessions()[rm_id] == "running"
    client.close()
    chan.close()


def test_a_later_bad_message_ends_only_that_stream(server: Server) -> None:
    chan = channel(server)
    raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", frame(register("rm-later")))
    before = server.api.state_dump()
    for data, details in _bad_asks("rm-later"):
        call = raw_stream(chan, "UpdateAllocation",
                          [frame(si.AllocationRequest(rm_id="rm-later")), data])
        code, text = status_of(call)
        assert (code, text[:len(details)]) == (INVALID, details)
        assert server.sessions()["rm-later"] == "running"   # not a lost connection
    assert server.api.state_dump() == before
    chan.close()


def test_rm_mismatch_inside_a_stream_is_invalid_argument(server: Server) -> None:
    chan = channel(server)
    raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", frame(register("rm-m")))
    call = raw_stream(chan, "UpdateNode", [
        frame(si.NodeRequest(rm_id="rm-m")),
        frame(nodes("rm-x", "node-1")),
    ])
    code, text = status_of(call)
    assert code == INVALID
    assert text == "rmID: this stream belongs to resource manager rm-m, not rm-x"
    assert server.sessions()["rm-m"] == "running"         # the server ended it, not the client
    assert not any(p["rm_id"] == "rm-x" for p in server.api.state_dump()["partitions"])
    # the stream can be opened again
    again = raw_stream(chan, "UpdateNode", [frame(nodes("rm-m", "node-1"))])
    wait_until(lambda: any(p["rm_id"] == "rm-m" and p["nodes"]
                           for p in server.api.state_dump()["partitions"]), what="node added")
    again.cancel()
    chan.close()


def test_unknown_rm_is_failed_precondition(server: Server) -> None:
    chan = channel(server)
    for name, message in (("UpdateAllocation", si.AllocationRequest(rm_id="ghost")),
                          ("UpdateApplication", app("ghost", "a")),
                          ("UpdateNode", nodes("ghost", "n"))):
        code, text = status_of(raw_stream(chan, name, [frame(message)]))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert text == "resource manager ghost is not registered: " \
                       "call RegisterResourceManager first"
    with pytest.raises(grpc.RpcError) as caught:
        raw_unary(chan, EXT_SERVICE, "UpdateConfiguration",
                  frame(si.UpdateConfigurationRequest(rm_id="ghost")))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    chan.close()


def test_invalid_registration(server: Server) -> None:
    chan = channel(server)
    for data, details in (
        (b"", "rmID: Field required"),
        (b"\x0a\x05ab", "malformed RegisterResourceManagerRequest"),
        (frame(si.RegisterResourceManagerRequest(rm_id="rm-c", config="partitions: 5")),
         "config"),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", data)
        assert caught.value.code() == INVALID
        assert (caught.value.details() or "").startswith(details)
    assert "rm-c" not in server.sessions()
    chan.close()


@settings(max_examples=60, deadline=None)
@given(method=st.sampled_from([
    (SCHEDULER_SERVICE, "RegisterResourceManager", False),
    (SCHEDULER_SERVICE, "UpdateAllocation", True),
    (SCHEDULER_SERVICE, "UpdateApplication", True),
    (SCHEDULER_SERVICE, "UpdateNode", True),
    (EXT_SERVICE, "UpdateConfiguration", False),
    (EXT_SERVICE, "UnregisterResourceManager", False),
    (EXT_SERVICE, "Subscribe", None),
]), data=st.binary(max_size=64))
def test_random_bytes_never_break_the_server(server: Server, method: Any, data: bytes) -> None:
    service, name, streaming = method
    chan = channel(server)
    try:
        if streaming:
            call = raw_stream(chan, name, [data])
            code, _ = status_of(call)
        elif streaming is None:
            call = chan.unary_stream(f"/{service}/{name}")(data, timeout=0.5)
            try:
                for _ in call:
                    pass
            except grpc.RpcError as error:
                code = error.code()
        else:
            try:
                raw_unary(chan, service, name, data)
                code = grpc.StatusCode.OK
            except grpc.RpcError as error:
                code = error.code()
        assert code in (grpc.StatusCode.OK, INVALID, grpc.StatusCode.FAILED_PRECONDITION,
                        grpc.StatusCode.DEADLINE_EXCEEDED), code
    finally:
        chan.close()
    # the server still answers
    assert raw_unary(channel(server), EXT_SERVICE, "StateDump", b"")


def _in_core(server: Server, rm_id: str) -> bool:
    """Whether the core knows app-1 and node-1 of ``rm_id``.

    The update streams are independent: an ask that reaches the core before
    its application is rejected, and nothing then fills the allocation stream.
    """
    partitions = [p for p in server.api.state_dump()["partitions"] if p["rm_id"] == rm_id]
    return (any(a["application_id"] == "app-1" for p in partitions for a in p["applications"])
            and any(n["node_id"] == "node-1" for p in partitions for n in p["nodes"]))


def _asks_until_paused(server: Server, rm_id: str) -> Iterator[bytes]:
    """Asks of app-1 (200 allocations with 2 KB of tags each) until ``rm_id`` is paused.

    An answer that finds its outbox empty is always taken, whatever its size,
    and the core may answer all of a few asks at once: only an answer that
    finds the outbox not yet drained tells the server the client is not
    reading, so the asks go on until one has.
    """
    i = 0
    while server.sessions().get(rm_id) != "paused":
        yield frame(ask(rm_id, "app-1", f"k{i}", repeat=200, tags={"t": "x" * 2048}))
        i += 1


def test_a_client_that_stops_reading_is_disconnected() -> None:
    # the stalled call keeps its worker until the client reads: no reset while the test runs
    server = serve(stream_buffer_bytes=64 * 1024, stalled_grace=3600)
    try:
        rm_id = "rm-slow"
        chan = channel(server)
        raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", frame(register(rm_id)))
        apps = raw_stream(chan, "UpdateApplication", [frame(app(rm_id, "app-1"))])
        node_stream = raw_stream(chan, "UpdateNode", [frame(nodes(rm_id, "node-1",
                                                                  memory=10**9))])
        wait_until(lambda: _in_core(server, rm_id), what="app-1 and node-1 in the core")
        # allocations never read by this client
        allocs = raw_stream(chan, "UpdateAllocation", _asks_until_paused(server, rm_id))
        # a well-behaved RM next to it
        good = RecordingShim()
        with Client(f"127.0.0.1:{server.port}") as client:
            client.register_resource_manager(register("rm-good"), good)
            client.update_application(app("rm-good", "app-1"))
            client.update_node(nodes("rm-good", "node-1"))
            # the streams are independent: wait for the acceptances before asking
            wait_until(lambda: good.accepted_apps and good.accepted_nodes, what="set-up")
            wait_until(lambda: server.sessions().get(rm_id) == "paused", timeout=30,
                       what="the slow RM paused")
            client.update_allocation(ask("rm-good", "app-1", "pod"))
            wait_until(lambda: good.allocations, what="the good RM still served")
            assert server.sessions()["rm-good"] == "running"
        # the lagging client learns why once it reads again
        code, text = drained_status(allocs)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "did not read its allocation stream" in text
        assert drained_status(apps)[0] == grpc.StatusCode.RESOURCE_EXHAUSTED
        node_stream.cancel()
        chan.close()
    finally:
        server.stop(grace=0)


TOKEN = "s3cret-token"


def test_token_is_required_on_every_call() -> None:
    server = serve(token=TOKEN)
    try:
        target = f"127.0.0.1:{server.port}"
        for token in (None, "wrong"):
            with Client(target, token=token) as bad, pytest.raises(grpc.RpcError) as caught:
                bad.register_resource_manager(register("rm-t"), RecordingShim())
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        shim = RecordingShim()
        with Client(target, token=TOKEN) as good:
            good.register_resource_manager(register("rm-t"), shim)
            good.update_application(app("rm-t", "app-1"))
            wait_until(lambda: shim.accepted_apps, what="accepted with the token")
            # a stream and the extension service without the token: refused, nothing changes
            chan = channel(server)
            before = server.api.state_dump()
            code, _ = status_of(raw_stream(chan, "UpdateNode", [frame(nodes("rm-t", "n"))]))
            assert code == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as caught:
                raw_unary(chan, EXT_SERVICE, "StateDump", b"")
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError):   # nobody can wipe the RM by re-registering
                raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager",
                          frame(register("rm-t")))
            assert server.api.state_dump() == before
            chan.close()
    finally:
        server.stop(grace=0)


def self_signed(host: str = "localhost") -> tuple[bytes, bytes]:
    """A throwaway certificate (PEM) and key for ``host`` and 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName(host), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM,
                              serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def test_tls() -> None:
    pytest.importorskip("cryptography")
    cert, key = self_signed()
    server = serve(tls_cert=cert, tls_key=key, token=TOKEN)
    try:
        shim = RecordingShim()
        with Client(f"localhost:{server.port}", root_certificates=cert, token=TOKEN) as client:
            client.register_resource_manager(register("rm-tls"), shim)
            client.update_application(app("rm-tls", "app-1"))
            wait_until(lambda: shim.accepted_apps, what="accepted over TLS")
        # plaintext to a TLS port, or a certificate nobody trusts: no connection
        other, _ = self_signed()
        for client in (Client(f"localhost:{server.port}", token=TOKEN, timeout=2),
                       Client(f"localhost:{server.port}", root_certificates=other,
                              token=TOKEN, timeout=2)):
            with client, pytest.raises(grpc.RpcError) as caught:
                client.state_dump()
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        server.stop(grace=0)


def test_a_stream_cancelled_before_naming_its_rm_is_quiet(
        server: Server, caplog: pytest.LogCaptureFixture) -> None:
    chan = channel(server)
    call = raw_stream(chan, "UpdateNode", [])
    time.sleep(0.2)
    call.cancel()
    time.sleep(0.2)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert raw_unary(chan, EXT_SERVICE, "StateDump", b"")
    chan.close()


def test_a_stalled_stream_is_reset_after_the_grace_period() -> None:
    """The worker sending to a client that never reads is freed: the call is reset."""
    server = serve(stream_buffer_bytes=64 * 1024, stalled_grace=0.2)
    try:
        chan = channel(server)
        raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager", frame(register("rm-s")))
        kept = [raw_stream(chan, "UpdateApplication", [frame(app("rm-s", "app-1"))]),
                raw_stream(chan, "UpdateNode", [frame(nodes("rm-s", "node-1", memory=10**9))])]
        wait_until(lambda: _in_core(server, "rm-s"), what="app-1 and node-1 in the core")
        allocs = raw_stream(chan, "UpdateAllocation", _asks_until_paused(server, "rm-s"))
        wait_until(lambda: server.sessions().get("rm-s") == "paused", timeout=30)
        session = server._registry.sessions["rm-s"]
        wait_until(lambda: not session.streams, what="the server's writers released")
        # the client learns it once it reads: what was in flight, then the status, or the
        # reset when its status could not get through
        assert drained_status(allocs)[0] in (grpc.StatusCode.CANCELLED,
                                             grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert [drained_status(call)[0] for call in kept] == [
            grpc.StatusCode.RESOURCE_EXHAUSTED] * 2
        chan.close()
    finally:
        server.stop(grace=0)


class _Call:
    """The part of a server call's context that a reset uses."""

    def __init__(self) -> None:
        self.cancelled = False

    def is_active(self) -> bool:
        return not self.cancelled

    def cancel(self) -> None:
        self.cancelled = True


def test_a_reset_frees_only_a_writer_still_out_sending() -> None:
    """A writer waiting for its status is left to send it, however late its reset comes."""
    end = End(grpc.StatusCode.RESOURCE_EXHAUSTED, "not read")
    waiting, sending = (Stream(Outbox(1024), cast(Any, _Call())) for _ in range(2))
    sending.outbox.put([b"m"])
    out = drain(sending)
    assert next(out) == b"m"                       # handed to gRPC, never sent on
    for stream in (waiting, sending):
        stream.outbox.close(end)
        stream._reset()                            # the grace is over
    assert (waiting.context.is_active(), sending.context.is_active()) == (True, False)
    with pytest.raises(Abort) as caught:
        next(drain(waiting))
    assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
