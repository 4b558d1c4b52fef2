"""Outbound flow control: a bounded buffer of serialized messages per response stream.

The core's callback never blocks: it appends to an ``Outbox`` and returns. A
stream's writer (a gRPC worker thread) takes the messages off in order and
onto the wire (:func:`drain`). A buffer that would grow past its limit is
refused, which tells the caller the client stopped reading; ``End`` says why a
stream ends, and ``Stream.reset_later`` frees a worker that a client which
never reads would otherwise hold forever (only such a worker: one that is not
blocked sending takes its stream's status, however late it runs).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import grpc

from .status import Abort


@dataclass(frozen=True)
class End:
    """Why a stream ends: a status for the client, or None when the client itself left."""

    code: grpc.StatusCode | None
    details: str


CLIENT_LEFT = End(None, "the client ended the call")


class Stream:
    """One open response stream (an update stream or a subscription)."""

    __slots__ = ("context", "end", "outbox", "sending")

    def __init__(self, outbox: Outbox, context: grpc.ServicerContext) -> None:
        self.outbox = outbox
        self.context = context
        self.end: End | None = None
        self.sending = False
        """True while the writer has a message out to gRPC (guarded by the outbox's lock)."""

    def finish(self, end: End) -> bool:
        """End the stream with ``end`` unless it already ends; True when this call ended it."""
        return self.outbox.finish(self, end)

    def reset_later(self, grace: float) -> None:
        """Reset the call if it is still open after ``grace`` seconds.

        A client that stopped reading never takes the status that ends its
        stream (it waits behind the unread messages, under HTTP/2 flow control),
        and the worker thread sending to it stays blocked; a reset frees both.
        Only a writer still out sending a message it took before the stream
        ended is reset: one that is not (it waits for its status, or has yet
        to take it, however long its thread waits to run) sends the status
        itself, and no message goes out once the stream ends (:func:`drain`),
        so no writer can block on a send after the grace.
        """
        timer = threading.Timer(grace, self._reset)
        timer.daemon = True
        timer.start()

    def _reset(self) -> None:
        if self.outbox.stalled(self) and self.context.is_active():
            cast(Any, self.context).cancel()         # grpc-stubs leave it untyped


class Outbox:
    """A bounded queue of serialized messages waiting for one response stream."""

    def __init__(self, limit: int) -> None:
        self._items: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._limit = limit
        self._cond = threading.Condition()
        self._closed: End | None = None

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

    def get(self, stream: Stream) -> bytes | End:
        """The next message for ``stream``, waiting for one, or why the stream ends.

        The writer calls it once its previous message is sent: it is not sending any more.
        """
        with self._cond:
            stream.sending = False
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

    def start_sending(self, stream: Stream) -> bool:
        """Mark ``stream``'s writer as sending a message it took; False when the stream ended."""
        with self._cond:
            if stream.end is not None or self._closed is not None:
                return False
            stream.sending = True
            return True

    def stalled(self, stream: Stream) -> bool:
        """Whether ``stream``'s writer is out sending a message (blocked, if the client stalls)."""
        with self._cond:
            return stream.sending

    def finish(self, stream: Stream, end: End) -> bool:
        with self._cond:
            if stream.end is not None:
                return False
            stream.end = end
            self._cond.notify_all()
            return True

    def close(self, end: End) -> None:
        """End every current and future stream of this outbox with ``end``; drop what waits."""
        with self._cond:
            if self._closed is None:
                self._closed = end
                self._items.clear()
                self._size = 0
            self._cond.notify_all()


def drain(stream: Stream) -> Iterator[bytes]:
    """The stream's messages until it ends; then its status (``Abort``), if it has one.

    A message taken just before the stream ended is dropped, like the ones
    still waiting: once a stream ends its writer only sends the status.
    gRPC asks for the next message once the previous one is sent, so between
    ``start_sending`` and the next ``get`` the writer is out sending.
    """
    outbox = stream.outbox
    while True:
        item = outbox.get(stream)
        if isinstance(item, End):
            if item.code is not None:
                raise Abort(item.code, item.details)
            return
        if outbox.start_sending(stream):
            yield item
