"""Partition state: the maps, node order, reservations and per-call memos of one partition.

Every flow of this package is a plain function over a :class:`PartitionState`;
the ``Partition`` facade in ``__init__`` is this class with methods that call
those functions. Keeping the data in one place, and the flows as functions in
modules layered bottom-up (state, eligibility, reservations, ledger, queues,
appstate, asks, apps, allocate, gang, releases and nodes, cycle), means no
flow module imports one above it (``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import statemachines
from statemachines import Lifecycle
from statemachines.application import LIVE

from .. import policies, si, ugm
from .. import resources as res
from ..config import ROOT_QUEUE, PlacementRuleConfig
from ..context import CoreContext
from ..objects import Allocation, Application, Ask, Node, Queue
from ..policies import NodeCollection
from ..resources import Resource

Predicates = Callable[[si.PredicatesArgs], object]
PreemptionPredicates = Callable[[si.PreemptionPredicatesArgs], object]


class PartitionState:
    """What one partition of one RM holds (``004`` "Relations between Entities")."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.OBJECT
    EVENT_NOUN: ClassVar[str] = "partition"
    """Events name it a partition: the spec's event types have none (``scheduler.context``)."""

    def __init__(self, core: CoreContext, rm_id: str, name: str) -> None:
        self.core = core
        self.rm_id = rm_id
        self.name = name
        self.state = self.LIFECYCLE.initial
        self.root = Queue(ROOT_QUEUE, None, is_leaf=False)
        self.queues: dict[str, Queue] = {ROOT_QUEUE: self.root}
        self.apps: dict[str, Application] = {}
        self.nodes: dict[str, Node] = {}
        self.node_order = NodeCollection()
        self.allocations: dict[str, Allocation] = {}
        # Usage and running applications per user and tracked group (``limits``), and
        # whether any queue sets limits (when none does, nothing needs checking).
        self.users = ugm.Tracker()
        self.limited = False
        # (application id, ask key) -> the node reserved for that ask.
        self.reservations: dict[tuple[str, str], Node] = {}
        self.capacity: Resource = {}
        self.predicates: Predicates | None = None
        # Preemption: the partition switch (``preemption.enabled``) and the RM's optional
        # ``preemption_predicates`` (None: the first choice is accepted).
        self.preemption_enabled = True
        # Quota preemption's partition switch (``preemption.quotapreemptionenabled``, off).
        self.quota_preemption_enabled = False
        self.preemption_predicates: PreemptionPredicates | None = None
        self.placement_rules: list[PlacementRuleConfig] = []
        # Per path: whether the configuration makes the queue a leaf (reloads).
        self.configured_leaf: dict[str, bool] = {}
        # The periodic queue cleanup (``queues.clean_drained``): armed while a removed queue
        # waits, empty, to go; a token move cancels the pending timer.
        self.cleanup_armed = False
        self.cleanup_token = 0
        # Per scheduling call: what can not succeed again before the call ends.
        self.failed: set[tuple[str, str]] = set()
        # Of those, the asks that found no node (application backoff counts them).
        self.no_node: set[tuple[str, str]] = set()
        self.failed_shapes = res.ShapeMemo()
        self.unreservable = res.ShapeMemo()
        self.exhausted: dict[str, Application] = {}
        self.rested_queues: list[Queue] = []
        # Largest room any schedulable node could ever offer (capacity - occupied),
        # per type; None when a node left or shrank and it must be recomputed.
        self.ceiling: Resource | None = {}
        # Node ids in order, for the preemption's node walk; None when a node came or went.
        self.sorted_node_ids: list[str] | None = None
        # Asks a node search found no room for, in the order they were first searched
        # (``waiting``), and when the next inspection of them is due (None: none armed).
        self.searched: dict[tuple[str, str], Ask] = {}
        self.inspect_due: float | None = None
        self.inspect_token = 0

    @property
    def event_id(self) -> str:
        return self.name

    @property
    def timer_owner(self) -> tuple[str, str]:
        """How this partition's timers name it (``CoreContext.schedule_timer``)."""
        return (self.rm_id, self.name)

    def rest(self, app: Application) -> None:
        """Nothing of ``app`` can succeed again in this call: take it out of its leaf's
        order, so the walks after this one do not step over it again (a leaf of many
        applications whose asks never fit made every allocation cost a walk past them)."""
        self.exhausted[app.id] = app
        app.resting = True
        policies.app_changed(app)

    def rest_queue(self, queue: Queue) -> None:
        """Nothing below ``queue`` can be placed again in this call (every application
        under it rests or is held back, and only a release or a cancelled reservation,
        which wakes everything, could change that): out of its parent's order, so that
        each step no longer visits it (two leaves whose asks never fit, first in fair
        order as they use nothing, cost every allocation two empty visits)."""
        queue.resting = True
        self.rested_queues.append(queue)
        policies.queue_changed(queue)

    def wake(self) -> None:
        """Every application and queue set to rest rejoins its order (the call ended, or
        room was given back); the memo of what was exhausted stays until the next reset."""
        for app in self.exhausted.values():
            if app.resting:
                app.resting = False
                policies.app_changed(app)
        if self.rested_queues:
            for queue in self.rested_queues:
                queue.resting = False
                policies.queue_changed(queue)
            self.rested_queues = []

    def reset_memos(self) -> None:
        """Forget what failed in this scheduling call: room was given back. A new
        ``exhausted`` tells a walk in progress that this happened."""
        self.wake()
        self.failed = set()
        self.no_node = set()
        self.exhausted = {}
        self.failed_shapes = res.ShapeMemo()
        self.unreservable = res.ShapeMemo()

    def room_ceiling(self) -> Resource:
        """Per type, the most room any schedulable node offers when empty."""
        if self.ceiling is None:
            self.ceiling = res.component_max(
                res.sub(n.capacity, n.occupied) for n in self.node_order)
        return self.ceiling

    def nodes_changed(self) -> None:
        """A node was removed, resized or left the schedulable ones."""
        self.ceiling = None
        self.sorted_node_ids = None

    def node_joined(self, node: Node) -> None:
        """A node was added or became schedulable again: the ceiling can only grow, so it
        is kept without a walk over every node (thousands of nodes register at once)."""
        self.sorted_node_ids = None
        if self.ceiling is not None:
            self.ceiling = res.component_max((self.ceiling, res.sub(node.capacity, node.occupied)))

    def node_ids(self) -> list[str]:
        """Every node id of the partition, sorted (YuniKorn breaks node ties by id)."""
        if self.sorted_node_ids is None:
            self.sorted_node_ids = sorted(self.nodes)
        return self.sorted_node_ids

    def is_empty(self) -> bool:
        """No node and no live application: a draining partition may go."""
        return not self.nodes and not any(
            a.state in LIVE for a in self.apps.values())
