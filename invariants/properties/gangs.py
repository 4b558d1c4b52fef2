"""Gang scheduling and placeholder invariants (``001``)."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.sums import Held, held
from invariants.readings import arithmetic as qty
from invariants.readings.view import Allocation, Application, partitions
from scheduler import si
from statemachines.application import LIVE

REPLACED = si.TerminationType.PLACEHOLDER_REPLACED.value


def _apps(ctx: CheckContext) -> Iterator[tuple[str, Application]]:
    for p in partitions(ctx.scheduler):
        for app in p.apps.values():
            yield p.name, app


@invariant(
    "gang.accepted_waits_for_placeholders",
    "No real allocation of a gang was made while one of its placeholder asks was pending: "
    "an Accepted application with pending placeholder asks holds no real allocation, and "
    "no real allocation is newer than a placeholder ask that is still pending.",
    "001 'Scheduler logic changes' (placeholder asks keep the application in Accepted; "
    "real asks are processed after the placeholders)",
    "A real pod started before its gang was placed: the gang guarantee is broken.",
)
def _accepted_waits(ctx: CheckContext) -> Iterator[Violation]:
    for pname, app in _apps(ctx):
        pending_ph = [k for k in app.pending_asks.values() if k.placeholder]
        if not pending_ph:
            continue
        subject = f"application {pname}/{app.id}"
        if app.state == "Accepted":
            real = [a.uuid for a in app.allocations.values()
                    if not a.placeholder and a.task_group]
            if real:
                yield Violation("gang.accepted_waits_for_placeholders", subject,
                                f"Accepted with placeholder asks pending holds real {real}")
        oldest = min(k.seq for k in pending_ph)
        late = [a.uuid for a in app.allocations.values()
                if not a.placeholder and not a.recovered and a.seq > oldest]
        if late:
            yield Violation("gang.accepted_waits_for_placeholders", subject,
                            f"real allocation(s) {late} made while placeholder ask "
                            f"{min(pending_ph, key=lambda k: k.seq).key} was pending")


@invariant(
    "gang.placeholders_within_ask",
    "An application's placeholder_allocated equals the sum of its placeholder allocations, "
    "and its placeholders (allocated and pending, recovered ones excepted) never exceed "
    "its placeholder_ask.",
    "001 'Total placeholder size', 'Scheduler storage object changes' (allocatedPlaceholder)",
    "The gang asked for more than it declared: the submission-time quota check no longer "
    "protects the queue.",
)
def _within_ask(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for app in p.apps.values():
            yield from _app_within_ask(held(ctx, p, app), f"application {p.name}/{app.id}", app)


def _app_within_ask(sums: Held, subject: str, app: Application) -> Iterator[Violation]:
    placed = sums.placeholders
    if not qty.same(placed, app.placeholder_allocated):
        yield Violation("gang.placeholders_within_ask", subject,
                        f"placeholder_allocated {qty.show(app.placeholder_allocated)} but "
                        f"placeholders sum to {qty.show(placed)}")
    own = sums.own_placeholders
    if app.pending_asks:
        own = qty.plus(own, qty.total(qty.times(k.resource, k.pending_repeats)
                                      for k in app.pending_asks.values() if k.placeholder))
    if qty.positive(own) and not qty.fits(own, app.placeholder_ask):
        yield Violation("gang.placeholders_within_ask", subject,
                        f"placeholders {qty.show(own)} exceed placeholderAsk "
                        f"{qty.show(app.placeholder_ask)}")


@invariant(
    "gang.placeholders_counted",
    "Every placeholder allocation is held by its node and counted on its application's "
    "queue path like a real allocation.",
    "001 'Queue & Node' (placeholders count as real allocations on queue and node)",
    "Placeholders would not protect the quota or the node room they were created to hold.",
)
def _counted(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for uuid, a in p.allocations.items():
            if not a.placeholder:
                continue
            subject = f"placeholder {p.name}/{uuid}"
            if a.node.allocations.get(uuid) is not a:
                yield Violation("gang.placeholders_counted", subject,
                                f"node {a.node.id} does not hold it")
            queue = a.app.queue
            if queue is None:
                yield Violation("gang.placeholders_counted", subject, "its application has no "
                                "queue")
                continue
            for q in queue.ancestry():
                if not qty.fits(a.resource, q.allocated):
                    yield Violation("gang.placeholders_counted", subject,
                                    f"queue {q.path} allocated {qty.show(q.allocated)} does "
                                    f"not include it")


def _replacement_target(app: Application, ph: Allocation) -> str | None:
    ask = app.asks.get(ph.replacing_key)
    return None if ask is None else ask.parked_on


@invariant(
    "gang.release_once",
    "A core-initiated release is sent once: an allocation is Releasing exactly when one "
    "release was sent for it; a placeholder being replaced has exactly one real ask "
    "parked on it and is never chosen again; no two live allocations replaced the same "
    "placeholder.",
    "001 'Scheduler logic changes' steps 1-3; 'Scheduler storage object changes' (released: "
    "'during that time period the allocation may not be released again')",
    "A placeholder was released twice or replaced by two pods: the shim would kill the "
    "wrong pod, or two pods would take one placeholder's room.",
)
def _release_once(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        replaced: dict[str, str] = {}
        parked: dict[str, str] = {}
        for app in p.apps.values():
            for k in app.asks.values():
                if k.parked_on:
                    if k.parked_on in parked:
                        yield Violation("gang.release_once", f"placeholder {p.name}/{k.parked_on}",
                                        f"asks {parked[k.parked_on]} and {k.key} are both parked "
                                        "on it")
                    parked[k.parked_on] = k.key
                    ph = app.allocations.get(k.parked_on)
                    if ph is None or ph.state != "Releasing" or ph.release_type != REPLACED \
                            or ph.replacing_key != k.key:
                        yield Violation("gang.release_once", f"ask {p.name}/{app.id}/{k.key}",
                                        f"parked on {k.parked_on}, which is not a placeholder "
                                        "being replaced for it")
            for a in app.allocations.values():
                subject = f"allocation {p.name}/{a.uuid}"
                if a.release_count > 1:
                    yield Violation("gang.release_once", subject,
                                    f"released {a.release_count} times")
                if (a.state == "Releasing") != (a.release_count == 1 and
                                                a.release_type is not None):
                    yield Violation("gang.release_once", subject,
                                    f"state {a.state} with {a.release_count} release(s) sent")
                if a.replacing_key and a.release_type == REPLACED and \
                        _replacement_target(app, a) not in (a.uuid, None):
                    yield Violation("gang.release_once", subject,
                                    f"being replaced for ask {a.replacing_key}, which is parked "
                                    "elsewhere")
                if a.replaces:
                    if a.replaces in replaced:
                        yield Violation("gang.release_once", subject,
                                        f"replaced placeholder {a.replaces}, already replaced by "
                                        f"{replaced[a.replaces]}")
                    replaced[a.replaces] = a.uuid


@invariant(
    "gang.replacement_after_confirmation",
    "No real ask is allocated while the release of the placeholder it replaces is "
    "unconfirmed, and a replacing allocation sits on the node of the placeholder it "
    "replaced, or is recorded as a fallback to another node.",
    "001 'Scheduler logic changes' steps 3-5",
    "The real pod and its placeholder both hold room (double counting), or the real pod "
    "moved off the placeholder's node without the fallback being recorded.",
)
def _after_confirmation(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for uuid, a in p.allocations.items():
            if not a.replaces:
                continue
            subject = f"allocation {p.name}/{uuid}"
            if a.replaces in p.allocations:
                yield Violation("gang.replacement_after_confirmation", subject,
                                f"allocated while placeholder {a.replaces} is still held "
                                f"({p.allocations[a.replaces].state})")
            if (a.node.id != a.replaced_node) != a.fallback:
                yield Violation("gang.replacement_after_confirmation", subject,
                                f"on node {a.node.id}, placeholder was on {a.replaced_node}, "
                                f"fallback recorded: {a.fallback}")


@invariant(
    "gang.admission",
    "No live gang application was accepted into a queue that sorts applications fair, or "
    "with a placeholder_ask larger than the max of its queue or of any ancestor "
    "(as configured when it was accepted).",
    "001 'Application submit handling' ('Total placeholder size', 'Handling queue with a "
    "FAIR sort policy')",
    "A gang was admitted that can never be satisfied, or into a queue whose policy can "
    "not guarantee one starting gang at a time.",
)
def _admission(ctx: CheckContext) -> Iterator[Violation]:
    for pname, app in _apps(ctx):
        if app.state not in LIVE or not qty.positive(app.placeholder_ask):
            continue
        subject = f"application {pname}/{app.id}"
        policy, maxes = app.admission
        if policy == "fair":
            yield Violation("gang.admission", subject, "accepted into a fair-sorted queue")
        for path, mx in maxes:
            if not qty.within(app.placeholder_ask, mx):
                yield Violation("gang.admission", subject,
                                f"placeholderAsk {qty.show(app.placeholder_ask)} exceeds the "
                                f"max {qty.show(mx)} of {path}")


@invariant(
    "gang.clean_exit",
    "An application only leaves Failing for Failed, or Completing for Completed, when no "
    "placeholder (and no allocation at all) remains.",
    "001 'Cleanup' ('Transitioning out of the waiting state into the completed state "
    "requires no (placeholder) allocations or asks at all'; killed 'only dependent on the "
    "removal of all placeholders')",
    "An application was reported finished while the shim still runs its placeholders: "
    "they would leak.",
    needs=("recorder",),
)
def _clean_exit(ctx: CheckContext) -> Iterator[Violation]:
    rec = ctx.recorder
    assert rec is not None
    for problem in rec.exit_problems:
        yield Violation("gang.clean_exit", "transition", problem)
