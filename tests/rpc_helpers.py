"""Shared pieces of the RPC tests: a served core, raw calls, waiting for asynchronous answers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import grpc
from scenario_helpers import config

from scheduler import Scheduler, si
from scheduler.rpc import Server, ServerOptions
from scheduler.rpc.convert import to_proto
from scheduler.rpc.wire import SCHEDULER_SERVICE, method

CONFIG = config("- name: apps")
"""One partition, one leaf queue ``root.apps``; everybody may submit."""


def serve(api: Scheduler | None = None, **options: Any) -> Server:
    """A started server on a free loopback port, in front of ``api`` (a new core by default)."""
    server = Server(api if api is not None else Scheduler(), ServerOptions(port=0, **options))
    server.start()
    return server


def wait_until(check: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """Poll ``check`` until it is true; fail the test with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.01)


def register(rm_id: str) -> si.RegisterResourceManagerRequest:
    return si.RegisterResourceManagerRequest(rm_id=rm_id, config=CONFIG)


def app(rm_id: str, *app_ids: str) -> si.ApplicationRequest:
    return si.ApplicationRequest(rm_id=rm_id, new=[
        si.AddApplicationRequest(application_id=a, queue_name="root.apps",
                                 ugi=si.UserGroupInformation(user="alice")) for a in app_ids])


def nodes(rm_id: str, *node_ids: str, memory: int = 100) -> si.NodeRequest:
    return si.NodeRequest(rm_id=rm_id, nodes=[
        si.NodeInfo(node_id=n, action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=memory)) for n in node_ids])


def ask(rm_id: str, app_id: str, key: str, memory: int = 10, repeat: int = 1,
        **extra: Any) -> si.AllocationRequest:
    return si.AllocationRequest(rm_id=rm_id, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app_id, resource_ask=si.Resource.of(memory=memory),
        max_allocations=repeat, **extra)])


def release(rm_id: str, *allocations: si.Allocation,
            kind: si.TerminationType = si.TerminationType.STOPPED_BY_RM) -> si.AllocationRequest:
    return si.AllocationRequest(rm_id=rm_id, releases=si.AllocationReleasesRequest(
        allocations_to_release=[si.AllocationRelease(
            application_id=a.application_id, uuid=a.uuid, termination_type=kind)
            for a in allocations]))


def channel(server: Server) -> grpc.Channel:
    return grpc.insecure_channel(f"127.0.0.1:{server.port}",
                                 options=[("grpc.use_local_subchannel_pool", 1)])


def raw_stream(chan: grpc.Channel, name: str, frames: Iterable[bytes],
               metadata: tuple[tuple[str, str], ...] = ()) -> Any:
    """A stream call sending ``frames`` as they are, then waiting (never half-closing)."""

    def requests() -> Iterator[bytes]:
        yield from frames
        time.sleep(30)                  # keep the request side open, as a real shim does

    call: Any = chan.stream_stream(method(SCHEDULER_SERVICE, name))(requests(), metadata=metadata)
    return call


def raw_unary(chan: grpc.Channel, service: str, name: str, frame: bytes,
              metadata: tuple[tuple[str, str], ...] = ()) -> bytes:
    result: bytes = chan.unary_unary(method(service, name))(frame, metadata=metadata, timeout=10)
    return result


def frame(message: Any) -> bytes:
    """The wire bytes of an SI model."""
    return to_proto(message).SerializeToString()


def status_of(call: Any, timeout: float = 10.0) -> tuple[grpc.StatusCode, str]:
    """How a stream call ended (it must end within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while call.is_active():
        if time.monotonic() > deadline:
            call.cancel()
            raise AssertionError("the stream did not end")
        time.sleep(0.01)
    return call.code(), call.details() or ""


def drained_status(call: Any) -> tuple[grpc.StatusCode, str]:
    """Read everything a stream still holds, then how it ended (for clients that lagged)."""
    try:
        for _ in call:
            pass
    except grpc.RpcError:
        pass
    return call.code(), call.details() or ""
