"""The checker's own reading of ACLs and placement rules: who may submit to a queue, and
the queue an application goes to (YuniKorn's placement rules, read independently of
``scheduler/placement.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from invariants.readings.model import NAME, ROOT, QueueModel, force_created, lower
from scheduler.config import (
    PlacementRuleConfig,
)


def acl_allows(text: str | None, user: str, groups: Sequence[str]) -> bool:
    """YuniKorn's ACL string: ``*``, or ``"users groups"`` with comma lists; unset: nobody."""
    if not text:
        return False
    if text.strip() == "*":
        return True
    fields = text.split(" ")
    users = fields[0].split(",")
    group_list = fields[1].split(",") if len(fields) > 1 else []
    if users == ["*"] or group_list == ["*"]:
        return True
    return user in users or any(g in group_list for g in groups)


def may_submit(chain: Sequence[QueueModel], user: str, groups: Sequence[str]) -> bool:
    """Submit access: the leaf or any ancestor grants it by submit or admin ACL."""
    return any(acl_allows(q.submitacl, user, groups) or acl_allows(q.adminacl, user, groups)
               for q in chain)


# ---------------------------------------------------------------- placement


Lookup = Callable[[str], bool | None]
"""A queue path -> True (a leaf), False (a parent) or None (no such queue)."""


@dataclass(frozen=True)
class Placed:
    """Where an application goes and the queues that must be created (top first)."""

    path: str
    create: tuple[str, ...] = ()
    rule: int = 0
    """Which placement rule placed it, from 0 (the first rule); ``root.default`` after the
    last is ``len(rules)``."""
    refused: int = 0
    """How many rules before it proposed a queue the application could not go to (the user
    may not submit there, or the leaf is draining)."""
    fallback: bool = False
    """No rule placed it: ``root.default`` took it."""

    @property
    def anchor(self) -> str:
        """The existing queue it goes to, or gets its queues created below."""
        return self.path.rsplit(".", len(self.create))[0] if self.create else self.path


def qualify(name: str) -> str:
    """A queue name as a full path, in lower case (a bare name is a child of root)."""
    name = lower(name.strip())
    if not name:
        return ""
    return name if name == ROOT or name.startswith(ROOT + ".") else f"{ROOT}.{name}"


_EXPRESSION = re.compile(r"[\^$*+?()\[{}|]")


def _names(entries: Sequence[str], name: str) -> bool:
    """YuniKorn's filter list (``placement/filter.go``): a lone entry holding expression
    characters is searched for in the name; otherwise the name must be an entry."""
    if len(entries) != 1 or _EXPRESSION.search(entries[0]) is None:
        return name in entries
    try:
        return bool(re.search(entries[0], name))
    except re.error:
        return False


def _filter_allows(rule: PlacementRuleConfig, user: str, groups: Sequence[str]) -> bool:
    kind_allows = rule.filter.type != "deny"
    users, group_names = rule.filter.users, rule.filter.groups
    if not (users or group_names):
        return kind_allows                 # an empty deny filter denies everyone
    listed = _names(users, user) or any(_names(group_names, g) for g in groups)
    return kind_allows if listed else not kind_allows


def _value(rule: PlacementRuleConfig, queue_name: str, user: str,
           tags: Mapping[str, str]) -> str:
    """What a rule starts from, in lower case: the asked queue, the user, the value, a tag."""
    source = {"provided": queue_name, "user": user, "fixed": rule.value,
              "tag": tags.get(rule.value, "")}.get(rule.name, "")
    return lower(source.strip())


def _path_of(rule: PlacementRuleConfig, queue_name: str, user: str, groups: Sequence[str],
             tags: Mapping[str, str], lookup: Lookup) -> str | _Error | None:
    """The path a rule gives (its ``placeApplication``): None for nothing, an error for an
    invalid name or a parent rule giving an existing leaf."""
    value = _value(rule, queue_name, user, tags)
    if value == "" or not _filter_allows(rule, user, groups):
        return None
    full = value.startswith(ROOT) if rule.name == "fixed" else (
        rule.name in ("provided", "tag") and value.startswith(ROOT + "."))
    if full:
        path = value
    else:
        base = ROOT
        if rule.parent is not None:
            above = _path_of(rule.parent, queue_name, user, groups, tags, lookup)
            if above is None or isinstance(above, _Error):
                return above
            base = above if above.startswith(ROOT + ".") else ROOT + "." + above
            if lookup(base) is True:
                return _Error("a leaf named as parent")
        leaf_name = value if rule.name == "fixed" else value.replace(".", "_dot_")
        path = base + "." + leaf_name
    if any(NAME.fullmatch(part) is None for part in path.split(".")):
        return _Error("invalid name")
    if lookup(path) is None and not rule.create:
        return None
    return path


def _missing(path: str, lookup: Lookup) -> tuple[str, ...]:
    """The prefixes of a missing ``path`` to create (below a leaf too: that creation is
    refused later, as YuniKorn's ``createQueue`` refuses it)."""
    parts = path.split(".")
    prefixes = (".".join(parts[:depth]) for depth in range(2, len(parts) + 1))
    return tuple(prefix for prefix in prefixes if lookup(prefix) is None)


@dataclass(frozen=True)
class _Error:
    """A rule that errs: YuniKorn rejects the application, and no later rule is tried."""

    why: str


RECOVERY_QUEUE = "root.@recovery@"
"""YuniKorn's ``RecoveryQueueFull``: its recovery rule sends a force-created application
no other rule places there, without asking its ACL."""


DEFAULT_QUEUE = "root.default"
"""YuniKorn's ``DefaultPlacementQueue``: where an application no rule places goes."""


_IMPLICIT = PlacementRuleConfig(name="provided")
"""YuniKorn's rule when none is configured: the queue asked for, never created."""


def place(rules: Sequence[PlacementRuleConfig], queue_name: str, user: str,
          groups: Sequence[str], tags: Mapping[str, str], lookup: Lookup,
          may: Callable[[Placed], bool] = lambda _: True) -> Placed | None:
    """The queue an application lands in, or None when it must be rejected.

    YuniKorn's ``PlaceApplication`` over its rule list, which always ends with the
    recovery rule: every configured rule's path in turn (an existing parent, or a queue
    ``may`` refuses, fails the rule); then a force-created application (``tags``) goes to
    ``root.@recovery@`` unasked, any other to ``root.default`` if it exists and ``may``
    takes it there. ``rule`` of the result is the index of the rule that placed it,
    ``len(rules)`` after them.
    """
    refused = 0
    for index, rule in enumerate(list(rules) or [_IMPLICIT]):
        path = _path_of(rule, queue_name, user, groups, tags, lookup)
        if isinstance(path, _Error):
            return None
        if path is None:
            continue
        kind = lookup(path)
        placed = None if kind is False else Placed(
            path, () if kind else _missing(path, lookup), index)
        if placed is not None and may(placed):
            return replace(placed, refused=refused)
        refused += 1
    if force_created(tags):
        return Placed(RECOVERY_QUEUE, _missing(RECOVERY_QUEUE, lookup), len(rules),
                      refused, fallback=True)
    if lookup(DEFAULT_QUEUE) is True:
        fallback = Placed(DEFAULT_QUEUE, rule=len(rules), refused=refused, fallback=True)
        if may(fallback):
            return fallback
    return None
