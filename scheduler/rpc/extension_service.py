"""The extension service ``yunikornfsm.ext.v1.SchedulerExtensions``: what the SI's service lacks.

The spec's service has no RPC for the callbacks ``send_event`` and
``update_container_scheduling_state``, for the hot reload, for the voluntary
shutdown or for the state dump; they live here, in their own package, so that
``si.v1`` stays exactly the spec's (``docs/shim-guide.md``, "Over gRPC").
A subscriber that does not keep up loses its subscription, not its RM.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import grpc

from scheduler import ConfigError, si

from . import wire
from ._generated import si_pb2
from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .registry import Registry
from .status import Service, decode, guard, guard_stream, refused, rm_id_of
from .streams import CLIENT_LEFT, Stream, drain


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
