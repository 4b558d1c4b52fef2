"""Liveness: what must eventually happen, judged in a quiescent state.

A safety invariant says nothing bad has happened; these say that something
good does not wait forever. They are judged once the world is *quiescent*:
the shim confirmed every release the core asked for and sent nothing new,
the clock passed every timer the core holds (and a day more), and
``schedule()`` changed nothing any more (``invariants/explore/closure.py``
drives a state there). What is still waiting then waits forever.

Each property reads what the shim knows and the checker's own reading of
the configuration (quotas on the path); application states come from the
core, which the model shim has already checked against what it was told.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from invariants.properties import backoff
from invariants.properties import preemptions as pre
from invariants.properties.catalog import Violation
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.shim import AskView, RMView
from scheduler import ManualClock, Scheduler

SETTLING = ("Resuming", "Failing", "Completing")


class _Known(Protocol):
    @property
    def rms(self) -> dict[str, RMView]: ...


class World(Protocol):
    """What the properties read of a world at rest (``invariants/modelshim/world.py``, which
    runs the properties, sits above them): the core, its clock, the predicates callback and
    what the model shim knows."""

    @property
    def api(self) -> Scheduler: ...

    @property
    def clock(self) -> ManualClock: ...

    @property
    def predicate(self) -> Callable[[str, str], bool] | None: ...

    @property
    def shim(self) -> _Known: ...


@dataclass(frozen=True)
class Property:
    """An ``eventually`` rule: its statement, seed section and what it means when broken."""

    name: str
    statement: str
    seed: str
    meaning: str
    check: Callable[[World], list[Violation]]


LIVENESS: dict[str, Property] = {}


def _property(name: str, statement: str, seed: str, meaning: str
              ) -> Callable[[Callable[[World], list[Violation]]],
                            Callable[[World], list[Violation]]]:
    def register(fn: Callable[[World], list[Violation]]) -> Callable[[World], list[Violation]]:
        if name in LIVENESS:
            raise ValueError(f"liveness property {name} registered twice")
        LIVENESS[name] = Property(name, statement, seed, meaning, fn)
        return fn
    return register


QUIESCENCE = "liveness.quiescence"
LIVENESS[QUIESCENCE] = Property(
    QUIESCENCE,
    "Once the shim only confirms releases and the clock only passes timers, the core comes "
    "to rest: a bounded number of cycles and timers leaves nothing to do.",
    "004 'Scheduling' (the cycle), 002 'Lifecycle of applications'",
    "The core keeps releasing, re-timing or changing state on its own forever.",
    lambda world: [],
)


def judge(world: World, names: Sequence[str] | None = None) -> list[Violation]:
    """The liveness properties ``names`` (default: every one) in a quiescent world
    (empty: all hold)."""
    out: list[Violation] = []
    for prop in LIVENESS.values():
        if names is None or prop.name in names:
            out.extend(prop.check(world))
    return out


def _running(world: World) -> list[RMView]:
    return [rv for _, rv in sorted(world.shim.rms.items()) if not rv.paused and not rv.stopped]


@_property(
    "liveness.applications_settle",
    "In a quiescent world no application is Resuming, Failing or Completing; a New one has "
    "no ask yet (it waits for the shim) and an Accepted one holds no allocation: a gang "
    "whose placeholders are all allocated and whose real pods never come does not stay "
    "Accepted forever.",
    "001 'Cleanup', 'Placeholder timeout'; 002 'Lifecycle of applications'; "
    "docs/design-notes.md finding 1",
    "An application hangs in a transient state, or a gang holds its placeholders forever.",
)
def _applications_settle(world: World) -> list[Violation]:
    out = []
    running = {rv.rm_id for rv in _running(world)}
    for p in view.partitions(world.api):
        if p.rm_id not in running:
            continue
        for app in p.apps.values():
            subject = f"application {p.name}/{app.id}"
            if app.state in SETTLING:
                out.append(Violation("liveness.applications_settle", subject,
                                     f"still {app.state} in a quiescent world"))
            elif app.state == "New" and app.asks:
                out.append(Violation("liveness.applications_settle", subject,
                                     f"New forever with {len(app.asks)} ask(s)"))
            elif app.state == "Accepted" and app.allocations:
                kinds = sorted({"placeholder" if a.placeholder else "real"
                                for a in app.allocations.values()})
                out.append(Violation("liveness.applications_settle", subject,
                                     f"Accepted forever while holding {len(app.allocations)} "
                                     f"{'/'.join(kinds)} allocation(s)"))
    return out


@_property(
    "liveness.placeholders_time_out",
    "No placeholder outlives its application's placeholder timeout: in a quiescent world "
    "(the clock past every timer and a day more) every placeholder left is younger than "
    "the timeout, but one allocated while its application was not Accepted or once its "
    "placeholder timer had fallen due (the timer acts once per Accepted spell, as "
    "YuniKorn's initPlaceholderTimer).",
    "001 'Placeholder timeout', 'Cleanup' (placeholders are released when the timeout "
    "hits, leftovers when the application completes); docs/design-notes.md finding 13",
    "Placeholders hold resources no real pod will ever use.",
)
def _placeholders_time_out(world: World) -> list[Violation]:
    out = []
    now = world.clock.now()
    for rv in _running(world):
        for alloc in sorted(rv.allocs.values(), key=lambda a: a.uuid):
            app = rv.apps.get(alloc.app)
            if not alloc.placeholder or app is None:
                continue
            age = now - alloc.created
            if alloc.unspelled or (app.placeholder_start is not None \
                    and alloc.created >= app.placeholder_start + app.placeholder_timeout):
                continue  # allocated outside an Accepted spell, or after its timer fell due
            if age > app.placeholder_timeout and alloc.releasing is None:
                out.append(Violation(
                    "liveness.placeholders_time_out", f"placeholder {alloc.uuid}",
                    f"held {age:g} s, past its application's {app.placeholder_timeout:g} s "
                    f"placeholder timeout, with nothing left to happen"))
    return out


@_property(
    "liveness.asks_served",
    "In a quiescent world no ask is pending that fits an empty schedulable node and the "
    "quota of every queue on its path: it was allocated, or it was rejected or released "
    "with a reason.",
    "004 'Scheduling' (the cycle allocates what fits); 002 'AllocationAsk'",
    "A pod waits forever although the cluster and its queue have room for it.",
)
def _asks_served(world: World) -> list[Violation]:
    out = []
    for rv in _running(world):
        if world.predicate is not None:
            continue
        empty = [n for _, n in sorted(rv.nodes.items())
                 if n.state == "Schedulable" and not rv.allocs_on(n.id)]
        for (app_id, key), ask in sorted(rv.asks.items()):
            app = rv.apps.get(app_id)
            if ask.pending <= 0 or app is None or app.state not in ("Accepted", "Running",
                                                                     "Completing"):
                continue
            if not ask.placeholder and rv.pending_placeholders(app_id):
                continue
            if not _quota_allows(rv, app_id, ask.resource) or _starved(rv, app_id, ask):
                continue
            room = [n.id for n in empty if n.partition == app.partition
                    and (not ask.required_node or n.id == ask.required_node)
                    and qty.fits(ask.resource, qty.minus(n.capacity, n.occupied))]
            if room:
                out.append(Violation(
                    "liveness.asks_served", f"ask {app_id}/{key}",
                    f"pending forever although node {room[0]} is empty and every queue on "
                    f"{app.path} has room for {qty.show(ask.resource)}"))
    return out


def _starved(rv: RMView, app_id: str, ask: AskView) -> bool:
    """Behind at least as many asks of its application (of its priority or above) that no
    node could ever hold as its leaf's application.unschedasks.backoff: every walk backs
    the application off before it reaches this ask (YuniKorn's backoff starves it)."""
    app = rv.apps[app_id]
    pm = rv.config.partition(app.partition)
    leaf = pm.queues.get(app.path) if pm is not None else None
    if leaf is None:
        return False
    rooms = [qty.minus(x.capacity, x.occupied) for x in rv.nodes.values()
             if x.partition == app.partition and x.state == "Schedulable"]
    return _behind_backoff(rv, ask, leaf, rooms)


def _behind_backoff(rv: RMView, ask: AskView, leaf: model.QueueModel,
                    rooms: list[dict[str, int]]) -> bool:
    """Whether at least ``leaf``'s application.unschedasks.backoff other pending asks of
    ``ask``'s application, of its priority or above, fit none of ``rooms``."""
    n = backoff.settings(leaf)[0]
    if n <= 0:
        return False
    stuck = sum(1 for other in rv.asks.values()
                if other is not ask and other.app == ask.app and other.pending > 0
                and other.priority >= ask.priority
                and not any(qty.fits(other.resource, room) for room in rooms))
    return stuck >= n


def _quota_allows(rv: RMView, app_id: str, r: dict[str, int]) -> bool:
    app = rv.apps[app_id]
    pm = rv.config.partition(app.partition)
    if pm is None:
        return False
    starting = not rv.holds_slot(app)
    # Created levels too, by the shim's record (a created leaf's template max binds).
    for q in [q for q in model.levels(pm, rv.created.get(app.partition, {}), app.path)
              if q is not None]:
        if q.max is not None:
            used = rv.usage_below(app.partition, q.path)
            if any(used.get(k, 0) + v > q.max[k] for k, v in r.items() if k in q.max):
                return False
        if starting and q.max_applications > 0:
            counted = sum(1 for a in rv.apps_below(app.partition, q.path) if rv.holds_slot(a))
            if counted >= q.max_applications:
                return False
    return True


@_property(
    "liveness.releases_end",
    "Every release the core asked for ends once the shim confirms it: in a quiescent world "
    "the shim owes no confirmation and the core holds no allocation it is releasing.",
    "001 'Placeholder allocation replacement' step 3, 'Cleanup'; 002 "
    "'AllocationRelease' (the shim confirms a release the core started)",
    "Resources stay booked for a pod that is gone, or the core asks again and again.",
)
def _releases_end(world: World) -> list[Violation]:
    out = []
    running = {rv.rm_id for rv in _running(world)}
    for rv in _running(world):
        for alloc in sorted(rv.allocs.values(), key=lambda a: a.uuid):
            if alloc.releasing is not None:
                out.append(Violation("liveness.releases_end", f"allocation {alloc.uuid}",
                                     f"the shim still owes a {alloc.releasing.name} "
                                     "confirmation after confirming every release"))
    for p in view.partitions(world.api):
        if p.rm_id not in running:
            continue
        for uuid, held in sorted(p.allocations.items()):
            if held.state == "Releasing":
                out.append(Violation("liveness.releases_end", f"allocation {uuid}",
                                     "the core is still releasing it after every "
                                     "confirmation was sent"))
    return out


@_property(
    "liveness.preemption_serves",
    "In a quiescent world no ask waits that YuniKorn's rules say must preempt: an ask the "
    "shim sent with allowPreemptOther, no required node, outside any gang, that never "
    "preempted before, past its leaf's preemption.delay, in a partition with preemption "
    "enabled, whose leaf has a guarantee on its path and would be within it with the ask "
    "on every queue below root (no user, group or maxapplications limit on the path), while "
    "some schedulable node not reserved for another ask holds allocations it may take and "
    "any one of them would do: it frees room for the ask on that node, it lies in another "
    "leaf inside the ask's preemption fence, not disabled, above its guarantee and still "
    "at or above it without that allocation, with a priority the ask may preempt and no "
    "required node. Narrower than 'an ask under its guarantee that would fit once "
    "over-guarantee allocations are gone': where victims must also bring a queue of the "
    "ask's path within its guarantee, or several victims are needed on a node, YuniKorn's "
    "greedy victim search may legitimately find none (docs/design-notes.md, 'How the "
    "explorer reads preemption').",
    "YuniKorn preemption (design/preemption.md laws 4 and 5; Application.tryAllocate, "
    "Preemptor.TryPreemption)",
    "A pod in a queue under its guarantee waits forever behind a queue over its "
    "guarantee, although preemption may and must make room for it.",
)
def _preemption_serves(world: World) -> list[Violation]:
    out = []
    for rv in _running(world):
        if world.predicate is not None or any(n.state != "Schedulable"
                                              for n in rv.nodes.values()):
            continue  # predicates and draining nodes: not claimed (docs/design-notes.md)
        held = {key: node.id for p in view.partitions(world.api) if p.rm_id == rv.rm_id
                for key, node in p.reservations.items()}
        for (app_id, key), ask in sorted(rv.asks.items()):
            why = _must_preempt(world, rv, ask, held)
            if why:
                out.append(Violation("liveness.preemption_serves", f"ask {app_id}/{key}",
                                     f"pending forever although {why}"))
    return out


def _must_preempt(world: World, rv: RMView, ask: AskView,
                  held: dict[tuple[str, str], str]) -> str:
    """Why YuniKorn would preempt for ``ask`` now, or "" when the property claims nothing."""
    found = pre.ready(rv, ask, world.clock.now())
    if found is None:
        return ""
    partition, part, chain = found
    nodes = [n for _, n in sorted(rv.nodes.items()) if n.partition == partition]
    cluster = qty.total(n.capacity for n in nodes)
    if not pre.within_below_root(rv, partition, chain, ask, cluster):
        return ""  # victims must bring the path within: greedy, not claimed
    mine = (ask.app, ask.key)
    for node in nodes:
        if held.get(mine) != node.id and node.id in held.values():
            continue
        free = rv.free(node.id)
        if qty.fits(ask.resource, free):
            return ""  # no preemption needed: liveness.asks_served's business
        verdicts = [(v, pre.victim_verdict(rv, part, chain, ask, v, cluster))
                    for v in sorted(rv.allocs_on(node.id), key=lambda a: a.uuid)]
        victims = [v for v, verdict in verdicts if verdict is not None]
        if victims and all(verdict is not False and qty.fits(
                ask.resource, qty.plus(free, v.resource)) for v, verdict in verdicts
                if verdict is not None):
            return (f"it may preempt and its leaf {chain[0].path} is within its guarantee "
                    f"with it; on node {node.id} any one of {len(victims)} allocation(s) "
                    f"it may take ({', '.join(f'{v.app}/{v.key}' for v in victims)}) would "
                    "make room and leave its leaf at or above its guarantee")
    return ""


@_property(
    "liveness.required_node_served",
    "In a quiescent world no required-node ask waits that YuniKorn's rules say must take its "
    "node over: an ask the shim sent, outside any gang, that never preempted before, whose "
    "required node is schedulable, which no other waiting required-node ask names, whose "
    "application may start or runs within every quota and maxapplications on its path (no "
    "user or group limit there), and for which the node's free room with every allocation "
    "on it that it may take covers the ask (its leaf not stateaware, which starts one "
    "application at a time, every queue of its path still configured, not behind as many "
    "asks of its application that fit nowhere as its leaf's backoff counts): not itself a "
    "required-node allocation, of a "
    "priority at most the ask's, holding a resource type the ask asks for. Guarantees, "
    "fences, offsets, allowPreemptOther, the delay and the partition's preemption switch do "
    "not matter here.",
    "YuniKorn required-node (DaemonSet) preemption (design/simple_preemptor.md; "
    "Application.tryRequiredNode, the reserved pass's tryRequiredNodePreemption)",
    "A DaemonSet pod never runs on its node although the pods it may evict there would make "
    "room for it.",
)
def _required_node_served(world: World) -> list[Violation]:
    out = []
    for rv in _running(world):
        if world.predicate is not None:
            continue  # the RM's predicates may refuse the node: not claimed
        for (app_id, key), ask in sorted(rv.asks.items()):
            why = _must_take_over(rv, ask)
            if why:
                out.append(Violation("liveness.required_node_served", f"ask {app_id}/{key}",
                                     f"pending forever although {why}"))
    return out


def _must_take_over(rv: RMView, ask: AskView) -> str:
    """Why YuniKorn's reserved pass would preempt for the required-node ``ask`` now, or ""."""
    node = rv.nodes.get(ask.required_node) if ask.required_node else None
    app = rv.apps.get(ask.app)
    if node is None or app is None or ask.pending <= 0 or ask.preempted or ask.recovered \
            or ask.placeholder or ask.task_group or node.state != "Schedulable" \
            or node.partition != app.partition \
            or app.state not in ("Accepted", "Running", "Completing"):
        return ""
    if rv.pending_placeholders(ask.app) or any(
            other is not ask and other.pending > 0 and other.required_node == node.id
            for other in rv.asks.values()):
        return ""
    pm = rv.config.partition(app.partition)
    found = model.levels(pm, rv.created.get(app.partition, {}), app.path) \
        if pm is not None else []
    levels = [q for q in found if q is not None]
    if not levels or len(levels) != len(found):
        return ""  # a queue of its path left the configuration (draining): its max unread
    if any(q.users or q.groups or q.sort_policy == "stateaware" for q in levels):
        return ""  # limits, or one starting application at a time: not claimed
    if not _quota_allows(rv, ask.app, ask.resource) or _backed_off(rv, ask, levels[0]):
        return ""
    victims = pre.required_candidates(rv, ask, node.id)
    free = rv.free(node.id)
    if qty.fits(ask.resource, free) or not victims:
        return ""  # room already (liveness.asks_served's business), or nothing to take
    if not qty.fits(ask.resource, qty.plus(free, qty.total(v.resource for v in victims))):
        return ""
    return (f"its required node {node.id} has {qty.show(free)} free and {len(victims)} "
            f"allocation(s) it may take ({', '.join(f'{v.app}/{v.key}' for v in victims)}), "
            f"together enough for {qty.show(ask.resource)}")


def _backed_off(rv: RMView, ask: AskView, leaf: model.QueueModel) -> bool:
    """Behind at least application.unschedasks.backoff asks of its application (of its
    priority or above) that fit no node's free room: at rest nothing leaves, so each walk
    backs the application off before it reaches ``ask``, for good."""
    partition = rv.apps[ask.app].partition
    rooms = [rv.free(x.id) for _, x in sorted(rv.nodes.items())
             if x.partition == partition and x.state == "Schedulable"]
    return _behind_backoff(rv, ask, leaf, rooms)


CASE_ENDS: tuple[str, ...] = (
    QUIESCENCE,
    "liveness.applications_settle",
    "liveness.placeholders_time_out",
    "liveness.releases_end",
    "liveness.preemption_serves",
    "liveness.required_node_served",
)
"""What the random checker judges at the end of each case, driven to rest
(``runner.case_end``): the properties that read everything the generator draws.
``liveness.asks_served`` is left out: its "fits an empty node within its queue's quota"
ignores user and group limits, reservations, priority fences, required nodes beside
draining and gangs' real asks, all of which the generator draws and each of which may
rightly hold an ask back forever."""
