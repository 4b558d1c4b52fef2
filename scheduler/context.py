"""Services shared by every partition of one scheduler instance.

The clock, the timers, the per-RM outboxes, the deterministic id and sequence
counters, and the single place where objects change state (:meth:`fire`). The
scheduler owns one :class:`CoreContext`; partitions receive it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from statemachines import Observer, TransitionRecord

from . import si
from .clock import Clock
from .outbox import RMOutbox

DEFAULT_RESERVATION_DELAY = 2.0
"""YuniKorn's ``reservationDelay`` (apache/yunikorn-core be3bb48
pkg/scheduler/objects/application.go ``tryNodes``): an ask reserves a node only once it
is this many seconds old."""

EVENT_TYPES = {
    "application": si.EventRecordType.APP,
    "ask": si.EventRecordType.REQUEST,
    "allocation": si.EventRecordType.REQUEST,
    "node": si.EventRecordType.NODE,
    "object": si.EventRecordType.QUEUE,
}
"""The spec has no partition type (``002`` "Event Plugin"): a partition's events use QUEUE
(it is the root of its queue tree) and their message starts with ``partition <name>``."""

WHY: dict[tuple[str, ...], str] = {
    ("application", "accept"): "its first ask arrived",
    ("application", "run", "Accepted"): "its first real allocation was made",
    ("application", "run", "Completing"): "a new ask arrived",
    ("application", "wait"): "nothing is pending and no real allocation is left",
    ("application", "complete"): "nothing was left when the completing timeout passed",
    ("application", "kill"): "every allocation was released after the Hard placeholder timeout",
    ("application", "expire"): "the retention period after it ended passed",
    ("ask", "ask"): "the RM asked for it",
    ("ask", "allocate"): "every repeat is allocated",
    ("ask", "reject"): "the scheduler refused it",
    ("allocation", "release"): "the core asked the RM to release it",
    ("allocation", "replace"): "the RM confirmed the placeholder's release",
    ("allocation", "expire"): "the RM confirmed the timeout release",
    ("allocation", "preempt"): "the RM confirmed the preemption",
    ("allocation", "stop"): "the RM released it",
    ("node", "drain"): "the RM asked to drain it",
    ("node", "restore"): "the RM made it schedulable again",
    ("node", "remove"): "it left the partition",
    ("object", "remove"): "it was removed from the configuration",
    ("object", "start"): "it is in the configuration again",
    ("object", "stop", "Draining"): "it is empty after its removal from the configuration",
    ("object", "stop", "Active"): "its resource manager left",
}
"""Why each transition happens, when the caller does not say more: ``(lifecycle, trigger,
source)`` first, then ``(lifecycle, trigger)``. A state change always says why."""


def transition_sentence(obj: Any, lifecycle: str, trigger: str, source: str, dest: str,
                        reference_id: str = "", why: str = "") -> str:
    """``application app-1 accepted into root.a: its first ask arrived``: object, change, why."""
    why = why or WHY.get((lifecycle, trigger, source)) or WHY.get((lifecycle, trigger), "")
    where = ""
    if lifecycle == "application" and dest == "Accepted" and getattr(obj, "queue", None):
        where = f" into {obj.queue.path}"
    return f"{describe(obj, lifecycle, reference_id)} {dest.lower()}{where}: {why}"


_TEXTS: dict[tuple[type, str, str], tuple[str, bool, str]] = {}


def transition_message(obj: Any, lifecycle: str, trigger: str, source: str, dest: str,
                       reference_id: str = "", why: str = "") -> str:
    """The event text of a transition: its sentence and ``(source -> dest)``. Everything
    but the object's name depends on the kind of object and the edge alone unless the
    caller says why (or an application is accepted into a queue), so it is built once
    per class and edge (``source`` and ``trigger`` name the edge: a lifecycle declares one
    ``dest`` for them)."""
    if why or (lifecycle == "application" and dest == "Accepted"):
        text = transition_sentence(obj, lifecycle, trigger, source, dest, reference_id, why)
        return f"{text} ({source} -> {dest})"
    key = (type(obj), trigger, source)
    parts = _TEXTS.get(key)
    if parts is None:
        noun = getattr(obj, "EVENT_NOUN", lifecycle)
        sentence = transition_sentence(obj, lifecycle, trigger, source, dest)
        tail = sentence[len(describe(obj, lifecycle)):] + f" ({source} -> {dest})"
        parts = _TEXTS[key] = (f"{noun} ", noun in _OF_APPLICATION, tail)
    prefix, of, tail = parts
    if of and reference_id:
        return f"{prefix}{obj.event_id} of application {reference_id}{tail}"
    return f"{prefix}{obj.event_id}{tail}"


_OF_APPLICATION = ("ask", "allocation")
"""The nouns whose name is followed by their application's."""


def describe(obj: Any, lifecycle: str, reference_id: str = "") -> str:
    """The object as a reader names it: ``queue root.a``, ``ask k of application app-1``."""
    noun = getattr(obj, "EVENT_NOUN", lifecycle)
    if reference_id and noun in _OF_APPLICATION:
        return f"{noun} {obj.event_id} of application {reference_id}"
    return f"{noun} {obj.event_id}"


_SET = si.EventChangeType.SET

TimerOwner = tuple[str, str]
"""``(rm id, partition name)``: where a due timer is handed for processing."""


class Timer:
    """A scheduled call; cancelled by bumping the target's token (lazy deletion).

    ``owner`` names the partition that set it; the partition checks that the
    target is still its own object before acting, so a timer of a partition
    that was replaced (an RM re-registered, a reload re-created it) is inert.
    """

    __slots__ = ("due", "kind", "owner", "seq", "target", "token")

    def __init__(
        self, due: float, seq: int, kind: str, target: Any, token: int, owner: TimerOwner
    ) -> None:
        self.due = due
        self.seq = seq
        self.kind = kind
        self.target = target
        self.token = token
        self.owner = owner

    def __lt__(self, other: Timer) -> bool:
        return (self.due, self.seq) < (other.due, other.seq)


def _nothing_taken(uuid: str) -> bool:
    return False


class CoreContext:
    """Clock, timers, outboxes and counters of one scheduler."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.outboxes: dict[str, RMOutbox] = {}
        self.observers: list[Observer] = []
        self._timers: list[Timer] = []
        self._seq = 0
        self._uuid = 0
        self.emit_events = True
        self.reservation_delay = DEFAULT_RESERVATION_DELAY
        """Seconds an ask waits from its arrival before it may reserve a node."""
        # Set by the scheduler: whether any partition of any RM holds this uuid.
        self.uuid_taken: Callable[[str], bool] = _nothing_taken

    # -- sequencing ---------------------------------------------------------
    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def new_uuid(self, app_id: str, ask_key: str) -> str:
        """A deterministic allocation uuid, unique in the scheduler (recovered ones included)."""
        while True:
            self._uuid += 1
            uuid = f"{app_id}-{ask_key}-{self._uuid}"
            if not self.uuid_taken(uuid):
                return uuid

    # -- outboxes -----------------------------------------------------------
    def outbox(self, rm_id: str) -> RMOutbox:
        box = self.outboxes.get(rm_id)
        if box is None:
            box = self.outboxes[rm_id] = RMOutbox(stamp=int(self.clock.now() * 1e9))
        return box

    def event(
        self,
        rm_id: str,
        kind: si.EventRecordType,
        object_id: str,
        message: str,
        change: si.EventChangeType = si.EventChangeType.NONE,
        reference_id: str = "",
    ) -> None:
        if self.emit_events:
            self.outbox(rm_id).event(kind, object_id, message, change, reference_id)

    # -- rejections: the answer to the RM plus an event, always both ---------
    def reject_app(self, rm_id: str, app_id: str, reason: str) -> None:
        self.outbox(rm_id).app_rejected(app_id, reason)
        self.event(rm_id, si.EventRecordType.APP, app_id,
                   f"application {app_id} rejected: {reason}", si.EventChangeType.REMOVE)

    def reject_ask(self, rm_id: str, app_id: str, key: str, reason: str) -> None:
        self.outbox(rm_id).ask_rejected(app_id, key, reason)
        self.event(rm_id, si.EventRecordType.REQUEST, key,
                   f"ask {key} of application {app_id} rejected: {reason}",
                   si.EventChangeType.REMOVE, app_id)

    def reject_node(self, rm_id: str, node_id: str, reason: str) -> None:
        self.outbox(rm_id).node_rejected(node_id, reason)
        self.event(rm_id, si.EventRecordType.NODE, node_id, f"node {node_id} rejected: {reason}",
                   si.EventChangeType.REMOVE)

    # -- state changes ------------------------------------------------------
    def fire(self, obj: Any, trigger: str, rm_id: str, reference_id: str = "",
             why: str = "") -> str:
        """Move ``obj`` along ``trigger`` and report the transition as an event (a sentence)."""
        lc = obj.LIFECYCLE
        source = obj.state
        dest: str = lc.fire(obj, trigger)
        if self.emit_events:
            kind = EVENT_TYPES.get(lc.name)
            if kind is not None:
                box = self.outboxes.get(rm_id) or self.outbox(rm_id)
                box.event(kind, obj.event_id,
                          transition_message(obj, lc.name, trigger, source, dest, reference_id,
                                             why),
                          _SET, reference_id)
        if self.observers:
            record = TransitionRecord(lc.name, obj, trigger, source, dest)
            for observer in self.observers:
                observer(record)
        return dest

    # -- timers -------------------------------------------------------------
    def schedule_timer(
        self, delay: float, kind: str, target: Any, token: int, owner: TimerOwner
    ) -> None:
        heapq.heappush(
            self._timers,
            Timer(self.clock.now() + delay, self.next_seq(), kind, target, token, owner),
        )

    def due_timers(self) -> list[Timer]:
        """Pop every timer due at ``clock.now()``, in (due, creation) order."""
        now = self.clock.now()
        out: list[Timer] = []
        while self._timers and self._timers[0].due <= now:
            out.append(heapq.heappop(self._timers))
        return out
