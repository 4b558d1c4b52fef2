"""One step being judged: what the shim sent, what the core answered, how to report.

Shared by the monitor (``invariants/modelshim/monitor.py``), which fills it, and the
modules that judge it: the configuration checks (``invariants/modelshim/configured.py``),
the request checks (``invariants/modelshim/requests.py``) and the answer checks
(``invariants/modelshim/answers.py``). They take the monitor as the :class:`Monitor`
Protocol below, so none of them imports the monitor.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from invariants.readings import acl_placement
from invariants.readings.shim import AllocView, RMView
from scheduler import Scheduler, si
from scheduler.si import today
from scheduler.trace import Step


@dataclass
class Bound:
    """A key sent as a pod bound to a node (maybe more than once) in one request."""

    pod: today.Allocation
    """The pod recovered (the first one that can be), else the last one sent."""
    refusals: list[str] = field(default_factory=list)
    """Why each sending that can not be recovered must be refused."""
    good: bool = False
    """One sending can be recovered: it is answered once in ``new``."""
    size: dict[str, int] = field(default_factory=dict)
    """Its size as recovered, or as a later entry of the request resized it."""


@dataclass
class Reading:
    """What a today's request means beyond the seed's request it reads as."""

    bound: dict[tuple[str, str], Bound] = field(default_factory=dict)
    """Pods bound to a node, to be recovered, by (application, key)."""
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    resized: list[tuple[str, str]] = field(default_factory=list)
    """Running pods sent again with another size: resized, never refused."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """Pods the core must refuse (in ``rejectedAllocations``)."""
    touched: set[str] = field(default_factory=set)
    """Nodes whose foreign pods changed."""
    drained: list[str] = field(default_factory=list)
    """Nodes registered with ``CREATE_DRAIN``."""
    effects: bool = False
    """It changes the core's state beyond what its seed reading says."""
    did: set[str] = field(default_factory=set)
    """Which of today's paths the request took (coverage)."""


class Monitor(Protocol):
    """What the judging modules need from the monitor."""

    api: Scheduler
    """The core, read only through ``invariants/readings/view.py``."""
    rms: dict[str, RMView]
    """What the shim knows of each RM it registered."""

    def report(self, check: str, subject: str, explanation: str) -> None: ...

    def core_partition(self, rm_id: str, name: str) -> Any: ...

    def name(self, uuid: str, app_id: str, key: str) -> None: ...

    def passes(self, key: str, node_id: str) -> bool: ...


@dataclass
class Call:
    """One step being executed and everything the core answered to it."""

    step: Step
    rm_id: str
    now: float
    new_apps: list[tuple[si.AddApplicationRequest, acl_placement.Placed | None, str]] = field(
        default_factory=list)
    app_answers: Counter[str] = field(default_factory=Counter)
    accepted_apps: list[str] = field(default_factory=list)
    rejected_apps: list[str] = field(default_factory=list)
    settle: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    """(partition, paths): created queues whose settings to judge once the call ends."""
    removed_apps: list[str] = field(default_factory=list)
    node_answers: Counter[str] = field(default_factory=Counter)
    accepted_nodes: list[str] = field(default_factory=list)
    rejected_nodes: list[str] = field(default_factory=list)
    must_reject_nodes: list[str] = field(default_factory=list)
    asks_sent: list[si.AllocationAsk] = field(default_factory=list)
    must_reject_asks: list[tuple[str, str]] = field(default_factory=list)
    must_take_asks: list[tuple[str, str]] = field(default_factory=list)
    """Unchanged re-sends of fully allocated asks: a no-op, never a rejection."""
    rejected_asks: list[tuple[str, str]] = field(default_factory=list)
    confirm_expected: Counter[str] = field(default_factory=Counter)
    confirmed: Counter[str] = field(default_factory=Counter)
    ask_confirm_expected: Counter[tuple[str, str]] = field(default_factory=Counter)
    ask_confirmed: Counter[tuple[str, str]] = field(default_factory=Counter)
    shim_confirmed: dict[str, AllocView] = field(default_factory=dict)
    """Core-initiated releases the shim confirms in this call (gone from its view)."""
    gone: dict[str, AllocView] = field(default_factory=dict)
    """Allocations this call's request ends (RM releases, decommission, removal)."""
    ask_sends: dict[tuple[str, str], list[tuple[str, Any, Any]]] = field(
        default_factory=dict)
    """Per key, each ask of the request in order: ``(verdict, before, after)``, the
    verdict ``"reject"`` (foreseeably refused: changes nothing), ``"take"`` (an unchanged
    re-send, never refused) or ``"update"``; the shim's ask before and after it."""
    started: list[tuple[AllocView, str]] = field(default_factory=list)
    """Releases the core started in this call, with the reason the shim saw when each came."""
    released_again: set[str] = field(default_factory=set)
    """Uuids the core released in this call while an earlier release of theirs was
    unconfirmed (a victim chosen again, YUNIKORN-3003)."""
    new: list[si.Allocation] = field(default_factory=list)
    released: list[si.AllocationRelease] = field(default_factory=list)
    released_asks: list[si.AllocationAskRelease] = field(default_factory=list)
    updates: list[si.UpdatedApplication] = field(default_factory=list)
    states_before: dict[str, str] = field(default_factory=dict)
    dump_before: bytes | None = None
    error: BaseException | None = None
    reserved_before: dict[tuple[str, str], str] = field(default_factory=dict)
    """The core's reservations when the call began: (application, ask) -> node."""
    preemptions: list[tuple[str, str, str, frozenset[str]]] = field(default_factory=list)
    """Asks that preempted in this call: (application, ask, required node or "", the
    victims' nodes)."""
    waiting_told: list[tuple[str, str]] = field(default_factory=list)
    """Asks told FAILED 'waiting for cluster resources' in this call, in order."""
    today: Reading | None = None
    """For a request in today's SI: what it means beyond its seed reading (``step``)."""
