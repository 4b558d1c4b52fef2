"""User and group limits: what each user and tracked group uses on every queue of a path,
and the room and application slots their ``limits`` leave (YuniKorn's ugm).

The rules are YuniKorn's (``pkg/scheduler/ugm``; ``docs/design-notes.md``,
"User and group limits"): usage is tracked always, placeholders included, for
the application's user and its one tracked group on every queue from root to
the leaf; the tracked group is resolved once, from the leaf upward, and kept;
a limit applies to each user or group it names, separately; a named user
limit overrides the ``*`` user limit of its own queue only, and the ``*``
group is one tracker shared by every user who resolved to it. Limits only
hold work back: nothing here rejects or releases.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from . import resources as res
from .config import LimitConfig
from .resources import Resource

WILDCARD = "*"
USER, GROUP = "user", "group"


@dataclass(frozen=True, slots=True)
class Limit:
    """One user's or group's limit on one queue: ``max_resources`` caps only the types it
    names (0 forbids a type), ``max_applications`` 0 is unlimited."""

    max_resources: Resource
    max_applications: int


@dataclass(frozen=True, slots=True)
class QueueLimits:
    """The ``limits`` of one queue, per user and per group name (``*`` included), in
    configuration order (the order group resolution reads them in)."""

    users: dict[str, Limit] = field(default_factory=dict)
    groups: dict[str, Limit] = field(default_factory=dict)

    @classmethod
    def from_config(cls, limits: Sequence[LimitConfig]) -> QueueLimits | None:
        if not limits:
            return None
        users: dict[str, Limit] = {}
        groups: dict[str, Limit] = {}
        for entry in limits:
            limit = Limit(dict(entry.maxresources), entry.maxapplications)
            for name in entry.users:
                users.setdefault(name, limit)
            for name in entry.groups:
                groups.setdefault(name, limit)
        return cls(users, groups)

    def for_user(self, user: str) -> Limit | None:
        """The user's own limit here, else this queue's ``*`` user limit."""
        return self.users.get(user) or self.users.get(WILDCARD)


class LimitedQueue(Protocol):
    """What this module needs of a queue (``objects.Queue`` has it)."""

    path: str
    limits: QueueLimits | None


def resolve_group(groups: Sequence[str], path: Sequence[LimitedQueue]) -> str:
    """The group an application's usage is tracked for ("" for none).

    From the leaf (``path[0]``) towards root: the first named group of the
    queue's limits, in configuration order, that the user belongs to; else the
    shared ``*`` group when the queue limits it; else the parent.
    """
    if not groups:
        return ""
    member = set(groups)
    for queue in path:
        limits = queue.limits
        if limits is None:
            continue
        for name in limits.groups:
            if name != WILDCARD and name in member:
                return name
        if WILDCARD in limits.groups:
            return WILDCARD
    return ""


@dataclass
class Tracker:
    """Usage and running applications per (``user``|``group``, name), per queue path."""

    used: dict[tuple[str, str], dict[str, Resource]] = field(default_factory=dict)
    running: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)

    def add(self, who: Iterable[tuple[str, str]], path: Sequence[LimitedQueue], r: Resource,
            sign: int) -> None:
        """Count (``sign`` 1) or uncount (-1) ``r`` for each of ``who`` on each queue."""
        used = self.used
        for key in who:
            per_path = used.get(key)
            if per_path is None:
                per_path = used[key] = {}
            for queue in path:
                usage = per_path.get(queue.path)
                if usage is None:
                    usage = per_path[queue.path] = {}
                if sign > 0:
                    res.add_into(usage, r)
                else:
                    res.sub_from(usage, r)
                    if res.is_zero(usage):
                        del per_path[queue.path]
            if not per_path:
                del used[key]

    def count(self, who: Iterable[tuple[str, str]], path: Sequence[LimitedQueue],
              delta: int) -> None:
        """One more (or one fewer) running application for each of ``who`` on each queue."""
        for key in who:
            per_path = self.running.setdefault(key, {})
            for queue in path:
                n = per_path.get(queue.path, 0) + delta
                if n:
                    per_path[queue.path] = n
                else:
                    per_path.pop(queue.path, None)
            if not per_path:
                del self.running[key]

    def usage(self, key: tuple[str, str], path: str) -> Resource:
        per_path = self.used.get(key)
        usage = per_path.get(path) if per_path is not None else None
        return usage if usage is not None else {}

    def apps(self, key: tuple[str, str], path: str) -> int:
        return self.running.get(key, {}).get(path, 0)

    def on_queue(self, path: str, kind: str) -> Iterator[tuple[str, Resource, int]]:
        """Every user (or group) with usage or running applications on ``path``, by name."""
        names = {k[1] for k in (*self.used, *self.running) if k[0] == kind
                 and (path in self.used.get(k, {}) or path in self.running.get(k, {}))}
        for name in sorted(names):
            key = (kind, name)
            yield name, self.usage(key, path), self.apps(key, path)


_NO_USE: Resource = {}
"""Read only: the usage of a user or group that uses nothing on a queue."""


def limits_of(queue: LimitedQueue, kind: str, name: str) -> Limit | None:
    """The limit ``name`` (a user, or a tracked group) has on ``queue``."""
    if queue.limits is None:
        return None
    if kind == USER:
        return queue.limits.for_user(name)
    return queue.limits.groups.get(name)


def over_limit(tracker: Tracker, who: Sequence[tuple[str, str]],
               path: Sequence[LimitedQueue], ask: Resource) -> str:
    """Why one more ``ask`` would take a user or group past a ``maxresources`` ("" if not).

    Asked before every allocation while any queue sets limits: the limit and the usage
    are looked up inline (``limits_of``, ``Tracker.usage``)."""
    used_by = tracker.used
    for queue in path:
        limits = queue.limits
        if limits is None:
            continue
        for key in who:
            limit = limits.for_user(key[1]) if key[0] == USER else limits.groups.get(key[1])
            if limit is None or not limit.max_resources:
                continue
            per_path = used_by.get(key)
            used = per_path.get(queue.path, _NO_USE) if per_path is not None else _NO_USE
            if not res.fits_with(ask, used, limit.max_resources):
                return (f"{key[0]} {key[1]} would exceed its limit on {queue.path} "
                        f"(uses {res.to_str(used)} of {res.to_str(limit.max_resources)})")
    return ""


def no_slot(tracker: Tracker, who: Sequence[tuple[str, str]],
            path: Sequence[LimitedQueue]) -> str:
    """Why a user or group has no free ``maxapplications`` slot on the path ("" if it has)."""
    for queue in path:
        for key in who:
            limit = limits_of(queue, *key)
            if limit is None or limit.max_applications <= 0:
                continue
            if tracker.apps(key, queue.path) >= limit.max_applications:
                return (f"{key[0]} {key[1]} already runs {limit.max_applications} "
                        f"application(s) on {queue.path}, its limit")
    return ""
