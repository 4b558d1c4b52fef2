"""The SI's ``si.v1.Scheduler`` service: registration and the three bidirectional update streams.

``RegisterResourceManager`` registers the RM with the core under a new
session (``scheduler.rpc.registry``). Each bidirectional stream names its RM
in its first message. It then has a reader thread (requests, in order, into
the core) and a writer (the session's outbox for that kind, every message in
decision order, onto the wire). A stream the client drops moves the RM to
Paused (``connection_lost``); a new registration ends the old session's
streams. A request for an RM this server did not register (or that is
paused) gets FAILED_PRECONDITION before the core sees it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import grpc

from scheduler import ConfigError, si

from . import dialects, wire
from ._generated import si_pb2
from .dialects import REQUESTS, Dialect
from .predicates import OFFERS
from .registry import Registry
from .session import Session
from .status import (
    Abort,
    Service,
    decode,
    first_request,
    guard,
    guard_stream,
    refused,
    rm_id_of,
    status_of,
)
from .streams import CLIENT_LEFT, End, Stream, drain

_METHODS: Final[dict[str, str]] = {
    "allocation": "update_allocation",
    "application": "update_application",
    "node": "update_node",
}
"""Each stream's core method."""


@dataclass(frozen=True)
class SchedulerService(Service):
    """The handlers of ``si.v1.Scheduler`` over one registry of RMs."""

    SERVICE: ClassVar[str] = wire.SCHEDULER_SERVICE
    registry: Registry

    def methods(self) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
        return {
            "RegisterResourceManager": grpc.unary_unary_rpc_method_handler(self.register),
            "UpdateAllocation": grpc.stream_stream_rpc_method_handler(
                functools.partial(self.update, "allocation")),
            "UpdateApplication": grpc.stream_stream_rpc_method_handler(
                functools.partial(self.update, "application")),
            "UpdateNode": grpc.stream_stream_rpc_method_handler(
                functools.partial(self.update, "node")),
        }

    @guard
    def register(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        request = decode(raw, si_pb2.RegisterResourceManagerRequest,
                         si.RegisterResourceManagerRequest)
        offers = _offers(context)
        try:
            self.registry.register(request, offers)
        except ConfigError as error:
            raise refused(error, context) from None
        return si_pb2.RegisterResourceManagerResponse().SerializeToString()

    @guard_stream
    def update(self, kind: str, requests: Iterator[bytes],
               context: grpc.ServicerContext) -> Iterator[bytes]:
        first = first_request(requests)
        if first is None:
            return                               # the client left before naming its RM
        session = self.registry.running(rm_id_of(first, REQUESTS[kind][Dialect.SEED][0]))
        request = self._read(kind, session, first)
        stream = session.attach(kind, context)
        if stream is None:
            raise Abort(grpc.StatusCode.ALREADY_EXISTS,
                        f"resource manager {session.rm_id} has an open {kind} stream already")
        try:
            if not context.add_callback(functools.partial(self._ended, session, stream)):
                return
            context.send_initial_metadata(())     # tells the client the stream is attached
            threading.Thread(target=self._serve, args=(kind, session, stream, request, requests),
                             name=f"yunikorn-fsm-rpc-{kind}-reader", daemon=True).start()
            yield from drain(stream)
        finally:
            session.detach(kind, stream)

    @staticmethod
    def _read(kind: str, session: Session, raw: bytes) -> Any:
        """The request in ``raw``, read in the RM's dialect; the first to show one decides it."""
        reading = dialects.read(kind, raw, session.rm_id, session.dialect)
        if reading.shown is not None and session.dialect is None \
                and session.decide(reading.shown) is not reading.shown:
            # another stream of the same RM decided first, the other way
            return dialects.read(kind, raw, session.rm_id, session.dialect).request
        return reading.request

    def _serve(self, kind: str, session: Session, stream: Stream, first: Any,
               requests: Iterator[bytes]) -> None:
        """A stream's requests, in order, into the core (the stream's reader thread)."""
        call = getattr(self.registry.api, _METHODS[kind])
        try:
            self._apply(call, session, first)
            for raw in requests:
                if stream.end is not None:
                    return
                self._apply(call, session, self._read(kind, session, raw))
        except grpc.RpcError:
            pass                                 # the call ended under the iterator
        except Exception as error:
            status = status_of(error, f"{kind} request of resource manager {session.rm_id}")
            stream.finish(End(status.code, status.details))

    @staticmethod
    def _apply(call: Callable[[Any], None], session: Session, request: Any) -> None:
        if request.rm_id != session.rm_id:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"rmID: this stream belongs to resource manager {session.rm_id}, "
                        f"not {request.rm_id}")
        if request.model_fields_set - {"rm_id"}:     # a bare rmID only opens the stream
            call(request)

    def _ended(self, session: Session, stream: Stream) -> None:
        """A stream's call terminated; when the client ended it, the RM lost its connection."""
        if stream.finish(CLIENT_LEFT):
            self.registry.stream_ended(session, End(
                grpc.StatusCode.UNAVAILABLE,
                f"a stream of resource manager {session.rm_id} was dropped: it is paused; "
                "register again to resync"))


def _offers(context: grpc.ServicerContext) -> frozenset[str]:
    """The predicates the registration's metadata offers (``wire.PREDICATES_KEY``)."""
    offered: set[str] = set()
    for key, value in context.invocation_metadata():
        if key == wire.PREDICATES_KEY:
            offered.update(v.strip() for v in str(value).split(",") if v.strip())
    unknown = sorted(offered.difference(OFFERS))
    if unknown:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                    f"{wire.PREDICATES_KEY}: {', '.join(unknown)} is not one of "
                    f"{', '.join(OFFERS)}")
    return frozenset(offered)
