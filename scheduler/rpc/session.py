"""One registration of one RM: the core's callback into its outboxes, its streams and subscribers.

``RegisterResourceManager`` hands the core a ``Callback`` owned by a new
``Session``. The callback converts each message to protobuf, serializes it
and queues it on the session's outbox for that stream kind (allocation,
application, node): it never blocks the core. A full outbox means the client
stopped reading; the session then calls its ``on_overflow`` (the registry
pauses the RM). Events and container scheduling states go to the extension
service's subscribers, if any; nothing is kept for an RM without one.

An RM that offered ``predicates`` or ``preemption_predicates`` at
registration gets a callback with those methods; each asks the RM's open
``Predicates`` stream (``scheduler.rpc.predicates``), and while none is open
answers as a callback without them: every node passes, the core's choice of
victims is accepted.
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
from .predicates import Asker, PredicateError, Silent
from .streams import End, Outbox, Stream

KINDS: Final = ("allocation", "application", "node")
"""The three update streams of the SI's service, by the kind of message they carry."""

RUNNING, PAUSED, CLOSED = "running", "paused", "closed"
"""A session's states: serving; its RM paused by the connection; replaced or ended."""


class Callback:
    """The RM's callback inside the server: converts, serializes and queues; never blocks.

    It has no ``predicates``: the callback of an RM that offered them is one
    of the subclasses below, chosen by what it offered (``Session``).
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


class _Predicates(Callback):
    __slots__ = ()

    def predicates(self, args: si.PredicatesArgs) -> bool:
        return self._session.predicates(args)


class _PreemptionPredicates(Callback):
    __slots__ = ()

    def preemption_predicates(
        self, args: si.PreemptionPredicatesArgs,
    ) -> si.PreemptionPredicatesResponse:
        return self._session.preemption_predicates(args)


class _BothPredicates(_Predicates, _PreemptionPredicates):
    __slots__ = ()


_CALLBACKS: Final[dict[frozenset[str], type[Callback]]] = {
    frozenset(): Callback,
    frozenset({"predicates"}): _Predicates,
    frozenset({"preemption_predicates"}): _PreemptionPredicates,
    frozenset({"predicates", "preemption_predicates"}): _BothPredicates,
}

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
                 on_overflow: Callable[[Session, End], None],
                 offers: frozenset[str] = frozenset(), predicate_timeout: float = 0.5) -> None:
        self.rm_id = rm_id
        self.offers = offers
        """What the RM offered at registration: ``predicates``, ``preemption_predicates``."""
        self.predicate_timeout = predicate_timeout
        self.asker: Asker | None = None
        """The RM's open ``Predicates`` stream, if any."""
        self.limit = limit
        self.stalled_grace = stalled_grace
        self.on_overflow = on_overflow
        self.state = RUNNING
        self.outboxes = {kind: Outbox(limit) for kind in KINDS}
        self.streams: dict[str, Stream] = {}
        self.subscribers: list[Stream] = []
        self.lock = threading.Lock()
        self.callback = _CALLBACKS[offers](self)
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

    # -- called by the core inside its cycle, through the callback -------------------
    def predicates(self, args: si.PredicatesArgs) -> bool:
        """The RM's answer on its stream; True (every node passes) without one."""
        asker = self.asker
        if asker is None:
            return True
        try:
            answer = asker.ask(ext_pb2.PredicateQuestion(predicates=si_pb2.PredicatesArgs(
                allocationKey=args.allocation_key, nodeID=args.node_id,
                allocate=args.allocate)))
        except Silent:
            return False
        if answer is None:
            return True
        kind = answer.WhichOneof("answer")
        if kind == "fits":
            return answer.fits
        raise _refusal(answer, kind, "fits")

    def preemption_predicates(
        self, args: si.PreemptionPredicatesArgs,
    ) -> si.PreemptionPredicatesResponse:
        """The RM's answer on its stream; the core's choice (``start_index``) without one."""
        asker = self.asker
        accept = si.PreemptionPredicatesResponse(success=True, index=args.start_index)
        if asker is None:
            return accept
        try:
            answer = asker.ask(ext_pb2.PredicateQuestion(
                preemptionPredicates=si_pb2.PreemptionPredicatesArgs(
                    allocationKey=args.allocation_key, nodeID=args.node_id,
                    preemptAllocationKeys=args.preempt_allocation_keys,
                    startIndex=args.start_index)))
        except Silent:
            return si.PreemptionPredicatesResponse(success=False, index=0)
        if answer is None:
            return accept
        kind = answer.WhichOneof("answer")
        if kind == "preemption":
            return si.PreemptionPredicatesResponse.model_construct(
                success=answer.preemption.success, index=answer.preemption.index)
        raise _refusal(answer, kind, "preemption")

    def attach_predicates(self, context: grpc.ServicerContext) -> Asker | None:
        """The RM's new ``Predicates`` stream, or None when one is open already."""
        with self.lock:
            if self.asker is not None:
                return None
            asker = self.asker = Asker(self.rm_id, Stream(Outbox(self.limit), context),
                                       self.predicate_timeout)
        if self.state != RUNNING:          # closed meanwhile: end it as the others were
            asker.stream.outbox.close(End(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"resource manager {self.rm_id} is {self.state}; register again to resync"))
            self.detach_predicates(asker)
        return asker

    def detach_predicates(self, asker: Asker) -> None:
        """The stream is gone: a question waiting on it, and every later one, gets the
        answer of an RM without predicates."""
        with self.lock:
            if self.asker is asker:
                self.asker = None
        asker.close()

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
        asker = self.asker
        if asker is not None:
            asker.stream.outbox.close(end)
            self.detach_predicates(asker)


def _refusal(answer: ext_pb2.PredicateAnswer, kind: str | None, wanted: str) -> PredicateError:
    """Why an answer that is not ``wanted`` says no: the RM's error, or the wrong answer."""
    if kind == "error":
        return PredicateError(answer.error)
    return PredicateError(f"the resource manager answered {kind or 'nothing'} "
                          f"where {wanted} was asked")
