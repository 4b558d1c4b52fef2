"""The server's RMs: one session each, and the RM lifecycle moves the connection causes.

A registration replaces the RM's session; a dropped stream or a client that
stopped reading pauses the RM (``connection_lost``, RM lifecycle ``Running ->
Paused``); an unregistration stops it. The paused-RM timeout is the core's
(``Scheduler(rm_pause_timeout=...)``): when the core fires ``time_out``, the
registry forgets the paused session.

Locking: ``Registry.lock`` orders registrations against pauses and timeouts of
the same RM; it is held around core calls, so the callback (which runs inside
core calls, on whatever thread made them) never takes it. Work that starts
where the core's lock may be held (a callback, a transition observer) or on a
gRPC thread that must not wait goes to the one control thread (:meth:`later`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import grpc

from scheduler import Scheduler, si
from statemachines import TransitionRecord

from .session import CLOSED, PAUSED, RUNNING, Session
from .status import Abort
from .streams import End

log = logging.getLogger("yunikorn_fsm.rpc")


class Registry:
    """The sessions of the RMs registered through one server, and the core they talk to."""

    def __init__(self, api: Scheduler, stream_buffer_bytes: int, stalled_grace: float,
                 predicate_timeout: float = 0.5) -> None:
        self.api = api
        self.predicate_timeout = predicate_timeout
        self.lock = threading.Lock()
        self.sessions: dict[str, Session] = {}
        self.stopping = False
        self._limit = stream_buffer_bytes
        self._stalled_grace = stalled_grace
        self._control = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="yunikorn-fsm-rpc-control")
        self._unobserve: Callable[[], None] | None = None

    def watch(self) -> None:
        """Start watching the core's transitions (for its paused-RM timeout)."""
        self._unobserve = self.api.add_transition_observer(self._observe)

    def states(self) -> dict[str, str]:
        """The RMs and their connection state (``running`` or ``paused``)."""
        with self.lock:
            return {rm: s.state for rm, s in self.sessions.items()}

    def running(self, rm_id: str) -> Session:
        """The running session of ``rm_id``, or FAILED_PRECONDITION saying why not."""
        session = self.sessions.get(rm_id)
        if session is None:
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION,
                        f"resource manager {rm_id} is not registered: "
                        "call RegisterResourceManager first")
        if session.state != RUNNING:
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION,
                        f"resource manager {rm_id} is {session.state}; "
                        "register again to resync")
        return session

    # ------------------------------------------------------------ registrations
    def register(self, request: si.RegisterResourceManagerRequest,
                 offers: frozenset[str] = frozenset()) -> None:
        """Register with the core under a new session; end the old session's streams.

        ``offers`` names the predicates the RM answers on its ``Predicates``
        stream (``scheduler.rpc.predicates.OFFERS``). The core's
        ``ConfigError`` passes through, with nothing changed.
        """
        session = Session(request.rm_id, self._limit, self._stalled_grace, self._overflow,
                          offers, self.predicate_timeout)
        with self.lock:
            if self.stopping:
                raise Abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
            self.api.register_resource_manager(request, session.callback)
            old = self.sessions.get(request.rm_id)
            self.sessions[request.rm_id] = session
            if old is not None:
                old.state = CLOSED
        if old is not None:
            old.close(End(grpc.StatusCode.ABORTED,
                          f"resource manager {request.rm_id} registered again: "
                          "open new streams"))
        log.info("resource manager %s registered", request.rm_id)

    def unregister(self, rm_id: str) -> None:
        """The voluntary shutdown: the core stops the RM; its streams end with CANCELLED."""
        with self.lock:
            session = self.sessions.get(rm_id)
            if session is None:
                raise Abort(grpc.StatusCode.FAILED_PRECONDITION,
                            f"resource manager {rm_id} is not registered")
            session.state = CLOSED
            del self.sessions[rm_id]
            self.api.unregister_resource_manager(rm_id)
        session.close(End(grpc.StatusCode.CANCELLED, f"resource manager {rm_id} unregistered"))
        log.info("resource manager %s unregistered", rm_id)

    def update_configuration(self, request: si.UpdateConfigurationRequest) -> None:
        """The hot reload of a running RM; the core's ``ConfigError`` passes through."""
        with self.lock:
            self.running(request.rm_id)
            self.api.update_configuration(request)

    def stop(self) -> None:
        """End every session's streams (UNAVAILABLE) and refuse new registrations."""
        with self.lock:
            self.stopping = True
            sessions = list(self.sessions.values())
        end = End(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        for session in sessions:
            session.close(end)

    def shutdown(self) -> None:
        """Stop the control thread and stop watching the core (once the core is stopped)."""
        if self._unobserve is not None:
            self._unobserve()
        self._control.shutdown(wait=True)

    # ------------------------------------------------------------ pauses
    def stream_ended(self, session: Session, end: End) -> None:
        """A stream's client left: the RM lost its connection (from a gRPC thread)."""
        self.later(self._lost, session, end)

    def _overflow(self, session: Session, end: End) -> None:
        """A client that does not read (called inside the core's delivery: never blocks)."""
        session.close(end)
        for stream in session.open_streams():
            stream.reset_later(self._stalled_grace)
        self.later(self._lost, session, end)

    def later(self, task: Callable[..., None], *args: Any) -> None:
        """Run ``task`` on the control thread (never on a callback's or gRPC's thread)."""
        with contextlib.suppress(RuntimeError):  # stopping: nothing to pause any more
            self._control.submit(task, *args)

    def _lost(self, session: Session, end: End) -> None:
        """Pause the RM of ``session`` (if it is still the current, running one)."""
        try:
            with self.lock:
                if self.sessions.get(session.rm_id) is not session \
                        or session.state != RUNNING or self.stopping:
                    return
                session.state = PAUSED
                self.api.connection_lost(session.rm_id)
            session.close(end)
            log.warning("resource manager %s paused: %s", session.rm_id, end.details)
        except Exception:
            log.exception("pausing resource manager %s failed", session.rm_id)

    def _observe(self, record: TransitionRecord) -> None:
        """The core's transitions: an RM it stopped for staying paused too long.

        Runs inside the core's call, under its lock: hands the rest to the
        control thread (``lock`` is taken before the core's, never after).
        """
        if record.lifecycle == "rm" and record.trigger == "time_out":
            self.later(self._timed_out, record.obj.id)

    def _timed_out(self, rm_id: str) -> None:
        """Forget the paused session of an RM the core stopped (its paused-RM timeout)."""
        with self.lock:
            session = self.sessions.get(rm_id)
            if session is None or session.state != PAUSED:
                return                           # it registered again meanwhile
            session.state = CLOSED
            del self.sessions[rm_id]
        log.warning("resource manager %s stopped by the core: paused for more than %s s",
                    rm_id, self.api.rm_pause_timeout)
