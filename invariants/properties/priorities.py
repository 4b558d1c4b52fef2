"""Priority scheduling as the checker reads it: YuniKorn's rules restated, not the core's.

Priorities are recomputed here from the asks and from the checker's own
reading of the configuration (``priority.offset`` and ``priority.policy`` of
the queue itself, ``application.sort.priority`` inherited), never read from
the core's cached values they are meant to check nor computed by its helpers
(``scheduler/priority.py``, ``scheduler/policies.py``).

``priority.order`` judges each allocation of a ``schedule()`` call against
the state just before it, rebuilt from the state after the call: within one
call usage only grows, so node room, queue usage and user usage before the
k-th allocation are those after the call plus the allocations from the k-th
on, and an ask's pending repeats those after the call plus its allocations
from the k-th on. Where the rebuilt state is uncertain (reservations made or
dropped in the call, applications that started in it) the check assumes the
core's choice was right.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from invariants.properties import limits
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.scheduling import _may_start, backing_off, parked
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.shim import REQUIRED_NODE
from invariants.readings.view import (
    Allocation,
    Application,
    Ask,
    Node,
    PartitionState,
    Queue,
    partitions,
    rms,
)
from statemachines.application import SCHEDULABLE

MIN, MAX = -(2**31), 2**31 - 1
SOURCE = ("YuniKorn priority scheduling (priority_scheduling.md; objects/queue.go "
          "recalculatePriority, priorityValueByPolicy; objects/sorters.go)")
_INT = re.compile(r"[+-]?[0-9]+")

Reserved = Mapping[str, Sequence[tuple[str, str]]]
"""Per node id, the asks (application, key) that held it when the call began."""


def _offset(props: Mapping[str, str]) -> int:
    text = props.get("priority.offset", "")
    value = int(text) if _INT.fullmatch(text) else 0
    return value if MIN <= value <= MAX else 0


class Settings:
    """One queue's priority settings as the configuration gives them."""

    __slots__ = ("fence", "offset", "sort")

    def __init__(self, own: Mapping[str, str], effective: Mapping[str, str]) -> None:
        self.offset = _offset(own)
        self.fence = own.get("priority.policy", "").lower() == "fence"
        self.sort = effective.get("application.sort.priority", "").lower() != "disabled"


_KNOWN: dict[tuple[str | None, str | None, str | None], Settings] = {}
"""Settings by the three texts they are read from (each check reads them for every queue)."""


def _read(own: Mapping[str, str], effective: Mapping[str, str]) -> Settings:
    key = (own.get("priority.offset"), own.get("priority.policy"),
           effective.get("application.sort.priority"))
    known = _KNOWN.get(key)
    if known is None:
        if len(_KNOWN) >= 4096:
            _KNOWN.clear()
        known = _KNOWN[key] = Settings(own, effective)
    return known


def of(q: model.QueueModel) -> Settings:
    """A configured queue's settings."""
    return _read(q.own, q.properties)


def settings(part: model.PartitionModel | None, queue: Queue) -> Settings | None:
    """From the configuration: a configured queue's own, a created leaf's from the
    childtemplate its parent hands down; None for a queue the configuration no longer has
    (draining)."""
    if part is None:
        return None
    configured = part.queues.get(queue.path)
    if configured is not None:
        return of(configured)
    if queue.managed or queue.parent is None:
        return None
    template = created_from(part, queue)
    own = template.properties if template is not None else {}
    return _read(own, own)


def created_from(part: model.PartitionModel, queue: Queue) -> model.Template | None:
    """The childtemplate a queue a placement rule created was configured from: a leaf's
    parent hands it down (``model.handed_down``; a created parent inherits it); a created
    parent has none of its own. Its properties are all a created queue has (YuniKorn,
    YUNIKORN-809: nothing comes from the parent's properties)."""
    made = part.made.get(queue.path)
    if made is not None:
        return made.template
    return model.handed_down(part, part.made, queue.parent.path) \
        if queue.parent is not None and queue.is_leaf else None


def shown(raw: int, s: Settings) -> int:
    if raw == MIN:
        return MIN
    return s.offset if s.fence else max(MIN, min(MAX, raw + s.offset))


def app_priority(ctx: CheckContext, app: Application,
                 pending: Mapping[str, int] | None = None) -> int:
    """The highest priority among asks with pending repeats (``pending`` overrides the
    counts: a rebuilt earlier state), a repeat a started swap holds not counted (YuniKorn
    allocates the real ask at the match: apache/yunikorn-core be3bb48
    pkg/scheduler/objects/application.go allocateAsk, updateAskMaxPriority)."""
    best = MIN
    for ask in app.asks.values():
        left = pending.get(ask.key, 0) if pending is not None else (
            ask.pending_repeats if ask.state == "Pending" else 0)
        if parked(ctx, ask):
            left -= 1
        if left > 0 and ask.priority > best:
            best = ask.priority
    return best


def queue_values(p: PartitionState, part: model.PartitionModel | None,
                 apps: Mapping[str, int]) -> dict[str, int] | None:
    """Every queue's value by rules 2-3 from application priorities ``apps``; None when a
    queue's settings are unknown (then nothing is judged)."""
    out: dict[str, int] = {}

    def walk(queue: Queue) -> int | None:
        s = settings(part, queue) if queue.parent is not None else _read({}, _root(part))
        if s is None:
            return None
        values: list[int] = []
        if queue.is_leaf:
            values = [apps.get(a.id, MIN) for a in queue.apps.values()]
        else:
            for child in queue.children.values():
                v = walk(child)
                if v is None:
                    return None
                values.append(v)
        out[queue.path] = shown(max(values, default=MIN), s)
        return out[queue.path]

    return out if walk(p.root) is not None else None


def _root(part: model.PartitionModel | None) -> Mapping[str, str]:
    root = part.queues.get(model.ROOT) if part is not None else None
    return root.properties if root is not None else {}


def sorts_by_priority(p: PartitionState, part: model.PartitionModel | None, queue: Queue) -> bool:
    """Whether ``queue`` orders its applications or children by priority first."""
    s = settings(part, queue) if queue.parent is not None else _read({}, _root(part))
    return s is not None and s.sort


def _config(ctx: CheckContext, p: PartitionState) -> model.PartitionModel | None:
    config = ctx.extra.get("configs", {}).get(p.rm_id)
    part: model.PartitionModel | None = config.partition(p.name) if config is not None else None
    made = ctx.extra.get("created", {}).get((p.rm_id, p.name))
    return replace(part, made=made) if part is not None and made else part


@invariant(
    "priority.cached",
    "Every application's priority is the highest priority among its asks with pending "
    "repeats, the repeat a started placeholder swap holds not counted (the lowest int32 "
    "when none); every queue's is, with nothing pending below it, "
    "the lowest int32, else its offset under priority.policy fence, else the highest value "
    "of its applications (leaf) or children (parent) plus its own priority.offset, clamped "
    "to int32.",
    SOURCE,
    "A priority went stale (an ask added, updated, allocated or removed without the "
    "application's or its queues' priority following), an offset was inherited or not "
    "clamped, or a fence leaked its queue's priority to the parent: the order of "
    "applications and queues is then wrong.",
)
def _cached(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        apps = {a.id: app_priority(ctx, a) for a in p.apps.values()}
        for app in p.apps.values():
            if app.priority != apps[app.id]:
                yield Violation("priority.cached", f"application {p.name}/{app.id}",
                                f"cached priority {app.priority}, its pending asks say "
                                f"{apps[app.id]}")
        values = queue_values(p, _config(ctx, p), apps)
        if values is None:
            continue
        for path, want in values.items():
            queue = p.queues.get(path)
            if queue is not None and queue.priority != want:
                yield Violation("priority.cached", f"queue {p.name}/{path}",
                                f"cached priority {queue.priority}, recomputed {want}")


# ---------------------------------------------------------------- order within a cycle


class Before:
    """The partition as it was just before one allocation of the call (see the module)."""

    def __init__(self, ctx: CheckContext, p: PartitionState, later: Sequence[Allocation],
                 used: Mapping[tuple[str, str, str], Mapping[str, int]],
                 running: Mapping[tuple[str, str, str], int]) -> None:
        self.running = running
        """Running applications per user and group after the call (at least as many)."""
        self.free: dict[str, dict[str, int]] = {
            n.id: qty.minus(qty.minus(n.capacity, n.occupied), n.allocated)
            for n in p.nodes.values()}
        self.queue_used = {q.path: dict(q.allocated) for q in p.queues.values()}
        self.used = {k: dict(v) for k, v in used.items()}
        self.pending: dict[str, dict[str, int]] = {
            a.id: {k.key: k.pending_repeats if k.state == "Pending" else 0
                   for k in a.asks.values()} for a in p.apps.values()}
        self.later = {x.uuid for x in later}
        for x in later:
            r = x.resource
            self.free[x.node.id] = qty.plus(self.free[x.node.id], r)
            app = x.app
            for q in app.queue.ancestry() if app.queue is not None else ():
                self.queue_used[q.path] = qty.minus(self.queue_used[q.path], r)
                for kind, name in _who(app):
                    key = (kind, name, q.path)
                    self.used[key] = qty.minus(self.used.get(key, {}), r)
            per = self.pending.setdefault(app.id, {})
            per[x.ask_key] = per.get(x.ask_key, 0) + 1
        self.apps = {a.id: app_priority(ctx, a, self.pending.get(a.id, {}))
                     for a in p.apps.values()}


def _who(app: Application) -> list[tuple[str, str]]:
    return [(limits.USER, app.user)] + (
        [(limits.GROUP, app.tracked_group)] if app.tracked_group else [])


def _fitting_ask(ctx: CheckContext, p: PartitionState, part: model.PartitionModel | None,
                 before: Before, app: Application,
                 reserved: Reserved) -> Ask | None:
    """A pending ask of ``app`` the cycle could have placed just before the allocation."""
    return next(fitting_asks(ctx, p, part, before, app, reserved), None)


def fitting_asks(ctx: CheckContext, p: PartitionState, part: model.PartitionModel | None,
                 before: Before, app: Application, reserved: Reserved,
                 offered: bool = False) -> Iterator[Ask]:
    """The pending asks of ``app`` the cycle could have placed just before the allocation
    (in the application's order of asks: priority, then arrival); ``offered`` when its
    leaf's policy certainly offered it resources (it got the allocation judged)."""
    if app.state not in SCHEDULABLE or not _may_start(p, app) or app.queue is None:
        return
    if not offered and backing_off(ctx, p, app):
        return  # skipped until its backoff ends (scheduling.backoff judges that)
    if not offered and app.queue.sort_policy == "stateaware" and app.state != "Completing" \
            and not any(
            uuid not in before.later for uuid in app.allocations):
        return  # stateaware may have offered it nothing: not judged
    pending = before.pending.get(app.id, {})
    gang_waiting = bool(app.placeholder_ask) and any(
        k.placeholder and pending.get(k.key, 0) > 0 for k in app.asks.values())
    holds_placeholders = any(x.placeholder for x in app.allocations.values())
    group = ctx.extra.get("groups", {}).get((p.rm_id, app.id))
    for ask in sorted(app.asks.values(), key=lambda k: (-k.priority, k.seq)):
        if pending.get(ask.key, 0) <= 0 or parked(ctx, ask):
            continue
        if not ask.placeholder and (gang_waiting or (ask.task_group and holds_placeholders)):
            continue
        path = app.queue.ancestry()
        if any(q.max is not None and not qty.within(
                qty.plus(before.queue_used[q.path], ask.resource), q.max) for q in path):
            continue
        if limits.held_back(part, before.used, before.running, app, ask.resource, group):
            continue
        if next(open_nodes(ctx, p, before, app, ask, reserved), None) is not None:
            yield ask


def open_nodes(ctx: CheckContext, p: PartitionState, before: Before, app: Application,
               ask: Ask, reserved: Reserved) -> Iterator[Node]:
    """The schedulable nodes whose free room just before the allocation held ``ask``, not
    reserved for another ask, that the shim's predicates (if any) accept."""
    passes = ctx.extra.get("predicate")
    required = ask.tags.get(REQUIRED_NODE, "")
    for node in p.nodes.values():
        if node.state != "Schedulable" or (required and node.id != required):
            continue
        # Closed if it held reservations, now or when the call began, none of them the ask's.
        if any(keys and (app.id, ask.key) not in keys
               for keys in (list(node.reservations), reserved.get(node.id, ()))):
            continue
        if p.predicates is not None and (passes is None or not passes(ask.key, node.id)):
            continue
        if qty.fits(ask.resource, before.free[node.id]):
            yield node


def below(queue: Queue) -> Iterator[Application]:
    """Every application of the subtree below ``queue``."""
    if queue.is_leaf:
        yield from queue.apps.values()
    for child in queue.children.values():
        yield from below(child)


@invariant(
    "priority.order",
    "With application.sort.priority enabled, when an application gets an allocation that "
    "was not reserved, no application of the same leaf with a strictly higher priority, "
    "and no application below a sibling queue (of the leaf or of any queue above it) of "
    "strictly higher priority, was runnable with a pending ask that fitted its user's and "
    "group's limits, the queue headroom of its path and the free room of a schedulable "
    "node not reserved for another ask.",
    SOURCE,
    "The cycle passed over a higher-priority application or queue: priority is ignored, "
    "read stale, or applied only as a tie-break.",
    needs=("after_schedule",),
)
def _order(ctx: CheckContext) -> Iterator[Violation]:
    for p, part, before, values, x, reserved in judged(ctx):
        yield from _judge(ctx, p, part, before, values, x, reserved)


Judged = tuple[PartitionState, model.PartitionModel | None, Before, Mapping[str, int],
               Allocation, Reserved]


def judged(ctx: CheckContext) -> Iterator[Judged]:
    """Each allocation of the ``schedule()`` call the order checks can judge, with the
    partition as it was just before it: not one placed on a node reserved for it at the
    start of the call, nothing in a call whose reservations changed in ways the state
    after it does not show, nothing where a queue's settings are unknown."""
    made: Sequence[str] = ctx.extra.get("allocated", ())
    start: Mapping[tuple[str, str], Mapping[tuple[str, str], str]] = \
        ctx.extra.get("reserved_before", {})
    running = {rm.id for rm in rms(ctx.scheduler) if rm.state == "Running"}
    for p in partitions(ctx.scheduler):
        if p.rm_id not in running:
            continue
        new = [p.allocations[u] for u in made if u in p.allocations]
        if not new:
            continue
        held = start.get((p.rm_id, p.name), {})
        # A reservation dropped in the call without its ask placed there changed which
        # nodes were open at which point: not judged. So does one the call made and
        # dropped again (the shim saw the ask reported RESERVED; no reservation is left).
        placed = {(x.app.id, x.ask_key, x.node.id) for x in new}
        if any(p.reservations.get(k) is None and (k[0], k[1], n) not in placed
               for k, n in held.items()):
            continue
        if any(k not in p.reservations and k not in held
               for k in ctx.extra.get("reserving", ())):
            continue
        if set(ctx.extra.get("replacing", ())) - set(ctx.extra.get("replacing_before", ())):
            # A swap started in the call: its real ask's priority left its application's at
            # a point the state after the call does not show.
            continue
        if any(x.node.id not in p.nodes for x in new):
            # An allocation on a node the partition does not hold: no order to judge it by
            # (references.allocation and protocol.allocation_fits_node report it).
            continue
        part = _config(ctx, p)
        reserved: dict[str, list[tuple[str, str]]] = {}
        for key, node in held.items():
            reserved.setdefault(node, []).append(key)
        used, running_now = limits.expected(ctx, p)
        for i, x in enumerate(new):
            if held.get((x.app.id, x.ask_key)) == x.node.id or x.app.queue is None:
                continue
            before = Before(ctx, p, new[i:], used, running_now)
            values = queue_values(p, part, before.apps)
            if values is None:
                continue
            yield p, part, before, values, x, reserved


def _judge(ctx: CheckContext, p: PartitionState, part: model.PartitionModel | None,
           before: Before, values: Mapping[str, int], x: Allocation,
           reserved: Reserved) -> Iterator[Violation]:
    app = x.app
    leaf = app.queue
    assert leaf is not None
    mine = before.apps[app.id]
    if sorts_by_priority(p, part, leaf):
        for other in leaf.apps.values():
            if other is app or before.apps.get(other.id, MIN) <= mine:
                continue
            ask = _fitting_ask(ctx, p, part, before, other, reserved)
            if ask is not None:
                yield Violation("priority.order", f"allocation {p.name}/{x.uuid}",
                                f"went to {app.id} (priority {mine}) in {leaf.path} while "
                                f"{other.id} (priority {before.apps[other.id]}) could place "
                                f"ask {ask.key}")
                return
    child = leaf
    while child.parent is not None:
        parent = child.parent
        if sorts_by_priority(p, part, parent):
            for sibling in parent.children.values():
                if sibling is child or values.get(sibling.path, MIN) <= values[child.path]:
                    continue
                for other in below(sibling):
                    ask = _fitting_ask(ctx, p, part, before, other, reserved)
                    if ask is not None:
                        yield Violation(
                            "priority.order", f"allocation {p.name}/{x.uuid}",
                            f"went below {child.path} (priority {values[child.path]}) while "
                            f"{sibling.path} (priority {values[sibling.path]}) had "
                            f"{other.id} able to place ask {ask.key}")
                        return
        child = parent
