"""Application backoff as the checker reads it (YUNIKORN-3115; the seeds are silent).

A leaf's ``application.unschedasks.backoff`` (N, a decimal unsigned integer; anything
else is off) and ``application.unschedasks.backoff.delay`` (a positive Go duration,
else 30 s), both inherited: once N asks of one application found no node in one pass
and another ask follows, the application is skipped for the delay (apache/yunikorn-core
be3bb48 pkg/scheduler/objects/application.go ``tryAllocate``, queue.go ``TryAllocate``).
Restated from ``docs/design-notes.md`` and the checker's own reading of the
configuration, never from ``scheduler/partition/cycle.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.shim import REQUIRED_NODE
from invariants.readings.view import Application, Node, PartitionState, partitions, rms
from statemachines.application import SCHEDULABLE

THRESHOLD = "application.unschedasks.backoff"
DELAY = "application.unschedasks.backoff.delay"
DEFAULT_DELAY = 30.0
_EPSILON = 1e-6


def settings(q: model.QueueModel) -> tuple[int, float]:
    """``(N, delay)`` of a configured queue's effective properties."""
    text = q.properties.get(THRESHOLD, "")
    n = int(text) if text and all("0" <= c <= "9" for c in text) else 0
    return (n if n < 1 << 64 else 0), model.positive_duration(q.properties.get(DELAY),
                                                              DEFAULT_DELAY)


def _leaf(ctx: CheckContext, p: PartitionState, app: Application) -> model.QueueModel | None:
    configs: Mapping[str, model.ConfigModel] = ctx.extra.get("configs") or {}
    config = configs.get(p.rm_id)
    part = config.partition(p.name) if config is not None else None
    return part.queues.get(app.queue.path) if part is not None and app.queue is not None \
        else None


def _never_fits(ask_resource: Mapping[str, int], nodes: list[Node]) -> bool:
    """Larger than what every schedulable node could ever offer (capacity - occupied): no
    node takes it, none can be reserved for it."""
    return all(not qty.fits(ask_resource, qty.minus(n.capacity, n.occupied)) for n in nodes)


def _plain(part: model.PartitionModel, path: str) -> bool:
    """Nothing on the path but the backoff decides whether its asks are tried: no max, no
    user or group limit, no maxapplications, not stateaware."""
    chain = part.chain(path)
    return chain[0].sort_policy != "stateaware" and not any(
        q.max or q.users or q.groups or q.max_applications for q in chain)


@invariant(
    "scheduling.backoff",
    "Right after schedule(): an application backing off gets no allocation that is not a "
    "placeholder replacement or a reserved ask's; a backoff that began in the call is in "
    "a leaf whose application.unschedasks.backoff N is positive, lasts the leaf's "
    "application.unschedasks.backoff.delay (30 s by default), and leaves at least N + 1 "
    "asks pending; an application that was not backing off, in a leaf with no max, limit "
    "or maxapplications on its path and not stateaware, whose first N pending asks (by "
    "priority, then arrival) each exceed every schedulable node's capacity less occupied "
    "and which has another pending ask after them, is backing off.",
    "docs/design-notes.md 'Application backoff' (YuniKorn YUNIKORN-3115: tryAllocate, "
    "TryAllocate; queue properties application.unschedasks.backoff and .delay)",
    "An application whose asks keep failing is walked every cycle (YuniKorn's backoff "
    "ignored), one is held back for the wrong time or without cause, or it is scheduled "
    "while it should wait.",
    needs=("after_schedule",),
)
def _backoff(ctx: CheckContext) -> Iterator[Violation]:
    before: Mapping[tuple[str, str, str], float] = ctx.extra.get("backoff_before") or {}
    reserved_before: Mapping[tuple[str, str], Mapping[tuple[str, str], str]] = \
        ctx.extra.get("reserved_before") or {}
    made = set(ctx.extra.get("allocated") or ())
    now = ctx.scheduler.clock.now()
    running = {rm.id for rm in rms(ctx.scheduler) if rm.state == "Running"}
    for p in partitions(ctx.scheduler):
        held = reserved_before.get((p.rm_id, p.name), {})
        for app in p.apps.values():
            subject = f"application {p.name}/{app.id}"
            was = before.get((p.rm_id, p.name, app.id), 0.0)
            if was > now:
                for uuid, x in app.allocations.items():
                    if uuid in made and not x.replaces \
                            and held.get((app.id, x.ask_key)) != x.node.id:
                        yield Violation("scheduling.backoff", subject,
                                        f"allocated {uuid} ({x.ask_key}) while backing off "
                                        f"until {was:g}")
            leaf = _leaf(ctx, p, app)
            if leaf is None:
                continue
            n, delay = settings(leaf)
            if app.backoff_until != was and app.backoff_until > now:
                if n <= 0:
                    yield Violation("scheduling.backoff", subject,
                                    f"backs off in {leaf.path}, whose {THRESHOLD} is off")
                elif abs(app.backoff_until - (now + delay)) > _EPSILON:
                    yield Violation("scheduling.backoff", subject,
                                    f"backs off until {app.backoff_until:g}, not {now:g} + "
                                    f"the leaf's {delay:g} s")
                elif len(app.pending_asks) < n + 1:
                    yield Violation("scheduling.backoff", subject,
                                    f"backs off with {len(app.pending_asks)} asks pending, "
                                    f"{leaf.path}'s threshold {n} needs {n + 1}")
                continue
            if n <= 0 or was > now or app.backoff_until > now or p.rm_id not in running \
                    or p.state == "Stopped" or app.state not in SCHEDULABLE \
                    or app.placeholder_ask or p.predicates is not None:
                continue
            configs: Mapping[str, model.ConfigModel] = ctx.extra.get("configs") or {}
            part = configs[p.rm_id].partition(p.name)
            if part is None or not _plain(part, leaf.path):
                continue
            nodes = [node for node in p.nodes.values() if node.state == "Schedulable"]
            asks = sorted(app.pending_asks.values(), key=lambda k: (-k.priority, k.seq))
            first = asks[:n]
            if len(asks) > n and all(
                    not k.task_group and not k.placeholder and not k.parked_on
                    and not k.tags.get(REQUIRED_NODE) and _never_fits(k.resource, nodes)
                    for k in first):
                yield Violation("scheduling.backoff", subject,
                                f"its first {n} pending asks fit no node and another "
                                f"follows, but it is not backing off ({leaf.path}: "
                                f"{THRESHOLD} {n})")
