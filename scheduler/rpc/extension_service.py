"""The extension service ``yunikornfsm.ext.v1.SchedulerExtensions``: what the SI's service lacks.

The spec's service has no RPC for the callbacks ``send_event``,
``update_container_scheduling_state``, ``predicates`` and
``preemption_predicates``, for the hot reload, for the voluntary shutdown or
for the state dump; they live here, in their own package, so that
``si.v1`` stays exactly the spec's (``docs/shim-guide.md``, "Over gRPC").
A subscriber that does not keep up loses its subscription, not its RM; a
``Predicates`` stream that ends leaves the RM running, without predicates.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import grpc
from google.protobuf.message import DecodeError

from scheduler import ConfigError, si

from . import wire
from ._generated import si_pb2
from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .predicates import OFFERS, Asker
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
)
from .streams import CLIENT_LEFT, End, Stream, drain


@dataclass(frozen=True)
class ExtensionService(Service):
    """The handlers of ``yunikornfsm.ext.v1.SchedulerExtensions`` over one registry of RMs."""

    SERVICE: ClassVar[str] = wire.EXT_SERVICE
    registry: Registry

    def methods(self) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
        return {
            "Subscribe": grpc.unary_stream_rpc_method_handler(self.subscribe),
            "UpdateConfiguration": grpc.unary_unary_rpc_method_handler(
                self.update_configuration),
            "UnregisterResourceManager": grpc.unary_unary_rpc_method_handler(self.unregister),
            "StateDump": grpc.unary_unary_rpc_method_handler(self.state_dump),
            "Predicates": grpc.stream_stream_rpc_method_handler(self.predicates),
        }

    @guard_stream
    def subscribe(self, raw: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        session = self.registry.running(rm_id_of(raw, ext_pb2.SubscribeRequest))
        stream = session.subscribe(context)
        try:
            if not context.add_callback(functools.partial(self._left, stream)):
                return
            context.send_initial_metadata(())
            yield from drain(stream)
        finally:
            session.unsubscribe(stream)

    @staticmethod
    def _left(stream: Stream) -> None:
        stream.finish(CLIENT_LEFT)

    @guard
    def update_configuration(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        request = decode(raw, si_pb2.UpdateConfigurationRequest, si.UpdateConfigurationRequest)
        try:
            self.registry.update_configuration(request)
        except ConfigError as error:
            raise refused(error, context) from None
        return ext_pb2.UpdateConfigurationResponse().SerializeToString()

    @guard
    def unregister(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        self.registry.unregister(rm_id_of(raw, ext_pb2.UnregisterResourceManagerRequest))
        return ext_pb2.UnregisterResourceManagerResponse().SerializeToString()

    @guard
    def state_dump(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        return ext_pb2.StateDumpResponse(
            json=json.dumps(self.registry.api.state_dump(), sort_keys=True)).SerializeToString()

    @guard_stream
    def predicates(self, requests: Iterator[bytes],
                   context: grpc.ServicerContext) -> Iterator[bytes]:
        """The RM's predicates: questions out, its answers (by id) in, on its reader thread."""
        first = first_request(requests)
        if first is None:
            return                               # the client left before naming its RM
        session = self.registry.running(rm_id_of(first, ext_pb2.PredicateAnswer))
        if not session.offers:
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION,
                        f"resource manager {session.rm_id} offered no predicates at "
                        f"registration: register with the metadata {wire.PREDICATES_KEY} "
                        f"naming {' and/or '.join(OFFERS)}")
        asker = session.attach_predicates(context)
        if asker is None:
            raise Abort(grpc.StatusCode.ALREADY_EXISTS,
                        f"resource manager {session.rm_id} has an open Predicates stream already")
        try:
            if not context.add_callback(functools.partial(self._predicates_left,
                                                          session, asker)):
                return
            context.send_initial_metadata(())     # tells the client the stream is attached
            threading.Thread(target=self._answers, args=(asker, requests),
                             name="yunikorn-fsm-rpc-predicates-reader", daemon=True).start()
            yield from drain(asker.stream)
        finally:
            session.detach_predicates(asker)

    @staticmethod
    def _answers(asker: Asker, requests: Iterator[bytes]) -> None:
        """The RM's answers, into the questions waiting for them; the stream ends with them."""
        try:
            for raw in requests:
                try:
                    answer = ext_pb2.PredicateAnswer.FromString(raw)
                except DecodeError as error:
                    asker.stream.finish(End(grpc.StatusCode.INVALID_ARGUMENT,
                                            f"malformed PredicateAnswer: {error}"))
                    return
                asker.answer(answer)
        except grpc.RpcError:
            pass                                 # the call ended under the iterator
        asker.stream.finish(CLIENT_LEFT)         # no more answers: no more questions

    @staticmethod
    def _predicates_left(session: Session, asker: Asker) -> None:
        asker.stream.finish(CLIENT_LEFT)
        session.detach_predicates(asker)
