"""Priorities of applications and queues, kept up to date as asks come and go.

Apache YuniKorn's priority scheduling (``priority_scheduling.md``; the seeds
only order asks by priority inside one application):

- an application's priority is the highest priority among its asks with
  pending repeats (a repeat a started placeholder swap holds is not pending), or
  ``MIN_PRIORITY`` when nothing is pending;
- a leaf's raw priority is the highest priority of its applications, a
  parent's the highest value of its children; a queue shows its parent
  ``MIN_PRIORITY`` when nothing below it is pending, else its offset under
  ``priority.policy: fence``, else raw + ``priority.offset`` clamped to int32.

Nothing is recomputed from scratch on the hot path: each queue counts the
values its applications (leaf) or children (parent) contribute, and a change
walks up only while a queue's value changes. ``rebuild`` recomputes a whole
tree after a configuration change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .objects import MAX_PRIORITY as MAX_PRIORITY
from .objects import MIN_PRIORITY as MIN_PRIORITY
from .objects import Application, Queue

SORT_PRIORITY = "application.sort.priority"
POLICY = "priority.policy"
OFFSET = "priority.offset"
_INT = re.compile(r"[+-]?[0-9]+")


def offset_of(properties: Mapping[str, str]) -> int:
    """``priority.offset``: a base-10 int32; empty, malformed or out of range is 0 (YuniKorn
    falls back silently)."""
    text = properties.get(OFFSET, "")
    if not _INT.fullmatch(text):
        return 0
    value = int(text)
    return value if MIN_PRIORITY <= value <= MAX_PRIORITY else 0


def fenced(properties: Mapping[str, str]) -> bool:
    """``priority.policy: fence`` in any case; anything else is the default policy."""
    return properties.get(POLICY, "").lower() == "fence"


def sort_enabled(properties: Mapping[str, str]) -> bool:
    """``application.sort.priority``: only ``disabled`` (any case) turns it off."""
    return properties.get(SORT_PRIORITY, "").lower() != "disabled"


def configure(queue: Queue, own: Mapping[str, str]) -> None:
    """Set the queue's priority settings: offset and policy from its own properties (they
    are not inherited), sorting from its effective ones (inherited)."""
    queue.priority_offset = offset_of(own)
    queue.priority_fence = fenced(own)
    queue.priority_sort = sort_enabled(queue.properties)


def by_policy(raw: int, offset: int, fence: bool) -> int:
    """What a queue whose highest contribution is ``raw`` shows its parent."""
    if raw == MIN_PRIORITY:
        return MIN_PRIORITY
    if fence:
        return offset
    return max(MIN_PRIORITY, min(MAX_PRIORITY, raw + offset))


def app_priority(app: Application) -> int:
    """The highest priority among the application's pending asks (they are kept sorted by
    priority, highest first), leaving out a repeat a started swap holds: YuniKorn
    allocates the real ask at the match and recomputes without it (apache/yunikorn-core
    be3bb48 pkg/scheduler/objects/application.go allocateAsk, updateAskMaxPriority)."""
    first = app.pending_asks.first_counted()
    return MIN_PRIORITY if first is None else first.priority


def _contribute(counts: dict[int, int], old: int, new: int) -> None:
    if old != MIN_PRIORITY:
        left = counts[old] - 1
        if left:
            counts[old] = left
        else:
            del counts[old]
    if new != MIN_PRIORITY:
        counts[new] = counts.get(new, 0) + 1


def _value(queue: Queue) -> int:
    raw = max(queue.priority_counts) if queue.priority_counts else MIN_PRIORITY
    return by_policy(raw, queue.priority_offset, queue.priority_fence)


def _propagate(queue: Queue | None) -> None:
    """Recompute ``queue``'s value and carry a change up to the root."""
    while queue is not None:
        new = _value(queue)
        old = queue.priority
        if new == old:
            return
        queue.priority = new
        parent = queue.parent
        if parent is not None:
            _contribute(parent.priority_counts, old, new)
        queue = parent


def refresh_app(app: Application) -> None:
    """The application's pending asks changed: update its priority and its queues'."""
    new = app_priority(app)
    old = app.priority
    if new == old:
        return
    app.priority = new
    if app.queue is not None:
        _contribute(app.queue.priority_counts, old, new)
        _propagate(app.queue)


def rebuild(root: Queue) -> None:
    """Recompute every queue of the tree below ``root`` (a configuration change)."""

    def walk(queue: Queue) -> int:
        counts: dict[int, int] = {}
        if queue.is_leaf:
            contributions = [a.priority for a in queue.apps.values()]
        else:
            contributions = [walk(child) for child in queue.children.values()]
        for value in contributions:
            if value != MIN_PRIORITY:
                counts[value] = counts.get(value, 0) + 1
        queue.priority_counts = counts
        queue.priority = _value(queue)
        return queue.priority

    walk(root)
