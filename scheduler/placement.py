"""Placement rules: which queue an application goes to (YuniKorn ``placementrules``).

The seeds only say the scheduler places an application "into a queue according
to policy, taking into account the requested queue" (``002``
AddApplicationRequest.queueName); the rules follow Apache YuniKorn's
``PlaceApplication``. Rules are tried in order; each proposes a queue path. An
existing leaf the user may submit to and that is not draining is taken; a
missing queue is created when the rule says ``create: true`` and the user may
submit to its nearest existing ancestor (the new queues are unmanaged: no quota
of their own, removed when empty). Anything else (a parent, a draining leaf, a
refused ACL, a missing queue without ``create``) fails the rule and the next is
tried; an invalid queue name or a parent rule that names a leaf is an error
that rejects the application at once. When no rule places the application,
``root.default`` takes it if it exists and passes the same checks; an application
the shim forces in (YuniKorn's force-create tag: its pods run already) goes to
``root.@recovery@`` instead, unchecked (YuniKorn's recovery rule, always last).
With no rules configured a single ``provided`` rule without ``create`` stands in
(YuniKorn's implicit rule).

Supported rules: ``provided`` (the requested queue), ``user`` (the user's
name), ``fixed`` (``value``), ``tag`` (the application tag named by
``value``, e.g. ``namespace``), each with an optional ``parent`` rule and a
user/group ``filter``. A ``provided`` or ``tag`` value that starts with
``root.`` is a full path; any other value is one name, its ``.`` replaced with
``_dot_``, below the parent rule's queue (qualified with ``root.`` when it does
not start with it: a parent giving ``root`` places in ``root.root``) or below
``root``. A filter without users or groups gives its type to everyone: ``deny``
denies all. One filter entry with expression characters is an expression
matched anywhere in the name; other entries are names matched exactly.

Queue names are case-insensitive, as in YuniKorn: queues are stored under
their lower-case name and every path a rule proposes (or the shim names) is
lower-cased before it is looked up, so ``root.production`` finds the queue
configured as ``ProdUction``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .config import QUEUE_NAME_RE, ROOT_QUEUE, PlacementRuleConfig


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an application goes; ``create`` lists the queues to create, top first."""

    path: str
    create: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """The existing queue it goes to, or creates its queues below."""
        return self.path.rsplit(".", len(self.create))[0] if self.create else self.path


@dataclass(frozen=True, slots=True)
class QueueInfo:
    """What placement needs to know about an existing queue."""

    is_leaf: bool


Lookup = Callable[[str], QueueInfo | None]
Refusal = Callable[[Placement], str]
"""Why the application may not go where a rule placed it (empty: it may): for an
existing leaf a draining queue or the submit ACL, for queues to create the submit
ACL of their nearest existing ancestor (YuniKorn ``PlaceApplication``)."""

RECOVERY_QUEUE = f"{ROOT_QUEUE}.@recovery@"
"""Where a force-created application no rule places goes (YuniKorn ``RecoveryQueueFull``):
created when first needed, like the queues rules create, and no quota of its own."""

DEFAULT_QUEUE = f"{ROOT_QUEUE}.default"
"""Where an application no rule places goes, if it exists (YuniKorn
``DefaultPlacementQueue``)."""
_IMPLICIT = PlacementRuleConfig(name="provided")

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(name: str) -> str:
    """A queue name or path as YuniKorn stores and looks it up: in lower case.

    Only ASCII letters fold: a valid name is ASCII, and folding other letters
    could turn an invalid name into a valid one (the Kelvin sign into ``k``).
    """
    return name.translate(_ASCII_LOWER)


def qualify(name: str) -> str:
    """A queue name from the shim as a full path in lower case: a bare name is a child of
    root."""
    name = fold(name.strip())
    if not name:
        return ""
    if name == ROOT_QUEUE or name.startswith(ROOT_QUEUE + "."):
        return name
    return f"{ROOT_QUEUE}.{name}"


def _clean(part: str) -> str:
    return part.replace(".", "_dot_")


_REGEX_CHARS = re.compile(r"[\^$*+?()\[{}|]")
"""A filter entry with one of these is an expression (YuniKorn ``SpecialRegExp``)."""


def _listed(entries: Sequence[str], name: str) -> bool:
    """Whether a filter's users (or groups) list names ``name``, as YuniKorn reads a list.

    One entry with expression characters is an expression that matches anywhere in the
    name (Go's ``MatchString``: anchor it with ``^...$`` to match the whole name); any
    other entry, and every entry of a longer list, is a name matched exactly
    (``placement/filter.go`` newFilter, filterUser).
    """
    if len(entries) == 1 and _REGEX_CHARS.search(entries[0]):
        try:
            return re.search(entries[0], name) is not None
        except re.error:
            return False
    return name in entries


def _filter_allows(rule: PlacementRuleConfig, user: str, groups: Sequence[str]) -> bool:
    """YuniKorn's ``allowUser``: a filter without lists gives its type (``deny`` denies
    everyone); otherwise a listed user or group gives the type, anyone else the other."""
    f = rule.filter
    allow = f.type != "deny"
    if not f.users and not f.groups:
        return allow
    if _listed(f.users, user) or any(_listed(f.groups, g) for g in groups):
        return allow
    return not allow


def _rule_path(rule: PlacementRuleConfig, queue_name: str, user: str, groups: Sequence[str],
               tags: Mapping[str, str], lookup: Lookup) -> str | _Error | None:
    """The queue path one rule gives, as YuniKorn's ``placeApplication`` of that rule.

    None when the rule gives nothing (its filter, an empty value, a missing queue it may
    not create, or its parent gave nothing); an error when a name is invalid or a parent
    rule gives an existing leaf. A ``provided`` or ``tag`` value starting ``root.`` is a
    full path; ``fixed`` values starting ``root`` are too. Any other value is one name
    (its dots made ``_dot_``) below what the parent rule gives, qualified with ``root.``
    when that does not start with ``root.`` (so a parent giving ``root`` makes
    ``root.root``), or below ``root`` without a parent rule (``placement/*_rule.go``).
    """
    name = rule.name
    if name == "provided":
        raw = fold(queue_name.strip())
    elif name == "tag":
        raw = fold(tags.get(rule.value, "").strip())
    elif name == "user":
        raw = fold(user)
    else:
        raw = fold(rule.value.strip())
    if not raw or not _filter_allows(rule, user, groups):
        return None
    if (name == "fixed" and raw.startswith(ROOT_QUEUE)) or \
            (name in ("provided", "tag") and raw.startswith(ROOT_QUEUE + ".")):
        path = raw
    else:
        child = raw if name == "fixed" else _clean(raw)
        parent = ROOT_QUEUE
        if rule.parent is not None:
            given = _rule_path(rule.parent, queue_name, user, groups, tags, lookup)
            if not isinstance(given, str):
                return given
            parent = given if given.startswith(ROOT_QUEUE + ".") else f"{ROOT_QUEUE}.{given}"
            found = lookup(parent)
            if found is not None and found.is_leaf:
                return _Error(f"parent rule {rule.parent.name} named the leaf queue {parent}")
        path = f"{parent}.{child}"
    invalid = _invalid(path)
    if invalid:
        return _Error(invalid)
    if not rule.create and lookup(path) is None:
        return None
    return path


@dataclass(frozen=True, slots=True)
class _Error:
    """A rule that errs: the application is rejected, no later rule is tried."""

    why: str


def _invalid(path: str) -> str:
    bad = next((part for part in path.split(".") if not QUEUE_NAME_RE.fullmatch(part)), None)
    return "" if bad is None else f"queue name {bad!r} in {path!r} is not valid"


def _created(path: str, lookup: Lookup) -> Placement:
    """``path`` with the queues a create rule must make (top first). A path through a leaf
    queue is placed too, below that leaf: the leaf's ACL is asked like any anchor's, and
    the creation is then refused (YuniKorn ``createQueue``)."""
    parts = path.split(".")
    missing = [prefix for depth in range(2, len(parts) + 1)
               if lookup(prefix := ".".join(parts[:depth])) is None]
    return Placement(path, tuple(missing))


def place(rules: Sequence[PlacementRuleConfig], queue_name: str, user: str,
          groups: Sequence[str], tags: Mapping[str, str], lookup: Lookup,
          refusal: Refusal, forced: bool = False) -> Placement | str:
    """The placement for an application, or the reason there is none.

    YuniKorn's ``PlaceApplication`` (``placement/placement.go``): each rule's path in
    turn; an existing queue must be a leaf, open to the user and not draining, a missing
    one needs the user's access to its nearest existing ancestor (``refusal``), else the
    next rule is tried. After the configured rules comes YuniKorn's recovery rule, always
    last (``buildRules``): a ``forced`` application (the shim's force-create tag) goes to
    the recovery queue, unchecked; any other to ``root.default``, under the same checks,
    when it exists.
    """
    refused: list[str] = []
    for rule in rules or (_IMPLICIT,):
        path = _rule_path(rule, queue_name, user, groups, tags, lookup)
        if isinstance(path, _Error):
            return f"placement rule {rule.name} failed: {path.why}"
        if path is None:
            continue
        taken = _taken(path, lookup, refusal)
        if isinstance(taken, Placement):
            return taken
        refused.append(taken)
    if forced:
        return Placement(RECOVERY_QUEUE) if lookup(RECOVERY_QUEUE) is not None \
            else Placement(RECOVERY_QUEUE, (RECOVERY_QUEUE,))
    if lookup(DEFAULT_QUEUE) is not None:
        taken = _taken(DEFAULT_QUEUE, lookup, refusal)
        if isinstance(taken, Placement):
            return taken
        refused.append(taken)
    refused = list(dict.fromkeys(refused))
    if rules:
        names = ", ".join(r.name for r in rules)
        head = f"no placement rule ({names}) found a queue for the application"
        return f"{head}: {'; '.join(refused)}" if refused else head
    return "; ".join(dict.fromkeys([*filter(None, [_unplaced(queue_name, lookup)]), *refused]))


def _taken(path: str, lookup: Lookup, refusal: Refusal) -> Placement | str:
    """``path`` as the placement, or why the application may not go there."""
    found = lookup(path)
    if found is not None and not found.is_leaf:
        return f"queue {path} is a parent queue; applications go to leaf queues"
    placement = Placement(path) if found is not None else _created(path, lookup)
    return refusal(placement) or placement


def _unplaced(queue_name: str, lookup: Lookup) -> str:
    """Why the implicit ``provided`` rule did not place an application (empty: it did, and
    the refusal says why it may not go there)."""
    raw = fold(queue_name.strip())
    if not raw:
        return "no queue name given and no placement rules configured"
    path = raw if raw.startswith(ROOT_QUEUE + ".") else f"{ROOT_QUEUE}.{_clean(raw)}"
    found = lookup(path)
    if found is None:
        return f"queue {path} does not exist"
    return "" if found.is_leaf else \
        f"queue {path} is a parent queue; applications go to leaf queues"
