"""A Python shim's side of the RPC interface: ``scheduler.Scheduler``'s API over gRPC.

``Client`` has the SchedulerAPI's methods with the same messages, so a shim
written against the in-process core moves to a separate ``yunikorn-fsm serve``
process by swapping one object. The differences are the wire's:

- answers arrive asynchronously, on the client's stream threads (one per
  stream), not inside the call that caused them; callbacks are serialized (never
  two at once) and each stream's messages arrive in decision order, but the
  order *between* streams is not defined (gRPC streams are independent);
- events and container scheduling states come only with ``events=True`` (the
  extension service's subscription);
- ``predicates`` and ``preemption_predicates``, when the callback has them,
  are offered at registration and answered on the extension service's
  ``Predicates`` stream, serialized with the other callbacks; the server waits
  for each answer at most its predicate timeout, then counts the node as not
  fitting;
- a request for an RM whose streams are closed raises :class:`Disconnected`.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pydantic
from google.protobuf.message import Message

from scheduler import ConfigError, si
from scheduler.si import today

from . import wire
from ._generated import si_pb2, si_today_pb2
from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .convert import from_proto, to_proto
from .predicates import OFFERS

__all__ = ["Client", "Disconnected"]

log = logging.getLogger("yunikorn_fsm.rpc.client")

DisconnectHandler = Callable[[str, grpc.StatusCode, str], None]

# dialect -> kind -> (method, response class, response model, callback method)
_STREAMS: dict[str, dict[str, tuple[str, type[Message], type[pydantic.BaseModel], str]]] = {
    "seed": {
        "allocation": ("UpdateAllocation", si_pb2.AllocationResponse, si.AllocationResponse,
                       "update_allocation"),
        "application": ("UpdateApplication", si_pb2.ApplicationResponse,
                        si.ApplicationResponse, "update_application"),
        "node": ("UpdateNode", si_pb2.NodeResponse, si.NodeResponse, "update_node"),
    },
    "today": {
        "allocation": ("UpdateAllocation", si_today_pb2.AllocationResponse,
                       today.AllocationResponse, "update_allocation"),
        "application": ("UpdateApplication", si_today_pb2.ApplicationResponse,
                        today.ApplicationResponse, "update_application"),
        "node": ("UpdateNode", si_today_pb2.NodeResponse, today.NodeResponse, "update_node"),
    },
}
# dialect -> (EventRecord class and model, UpdateContainerSchedulingStateRequest class and model)
_UPDATES: dict[str, tuple[type[Message], type[pydantic.BaseModel],
                          type[Message], type[pydantic.BaseModel]]] = {
    "seed": (si_pb2.EventRecord, si.EventRecord, si_pb2.UpdateContainerSchedulingStateRequest,
             si.UpdateContainerSchedulingStateRequest),
    "today": (si_today_pb2.EventRecord, today.EventRecord,
              si_today_pb2.UpdateContainerSchedulingStateRequest,
              today.UpdateContainerSchedulingStateRequest),
}
_HELLO: dict[str, type[Message]] = {
    "allocation": si_pb2.AllocationRequest,
    "application": si_pb2.ApplicationRequest,
    "node": si_pb2.NodeRequest,
}
"""A stream's first message, the bare rmID (the same bytes in both dialects)."""


class Disconnected(ConnectionError):
    """The RM's streams to the server are closed; register again to resync."""


class _Link:
    """One registered RM: its three streams and, optionally, its event subscription."""

    def __init__(self, rm_id: str) -> None:
        self.rm_id = rm_id
        self.outgoing: dict[str, queue.SimpleQueue[Message | None]] = {}
        self.calls: list[Any] = []
        self.threads: list[threading.Thread] = []
        self.closed = threading.Event()
        self.ended_by_us = False

    def send(self, kind: str, message: Message) -> None:
        if self.closed.is_set():
            raise Disconnected(f"the streams of resource manager {self.rm_id} are closed; "
                               "register again to resync")
        self.outgoing[kind].put(message)

    def shut(self) -> None:
        self.ended_by_us = True
        self.closed.set()
        for q in self.outgoing.values():
            q.put(None)
        for call in self.calls:
            call.cancel()


class Client:
    """The SchedulerAPI of ``yunikorn-fsm serve``, for a shim written in Python.

    ``target`` is ``host:port``. ``token`` sends ``authorization: Bearer
    <token>`` with every call; ``root_certificates`` (PEM) switches to TLS and
    trusts that CA. ``on_disconnect(rm_id, code, details)`` is told when the
    server ends an RM's streams (paused, registered again elsewhere, shut down).

    ``dialect`` is the SI the client's RMs speak: ``"seed"`` (``scheduler.si``,
    ``si.proto``) or ``"today"`` (``scheduler.si.today``, ``si_today.proto``).
    Requests are sent as the class of the model passed (today's models go out
    in today's form); answers, events and scheduling states arrive as that
    dialect's models. The server learns the dialect from the requests, as it
    does from any shim's.
    """

    def __init__(self, target: str = "127.0.0.1:3333", *, token: str | None = None,
                 root_certificates: bytes | None = None, server_name: str | None = None,
                 events: bool = False, timeout: float = 30.0,
                 on_disconnect: DisconnectHandler | None = None,
                 dialect: str = "seed") -> None:
        if dialect not in _STREAMS:
            raise ValueError(f"dialect: {dialect!r} is neither 'seed' nor 'today'")
        self.dialect = dialect
        # its own connection: gRPC would otherwise share one between channels to the same
        # target, and one stalled RM's flow control would stall another's
        options: list[tuple[str, Any]] = [("grpc.max_receive_message_length", -1),
                                          ("grpc.use_local_subchannel_pool", 1)]
        if server_name is not None:
            options.append(("grpc.ssl_target_name_override", server_name))
        if root_certificates is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.secure_channel(target, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        self._events = events
        self._timeout = timeout
        self._on_disconnect = on_disconnect
        self._links: dict[str, _Link] = {}
        self._deliver = threading.Lock()
        self.errors: list[tuple[str, grpc.StatusCode, str]] = []
        """Every stream the server ended: ``(rm_id, code, details)``."""

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- SchedulerAPI
    def register_resource_manager(
        self, request: si.RegisterResourceManagerRequest, callback: Any
    ) -> si.RegisterResourceManagerResponse:
        """Register (or re-register: the server wipes the RM's state) and open its streams.

        Returns once every stream is attached, so nothing the core answers is
        missed. An invalid configuration raises ``ConfigError`` as in-process.
        """
        old = self._links.get(request.rm_id)
        if old is not None:
            old.ended_by_us = True        # the server ends the old streams on success
        offers = [name for name in OFFERS if callable(getattr(callback, name, None))]
        metadata = ((wire.PREDICATES_KEY, ",".join(offers)),) if offers else ()
        try:
            self._unary(wire.SCHEDULER_SERVICE, "RegisterResourceManager", to_proto(request),
                        si_pb2.RegisterResourceManagerResponse, metadata)
        except BaseException:
            if old is not None:
                old.ended_by_us = False   # refused: the old streams carry on
            raise
        if old is not None:
            old.shut()
        link = _Link(request.rm_id)
        self._links[request.rm_id] = link
        for kind, (method, response_cls, model, name) in _STREAMS[self.dialect].items():
            link.outgoing[kind] = queue.SimpleQueue()
            link.outgoing[kind].put(_HELLO[kind](rmID=request.rm_id))   # names the stream's RM
            call = self._channel.stream_stream(
                wire.method(wire.SCHEDULER_SERVICE, method),
                request_serializer=_serialize, response_deserializer=response_cls.FromString,
            )(self._requests(link.outgoing[kind]), metadata=self._metadata)
            self._consume(link, kind, call, _deliver_as(model, getattr(callback, name)))
        if self._events:
            call = self._channel.unary_stream(
                wire.method(wire.EXT_SERVICE, "Subscribe"), request_serializer=_serialize,
                response_deserializer=ext_pb2.ShimUpdate.FromString,
            )(ext_pb2.SubscribeRequest(rmID=request.rm_id), metadata=self._metadata)
            self._consume(link, "events", call, _deliver_updates(callback, self.dialect))
        if offers:
            answers: queue.SimpleQueue[Message | None] = queue.SimpleQueue()
            link.outgoing["predicates"] = answers
            answers.put(ext_pb2.PredicateAnswer(rmID=request.rm_id))   # names the RM
            call = self._channel.stream_stream(
                wire.method(wire.EXT_SERVICE, "Predicates"), request_serializer=_serialize,
                response_deserializer=ext_pb2.PredicateQuestion.FromString,
            )(self._requests(answers), metadata=self._metadata)
            self._consume(link, "predicates", call, _answer(callback, answers))
        for call in link.calls:
            call.initial_metadata()       # the server attached the stream (or ended it)
            if not call.is_active():
                self._join(link)
                self._links.pop(request.rm_id, None)
                reason = self.errors[-1][2] if self.errors else "ended"
                raise Disconnected(f"resource manager {request.rm_id}: the server refused "
                                   f"a stream: {reason}")
        return si.RegisterResourceManagerResponse()

    def update_allocation(self, request: si.AllocationRequest | today.AllocationRequest) -> None:
        self._link(request.rm_id).send("allocation", to_proto(request))

    def update_application(self, request: si.ApplicationRequest) -> None:
        self._link(request.rm_id).send("application", to_proto(request))

    def update_node(self, request: si.NodeRequest | today.NodeRequest) -> None:
        self._link(request.rm_id).send("node", to_proto(request))

    def update_configuration(self, request: si.UpdateConfigurationRequest) -> None:
        """Hot reload; an invalid configuration raises ``ConfigError`` as in-process."""
        self._unary(wire.EXT_SERVICE, "UpdateConfiguration", to_proto(request),
                    ext_pb2.UpdateConfigurationResponse)

    def unregister_resource_manager(self, rm_id: str) -> None:
        """The voluntary shutdown: the RM stops, its state is removed, its streams close."""
        link = self._links.pop(rm_id, None)
        if link is not None:
            link.ended_by_us = True
        self._unary(wire.EXT_SERVICE, "UnregisterResourceManager",
                    ext_pb2.UnregisterResourceManagerRequest(rmID=rm_id),
                    ext_pb2.UnregisterResourceManagerResponse)
        if link is not None:
            link.shut()
            self._join(link)

    def state_dump(self) -> dict[str, Any]:
        """The core's ``state_dump()``."""
        response = self._unary(wire.EXT_SERVICE, "StateDump", ext_pb2.StateDumpRequest(),
                               ext_pb2.StateDumpResponse)
        dump: dict[str, Any] = json.loads(response.json)
        return dump

    def close(self) -> None:
        """Close every stream and the channel (the server pauses RMs still registered)."""
        links = list(self._links.values())
        self._links.clear()
        for link in links:
            link.shut()
        for link in links:
            self._join(link)
        self._channel.close()

    def connected(self, rm_id: str) -> bool:
        """Whether ``rm_id``'s streams are open."""
        link = self._links.get(rm_id)
        return link is not None and not link.closed.is_set()

    # ---------------------------------------------------------------- plumbing
    def _link(self, rm_id: str) -> _Link:
        link = self._links.get(rm_id)
        if link is None:
            raise Disconnected(f"resource manager {rm_id} is not registered by this client")
        return link

    def _unary(self, service: str, method: str, request: Message, response_cls: Any,
               metadata: tuple[tuple[str, str], ...] = ()) -> Any:
        call = self._channel.unary_unary(wire.method(service, method),
                                         request_serializer=_serialize,
                                         response_deserializer=response_cls.FromString)
        try:
            return call(request, metadata=self._metadata + metadata, timeout=self._timeout)
        except grpc.RpcError as error:
            received: Any = error.trailing_metadata() or ()
            trailing = dict(received)
            if wire.CONFIG_REASON_KEY in trailing:
                raise ConfigError(str(trailing[wire.CONFIG_REASON_KEY]),
                                  str(trailing.get(wire.CONFIG_PATH_KEY, ""))) from None
            raise

    @staticmethod
    def _requests(outgoing: queue.SimpleQueue[Message | None]) -> Iterator[Message]:
        while True:
            message = outgoing.get()
            if message is None:
                return
            yield message

    def _consume(self, link: _Link, kind: str, call: Any,
                 deliver: Callable[[Message], None]) -> None:
        link.calls.append(call)
        thread = threading.Thread(target=self._pump, args=(link, kind, call, deliver),
                                  name=f"yunikorn-fsm-client-{kind}", daemon=True)
        link.threads.append(thread)
        thread.start()

    def _pump(self, link: _Link, kind: str, call: Any,
              deliver: Callable[[Message], None]) -> None:
        """One stream's responses into the callback, in order, one callback at a time."""
        try:
            for message in call:
                with self._deliver:
                    try:
                        deliver(message)
                    except Exception:       # as in-process: logged, and delivery goes on
                        log.exception("resource manager callback for %s raised", kind)
        except grpc.RpcError as error:
            if not link.ended_by_us:
                code, details = error.code(), error.details() or ""
                self.errors.append((link.rm_id, code, details))
                link.shut()
                if self._on_disconnect is not None:
                    self._on_disconnect(link.rm_id, code, details)

    @staticmethod
    def _join(link: _Link) -> None:
        me = threading.current_thread()
        for thread in link.threads:
            if thread is not me:
                thread.join(timeout=5)


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _deliver_as(model: type[pydantic.BaseModel],
                method: Callable[[Any], None]) -> Callable[[Message], None]:
    def deliver(message: Message) -> None:
        method(from_proto(message, model))
    return deliver


def _answer(callback: Any,
            answers: queue.SimpleQueue[Message | None]) -> Callable[[Message], None]:
    """The server's predicate questions, answered from ``callback`` onto ``answers``.

    A predicate that raises answers ``error`` (the node does not fit; the core
    reports the message, as for an in-process predicate that raises).
    """
    def deliver(message: Message) -> None:
        question: Any = message
        answer = ext_pb2.PredicateAnswer(id=question.id)
        try:
            if question.HasField("predicates"):
                answer.fits = bool(callback.predicates(
                    from_proto(question.predicates, si.PredicatesArgs)))
            elif question.HasField("preemptionPredicates"):
                result = callback.preemption_predicates(
                    from_proto(question.preemptionPredicates, si.PreemptionPredicatesArgs))
                answer.preemption.success = bool(getattr(result, "success", False))
                answer.preemption.index = int(getattr(result, "index", 0))
            else:
                answer.error = "a question this client does not know"
        except Exception as error:
            answer.error = f"{type(error).__name__}: {error}"
        answers.put(answer)
    return deliver


def _deliver_updates(callback: Any, dialect: str) -> Callable[[Message], None]:
    """The extension stream's updates into the callback, as ``dialect``'s models.

    The stream's messages hold the seed's classes; today's ``EventRecord``
    fields beyond them travel as unknown fields, so today's are read again
    from the bytes with today's classes.
    """
    event_cls, event_model, state_cls, state_model = _UPDATES[dialect]

    def deliver(message: Message) -> None:
        update: Any = message
        if update.HasField("events"):
            callback.send_event([_as(e, event_cls, event_model) for e in update.events.events])
        elif update.HasField("schedulingState"):
            callback.update_container_scheduling_state(
                _as(update.schedulingState, state_cls, state_model))
    return deliver


def _as(message: Message, cls: type[Message], model: type[pydantic.BaseModel]) -> Any:
    if type(message) is not cls:
        message = cls.FromString(message.SerializeToString())
    return from_proto(message, model)
