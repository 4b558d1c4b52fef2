"""State identity for the explorer: a canonical form of the core and the shim, hashed.

Two states are the same when every field that can change what the core or
the checker does next is the same. The canonical form reads every field of
every core object (a test keeps :data:`FIELDS` in step with the classes'
``__slots__``, so a new field can not be forgotten), with three rewrites
that do not change behaviour:

- the core acts on time through its timers, which enter as offsets from
  now, through preemption: an ask that may still preempt compares its age
  with its leaf's ``preemption.delay`` and the time since its last check with
  the 15 s between two checks, so those two enter as ages capped just past the
  longest delay and the interval; and through the reservation delay: a pending
  ask's age enters capped at the delay (older asks reserve alike). The other
  times it stamps on objects (creation, state changes) are left out. The
  shim's own times enter as ages capped just past the timeout each is
  compared with (an allocation with no execution timeout is as old as any
  other; a terminated application older than the retention is just old);
- sequence numbers (submission order, ask order, reservation order) become
  their rank, and allocation uuids (which carry a counter) become their
  application, key and rank;
- with ``symmetry``, nodes of one size are renamed by their content, so a
  state and the same state with two equal nodes swapped are one state.

Symmetry assumes the core picks among nodes by their content and uses names
only to break exact ties, as YuniKorn's node sorting does; a counterexample
found with it is always real (it replays), and ``--no-symmetry`` gives the
exact count (``docs/checker.md``, "Exploring small scopes").
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

import orjson
import xxhash

from invariants.modelshim.configured import CLEAN_INTERVAL
from invariants.modelshim.world import World
from invariants.properties import scheduling
from invariants.readings import view
from invariants.readings.shim import COMPLETING_TIMEOUT, RETENTION
from scheduler.preemption import ATTEMPT_INTERVAL, DEFAULT_DELAY

TERMINATED = ("Completed", "Failed", "Rejected", "Expired")

HORIZON = RETENTION + 24 * 3600.0
"""Offsets are capped here: beyond every timeout the design has."""

FIELDS: dict[str, dict[str, str]] = {
    "Ask": {
        "allocated_count": "v", "app": "skip", "created": "preemption",
        "execution_timeout_ms": "v",
        "key": "v", "last_scheduling_state": "v", "max_allocations": "v", "originator": "v",
        "parked_on": "uuid", "pending_repeats": "v", "placeholder": "v",
        "preempt_checked": "preemption", "preempt_other": "v", "preempt_self": "v",
        "preempted": "v", "priority": "v", "required_node": "v",
        "resource": "v", "searched": "v", "seq": "seq", "sort_key": "skip", "state": "v",
        "tags": "v", "task_group": "v", "waiting_told": "v",
    },
    "Allocation": {
        "app": "skip", "ask_key": "v", "created": "clock", "fallback": "v", "node": "node",
        "originator": "v", "over_capacity": "v", "over_quota": "v", "placeholder": "v",
        "preempt_self": "v", "preempted": "v", "priority": "v", "required_node": "v",
        "recovered": "v", "release_count": "v", "release_type": "v", "replaced_node": "nodeid",
        "replaces": "uuid", "replacing_key": "v", "resource": "v", "seq": "seq",
        "state": "v", "tags": "v", "task_group": "v", "timer_token": "skip", "uuid": "skip",
    },
    "Application": {
        "admission": "v", "allocated": "v", "allocations": "skip", "asks": "skip",
        "backoff_token": "skip", "backoff_until": "skip",
        "completing_timed_out": "v", "counted_running": "v", "execution_timeout_ms": "v",
        "gang_style": "v", "groups": "v", "id": "skip", "limited_by": "skip",
        "partition_name": "v", "pending": "v",
        "pending_asks": "keys", "placeholder_allocated": "v", "placeholder_ask": "v",
        "placeholder_timer_started": "v", "placeholder_token": "skip", "priority": "v",
        "queue": "skip", "queue_path": "v", "ran": "v", "resting": "skip", "state": "v",
        "state_since": "clock",
        "submit_seq": "seq", "submit_time": "clock", "tags": "v", "timer_token": "skip",
        "tracked_group": "v", "user": "v",
    },
    "Node": {
        "allocated": "v", "allocations": "skip", "attributes": "v", "available": "v",
        "capacity": "v", "id": "skip", "occupied": "v", "over_capacity_reason": "v",
        "reservations": "reservations", "sort_key": "score", "state": "v",
    },
    "Queue": {
        "adminacl": "str", "allocated": "v", "app_order": "skip", "apps": "keys",
        "backoff_asks": "v", "backoff_delay": "v",
        "chain": "skip", "child_order": "skip", "child_template": "str",
        "children": "keys", "guaranteed": "v", "is_leaf": "v", "limits": "str", "managed": "v",
        "max": "v",
        "max_applications": "v", "name": "v", "over_quota_reason": "v", "parent": "skip",
        "path": "v", "pending": "v", "preempting": "v", "preemption_delay": "v",
        "preemption_policy": "v", "priority": "v", "priority_counts": "v",
        "priority_fence": "v", "priority_offset": "v", "priority_sort": "v",
        "properties": "v", "resting": "skip", "running_apps": "v",
        "sort_policy": "v", "state": "v", "submitacl": "str",
        "quota_delay": "v", "quota_start": "skip", "quota_token": "skip",
    },
}
"""How each slot of each core class enters the canonical form.

``v`` as it is; ``clock`` a time the core stamps but never acts on (left out);
``preemption`` a time an ask's preemption checks compare with a delay (an age,
capped, while the ask may still preempt: :meth:`_Canon._preemption_ages`);
``seq`` a rank; ``uuid``/``node``/``nodeid`` renamed; ``score`` the sort key
without the name; ``keys`` the keys of a mapping; ``str`` the text of a
configuration object; ``skip`` a back reference, a token, an application's backoff
end or a queue's quota-preemption start (timers carry
liveness instead), a name the record is already filed under, or a value
derived from fields that are read (a queue's chain of ancestors, its
applications and children in policy order, an application's limit keys).
"""


SHIM_FIELDS: dict[str, dict[str, str]] = {
    "AppView": {
        "id": "v", "partition": "v", "path": "v", "state": "v", "gang": "v", "style": "v",
        "placeholder_timeout": "v", "placeholder_start": "age", "placeholder_fired": "v",
        "state_since": "age", "group": "v", "ran": "v",
        "submitted": "skip: the request its id names in the scope (sent again on a resync)",
        "placed": "skip: how the placement was found (coverage only); its path is read",
        "user": "skip: read from the submission",
        "accepted_at": "skip: left out as the core's submission time is ('clock')",
        "fifo_since": "skip: left out as the core's submission time is ('clock'; its "
                      "order is the submission order): the scopes send no creationTime tag",
    },
    "AskView": {
        "app": "v", "key": "v", "resource": "v", "max_allocations": "v", "placeholder": "v",
        "task_group": "v", "timeout_ms": "v", "allocated": "v", "priority": "v",
        "recovered": "v", "sent": "age", "may_preempt": "v", "may_be_victim": "v",
        "required_node": "v", "originator": "v", "tags": "v", "preempted": "v",
        "searched": "v", "told_waiting": "v",
    },
    "NodeView": {"id": "node", "partition": "v", "capacity": "v", "occupied": "v",
                 "state": "v"},
    "AllocView": {
        "uuid": "uuid", "app": "v", "key": "v", "node": "node", "resource": "v",
        "placeholder": "v", "task_group": "v", "created": "age", "timeout_ms": "v",
        "recovered": "v", "releasing": "v", "sent": "v", "priority": "v",
        "required_node": "v", "may_be_victim": "v", "originator": "v", "unspelled": "v",
    },
    "RMView": {
        "rm_id": "v", "config": "v", "paused": "v", "paused_at": "age", "stopped": "v",
        "apps": "v", "asks": "v", "nodes": "v", "allocs": "v", "finished": "age",
        "created": "v", "foreign": "v", "removed_queues": "age", "waiting_since": "age",
        "quota_start": "offset",
        "partitions": "skip: the core's partition objects last seen (the core's are read)",
    },
}
"""How each field of the model shim's records enters the canonical form (``v`` as it is,
or its presence for ``sent``; ``age`` capped; ``offset`` a time to come, capped;
``uuid``/``node`` renamed; ``skip`` with why). The shim's knowledge is part of the
state: two states whose cores agree but whose shims know different things may go on
differently, so a test keeps this table in step with the records' fields, as
:data:`FIELDS` is with the core's slots."""


_ENCODE = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_READ = {cls: tuple((slot, how) for slot, how in fields.items()
                    if how not in ("skip", "clock", "preemption"))
         for cls, fields in FIELDS.items()}


def _reader(slots: tuple[tuple[str, str], ...]
            ) -> tuple[Callable[[Any], Any], tuple[tuple[int, Rewrite], ...]]:
    """One C-level read of every slot that enters the form, and the positions to rewrite.

    Most slots enter as they are (``v``); reading them all with one
    ``attrgetter`` and rewriting the few others in place gives the same list
    as reading slot by slot, at a fraction of the cost (the form was a fifth
    of the search's time).
    """
    names = [slot for slot, _ in slots]
    getter = operator.attrgetter(*names)
    read = getter if len(names) > 1 else (lambda obj: (getter(obj),))
    return read, tuple((i, _REWRITES[how]) for i, (_, how) in enumerate(slots) if how != "v")


Rewrite = Callable[["_Canon", Any], Any]
_REWRITES: dict[str, Rewrite] = {
    "seq": lambda c, value: c.ranks.get(value, -1),
    "uuid": lambda c, value: c.uuids.get(value, "?") if value else "",
    "node": lambda c, value: c.nodes.get(value.id, "?"),
    "nodeid": lambda c, value: c.nodes.get(value, "?") if value else "",
    "score": lambda c, value: value[0],
    "reservations": lambda c, value: [[a, k, c.ranks.get(seq, -1)]
                                      for (a, k), seq in value.items()],
    "keys": lambda c, value: sorted(map(str, value)),
    "str": lambda c, value: None if value is None else str(value),
}
"""How each kind of slot other than ``v`` is rewritten (see :data:`FIELDS`)."""

_READERS = {cls: _reader(slots) for cls, slots in _READ.items()}


def backoff_matters(world: World, app: Any) -> bool:
    """An application's backoff ends to something: a walk of it would place an ask (else
    it would only back off again, for ever, and its end is no event)."""
    ctx = world.context()
    for p in view.partitions(world.api):
        held = p.apps.get(app.id)
        if held is app and held is not None and scheduling.walk_would_place(ctx, p, held):
            return True
    return False


def fingerprint(world: World, symmetry: bool = True,
                node_classes: Mapping[str, str] | None = None) -> int:
    """A 64-bit hash of the canonical form (``xxh3``)."""
    return xxhash.xxh3_64_intdigest(encode(world, symmetry, node_classes))


def encode(world: World, symmetry: bool = True,
           node_classes: Mapping[str, str] | None = None) -> bytes:
    """The canonical form as bytes (what :func:`fingerprint` hashes); mappings are written
    with sorted keys, so their insertion order does not count."""
    return orjson.dumps(canonical(world, symmetry, node_classes), option=_ENCODE)


def canonical(world: World, symmetry: bool = True,
              node_classes: Mapping[str, str] | None = None) -> Any:
    """The canonical form: plain lists, strings and numbers."""
    return _Canon(world, symmetry, node_classes or {}).build()


class _Canon:
    def __init__(self, world: World, symmetry: bool, classes: Mapping[str, str]) -> None:
        self.world = world
        self.now = world.clock.now()
        self.symmetry = symmetry
        self.classes = classes
        self.partitions = view.partitions(world.api)
        self.nodes: dict[str, str] = {}
        self.uuids: dict[str, str] = {}
        self.ranks: dict[int, int] = {}
        self.delay_cap = max((q.preemption_delay for p in self.partitions
                              for q in p.queues.values()), default=DEFAULT_DELAY)
        """Ask ages past the longest ``preemption.delay`` compare alike with every delay."""
        self.reservation_delay = world.api.reservation_delay

    # -- renaming ------------------------------------------------------------
    def _rank_sequences(self) -> None:
        seqs: set[int] = set()
        for p in self.partitions:
            for app in p.apps.values():
                seqs.add(app.submit_seq)
                seqs.update(k.seq for k in app.asks.values())
                seqs.update(a.seq for a in app.allocations.values())
            seqs.update(seq for n in p.nodes.values() for seq in n.reservations.values())
        self.ranks = {s: i for i, s in enumerate(sorted(seqs))}

    def _name_nodes(self) -> None:
        ids = sorted({n for p in self.partitions for n in p.nodes}
                     | {n for rv in self.world.shim.rms.values() for n in rv.nodes})
        if not self.symmetry:
            self.nodes = {n: n for n in ids}
            return
        by_class: dict[str, list[tuple[Any, str]]] = {}
        for node_id in ids:
            cls = self.classes.get(node_id, node_id)
            by_class.setdefault(cls, []).append((self._node_signature(node_id), node_id))
        for cls, members in by_class.items():
            members.sort(key=lambda m: orjson.dumps(m[0]))
            for index, (_, node_id) in enumerate(members):
                self.nodes[node_id] = f"{cls}#{index}"

    def _node_signature(self, node_id: str) -> Any:
        """What a node holds, without its name: it decides the node's canonical name."""
        sig: list[Any] = []
        for p in self.partitions:
            node = p.nodes.get(node_id)
            if node is None:
                continue
            sig.append([p.name, node.state, _plain(node.capacity), _plain(node.occupied),
                        _plain(node.allocated), [list(k) for k in node.reservations],
                        sorted(orjson.dumps([a.app.id, a.ask_key, a.placeholder, a.state,
                                             _plain(a.resource)]).decode()
                               for a in node.allocations.values())])
        for rv in self.world.shim.rms.values():
            told = rv.nodes.get(node_id)
            if told is not None:
                sig.append([told.state, _plain(told.capacity), _plain(told.occupied)])
        return sig

    def _name_uuids(self) -> None:
        allocs: list[tuple[str, str, int, str]] = []
        for p in self.partitions:
            for app in p.apps.values():
                for a in app.allocations.values():
                    allocs.append((app.id, a.ask_key, a.seq, a.uuid))
        shim_only = sorted(
            (a.app, a.key, a.created, a.uuid) for rv in self.world.shim.rms.values()
            for a in rv.allocs.values())
        allocs.sort()
        counts: dict[tuple[str, str], int] = {}
        for app_id, key, _, uuid in allocs:
            n = counts.get((app_id, key), 0)
            counts[(app_id, key)] = n + 1
            self.uuids.setdefault(uuid, f"{app_id}/{key}#{n}")
        for app_id, key, _, uuid in shim_only:
            if uuid not in self.uuids:
                n = counts.get((app_id, key), 0)
                counts[(app_id, key)] = n + 1
                self.uuids[uuid] = f"{app_id}/{key}#shim{n}"

    def _age(self, t: float, cap: float) -> float:
        """How long ago ``t`` was, up to just past ``cap`` (no check compares it further)."""
        return round(min(cap + 1.0, self.now - t), 6)

    def _offset(self, t: float) -> float:
        return round(min(HORIZON, t - self.now), 6)

    # -- the form ------------------------------------------------------------
    def build(self) -> Any:
        self._rank_sequences()
        self._name_nodes()
        self._name_uuids()
        api = self.world.api
        rms = [[rm.id, rm.state, xxhash.xxh3_64_intdigest(rm.config_text.encode())]
               for rm in view.rms(api)]
        return [rms, [self._partition(p) for p in self.partitions], self._timers(),
                [self._shim(rv) for _, rv in sorted(self.world.shim.rms.items())]]

    def _partition(self, p: view.PartitionState) -> Any:
        nodes = sorted(([self.nodes[n.id], self._object("Node", n)] for n in p.nodes.values()),
                       key=lambda r: str(r[0]))
        return [
            p.name, p.state, _plain(p.capacity),
            [self._object("Queue", q) for _, q in sorted(p.queues.items())],
            [self._app(a) for a in p.apps.values()],
            nodes,
            sorted([list(k), self.nodes.get(n.id, n.id)] for k, n in p.reservations.items()),
            sorted(self.uuids.get(u, "?") for u in p.allocations),
            sorted(list(x) for x in p.failed), sorted(list(x) for x in p.no_node),
            sorted(p.exhausted),
            _plain(p.failed_shapes.shapes), _plain(p.unreservable.shapes), _plain(p.ceiling),
            sorted(self.nodes.get(n.id, "?") for n in p.node_order),
            sorted([*key, sorted(per_path.items())] for key, per_path in p.users.used.items()),
            sorted([*key, sorted(per_path.items())] for key, per_path in p.users.running.items()),
        ]

    def _app(self, app: view.Application) -> Any:
        return [
            app.id, self._object("Application", app),
            [[k.key, self._object("Ask", k), self._preemption_ages(k),
              self._waited(k.created) if k.pending_repeats > 0 else None]
             for k in app.asks.values()],
            sorted([self.uuids[a.uuid], self._object("Allocation", a)]
                   for a in app.allocations.values()),
        ]

    def _object(self, cls: str, obj: Any) -> list[Any]:
        read, rewrites = _READERS[cls]
        out = list(read(obj))
        for i, rewrite in rewrites:
            out[i] = rewrite(self, out[i])
        return out

    def _waited(self, t: float) -> float:
        """How much of the reservation delay an ask has waited since ``t``, its arrival:
        an ask reserves only once it has waited it all, and an older one no differently."""
        return round(min(self.reservation_delay, self.now - t), 6)

    def _preemption_ages(self, ask: Any) -> Any:
        """How old the ask is and how long ago it was last checked for preemption, capped
        just past the longest delay and the interval between checks; nothing for an ask
        that may not preempt or already did (those times are never read again)."""
        if not ask.preempt_other or ask.preempted:
            return None
        checked = ask.preempt_checked
        return [self._age(ask.created, self.delay_cap),
                None if checked is None else self._age(checked, ATTEMPT_INTERVAL)]

    def _timers(self) -> list[Any]:
        out = []
        for due, kind, target, live in view.timers(self.world.api):
            if not live or (kind == "backoff" and not backoff_matters(self.world, target)):
                continue
            name = self.uuids.get(target.uuid, "?") if kind == "execution" else \
                target.name if kind in ("queues", "inspect") else \
                target.path if kind == "quota" else target.id
            out.append([self._offset(due), kind, name])
        return out

    def _shim(self, rv: Any) -> Any:
        apps = []
        for _, a in sorted(rv.apps.items()):
            since = RETENTION if a.state in TERMINATED else COMPLETING_TIMEOUT
            apps.append([a.id, a.state, a.gang, a.style, a.placeholder_timeout,
                         a.placeholder_fired, None if a.placeholder_start is None
                         else self._age(a.placeholder_start, a.placeholder_timeout),
                         self._age(a.state_since, since), a.path, a.partition, a.group,
                         a.ran])
        asks = [[k.app, k.key, k.allocated, k.max_allocations, _plain(k.resource),
                 k.placeholder, k.task_group, k.timeout_ms, k.preempted,
                 self._age(k.sent, self.delay_cap) if k.may_preempt and not k.preempted
                 else None, self._waited(k.sent) if k.pending > 0
                 else None, k.priority, k.recovered, k.may_preempt, k.may_be_victim,
                 k.required_node, k.originator, k.tags, k.searched, k.told_waiting]
                for _, k in sorted(rv.asks.items())]
        nodes = sorted([self.nodes.get(n.id, "?"), n.state, _plain(n.capacity),
                        _plain(n.occupied), n.partition] for n in rv.nodes.values())
        allocs = []
        for a in rv.allocs.values():
            app = rv.apps.get(a.app)
            cap = max(a.timeout_ms / 1000.0, app.placeholder_timeout
                      if a.placeholder and app is not None else 0.0)
            allocs.append([self.uuids.get(a.uuid, "?"), a.app, a.key,
                           self.nodes.get(a.node, "?"), _plain(a.resource), a.placeholder,
                           a.task_group, self._age(a.created, cap), a.timeout_ms, a.recovered,
                           None if a.releasing is None else a.releasing.name,
                           a.sent is not None, a.priority, a.required_node, a.may_be_victim,
                           a.originator, a.unspelled])
        finished = sorted([a, self._age(t, RETENTION)] for a, t in rv.finished.items())
        return [rv.rm_id, rv.paused, rv.stopped,
                self._age(rv.paused_at, HORIZON) if rv.paused else 0,
                xxhash.xxh3_64_intdigest(rv.config.text.encode()), apps, asks, nodes,
                sorted(allocs), finished,
                sorted([part, path, c.leaf, _template(c.template), _template(c.hands_down),
                        None if c.tagged is None else [_plain_map(m) for m in c.tagged],
                        c.tagged_apps]
                       for part, made in rv.created.items() for path, c in made.items()),
                sorted([part, key, node, _plain(size)]
                       for (part, key), (node, size) in rv.foreign.items()),
                sorted([part, path, -1.0 if t < 0 else self._age(t, CLEAN_INTERVAL)]
                       for part, (_p, empty) in rv.removed_queues.items()
                       for path, t in empty.items()),
                sorted([*key, self._age(t, 1.0)] for key, t in rv.waiting_since.items()),
                sorted([*key, self._offset(t)] for key, t in rv.quota_start.items())]


def _template(t: Any) -> Any:
    """A childtemplate a created queue was made from, as plain values."""
    if t is None:
        return None
    return [None if t.max is None else dict(t.max),
            None if t.guaranteed is None else dict(t.guaranteed),
            t.max_applications, dict(t.properties)]


def _plain_map(m: Any) -> Any:
    return None if m is None else dict(m)


def _plain(value: Any) -> Any:
    """Sets as sorted lists; everything else as it is (mappings are sorted when encoded)."""
    if isinstance(value, set | frozenset):
        return sorted(value)
    return value
