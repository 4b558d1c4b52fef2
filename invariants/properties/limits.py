"""User and group limits as the checker reads them: YuniKorn's rules restated, not the core's.

The limits come from the checker's configuration model, the tracked group is
resolved here from the groups the shim sent, and usage and running
applications are counted from the shim's own records (the protocol check) or
summed from the core's allocations (the invariants), never read from the
core's tracker they are meant to check (``scheduler/ugm.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from invariants.properties import protocol as P
from invariants.properties import sums
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.calls import Monitor
from invariants.readings.shim import AppView, RMView
from invariants.readings.view import Application, PartitionState, partitions
from statemachines.application import LIVE, STARTED

WILDCARD = "*"
USER, GROUP = "user", "group"
SOURCE = ("YuniKorn user and group limits (pkg/scheduler/ugm; "
          "https://yunikorn.apache.org/docs/design/user_group_enforcement)")

USER_LIMITS = P.check(
    "protocol.user_limits",
    "A new allocation (not a placeholder's replacement) keeps its user and its tracked "
    "group within their maxresources on every queue of the path, for the types the "
    "allocation uses; an application that holds nothing yet starts only while its user "
    "and its group run fewer applications than their maxapplications on every queue of "
    "the path. A user's limit is its own entry on a queue, else that queue's '*' entry; "
    "the tracked group is resolved when the application is accepted, from the leaf up.",
    SOURCE,
    "A limit was ignored: a parent's limit, the group's, the wildcard's, or the "
    "application count; or the group was resolved wrongly.")

GROUPS_KEPT = P.check(
    "protocol.tracked_group",
    "The group whose limits apply to an application is the one resolved when it was "
    "accepted (the first named group of a queue's limits the user belongs to, from the "
    "leaf up, else '*' where a queue limits '*'), and it never changes.",
    SOURCE,
    "The core tracks usage against another group, or re-resolves it after a reload.")


def group_for(chain: Sequence[model.QueueModel], groups: Sequence[str]) -> str:
    """The tracked group of a user with ``groups`` in the leaf of ``chain`` (leaf first);
    a user without groups has none, not even ``*``."""
    if not groups:
        return ""
    for queue in chain:
        for name in queue.groups:
            if name != WILDCARD and name in groups:
                return name
        if WILDCARD in queue.groups:
            return WILDCARD
    return ""


def limit_for(queue: model.QueueModel, kind: str, name: str) -> model.LimitModel | None:
    if kind == USER:
        return queue.users.get(name) or queue.users.get(WILDCARD)
    return queue.groups.get(name) if name else None


def _owner(app: AppView, kind: str) -> str:
    return app.user if kind == USER else app.group


def limited_on_path(
    rv: RMView, partition: str, chain: Sequence[model.QueueModel], user: str, group: str
) -> Iterator[tuple[model.QueueModel, str, str, model.LimitModel, list[AppView]]]:
    """Each user or group limit on ``chain`` (in its order) that applies to ``user`` or
    ``group``: the queue, ``user`` or ``group``, the name, the limit, and the applications
    below the queue that it counts (those of that user, or of that tracked group)."""
    for queue in chain:
        for kind, name in ((USER, user), (GROUP, group)):
            limit = limit_for(queue, kind, name)
            if limit is not None:
                yield queue, kind, name, limit, [
                    a for a in rv.apps_below(partition, queue.path) if _owner(a, kind) == name]


def held_by_limits(rv: RMView, app: AppView, r: Mapping[str, int]) -> str:
    """Why the user and group limits keep ``r`` of ``app`` waiting, from the shim's
    records (the first reason found, leaf's root first), or ``""`` when they do not."""
    part = rv.config.partition(app.partition)
    if part is None:
        return ""
    starting = not rv.holds_slot(app)
    for queue, kind, name, limit, mine in limited_on_path(
            rv, app.partition, part.chain(app.path), app.user, app.group):
        path = queue.path
        if limit.max_resources:
            used = rv.usage_of({a.id for a in mine})
            cap = limit.max_resources
            if any(k in cap and used.get(k, 0) + v > cap[k] for k, v in r.items()):
                return (f"{kind} {name} holds {qty.show(used)} on {path}; with "
                        f"{qty.show(r)} it passes its limit {qty.show(cap)}")
        if starting and limit.max_applications > 0:
            running = sum(1 for a in mine if rv.holds_slot(a))
            if running >= limit.max_applications:
                return (f"application {app.id} has not started and {kind} {name} "
                        f"already runs {running} of its maxapplications "
                        f"{limit.max_applications} on {path}")
    return ""


def judge_allocation(m: Monitor, rv: RMView, app: AppView, r: Mapping[str, int],
                     subject: str) -> None:
    """``protocol.user_limits`` for one new allocation, from the shim's records."""
    reason = held_by_limits(rv, app, r)
    if reason:
        m.report(USER_LIMITS, subject, reason)


def groups_agree(m: Monitor, rv: RMView) -> None:
    """``protocol.tracked_group``: the core tracks the group the checker resolved."""
    for app in rv.apps.values():
        if not app.live or not app.path:
            continue
        core = m.core_partition(rv.rm_id, app.partition)
        held = core.apps.get(app.id) if core is not None else None
        if held is not None and held.tracked_group != app.group:
            m.report(GROUPS_KEPT, f"application {app.id}",
                     f"tracked as group {held.tracked_group!r}, resolved {app.group!r} when "
                     "it was accepted")


# ---------------------------------------------------------------- the core's own records


def holds_slot(app: Application) -> bool:
    """``maxapplications`` (a queue's, a user's, a group's) counts a live application while
    it holds something, or after it ran while it is Running or Completing."""
    return app.state in LIVE and (bool(app.allocations) or (app.state in STARTED and app.ran))


Expected = tuple[dict[tuple[str, str, str], dict[str, int]], dict[tuple[str, str, str], int]]


def expected(ctx: CheckContext, p: PartitionState) -> Expected:
    """Per (kind, name, queue path): usage summed from the allocations, and running
    applications counted, of the partition's applications (read, never changed)."""
    return ctx.shared(("limits.expected", p.rm_id, p.name), lambda: _expected(ctx, p))


def _expected(ctx: CheckContext, p: PartitionState) -> Expected:
    used: dict[tuple[str, str, str], dict[str, int]] = {}
    running: dict[tuple[str, str, str], int] = {}
    for app in p.apps.values():
        if app.queue is None:
            continue
        who = [(USER, app.user)] + ([(GROUP, app.tracked_group)] if app.tracked_group else [])
        held = sums.held(ctx, p, app).every
        slot = holds_slot(app)
        for q in app.queue.ancestry():
            for kind, name in who:
                key = (kind, name, q.path)
                if qty.positive(held):
                    used[key] = qty.plus(used.get(key, {}), held)
                if slot:
                    running[key] = running.get(key, 0) + 1
    return used, running


def _tracked(p: PartitionState) -> tuple[dict[tuple[str, str, str], dict[str, int]],
                                         dict[tuple[str, str, str], int]]:
    used = {(kind, name, path): dict(r) for (kind, name), per in p.users.used.items()
            for path, r in per.items() if qty.positive(r)}
    running = {(kind, name, path): n for (kind, name), per in p.users.running.items()
               for path, n in per.items() if n}
    return used, running


@invariant(
    "limits.accounting",
    "On every queue, the usage the core tracks for a user (a group) is the sum of every "
    "allocation, placeholders included, of that user's applications (of the applications "
    "tracked for that group) in the queue's subtree, and its running-application count "
    "is the number of those applications that hold a maxapplications slot.",
    SOURCE,
    "User or group usage drifted from the allocations (a release not subtracted, a "
    "placeholder or a recovered allocation not counted, a replacement counted twice): "
    "limits then hold back too much or too little.",
)
def _accounting(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        want_used, want_running = expected(ctx, p)
        have_used, have_running = _tracked(p)
        for key in sorted(set(want_used) | set(have_used)):
            want, have = want_used.get(key, {}), have_used.get(key, {})
            if not qty.same(want, have):
                yield Violation("limits.accounting", f"{key[0]} {p.name}/{key[1]} on {key[2]}",
                                f"tracked {qty.show(have)}, its allocations sum to "
                                f"{qty.show(want)}")
        for key in sorted(set(want_running) | set(have_running)):
            if want_running.get(key, 0) != have_running.get(key, 0):
                yield Violation("limits.accounting", f"{key[0]} {p.name}/{key[1]} on {key[2]}",
                                f"tracked {have_running.get(key, 0)} running application(s), "
                                f"{want_running.get(key, 0)} hold a slot")


def held_back(part: model.PartitionModel | None, used: Mapping[tuple[str, str, str], Any],
              running: Mapping[tuple[str, str, str], int], app: Application,
              ask_resource: Mapping[str, int], group: str | None) -> bool:
    """Whether the limits keep the ask (or its not yet started application) waiting, read
    from the configuration and from ``expected`` (``scheduling.maximal``).

    ``group`` is the checker's resolution (None when it has none: then the core's
    group stands, its resolution being judged by ``protocol.tracked_group``).
    """
    if part is None or app.queue is None:
        return False
    tracked = app.tracked_group if group is None else group
    starting = not holds_slot(app)
    for path in model.path_prefixes(app.queue.path):
        queue = part.queues.get(path)
        if queue is None:
            continue
        for kind, name in ((USER, app.user), (GROUP, tracked)):
            limit = limit_for(queue, kind, name)
            if limit is None:
                continue
            have = used.get((kind, name, path), {})
            cap = limit.max_resources
            if any(k in cap and have.get(k, 0) + v > cap[k] for k, v in ask_resource.items()):
                return True
            if starting and 0 < limit.max_applications <= running.get((kind, name, path), 0):
                return True
    return False
