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
``root.default`` takes it if it exists and passes the same checks. With no rules
configured a single ``provided`` rule without ``create`` stands in (YuniKorn's
implicit rule).

Supported rules: ``provided`` (the requested queue), ``user`` (the user's
name), ``fixed`` (``value``), ``tag`` (the application tag named by
``value``, e.g. ``namespace``), each with an optional ``parent`` rule and a
user/group ``filter``. Names made from users or tags replace ``.`` with
``_dot_`` as YuniKorn does.

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


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return pattern == name


def _filter_allows(rule: PlacementRuleConfig, user: str, groups: Sequence[str]) -> bool:
    f = rule.filter
    if not f.users and not f.groups:
        return True
    hit = any(_matches(p, user) for p in f.users) or any(
        _matches(p, g) for p in f.groups for g in groups)
    return not hit if f.type == "deny" else hit


def _proposal(rule: PlacementRuleConfig, queue_name: str, user: str,
              tags: Mapping[str, str]) -> str:
    """The queue path (or last name) a rule proposes, in lower case; empty when it has none."""
    if rule.name == "provided":
        return fold(queue_name.strip())
    if rule.name == "user":
        return fold(_clean(user)) if user else ""
    if rule.name == "fixed":
        return fold(rule.value.strip())
    if rule.name == "tag":
        value = tags.get(rule.value, "").strip()
        return fold(_clean(value)) if value else ""
    return ""


def _resolve(rule: PlacementRuleConfig, queue_name: str, user: str, groups: Sequence[str],
             tags: Mapping[str, str], lookup: Lookup) -> Placement | str | None:
    """Where one rule puts the application: None when the rule fails (the next is tried), a
    reason when it errs (YuniKorn rejects the application: an invalid queue name, a parent
    rule naming a leaf)."""
    if not _filter_allows(rule, user, groups):
        return None
    proposed = _proposal(rule, queue_name, user, tags)
    if not proposed:
        return None
    if proposed == ROOT_QUEUE or proposed.startswith(ROOT_QUEUE + ".") or rule.parent is None:
        path = qualify(proposed)
    else:
        parent = _resolve_parent(rule.parent, queue_name, user, groups, tags, lookup)
        if not isinstance(parent, Placement):
            return parent
        path = f"{parent.path}.{proposed}"
    invalid = _invalid(path)
    if invalid:
        return invalid
    found = lookup(path)
    if found is not None:
        return Placement(path) if found.is_leaf else None
    if not rule.create:
        return None
    return _created(path, lookup)


def _resolve_parent(rule: PlacementRuleConfig, queue_name: str, user: str,
                    groups: Sequence[str], tags: Mapping[str, str],
                    lookup: Lookup) -> Placement | str | None:
    """A parent rule proposes a parent queue: it must be (or be created as) a parent; one
    that names a leaf is an error (YuniKorn: "parent rule returned a leaf queue")."""
    proposed = _proposal(rule, queue_name, user, tags)
    if not proposed or not _filter_allows(rule, user, groups):
        return None
    path = qualify(proposed)
    invalid = _invalid(path)
    if invalid:
        return invalid
    found = lookup(path)
    if found is not None:
        return f"parent rule {rule.name} named the leaf queue {path}" if found.is_leaf \
            else Placement(path)
    if not rule.create:
        return None
    return _created(path, lookup)


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
          refusal: Refusal) -> Placement | str:
    """The placement for an application, or the reason there is none."""
    refused: list[str] = []
    for rule in rules or (_IMPLICIT,):
        placement = _resolve(rule, queue_name, user, groups, tags, lookup)
        if placement is None:
            continue
        if isinstance(placement, str):
            return f"placement rule {rule.name} failed: {placement}"
        reason = refusal(placement)
        if not reason:
            return placement
        refused.append(reason)
    default = lookup(DEFAULT_QUEUE)
    if default is not None and default.is_leaf:
        reason = refusal(Placement(DEFAULT_QUEUE))
        if not reason:
            return Placement(DEFAULT_QUEUE)
        if reason not in refused:
            refused.append(reason)
    if rules:
        names = ", ".join(r.name for r in rules)
        head = f"no placement rule ({names}) found a queue for the application"
        return f"{head}: {'; '.join(refused)}" if refused else head
    return "; ".join([*filter(None, [_unplaced(queue_name, lookup)]), *refused])


def _unplaced(queue_name: str, lookup: Lookup) -> str:
    """Why the implicit ``provided`` rule did not place an application (empty: it did, and
    the refusal says why it may not go there)."""
    path = qualify(queue_name)
    if not path:
        return "no queue name given and no placement rules configured"
    found = lookup(path)
    if found is None:
        return f"queue {path} does not exist"
    return "" if found.is_leaf else \
        f"queue {path} is a parent queue; applications go to leaf queues"
