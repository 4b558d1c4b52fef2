"""Sorting policies: which queue, which application, which node first.

``004`` ("Implementation"): sort queues and applications
by resource usage, let each partition choose how nodes are sorted. Where the
seed stops, the policies follow Apache YuniKorn:

- queues: fair, by the per-type usage shares of ``allocated`` against
  ``guaranteed`` (largest share first, compared lexicographically), then more
  pending first (YuniKorn's ``sortQueuesByPriorityAndFairness``: a queue whose
  pending is at least another's in every type and more in one goes first; here
  by the sum of the pending quantities, which orders every such pair the same
  way and also the pairs YuniKorn leaves to map order), then path;
- applications (``application.sort.policy``): ``fifo`` by submission time,
  ties by the highest priority among the pending asks (YuniKorn's
  ``sortApplicationsBySubmissionTimeAndPriority``), then by id; ``fair`` by
  usage shares against the queue's guaranteed (or the partition's capacity),
  then submission; ``stateaware`` in fifo order, but at most one application
  that has not started running is scheduled at a time;
- priority (``application.sort.priority``, on by default): applications of a
  leaf and children of a parent go by priority first (highest first), then by
  the above; turned off, priority only breaks the policy's ties
  (``scheduler.priority`` keeps the values);
- nodes (``nodesortpolicy``): ``fair`` least used first, ``binpacking`` most
  used first, usage being the weighted mean share of ``capacity`` in use
  (``resourceweights``, default memory 1.0 and vcore 1.0), then node id.

Nodes are kept in a ``SortedList`` updated incrementally as allocations come
and go (YuniKorn keeps a B-tree for the same reason): no full sort per
allocation, so picking a node costs O(log n) at 5,000 nodes as at 500. A
parent's children and a leaf's applications are kept sorted the same way
(``ChildOrder``, ``AppOrder``), re-keyed only where something changed, so an
allocation no longer re-sorts a leaf of a thousand applications.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Mapping
from operator import itemgetter
from typing import Any

from sortedcontainers import SortedList

from . import resources as res
from .objects import Application, Node, Queue
from .resources import ResourceView

DEFAULT_WEIGHTS: dict[str, float] = {"memory": 1.0, "vcore": 1.0}


class NodeCollection:
    """The schedulable nodes of a partition in policy order."""

    __slots__ = ("_binpacking", "_nodes", "_order", "policy", "weights")

    def __init__(self, policy: str = "fair", weights: Mapping[str, float] | None = None) -> None:
        self._order: Any = SortedList()
        self._nodes: dict[str, Node] = {}
        self.policy = "fair"
        self.weights: dict[str, float] = dict(DEFAULT_WEIGHTS)
        self._binpacking = False
        self.set_policy(policy, weights)

    def set_policy(self, policy: str, weights: Mapping[str, float] | None = None) -> None:
        """Switch policy or weights; every node is re-keyed (config reload only)."""
        self.policy = policy or "fair"
        self._binpacking = self.policy == "binpacking"
        self.weights = dict(weights) if weights else dict(DEFAULT_WEIGHTS)
        nodes = list(self._nodes.values())
        self._order.clear()
        for node in nodes:
            node.sort_key = self._key(node)
            self._order.add(node.sort_key)

    def _key(self, node: Node) -> tuple[float, str]:
        score = res.used_share(node.capacity, node.available, self.weights)
        return (-score if self._binpacking else score, node.id)

    def add(self, node: Node) -> None:
        if node.id in self._nodes:
            return
        self._nodes[node.id] = node
        node.sort_key = self._key(node)
        self._order.add(node.sort_key)

    def discard(self, node: Node) -> None:
        if self._nodes.pop(node.id, None) is not None:
            self._order.remove(node.sort_key)

    def update(self, node: Node) -> None:
        """Re-position one node after its usage changed: O(log n)."""
        if node.id not in self._nodes:
            return
        score = res.used_share(node.capacity, node.available, self.weights)
        key = (-score if self._binpacking else score, node.id)
        if key != node.sort_key:
            self._order.remove(node.sort_key)
            node.sort_key = key
            self._order.add(key)

    def __contains__(self, node: Node) -> bool:
        return node.id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Node]:
        return map(self._nodes.__getitem__, map(_LAST, self._order))


# -- queues and applications -------------------------------------------------------------
#
# The cycle walks from the root after every allocation, so each step asks every queue on
# its way for its children, and the leaf for its applications, in order. Both are kept
# sorted between steps (``ChildOrder``, ``AppOrder``) and only the entries marked stale
# are re-keyed: the flows that change what a key reads (usage, pending, priority, state,
# membership) mark the object through ``app_changed``, ``app_used`` or ``queue_changed``
# (marks are only read, never acted on, while the cycle iterates an order); a change of
# the queue's own settings (policy, priority sorting, the fair base) re-keys everything
# at the next read; a configuration reload drops every order (``forget``). Every key ends
# in something unique to the object (the submission sequence, the id, the path), so the
# sorted order is the order a full sort gives, whatever order the keys went in.


def ordered_children(queue: Queue) -> Iterator[Queue]:
    """The children that have pending resources, in fair order (priority first when the
    parent sorts by priority, else priority breaks ties of usage)."""
    order: ChildOrder | None = queue.child_order
    if order is None:
        order = queue.child_order = ChildOrder()
    return order.walk(queue)


def ordered_apps(queue: Queue, capacity: ResourceView) -> Iterator[Application]:
    """The queue's applications that have pending asks, in the queue's policy order."""
    order: AppOrder | None = queue.app_order
    if order is None:
        order = queue.app_order = AppOrder()
    return order.walk(queue, capacity)


def app_changed(app: Application) -> None:
    """Something an application's key or membership reads changed: re-key it at the next
    read (whether it has pending asks, its priority, whether its queue holds it)."""
    queue = app.queue
    if queue is not None and queue.app_order is not None:
        queue.app_order.stale[app.id] = None


def app_used(app: Application) -> None:
    """The application's usage, allocations or state changed: only fair (usage) and
    stateaware (state, allocations) keys read those, so a fifo order is left alone."""
    queue = app.queue
    if queue is not None:
        order: AppOrder | None = queue.app_order
        if order is not None and order._policy != "fifo":
            order.stale[app.id] = None


def queue_changed(queue: Queue) -> None:
    """The same for a queue in its parent's order (usage, pending, priority, membership)."""
    parent = queue.parent
    if parent is not None and parent.child_order is not None:
        parent.child_order.stale[queue.path] = queue.name


def forget(queues: Iterable[Queue]) -> None:
    """Drop the orders of these queues: rebuilt from scratch at their next read (a
    configuration reload changes guarantees, policies and priorities at once)."""
    for queue in queues:
        queue.app_order = None
        queue.child_order = None


class ChildOrder:
    """A parent's children with pending resources, by (priority,) usage share, more
    pending first (the sum of its pending quantities), path.

    A plain list of keys kept sorted with ``bisect``, each key ending in the
    queue itself (never compared: the path before it is unique): a parent has
    few children, and for up to thousands of entries a C memmove costs less
    than ``SortedList``'s bookkeeping. A cache: copying or pickling a queue
    gives an empty one, rebuilt at first use.
    """

    __slots__ = ("_keys", "_order", "_sort", "stale")

    def __init__(self) -> None:
        self._order: list[tuple[Any, ...]] = []
        self._keys: dict[str, tuple[Any, ...]] = {}
        self._sort: bool | None = None
        self.stale: dict[str, str] = {}

    def __reduce__(self) -> tuple[type[ChildOrder], tuple[()]]:
        return (ChildOrder, ())

    def walk(self, parent: Queue) -> Iterator[Queue]:
        if parent.priority_sort != self._sort:
            self._rebuild(parent)
        elif self.stale:
            children = parent.children
            for path, name in self.stale.items():
                child = children.get(name)
                self._set(path, child if child is not None and child.path == path else None)
            self.stale.clear()
        return map(_LAST, self._order)

    def _rebuild(self, parent: Queue) -> None:
        self._sort = parent.priority_sort
        self._order.clear()
        self._keys.clear()
        self.stale.clear()
        for child in parent.children.values():
            self._set(child.path, child)

    def _set(self, path: str, child: Queue | None) -> None:
        key: tuple[Any, ...] | None = None
        if child is not None and child.pending and not child.resting:
            shares = res.shares(child.allocated, child.guaranteed or _NONE)
            more = -sum(child.pending.values())
            key = ((-child.priority, shares, more, path, child) if self._sort
                   else (shares, -child.priority, more, path, child))
        old = self._keys.get(path)
        if key != old:
            _rekey(self._order, old, key)
            if key is None:
                del self._keys[path]
            else:
                self._keys[path] = key


class AppOrder:
    """A leaf's applications with pending asks, in the leaf's policy order.

    - fifo: (submission time, -priority, id); with priority sorting
      (-priority, submission time, id): a full sort by fifo order then a stable
      sort by priority gives exactly that;
    - fair: usage share of the queue's guaranteed, or of the partition's
      capacity when it has none, then -priority, then submission (priority
      first when sorting by priority). The base is compared at every read: when
      it changed (a node came or went, a reload changed the guarantee), every
      key is recomputed, the only time one change re-keys many applications;
    - stateaware: fifo order, filtered: running applications (or starting
      ones: Accepted and holding allocations), and the first Accepted one in
      fifo order when none is starting (``001`` "Handling queue with a FAIR
      sort policy"), read from a second list of the waiting ones.

    Sorted lists as in :class:`ChildOrder`, keys ending in the id (unique) and
    the application. A cache: copying or pickling a queue gives an empty one,
    rebuilt at first use.
    """

    __slots__ = ("_base", "_first", "_keys", "_ok", "_order", "_policy", "_starting",
                 "_waiting", "stale")

    def __init__(self) -> None:
        self._order: list[tuple[Any, ...]] = []
        self._keys: dict[str, tuple[Any, ...]] = {}
        # stateaware only: the waiting applications in fifo order, which of the others
        # may go (running or starting), and how many are starting.
        self._waiting: list[tuple[Any, ...]] = []
        self._ok: dict[str, tuple[tuple[Any, ...] | None, bool, bool]] = {}
        self._starting = 0
        self._policy = ""
        self._first = True
        self._base: dict[str, int] = {}
        self.stale: dict[str, None] = {}

    def __reduce__(self) -> tuple[type[AppOrder], tuple[()]]:
        return (AppOrder, ())

    def walk(self, queue: Queue, capacity: ResourceView) -> Iterator[Application]:
        policy = queue.sort_policy
        if policy != self._policy or queue.priority_sort != self._first or (
                policy == "fair" and (queue.guaranteed or capacity) != self._base):
            self._rebuild(queue, capacity)
        elif self.stale:
            apps = queue.apps
            for app_id in self.stale:
                self._set(app_id, apps.get(app_id))
            self.stale.clear()
        if policy != "stateaware":
            return map(_LAST, self._order)
        admit = self._waiting[0][-2] if self._waiting and not self._starting else None
        ok = self._ok
        return (key[-1] for key in self._order if ok[key[-2]][1] or key[-2] == admit)

    def _rebuild(self, queue: Queue, capacity: ResourceView) -> None:
        self._policy = queue.sort_policy
        self._first = queue.priority_sort
        self._base = dict(queue.guaranteed or capacity) if self._policy == "fair" else {}
        self._order.clear()
        self._keys.clear()
        self._waiting.clear()
        self._ok.clear()
        self._starting = 0
        self.stale.clear()
        for app_id, app in queue.apps.items():
            self._set(app_id, app)

    def _set(self, app_id: str, app: Application | None) -> None:
        key: tuple[Any, ...] | None = None
        if app is not None and app.pending_asks and not app.resting:
            if self._policy == "fair":
                used = app.allocated  # holds no zero entries, as add() would return
                if app.placeholder_allocated:
                    used = res.add(used, app.placeholder_allocated)
                shares = res.shares(used, self._base)
                key = ((-app.priority, shares, app.submit_seq, app_id, app) if self._first
                       else (shares, -app.priority, app.submit_seq, app_id, app))
            elif self._first:
                key = (-app.priority, app.submit_time, app_id, app)
            else:
                key = (app.submit_time, -app.priority, app_id, app)
        old = self._keys.get(app_id)
        if key != old:
            _rekey(self._order, old, key)
            if key is None:
                del self._keys[app_id]
            else:
                self._keys[app_id] = key
        if self._policy == "stateaware":
            self._state_aware(app_id, app)

    def _state_aware(self, app_id: str, app: Application | None) -> None:
        """Which applications stateaware lets go: running or starting ones (Accepted and
        holding allocations, counted whether pending or not), and the first waiting one."""
        entry: tuple[tuple[Any, ...] | None, bool, bool] | None = None
        if app is not None:
            accepted = app.state == "Accepted"
            held = bool(app.allocations)
            starting = accepted and held
            waiting = ((app.submit_time, -app.priority, app_id, app)
                       if accepted and not held and app.pending_asks else None)
            entry = (waiting, app.state in _RUNNING or starting, starting)
        old = self._ok.get(app_id)
        if entry == old:
            return
        _rekey(self._waiting, old[0] if old else None, entry[0] if entry else None)
        self._starting += (entry[2] if entry else 0) - (old[2] if old else 0)
        if entry is None:
            del self._ok[app_id]
        else:
            self._ok[app_id] = entry


def _rekey(order: list[tuple[Any, ...]], old: tuple[Any, ...] | None,
            new: tuple[Any, ...] | None) -> None:
    """Replace ``old`` by ``new`` in the sorted list (either may be None: add or remove).

    A re-keyed entry often keeps its place (another allocation in a fair queue
    rarely overtakes every neighbour): then the key is swapped in place.
    """
    if old is None:
        if new is not None:
            insort(order, new)
        return
    i = bisect_left(order, old)
    if new is not None and (i == 0 or order[i - 1] < new) and (
            i + 1 == len(order) or new < order[i + 1]):
        order[i] = new
        return
    del order[i]
    if new is not None:
        insort(order, new)


_NONE: dict[str, int] = {}
_LAST = itemgetter(-1)
_RUNNING = ("Running", "Completing")
