"""The scheduler's objects: plain slotted classes, one object model.

``003`` ("How to merge Cache and scheduler objects") asks
for one object per concept with its state inside it; that is what lives here.
The objects hold data and small derived views only: every state change is made
by the flows of :mod:`scheduler.partition` through ``CoreContext.fire``
(the object's ``LIFECYCLE``), never by assigning ``state``. Objects name the
partition they belong to instead of pointing at it, so this module sits below
every flow that changes them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any, ClassVar

import statemachines
from statemachines import Lifecycle

from . import resources as res
from .config import ACL, ChildTemplateConfig
from .resources import Resource
from .ugm import USER, QueueLimits

MIN_PRIORITY = -(2**31)
"""The lowest int32: the priority of an application or queue with nothing pending."""
MAX_PRIORITY = 2**31 - 1
REQUIRED_NODE = "yunikorn.apache.org/requiredNode"
"""The ask tag naming the one node it must run on (``002``: DomainYuniKorn + KeyRequiredNode)."""


class Ask:
    """An allocation ask of an application (``002`` AllocationAsk, gang fields from ``001``)."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.ASK
    __slots__ = (
        "allocated_count",
        "app",
        "created",
        "execution_timeout_ms",
        "key",
        "last_scheduling_state",
        "max_allocations",
        "originator",
        "parked_on",
        "pending_repeats",
        "placeholder",
        "preempt_checked",
        "preempt_other",
        "preempt_self",
        "preempted",
        "priority",
        "required_node",
        "resource",
        "searched",
        "seq",
        "sort_key",
        "state",
        "tags",
        "task_group",
        "waiting_told",
    )

    def __init__(
        self,
        app: Application,
        key: str,
        resource: Resource,
        max_allocations: int,
        priority: int,
        seq: int,
        created: float,
        execution_timeout_ms: int = 0,
        tags: dict[str, str] | None = None,
        task_group: str = "",
        placeholder: bool = False,
        originator: bool = False,
        preempt_self: bool = True,
        preempt_other: bool = False,
    ) -> None:
        self.state = self.LIFECYCLE.initial
        self.app = app
        self.key = key
        self.resource = resource
        self.max_allocations = max_allocations
        self.pending_repeats = max_allocations
        self.allocated_count = 0
        self.priority = priority
        self.seq = seq
        self.sort_key = (-priority << SEQ_BITS) + seq
        self.created = created
        self.execution_timeout_ms = execution_timeout_ms
        self.tags = tags or {}
        self.task_group = task_group
        # 002 AllocationAsk.placeholder: "ignored if the taskGroupName is not set".
        self.placeholder = placeholder and bool(task_group)
        self.originator = originator
        # Preemption (``scheduler.preemption``): the ask's PreemptionPolicy, whether it
        # triggered a preemption (once per ask, ever), when it was last checked for one,
        # and the node it must run on (the requiredNode tag; "" for any node).
        self.preempt_self = preempt_self
        self.preempt_other = preempt_other
        self.preempted = False
        self.preempt_checked: float | None = None
        self.required_node = self.tags.get(REQUIRED_NODE, "")
        self.last_scheduling_state: object | None = None
        # The placeholder whose release must be confirmed before this ask can
        # take its place (``001`` "Scheduler logic changes" step 3: parked).
        self.parked_on = ""
        # Waiting for the cluster to grow (``partition.waiting``): a node search found no
        # room (reported RESERVED or FAILED), and whether the RM was told it waits.
        self.searched = False
        self.waiting_told = False

    @property
    def event_id(self) -> str:
        return self.key

    def __repr__(self) -> str:
        return f"Ask({self.app.id}/{self.key} {self.state} x{self.pending_repeats})"


SEQ_BITS = 64
"""An ask's ``sort_key`` is ``(-priority, seq)`` packed into one int (``seq`` stays below
2**64): ints compare faster than tuples and, unlike tuples, are no work for the cyclic
garbage collector, which otherwise walks one key per ask that arrives."""


class PendingAsks:
    """An application's pending asks by ``Ask.sort_key`` (priority high first, then
    arrival), iterated in that order.

    A dict and two plain lists, the keys and the asks, kept sorted with ``bisect``:
    an application has a few asks to a few thousand, where a C memmove costs less
    than a ``SortedDict``'s bookkeeping, and the cycle reads the asks in order (a C
    copy of a list) once per allocation.
    """

    __slots__ = ("_asks", "_keys", "_order")

    def __init__(self) -> None:
        self._asks: dict[int, Ask] = {}
        self._keys: list[int] = []
        self._order: list[Ask] = []

    def __setitem__(self, key: int, ask: Ask) -> None:
        i = bisect_left(self._keys, key)
        if key in self._asks:
            self._order[i] = ask
        else:
            self._keys.insert(i, key)
            self._order.insert(i, ask)
        self._asks[key] = ask

    def __delitem__(self, key: int) -> None:
        del self._asks[key]
        i = bisect_left(self._keys, key)
        del self._keys[i]
        del self._order[i]

    def pop(self, key: int, default: Ask | None = None) -> Ask | None:
        if key not in self._asks:
            return default
        ask = self._asks[key]
        del self[key]
        return ask

    def get(self, key: int, default: Ask | None = None) -> Ask | None:
        return self._asks.get(key, default)

    def first(self) -> Ask | None:
        """The first pending ask (highest priority, then oldest), None when there is none."""
        return self._order[0] if self._order else None

    def first_counted(self) -> Ask | None:
        """The first pending ask with a repeat not held by a started swap (whose priority is
        the application's), None when there is none."""
        for ask in self._order:
            if ask.pending_repeats > (1 if ask.parked_on else 0):
                return ask
        return None

    def values(self) -> list[Ask]:
        """The asks in order, as a new list (the caller may change the asks while reading)."""
        return self._order[:]

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys[:])

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._asks

    def __repr__(self) -> str:
        return f"PendingAsks({self._order!r})"


class Allocation:
    """Resources of one ask repeat bound to a node (``002`` Allocation)."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.ALLOCATION
    __slots__ = (
        "app",
        "ask_key",
        "created",
        "fallback",
        "node",
        "originator",
        "over_capacity",
        "over_quota",
        "placeholder",
        "preempt_self",
        "preempted",
        "priority",
        "recovered",
        "release_count",
        "release_type",
        "replaced_node",
        "replaces",
        "replacing_key",
        "required_node",
        "resource",
        "seq",
        "state",
        "tags",
        "task_group",
        "timer_token",
        "uuid",
    )

    def __init__(
        self,
        uuid: str,
        app: Application,
        ask_key: str,
        node: Node,
        resource: Resource,
        created: float,
        placeholder: bool = False,
        task_group: str = "",
        priority: int = 0,
        tags: dict[str, str] | None = None,
        recovered: bool = False,
    ) -> None:
        self.state = self.LIFECYCLE.initial
        self.uuid = uuid
        self.app = app
        self.ask_key = ask_key
        self.node = node
        self.resource = resource
        self.created = created
        self.placeholder = placeholder
        self.task_group = task_group
        self.priority = priority
        self.tags = tags or {}
        self.recovered = recovered
        # Preemption: the ask's flags as a victim sees them (a recovered allocation has no
        # policy: it may be preempted and is no originator), its required node, and whether
        # the core preempted it (counted in ``Queue.preempting`` until the RM confirms).
        self.preempt_self = True
        self.originator = False
        self.required_node = self.tags.get(REQUIRED_NODE, "")
        self.preempted = False
        # Creation order among everything the core sequences (asks included).
        self.seq = 0
        # Set by recovery when the recovered allocation took its queue path over
        # a max or its node over capacity (the cluster already runs it).
        self.over_quota = False
        self.over_capacity = False
        # The TerminationType value of a core-initiated release awaiting the RM.
        self.release_type: int | None = None
        self.release_count = 0
        # Placeholder replacement (001 "Scheduler logic changes"): on a placeholder,
        # the key of the real ask parked on it; on a real allocation, the placeholder
        # it replaced, that placeholder's node, and whether it had to go elsewhere.
        self.replacing_key = ""
        self.replaces = ""
        self.replaced_node = ""
        self.fallback = False
        self.timer_token = 0

    @property
    def released(self) -> bool:
        """``001`` Allocation.released: a core-initiated release is unconfirmed."""
        return self.state == "Releasing"

    @property
    def event_id(self) -> str:
        return self.uuid

    def __repr__(self) -> str:
        return f"Allocation({self.uuid} {self.state} on {self.node.id})"


class Application:
    """An application and everything it holds (``002`` AddApplicationRequest, ``001``)."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.APPLICATION
    __slots__ = (
        "admission",
        "allocated",
        "allocations",
        "asks",
        "backoff_token",
        "backoff_until",
        "completing_timed_out",
        "counted_running",
        "execution_timeout_ms",
        "gang_style",
        "groups",
        "id",
        "limited_by",
        "partition_name",
        "pending",
        "pending_asks",
        "placeholder_allocated",
        "placeholder_ask",
        "placeholder_timer_started",
        "placeholder_token",
        "priority",
        "queue",
        "queue_path",
        "ran",
        "resting",
        "state",
        "state_since",
        "submit_seq",
        "submit_time",
        "tags",
        "timer_token",
        "tracked_group",
        "user",
    )

    def __init__(
        self,
        app_id: str,
        partition_name: str,
        queue: Queue | None,
        queue_path: str,
        user: str,
        groups: list[str],
        submit_seq: int,
        submit_time: float,
        tags: dict[str, str] | None = None,
        execution_timeout_ms: int = 0,
        placeholder_ask: Resource | None = None,
        gang_style: str = "Soft",
    ) -> None:
        self.state = self.LIFECYCLE.initial
        self.id = app_id
        self.partition_name = partition_name
        self.queue = queue
        self.queue_path = queue_path
        self.user = user
        self.groups = list(groups)
        self.submit_seq = submit_seq
        self.submit_time = submit_time
        self.state_since = submit_time
        self.tags = tags or {}
        self.execution_timeout_ms = execution_timeout_ms
        self.placeholder_ask: Resource = placeholder_ask or {}
        self.gang_style = gang_style
        self.asks: dict[str, Ask] = {}
        # Pending asks in scheduling order (priority high first, then arrival).
        self.pending_asks = PendingAsks()
        self.allocations: dict[str, Allocation] = {}
        self.allocated: Resource = {}
        self.placeholder_allocated: Resource = {}
        self.pending: Resource = {}
        self.counted_running = False
        # It went Accepted -> Running (its first real allocation, which took a checked
        # maxapplications slot) and has not been back in Accepted since.
        self.ran = False
        self.placeholder_timer_started = False
        # Nothing of it can succeed again in this scheduling call: out of its leaf's
        # order until the call ends or room is given back (``PartitionState.rest``).
        self.resting = False
        self.placeholder_token = 0
        self.completing_timed_out = False
        # Application backoff: no regular scheduling before this time (0: none), and the
        # token of the timer that marks its end.
        self.backoff_until = 0.0
        self.backoff_token = 0
        # What admission checked: the queue's sort policy and the max of every
        # queue on the path when the application was accepted (for the invariants).
        self.admission: tuple[str, tuple[tuple[str, Resource], ...]] = ("", ())
        self.timer_token = 0
        # The group whose limits apply ("" for none), resolved when it is accepted, and
        # the (kind, name) keys its usage is tracked under: its user, and that group.
        self.tracked_group = ""
        self.limited_by: tuple[tuple[str, str], ...] = ((USER, user),)
        # The highest priority among the pending asks (``scheduler.priority``).
        self.priority = MIN_PRIORITY

    @property
    def event_id(self) -> str:
        return self.id

    def has_placeholders(self) -> bool:
        return any(a.placeholder for a in self.allocations.values())

    def __repr__(self) -> str:
        return f"Application({self.id} {self.state})"


class Node:
    """A node registered by the RM (``002`` NodeInfo)."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.NODE
    __slots__ = (
        "allocated",
        "allocations",
        "attributes",
        "available",
        "capacity",
        "id",
        "occupied",
        "over_capacity_reason",
        "reservations",
        "sort_key",
        "state",
    )

    def __init__(
        self,
        node_id: str,
        capacity: Resource,
        occupied: Resource,
        attributes: dict[str, str],
    ) -> None:
        self.state = self.LIFECYCLE.initial
        self.id = node_id
        self.capacity = capacity
        self.occupied = occupied
        self.attributes = attributes
        self.allocated: Resource = {}
        self.available: Resource = res.sub(capacity, occupied)
        self.allocations: dict[str, Allocation] = {}
        # The asks holding this node, (application id, ask key) -> when the reservation
        # was made (a sequence number, comparable with Allocation.seq), in the order made.
        # One ordinary ask alone, or any number of required-node asks (YuniKorn's
        # node.go Reserve keeps a map).
        self.reservations: dict[tuple[str, str], int] = {}
        # Why the node may hold more than capacity - occupied: recovery or a shrink.
        self.over_capacity_reason = ""
        self.sort_key: tuple[float, str] = (0.0, node_id)

    @property
    def event_id(self) -> str:
        return self.id

    @property
    def schedulable(self) -> bool:
        return self.state == "Schedulable"

    def open_to(self, key: tuple[str, str]) -> bool:
        """The node may take this ask now: it is unreserved, or one of its reservations is
        the ask's (YuniKorn's node.go ``preAllocateCheck`` with ``isReservedForAllocation``)."""
        return not self.reservations or key in self.reservations

    def recompute_available(self, reason: str = "") -> None:
        """``capacity - occupied - allocated``; negative only with a ``reason``.

        The scheduler never places an allocation that does not fit, so room can
        only go negative through recovery or an RM update that shrinks the node;
        those callers pass the reason, which is kept until the node fits again.
        """
        self.available = res.sub(res.sub(self.capacity, self.occupied), self.allocated)
        if not res.has_negative(self.available):
            self.over_capacity_reason = ""
        elif reason and not self.over_capacity_reason:
            self.over_capacity_reason = reason

    def __repr__(self) -> str:
        return f"Node({self.id} {self.state})"


class Queue:
    """A queue of the partition's hierarchy (``004`` "Configurations & Semantics")."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.OBJECT
    EVENT_NOUN: ClassVar[str] = "queue"
    __slots__ = (
        "adminacl",
        "allocated",
        "app_order",
        "apps",
        "backoff_asks",
        "backoff_delay",
        "chain",
        "child_order",
        "child_template",
        "children",
        "guaranteed",
        "is_leaf",
        "limits",
        "managed",
        "max",
        "max_applications",
        "name",
        "over_quota_reason",
        "parent",
        "path",
        "pending",
        "preempting",
        "preemption_delay",
        "preemption_policy",
        "priority",
        "priority_counts",
        "priority_fence",
        "priority_offset",
        "priority_sort",
        "properties",
        "quota_delay",
        "quota_start",
        "quota_token",
        "resting",
        "running_apps",
        "sort_policy",
        "state",
        "submitacl",
    )

    def __init__(self, name: str, parent: Queue | None, is_leaf: bool) -> None:
        self.state = self.LIFECYCLE.initial
        self.name = name
        self.parent = parent
        self.path: str = name if parent is None else f"{parent.path}.{name}"
        # This queue and its parents up to root (usage is tracked on each): fixed, as a
        # queue never changes parent, and read on every allocation.
        self.chain: tuple[Queue, ...] = (self, *(parent.chain if parent else ()))
        self.is_leaf = is_leaf
        # False for a queue a placement rule created: no quota of its own,
        # untouched by configuration updates, removed once empty.
        self.managed = True
        self.children: dict[str, Queue] = {}
        self.apps: dict[str, Application] = {}
        self.allocated: Resource = {}
        self.pending: Resource = {}
        # Preemption: allocations of this subtree preempted but not yet confirmed by the RM
        # (still in ``allocated``), and the settings of ``scheduler.preemption``.
        self.preempting: Resource = {}
        self.preemption_policy = "default"
        self.preemption_delay = 30.0
        # Application backoff (``scheduler.preemption.backoff_of``): after this many asks of
        # one application found no node in one pass (0: never), it is skipped this long.
        self.backoff_asks = 0
        self.backoff_delay = 30.0
        # Quota preemption (``partition.quota_preemption``): the queue's delay (0: off), when
        # a lowered max is enforced (None: not), and the token of the timer marking it.
        self.quota_delay = 0.0
        self.quota_start: float | None = None
        self.quota_token = 0
        self.max: Resource | None = None
        self.guaranteed: Resource | None = None
        self.max_applications = 0
        self.running_apps = 0
        self.limits: QueueLimits | None = None
        self.properties: dict[str, str] = {}
        self.sort_policy = "fifo"
        # Priority (``scheduler.priority``): what the queue shows its parent, the values its
        # applications (leaf) or children (parent) contribute, counted, and its settings.
        self.priority = MIN_PRIORITY
        self.priority_counts: dict[int, int] = {}
        self.priority_offset = 0
        self.priority_fence = False
        self.priority_sort = True
        self.submitacl: ACL | None = None
        self.adminacl: ACL | None = None
        # Why the queue may sit above its max: recovery or a lowered max.
        self.over_quota_reason = ""
        # YuniKorn childtemplate: settings for leaf queues created below this one.
        self.child_template: ChildTemplateConfig | None = None
        # The applications (leaf) and children (parent) kept in policy order between
        # scheduling steps (``policies.AppOrder``, ``ChildOrder``): caches, built at first use.
        self.app_order: Any = None
        self.child_order: Any = None
        # Nothing below it can be placed again in this scheduling call: out of its parent's
        # order until the call ends or room comes back (``PartitionState.rest_queue``).
        self.resting = False

    @property
    def event_id(self) -> str:
        return self.path

    def ancestry(self) -> tuple[Queue, ...]:
        """This queue and its parents up to root."""
        return self.chain

    def __repr__(self) -> str:
        return f"Queue({self.path} {self.state})"
