"""One registration of one RM: the core's callback into its outboxes, its streams and subscribers.

``RegisterResourceManager`` hands the core a ``Callback`` owned by a new
``Session``. The callback converts each message to protobuf, serializes it
and queues it on the session's outbox for that stream kind (allocation,
application, node): it never blocks the core. A full outbox means the client
stopped reading; the session then calls its ``on_overflow`` (the registry
pauses the RM). Events and container scheduling states go to the extension
service's subscribers, if any; nothing is kept for an RM without one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final, TypeVar, cast

import grpc
import pydantic
from google.protobuf.message import Message

from scheduler import si
from scheduler.si import today

from . import wire
from ._generated import si_pb2
from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .convert import to_proto
from .dialects import Dialect
from .streams import End, Outbox, Stream

KINDS: Final = ("allocation", "application", "node")
"""The three update streams of the SI's service, by the kind of message they carry."""

RUNNING, PAUSED, CLOSED = "running", "paused", "closed"
"""A session's states: serving; its RM paused by the connection; replaced or ended."""


class Callback:
    """The RM's callback inside the server: converts, serializes and queues; never blocks.

    It has no ``predicates``: over RPC every node passes (``docs/design-notes.md``).
    """

    __slots__ = ("_session",)

    def __init__(self, session: Session) -> None:
        self._session = session

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self._session.send("allocation", response)

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._session.send("application", response)

    def update_node(self, response: si.NodeResponse) -> None:
        self._session.send("node", response)

    @property
    def wants_events(self) -> bool:
        """Whether a subscriber would read events now (a translating callback skips them)."""
        return bool(self._session.subscribers)

    def send_event(self, events: list[si.EventRecord] | list[today.EventRecord]) -> None:
        session = self._session
        if session.subscribers:
            memo: dict[int, Message] = {}
            batch = ext_pb2.EventBatch(events=[
                _seed_typed(si_pb2.EventRecord, to_proto(e, _memo=memo)) for e in events])
            session.publish([ext_pb2.ShimUpdate(events=cast(ext_pb2.EventBatch, piece))
                             for piece in wire.split(batch)])

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
        | today.UpdateContainerSchedulingStateRequest,
    ) -> None:
        session = self._session
        if session.subscribers:
            state = _seed_typed(si_pb2.UpdateContainerSchedulingStateRequest, to_proto(request))
            session.publish([ext_pb2.ShimUpdate(schedulingState=state)])


_T = TypeVar("_T", bound=Message)


def _seed_typed(cls: type[_T], message: Message) -> _T:
    """``message`` as the seed's class ``cls``, which the extension service's messages hold.

    Today's ``EventRecord`` has two fields more (``eventChangeDetail``,
    ``resource``): parsed into the seed's class they are kept as unknown
    fields and serialized again unchanged, so a client of today's dialect reads
    them back with today's class. Today's ``UpdateContainerSchedulingStateRequest``
    has the same bytes as the seed's.
    """
    if isinstance(message, cls):
        return message
    return cls.FromString(message.SerializeToString())


class Session:
    """One registration of one RM: its outboxes, its open streams and subscribers.

    ``on_overflow(session, end)`` is called (inside the core's delivery: it
    must not block) when a stream's client stops reading; a subscriber that
    stops reading is ended alone and reset after ``stalled_grace`` seconds.
    """

    def __init__(self, rm_id: str, limit: int, stalled_grace: float,
                 on_overflow: Callable[[Session, End], None]) -> None:
        self.rm_id = rm_id
        self.limit = limit
        self.stalled_grace = stalled_grace
        self.on_overflow = on_overflow
        self.state = RUNNING
        self.outboxes = {kind: Outbox(limit) for kind in KINDS}
        self.streams: dict[str, Stream] = {}
        self.subscribers: list[Stream] = []
        self.lock = threading.Lock()
        self.callback = Callback(self)
        self.dialect: Dialect | None = None
        """The SI the RM speaks, once a request showed it (``scheduler.rpc.dialects``).

        It lives as long as the registration: a stream reopened after an error
        keeps it, a new registration (a new session) starts without one.
        """

    def decide(self, dialect: Dialect) -> Dialect:
        """The RM's dialect: ``dialect`` if it had none (the first request to show one wins)."""
        with self.lock:
            if self.dialect is None:
                self.dialect = dialect
            return self.dialect

    # -- called by the core, through the callback ---------------------------------
    def send(self, kind: str, response: pydantic.BaseModel) -> None:
        if self.state != RUNNING:
            return
        data = [m.SerializeToString() for m in wire.split(to_proto(response))]
        if not self.outboxes[kind].put(data):
            self.on_overflow(self, End(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the client did not read its {kind} stream (more than {self.limit} bytes "
                f"waiting): resource manager {self.rm_id} is paused; register again to resync"))

    def publish(self, updates: list[ext_pb2.ShimUpdate]) -> None:
        data = [u.SerializeToString() for u in updates]
        for sub in list(self.subscribers):
            if not sub.outbox.put(data):
                sub.finish(End(grpc.StatusCode.RESOURCE_EXHAUSTED,
                               f"the subscriber did not read its events (more than "
                               f"{self.limit} bytes waiting); subscribe again"))
                self.unsubscribe(sub)
                sub.reset_later(self.stalled_grace)

    # -- streams ---------------------------------------------------------------------
    def attach(self, kind: str, context: grpc.ServicerContext) -> Stream | None:
        """A new stream of ``kind``, or None when one is open already."""
        with self.lock:
            if kind in self.streams:
                return None
            stream = self.streams[kind] = Stream(self.outboxes[kind], context)
            return stream

    def detach(self, kind: str, stream: Stream) -> None:
        with self.lock:
            if self.streams.get(kind) is stream:
                del self.streams[kind]

    def open_streams(self) -> list[Stream]:
        """The update streams open now."""
        with self.lock:
            return list(self.streams.values())

    def subscribe(self, context: grpc.ServicerContext) -> Stream:
        stream = Stream(Outbox(self.limit), context)
        with self.lock:
            self.subscribers = [*self.subscribers, stream]
        return stream

    def unsubscribe(self, stream: Stream) -> None:
        with self.lock:
            self.subscribers = [s for s in self.subscribers if s is not stream]

    def close(self, end: End) -> None:
        """End every stream and subscription of this session with ``end``."""
        for outbox in self.outboxes.values():
            outbox.close(end)
        for sub in self.subscribers:
            sub.outbox.close(end)
