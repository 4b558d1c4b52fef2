"""Delivery: the one state lock, and callbacks delivered outside it in decision order.

``003`` ("Locking after merge") describes one lock per
object with a lock order, to let Go goroutines schedule and update in
parallel. Python threads do not run Python code in parallel, so fine-grained
locks would add deadlock risk and no throughput: the core has one re-entrant
state lock held for the whole of each API call and each scheduling cycle.

Callbacks are delivered after the state lock is released, by the thread that
made the call, in the global order the decisions were made: each call takes
a ticket under the lock and waits for the earlier ones. A callback may call
the API again; that call's messages are delivered by the same thread once the
current batch is done, so callbacks never nest. ``predicates`` runs inside
the cycle and must not call the API at all.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("yunikorn_fsm")

Delivery = tuple[str, Callable[..., Any], Any]
"""The RM a message is for, its callback method, and the message."""


class Dispatcher:
    """The state lock, the delivery tickets and the in-order delivery of batches."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._turn = threading.Condition()
        self._issued = 0
        self._done = 0
        self._delivering: int | None = None
        self._nested: list[tuple[int, list[Delivery]]] = []
        self._cycle_thread: int | None = None

    def idle(self) -> bool:
        """No call holds the lock or waits to deliver (a copy of the state is consistent)."""
        if not self.lock.acquire(blocking=False):
            return False
        try:
            return self._done == self._issued and self._delivering is None \
                and self._cycle_thread is None and not self._nested
        finally:
            self.lock.release()

    @contextmanager
    def transaction(
        self, collect: Callable[[], list[Delivery]], after: Callable[[], None] | None = None
    ) -> Iterator[None]:
        """Hold the state lock for one call, then deliver what ``collect`` gathered.

        ``collect`` runs under the lock once the body is done (also when it
        raised); ``after`` runs once the lock is released, before delivery.
        """
        if self._cycle_thread == threading.get_ident():
            raise RuntimeError("the scheduler API must not be called from predicates()")
        self.lock.acquire()
        try:
            yield
        finally:
            try:
                batch = collect()
                ticket = self._issued
                self._issued += 1
            finally:
                self.lock.release()
            if after is not None:
                after()
            self._deliver(ticket, batch)

    @contextmanager
    def cycle(self) -> Iterator[None]:
        """Mark the current thread as running a cycle (under the lock): no API calls."""
        self._cycle_thread = threading.get_ident()
        try:
            yield
        finally:
            self._cycle_thread = None

    def _deliver(self, ticket: int, batch: list[Delivery]) -> None:
        """Deliver one call's messages from the calling thread, in decision order.

        Each call waits until every earlier call's messages were delivered, so
        callbacks never run concurrently and never out of order, and a call's
        answers arrive on the thread that made it (the scheduling thread in
        background mode). A call made from inside a callback returns at once:
        its messages are delivered by the same thread after the current batch.
        """
        me = threading.get_ident()
        if self._delivering == me:
            self._nested.append((ticket, batch))
            return
        queue = [(ticket, batch)]
        while queue:
            turn, messages = queue.pop(0)
            with self._turn:
                while self._done != turn:
                    self._turn.wait()
                self._delivering = me
            try:
                for rm_id, method, message in messages:
                    try:
                        method(message)
                    except Exception:
                        # A shim's bug must not cost the other RMs (or the rest of this
                        # batch) their messages: log it once and go on.
                        log.exception("resource manager %s: callback %s raised", rm_id,
                                      getattr(method, "__name__", method))
            finally:
                with self._turn:
                    self._delivering = None
                    self._done = turn + 1
                    self._turn.notify_all()
            if self._nested:
                queue.extend(self._nested)
                self._nested = []
