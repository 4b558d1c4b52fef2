"""The gRPC server: a core behind the SI's ``si.v1.Scheduler`` service and the extension service.

Shape (``docs/shim-guide.md``, "Over gRPC"; choices in ``docs/design-notes.md``,
"The RPC interface"):

- ``RegisterResourceManager`` registers the RM with the core, handing it a
  callback owned by a *session* (one per registration). The callback never
  blocks: it converts each message to protobuf, serializes it and appends it
  to the session's bounded outbox for that stream kind (allocation,
  application, node). A full outbox means the client stopped reading: its
  streams are ended with RESOURCE_EXHAUSTED and the RM is paused, so the
  scheduling thread is never stalled and memory never grows without bound.
- Each bidirectional stream names its RM in its first message. It then has a
  reader thread (requests, in order, into the core) and a writer (the
  outbox, in decision order, onto the wire). A stream the client drops moves
  the RM to Paused (``connection_lost``); a new registration starts a new
  session and ends the old one's streams.
- Requests are validated as pydantic models before the core sees them: a bad
  one ends its call with INVALID_ARGUMENT naming the field and changes
  nothing; a request for an RM this server did not register (or that is
  paused) gets FAILED_PRECONDITION.
- Events and container scheduling states go to the extension service's
  subscribers, if any; nothing is kept for an RM without one.

The paused-RM timeout is the core's (``Scheduler(rm_pause_timeout=...)``):
when it stops an RM, the server forgets the RM's paused session.

Locking: ``Server._lock`` orders registrations against pauses and timeouts of
the same RM; it is held around core calls, so the callback (which runs inside
core calls, on whatever thread made them) never takes it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import hmac
import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast

import grpc
import pydantic
from google.protobuf.message import DecodeError, Message

from scheduler import ConfigError, Scheduler, UnknownResourceManager, si
from statemachines import TransitionRecord

from . import wire
from ._generated import si_pb2
from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .convert import from_proto, to_proto

log = logging.getLogger("yunikorn_fsm.rpc")

KINDS: Final = ("allocation", "application", "node")
"""The three update streams of the SI's service, by the kind of message they carry."""

_M = TypeVar("_M", bound=pydantic.BaseModel)
_R = TypeVar("_R")


@dataclass(frozen=True)
class ServerOptions:
    """How ``Server`` listens and what it tolerates (``yunikorn-fsm serve`` flags)."""

    host: str = "127.0.0.1"
    port: int = 3333
    tls_cert: bytes | None = None
    """PEM certificate chain; with ``tls_key`` the server only speaks TLS."""
    tls_key: bytes | None = None
    token: str | None = None
    """When set, every call must carry ``authorization: Bearer <token>`` metadata."""
    stream_buffer_bytes: int = 64 * 1024 * 1024
    """Serialized bytes waiting for one stream before its client counts as not reading."""
    max_streams: int = 256
    """Concurrent calls (streams included) before new ones get RESOURCE_EXHAUSTED."""
    stalled_grace: float = 5.0
    """Seconds a stream ended for not reading may take to read its status before it is reset."""
    schedule_interval: float = 0.05
    """The background scheduling loop's idle wait (it wakes at once on new requests)."""


@dataclass(frozen=True)
class _End:
    """Why a stream ends: a status for the client, or None when the client itself left."""

    code: grpc.StatusCode | None
    details: str


_CLIENT_LEFT = _End(None, "the client ended the call")


class _Abort(Exception):
    """Raised inside a handler to end the call with a status (turned into ``context.abort``)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _Stream:
    """One open response stream (an update stream or a subscription)."""

    __slots__ = ("context", "end", "outbox")

    def __init__(self, outbox: _Outbox, context: grpc.ServicerContext) -> None:
        self.outbox = outbox
        self.context = context
        self.end: _End | None = None

    def finish(self, end: _End) -> bool:
        """End the stream with ``end`` unless it already ends; True when this call ended it."""
        return self.outbox.finish(self, end)

    def reset_later(self, grace: float) -> None:
        """Reset the call if it is still open after ``grace`` seconds.

        A client that stopped reading never takes the status that ends its
        stream (it waits behind the unread messages, under HTTP/2 flow control),
        and the worker thread sending to it stays blocked; a reset frees both.
        """
        timer = threading.Timer(grace, self._reset)
        timer.daemon = True
        timer.start()

    def _reset(self) -> None:
        if self.context.is_active():
            cast(Any, self.context).cancel()         # grpc-stubs leave it untyped


class _Outbox:
    """A bounded queue of serialized messages waiting for one response stream."""

    def __init__(self, limit: int) -> None:
        self._items: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._limit = limit
        self._cond = threading.Condition()
        self._closed: _End | None = None

    def put(self, items: list[bytes]) -> bool:
        """Queue ``items``; False (nothing queued) when they would exceed the limit.

        The limit bounds what is *already* waiting: one response is always
        taken into an empty outbox, whatever its size, so a client that reads
        is never cut off by a large batch.
        """
        with self._cond:
            if self._closed is not None:
                return True                    # the session is over: nobody will read them
            size = sum(len(b) for b in items)
            if self._size and self._size + size > self._limit:
                return False
            self._items.extend(items)
            self._size += size
            self._cond.notify_all()
            return True

    def get(self, stream: _Stream) -> bytes | _End:
        """The next message for ``stream``, waiting for one, or why the stream ends."""
        with self._cond:
            while True:
                if stream.end is not None:
                    return stream.end
                if self._closed is not None:
                    stream.end = self._closed
                    return stream.end
                if self._items:
                    data = self._items.popleft()
                    self._size -= len(data)
                    return data
                self._cond.wait()

    def finish(self, stream: _Stream, end: _End) -> bool:
        with self._cond:
            if stream.end is not None:
                return False
            stream.end = end
            self._cond.notify_all()
            return True

    def close(self, end: _End) -> None:
        """End every current and future stream of this outbox with ``end``; drop what waits."""
        with self._cond:
            if self._closed is None:
                self._closed = end
                self._items.clear()
                self._size = 0
            self._cond.notify_all()


class _Callback:
    """The RM's callback inside the server: converts, serializes and queues; never blocks.

    It has no ``predicates``: over RPC every node passes (``docs/design-notes.md``).
    """

    __slots__ = ("_session",)

    def __init__(self, session: _Session) -> None:
        self._session = session

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self._session.send("allocation", response)

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._session.send("application", response)

    def update_node(self, response: si.NodeResponse) -> None:
        self._session.send("node", response)

    def send_event(self, events: list[si.EventRecord]) -> None:
        session = self._session
        if session.subscribers:
            memo: dict[int, Message] = {}
            batch = ext_pb2.EventBatch(
                events=[cast(si_pb2.EventRecord, to_proto(e, memo)) for e in events])
            session.publish([ext_pb2.ShimUpdate(events=cast(ext_pb2.EventBatch, piece))
                             for piece in wire.split(batch)])

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        session = self._session
        if session.subscribers:
            state = cast(si_pb2.UpdateContainerSchedulingStateRequest, to_proto(request))
            session.publish([ext_pb2.ShimUpdate(schedulingState=state)])


_RUNNING, _PAUSED, _CLOSED = "running", "paused", "closed"


class _Session:
    """One registration of one RM: its outboxes, its open streams and subscribers."""

    def __init__(self, server: Server, rm_id: str, limit: int) -> None:
        self.server = server
        self.rm_id = rm_id
        self.limit = limit
        self.state = _RUNNING
        self.outboxes = {kind: _Outbox(limit) for kind in KINDS}
        self.streams: dict[str, _Stream] = {}
        self.subscribers: list[_Stream] = []
        self.lock = threading.Lock()
        self.callback = _Callback(self)

    # -- called by the core, through the callback ---------------------------------
    def send(self, kind: str, response: pydantic.BaseModel) -> None:
        if self.state != _RUNNING:
            return
        data = [m.SerializeToString() for m in wire.split(to_proto(response))]
        if not self.outboxes[kind].put(data):
            self.server._overflow(self, _End(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the client did not read its {kind} stream (more than {self.limit} bytes "
                f"waiting): resource manager {self.rm_id} is paused; register again to resync"))

    def publish(self, updates: list[ext_pb2.ShimUpdate]) -> None:
        data = [u.SerializeToString() for u in updates]
        for sub in list(self.subscribers):
            if not sub.outbox.put(data):
                sub.finish(_End(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"the subscriber did not read its events (more than "
                                f"{self.limit} bytes waiting); subscribe again"))
                self.unsubscribe(sub)
                sub.reset_later(self.server.options.stalled_grace)

    # -- streams ---------------------------------------------------------------------
    def attach(self, kind: str, context: grpc.ServicerContext) -> _Stream | None:
        """A new stream of ``kind``, or None when one is open already."""
        with self.lock:
            if kind in self.streams:
                return None
            stream = self.streams[kind] = _Stream(self.outboxes[kind], context)
            return stream

    def detach(self, kind: str, stream: _Stream) -> None:
        with self.lock:
            if self.streams.get(kind) is stream:
                del self.streams[kind]

    def subscribe(self, context: grpc.ServicerContext) -> _Stream:
        stream = _Stream(_Outbox(self.limit), context)
        with self.lock:
            self.subscribers = [*self.subscribers, stream]
        return stream

    def unsubscribe(self, stream: _Stream) -> None:
        with self.lock:
            self.subscribers = [s for s in self.subscribers if s is not stream]

    def close(self, end: _End) -> None:
        """End every stream and subscription of this session with ``end``."""
        for outbox in self.outboxes.values():
            outbox.close(end)
        for sub in self.subscribers:
            sub.outbox.close(end)


def _decode(raw: bytes, wire_cls: type[Message], model: type[_M]) -> _M:
    """The validated request in ``raw``, or ``_Abort`` with INVALID_ARGUMENT saying why."""
    try:
        message = wire_cls.FromString(raw)
    except DecodeError as error:
        raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                     f"malformed {wire_cls.DESCRIPTOR.name}: {error}") from None
    try:
        return from_proto(message, model)
    except pydantic.ValidationError as error:
        raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, wire.invalid_details(error)) from None


def _refused(error: ConfigError, context: grpc.ServicerContext) -> _Abort:
    """INVALID_ARGUMENT for a configuration the core refused, with its path and reason.

    The path and reason also go out as trailing metadata, so that a client can
    raise the same ``ConfigError`` the in-process API raises.
    """
    context.set_trailing_metadata(
        ((wire.CONFIG_PATH_KEY, error.path), (wire.CONFIG_REASON_KEY, error.reason)))
    where = f"config.{error.path}" if error.path else "config"
    return _Abort(grpc.StatusCode.INVALID_ARGUMENT, f"{where}: {error.reason}")


def _guard(handler: Callable[..., _R]) -> Callable[..., _R]:
    """End a unary call with the status of an ``_Abort``, or INTERNAL for a bug; never raise."""

    @functools.wraps(handler)
    def guarded(self: Server, *args: Any) -> _R:
        context: grpc.ServicerContext = args[-1]
        try:
            self._authorize(context)
            return handler(self, *args)
        except _Abort as abort:
            context.abort(abort.code, abort.details)
        except UnknownResourceManager as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        except Exception:
            log.exception("%s failed", handler.__name__)
            context.abort(grpc.StatusCode.INTERNAL, "internal error (see the server log)")
        raise AssertionError("unreachable: context.abort raises")

    return guarded


def _guard_stream(handler: Callable[..., Iterator[bytes]]) -> Callable[..., Iterator[bytes]]:
    """``_guard`` for a handler that streams its responses."""

    @functools.wraps(handler)
    def guarded(self: Server, *args: Any) -> Iterator[bytes]:
        context: grpc.ServicerContext = args[-1]
        try:
            self._authorize(context)
            yield from handler(self, *args)
        except _Abort as abort:
            context.abort(abort.code, abort.details)
        except UnknownResourceManager as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        except Exception:
            log.exception("%s failed", handler.__name__)
            context.abort(grpc.StatusCode.INTERNAL, "internal error (see the server log)")

    return guarded


_REQUESTS: Final[dict[str, tuple[type[Message], type[pydantic.BaseModel], str]]] = {
    "allocation": (si_pb2.AllocationRequest, si.AllocationRequest, "update_allocation"),
    "application": (si_pb2.ApplicationRequest, si.ApplicationRequest, "update_application"),
    "node": (si_pb2.NodeRequest, si.NodeRequest, "update_node"),
}


class Server:
    """``yunikorn-fsm serve``: the core's SchedulerAPI over gRPC, for shims in any language.

    ``start()`` binds, starts the core's background scheduling (unless the
    caller runs ``schedule()`` itself: ``background=False``) and returns the
    port; ``stop()`` ends every stream with UNAVAILABLE, then stops both.
    """

    def __init__(self, api: Scheduler | None = None, options: ServerOptions | None = None,
                 *, background: bool = True) -> None:
        self.api = api if api is not None else Scheduler()
        self.options = options if options is not None else ServerOptions()
        self._background = background
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._stopping = False
        self._control = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="yunikorn-fsm-rpc-control")
        self._grpc: grpc.Server | None = None
        self._unobserve: Callable[[], None] | None = None
        self.port: int | None = None

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> int:
        """Listen and serve; return the bound port (the real one for port 0)."""
        opts = self.options
        server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(
                max_workers=opts.max_streams + 8, thread_name_prefix="yunikorn-fsm-rpc"),
            maximum_concurrent_rpcs=opts.max_streams,
            options=[
                ("grpc.so_reuseport", 0),          # a port in use is an error, not shared
                ("grpc.max_receive_message_length", wire.MAX_REQUEST_BYTES),
                ("grpc.keepalive_time_ms", 30_000),
                ("grpc.keepalive_timeout_ms", 10_000),
            ])
        server.add_generic_rpc_handlers((self._scheduler_handlers(), self._ext_handlers()))
        address = (f"[{opts.host}]:{opts.port}" if ":" in opts.host
                   else f"{opts.host}:{opts.port}")
        try:
            if opts.tls_cert is not None and opts.tls_key is not None:
                creds = grpc.ssl_server_credentials([(opts.tls_key, opts.tls_cert)])
                port = server.add_secure_port(address, creds)
            else:
                port = server.add_insecure_port(address)
        except RuntimeError as error:
            raise OSError(f"can not listen on {address}: {error}") from None
        if port == 0:
            raise OSError(f"can not listen on {address}")
        self._unobserve = self.api.add_transition_observer(self._observe)
        server.start()
        self._grpc = server
        self.port = port
        if self._background:
            self.api.start(interval=opts.schedule_interval)
        return port

    def stop(self, grace: float = 1.0) -> None:
        """End every stream (UNAVAILABLE), stop serving and stop background scheduling."""
        with self._lock:
            self._stopping = True
            sessions = list(self._sessions.values())
        end = _End(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        for session in sessions:
            session.close(end)
        if self._grpc is not None:
            self._grpc.stop(grace).wait()
        if self._background:
            self.api.stop()
        if self._unobserve is not None:
            self._unobserve()
        self._control.shutdown(wait=True)

    def sessions(self) -> dict[str, str]:
        """The RMs this server knows and their connection state (``running`` or ``paused``)."""
        with self._lock:
            return {rm: s.state for rm, s in self._sessions.items()}

    # ---------------------------------------------------------------- handlers
    def _scheduler_handlers(self) -> grpc.GenericRpcHandler[Any, Any]:
        return grpc.method_handlers_generic_handler(wire.SCHEDULER_SERVICE, {
            "RegisterResourceManager": grpc.unary_unary_rpc_method_handler(self._register),
            "UpdateAllocation": grpc.stream_stream_rpc_method_handler(
                functools.partial(self._update, "allocation")),
            "UpdateApplication": grpc.stream_stream_rpc_method_handler(
                functools.partial(self._update, "application")),
            "UpdateNode": grpc.stream_stream_rpc_method_handler(
                functools.partial(self._update, "node")),
        })

    def _ext_handlers(self) -> grpc.GenericRpcHandler[Any, Any]:
        return grpc.method_handlers_generic_handler(wire.EXT_SERVICE, {
            "Subscribe": grpc.unary_stream_rpc_method_handler(self._subscribe),
            "UpdateConfiguration": grpc.unary_unary_rpc_method_handler(
                self._update_configuration),
            "UnregisterResourceManager": grpc.unary_unary_rpc_method_handler(self._unregister),
            "StateDump": grpc.unary_unary_rpc_method_handler(self._state_dump),
        })

    def _authorize(self, context: grpc.ServicerContext) -> None:
        token = self.options.token
        if token is None:
            return
        given = dict(context.invocation_metadata()).get("authorization", "")
        expected = f"Bearer {token}"
        if not (isinstance(given, str)
                and hmac.compare_digest(given.encode(), expected.encode())):
            raise _Abort(grpc.StatusCode.UNAUTHENTICATED,
                         "missing or wrong token: send 'authorization: Bearer <token>'")

    def _session(self, rm_id: str) -> _Session:
        """The running session of ``rm_id``, or FAILED_PRECONDITION saying why not."""
        session = self._sessions.get(rm_id)
        if session is None:
            raise _Abort(grpc.StatusCode.FAILED_PRECONDITION,
                         f"resource manager {rm_id} is not registered: "
                         "call RegisterResourceManager first")
        if session.state != _RUNNING:
            raise _Abort(grpc.StatusCode.FAILED_PRECONDITION,
                         f"resource manager {rm_id} is {session.state}; "
                         "register again to resync")
        return session

    @_guard
    def _register(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        request = _decode(raw, si_pb2.RegisterResourceManagerRequest,
                          si.RegisterResourceManagerRequest)
        session = _Session(self, request.rm_id, self.options.stream_buffer_bytes)
        old: _Session | None = None
        with self._lock:
            if self._stopping:
                raise _Abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
            try:
                self.api.register_resource_manager(request, session.callback)
            except ConfigError as error:
                raise _refused(error, context) from None
            old = self._sessions.get(request.rm_id)
            self._sessions[request.rm_id] = session
            if old is not None:
                old.state = _CLOSED
        if old is not None:
            old.close(_End(grpc.StatusCode.ABORTED,
                           f"resource manager {request.rm_id} registered again: "
                           "open new streams"))
        log.info("resource manager %s registered", request.rm_id)
        return si_pb2.RegisterResourceManagerResponse().SerializeToString()

    @_guard_stream
    def _update(self, kind: str, requests: Iterator[bytes],
                context: grpc.ServicerContext) -> Iterator[bytes]:
        wire_cls, model, _method = _REQUESTS[kind]
        try:
            first = next(requests, None)
        except grpc.RpcError:
            return                               # the client left before naming its RM
        if first is None:
            return
        request: Any = _decode(first, wire_cls, model)
        session = self._session(request.rm_id)
        stream = session.attach(kind, context)
        if stream is None:
            raise _Abort(grpc.StatusCode.ALREADY_EXISTS,
                         f"resource manager {session.rm_id} has an open {kind} stream already")
        try:
            if not context.add_callback(functools.partial(self._ended, session, stream)):
                return
            context.send_initial_metadata(())     # tells the client the stream is attached
            threading.Thread(target=self._read, args=(kind, session, stream, request, requests),
                             name=f"yunikorn-fsm-rpc-{kind}-reader", daemon=True).start()
            yield from self._drain(stream)
        finally:
            session.detach(kind, stream)

    @staticmethod
    def _drain(stream: _Stream) -> Iterator[bytes]:
        """The stream's messages until it ends; then its status, if it has one."""
        while True:
            item = stream.outbox.get(stream)
            if isinstance(item, _End):
                if item.code is not None:
                    raise _Abort(item.code, item.details)
                return
            yield item

    def _read(self, kind: str, session: _Session, stream: _Stream, first: Any,
              requests: Iterator[bytes]) -> None:
        """A stream's requests, in order, into the core (the stream's reader thread)."""
        wire_cls, model, method = _REQUESTS[kind]
        call = getattr(self.api, method)
        try:
            self._apply(call, session, first)
            for raw in requests:
                if stream.end is not None:
                    return
                self._apply(call, session, _decode(raw, wire_cls, model))
        except _Abort as abort:
            stream.finish(_End(abort.code, abort.details))
        except UnknownResourceManager as error:       # the core does not know the RM
            stream.finish(_End(grpc.StatusCode.FAILED_PRECONDITION, str(error)))
        except grpc.RpcError:
            pass                                 # the call ended under the iterator
        except Exception:
            log.exception("%s request of resource manager %s failed", kind, session.rm_id)
            stream.finish(_End(grpc.StatusCode.INTERNAL, "internal error (see the server log)"))

    @staticmethod
    def _apply(call: Callable[[Any], None], session: _Session, request: Any) -> None:
        if request.rm_id != session.rm_id:
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                         f"rmID: this stream belongs to resource manager {session.rm_id}, "
                         f"not {request.rm_id}")
        if request.model_fields_set - {"rm_id"}:     # a bare rmID only opens the stream
            call(request)

    def _ended(self, session: _Session, stream: _Stream) -> None:
        """A stream's call terminated; when the client ended it, the RM lost its connection."""
        if stream.finish(_CLIENT_LEFT):
            self._later(self._lost, session, _End(
                grpc.StatusCode.UNAVAILABLE,
                f"a stream of resource manager {session.rm_id} was dropped: it is paused; "
                "register again to resync"))

    def _overflow(self, session: _Session, end: _End) -> None:
        """A client that does not read (called inside the core's delivery: never blocks)."""
        session.close(end)
        with session.lock:
            stalled = list(session.streams.values())
        for stream in stalled:
            stream.reset_later(self.options.stalled_grace)
        self._later(self._lost, session, end)

    def _later(self, task: Callable[..., None], *args: Any) -> None:
        """Run ``task`` on the control thread (never on a callback's or gRPC's thread)."""
        with contextlib.suppress(RuntimeError):  # stopping: nothing to pause any more
            self._control.submit(task, *args)

    def _lost(self, session: _Session, end: _End) -> None:
        """Pause the RM of ``session`` (if it is still the current, running one)."""
        try:
            with self._lock:
                if self._sessions.get(session.rm_id) is not session \
                        or session.state != _RUNNING or self._stopping:
                    return
                session.state = _PAUSED
                self.api.connection_lost(session.rm_id)
            session.close(end)
            log.warning("resource manager %s paused: %s", session.rm_id, end.details)
        except Exception:
            log.exception("pausing resource manager %s failed", session.rm_id)

    def _observe(self, record: TransitionRecord) -> None:
        """The core's transitions: an RM it stopped for staying paused too long.

        Runs inside the core's call, under its lock: hands the rest to the
        control thread (``_lock`` is taken before the core's, never after).
        """
        if record.lifecycle == "rm" and record.trigger == "time_out":
            self._later(self._timed_out, record.obj.id)

    def _timed_out(self, rm_id: str) -> None:
        """Forget the paused session of an RM the core stopped (its paused-RM timeout)."""
        with self._lock:
            session = self._sessions.get(rm_id)
            if session is None or session.state != _PAUSED:
                return                           # it registered again meanwhile
            session.state = _CLOSED
            del self._sessions[rm_id]
        log.warning("resource manager %s stopped by the core: paused for more than %s s",
                    rm_id, self.api.rm_pause_timeout)

    # ---------------------------------------------------------------- extension service
    @staticmethod
    def _rm_id(raw: bytes, wire_cls: type[Message]) -> str:
        try:
            rm_id: str = cast(Any, wire_cls.FromString(raw)).rmID
        except DecodeError as error:
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                         f"malformed {wire_cls.DESCRIPTOR.name}: {error}") from None
        if not rm_id:
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                         "rmID: String should have at least 1 character")
        return rm_id

    @_guard_stream
    def _subscribe(self, raw: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        session = self._session(self._rm_id(raw, ext_pb2.SubscribeRequest))
        stream = session.subscribe(context)
        try:
            if not context.add_callback(functools.partial(self._left, stream)):
                return
            context.send_initial_metadata(())
            yield from self._drain(stream)
        finally:
            session.unsubscribe(stream)

    @staticmethod
    def _left(stream: _Stream) -> None:
        stream.finish(_CLIENT_LEFT)

    @_guard
    def _update_configuration(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        request = _decode(raw, si_pb2.UpdateConfigurationRequest, si.UpdateConfigurationRequest)
        with self._lock:
            self._session(request.rm_id)
            try:
                self.api.update_configuration(request)
            except ConfigError as error:
                raise _refused(error, context) from None
        return ext_pb2.UpdateConfigurationResponse().SerializeToString()

    @_guard
    def _unregister(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        rm_id = self._rm_id(raw, ext_pb2.UnregisterResourceManagerRequest)
        with self._lock:
            session = self._sessions.get(rm_id)
            if session is None:
                raise _Abort(grpc.StatusCode.FAILED_PRECONDITION,
                             f"resource manager {rm_id} is not registered")
            session.state = _CLOSED
            del self._sessions[rm_id]
            self.api.unregister_resource_manager(rm_id)
        session.close(_End(grpc.StatusCode.CANCELLED,
                           f"resource manager {rm_id} unregistered"))
        log.info("resource manager %s unregistered", rm_id)
        return ext_pb2.UnregisterResourceManagerResponse().SerializeToString()

    @_guard
    def _state_dump(self, raw: bytes, context: grpc.ServicerContext) -> bytes:
        return ext_pb2.StateDumpResponse(
            json=json.dumps(self.api.state_dump(), sort_keys=True)).SerializeToString()
