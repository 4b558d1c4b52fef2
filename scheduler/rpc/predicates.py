"""An RM's predicates over the wire: the core's questions out on its stream, answers in by id.

The core asks ``predicates`` and ``preemption_predicates`` synchronously,
inside its scheduling cycle and under its lock. Over gRPC an RM that offered
them at registration answers on the extension service's ``Predicates``
stream (``Asker``: one per open stream). The wait for one answer is bounded
by the server's predicate timeout; the outcomes are:

- an answer: the RM's word (``fits``, the preemption response, or ``error``,
  which counts as "the node does not fit" and is reported in an event, as an
  in-process predicate that raises);
- no answer within the timeout: ``PredicateTimeout`` (the core reports it and
  the node does not fit, as YuniKorn treats a predicate error), and the RM
  counts as silent: every later question is answered "does not fit" at once,
  without being sent, until an answer (late ones included) arrives;
- no stream (never opened, closed, or closing while the core waits): the
  answer of an RM without predicates, every node passes.

So a silent RM costs the cycle one timeout, and a slow one at most one
timeout per answer it gives late.
"""

from __future__ import annotations

import threading
import time
from typing import Final

from ._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from .streams import Stream

OFFERS: Final = ("predicates", "preemption_predicates")
"""What an RM may offer at registration (the callback methods of the same names)."""


class PredicateError(Exception):
    """The RM's predicate said so (its ``error`` answer), or answered the wrong question."""


class PredicateTimeout(PredicateError):
    """The RM did not answer within the predicate timeout."""


class Silent(Exception):
    """The RM let a question time out and has not answered since: the node does not fit."""


class Asker:
    """One open ``Predicates`` stream: questions out in order, answers matched by id."""

    def __init__(self, rm_id: str, stream: Stream, timeout: float) -> None:
        self.rm_id = rm_id
        self.stream = stream
        self.timeout = timeout
        self._cond = threading.Condition()
        self._next = 0
        self._waiting: dict[int, ext_pb2.PredicateAnswer | None] = {}
        self._silent = False
        self._closed = False

    def ask(self, question: ext_pb2.PredicateQuestion) -> ext_pb2.PredicateAnswer | None:
        """The RM's answer to ``question``; None when the stream is gone (every node passes).

        Raises ``PredicateTimeout`` when no answer comes within the timeout,
        ``Silent`` (at once, nothing sent) while the RM is silent.
        """
        with self._cond:
            if self._closed:
                return None
            if self._silent:
                raise Silent
            self._next += 1
            qid = question.id = self._next
            self._waiting[qid] = None
        deadline = time.monotonic() + self.timeout
        sent = self.stream.outbox.put([question.SerializeToString()])
        with self._cond:
            while True:
                answer = self._waiting[qid]
                if answer is not None or self._closed:
                    del self._waiting[qid]
                    return answer
                left = deadline - time.monotonic()
                if left <= 0 or not sent:
                    del self._waiting[qid]
                    self._silent = True
                    raise PredicateTimeout(
                        f"resource manager {self.rm_id} did not answer within "
                        f"{self.timeout:g} s; its predicates answer no until it answers again")
                self._cond.wait(left)

    def answer(self, message: ext_pb2.PredicateAnswer) -> None:
        """An answer from the RM: ends its silence; a late one is dropped."""
        with self._cond:
            self._silent = False
            if message.id in self._waiting:
                self._waiting[message.id] = message
                self._cond.notify_all()

    def close(self) -> None:
        """The stream is gone: a question waiting now gets the no-stream answer."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
