"""Placement rules in ``queues.yaml``: the checks of a partition's ``placementrules``.

Part of the semantic checks (:mod:`.validate`), kept apart because a rule is
judged on its own terms, in three passes over the partition's rules: its
syntax (YuniKorn's ``checkPlacementRule``: names, filters), what building the
rule at load refuses (YuniKorn's ``newRule`` and each rule's ``initialise``:
known names, the values ``fixed`` and ``tag`` need), then the queue path its
``fixed`` links spell out against the partition's hierarchy (YuniKorn's
``getLongestPlacementPaths``). All run after the queue structure is settled,
so the hierarchy they walk is final. Rule names, and the values of ``fixed``
and ``tag`` rules, are then stored in lower case, as YuniKorn's rules read
them.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from scheduler.errors import ConfigError

from .acl import GROUP_NAME_RE, USER_NAME_RE
from .models import QUEUE_NAME_RE, ROOT_QUEUE, PartitionConfig, PlacementRuleConfig, QueueConfig

PLACEMENT_RULES: Final = ("provided", "user", "fixed", "tag")
"""The rules a configuration may name (matched ignoring case, as YuniKorn's ``newRule``)."""
TEST_RULE: Final = "test"
"""YuniKorn's rule for its own tests: ``newRule`` builds it, so a configuration may name it."""
RECOVERY_RULE: Final = "recovery"
"""YuniKorn's implicit last rule: ``newRule`` refuses it in a configuration."""

_RULE_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_]*")
_REGEXP_SPECIAL_RE: Final = re.compile(r"[\^$*+?()\[{}|]")


def check_placement_rules(partition: PartitionConfig, path: str,
                          flagged: Collection[int] = ()) -> None:
    """Rule syntax, then what building each rule refuses, then each rule chain's fixed
    queue path against the hierarchy; finally rule names and values in lower case.

    ``path`` is the partition's place in the document; ``flagged`` holds the ``id`` of
    every queue written with ``parent: true`` (and root), as the queue path check of
    YuniKorn's validator reads them.
    """
    rules = partition.placementrules
    paths = [f"{path}.placementrules[{index}]" for index in range(len(rules))]
    for rule, rule_path in zip(rules, paths, strict=True):
        _check_rule_syntax(rule, rule_path)
    for rule, rule_path in zip(rules, paths, strict=True):
        _check_rule_build(rule, rule_path)
    for index, (rule, rule_path) in enumerate(zip(rules, paths, strict=True)):
        _check_rule_target(index, rule, rule_path, partition.queues, flagged)
    for rule in rules:
        _normalise(rule)


def _check_rule_syntax(rule: PlacementRuleConfig, path: str) -> None:
    """YuniKorn ``checkPlacementRule``: an identifier as name, the parent rule, the filter."""
    if not _RULE_NAME_RE.fullmatch(rule.name):
        raise ConfigError(
            f"invalid placement rule name {rule.name!r}: it must be an identifier",
            f"{path}.name",
        )
    if rule.parent is not None:
        _check_rule_syntax(rule.parent, f"{path}.parent")
    kind = rule.filter.type
    if kind and kind.lower() not in ("allow", "deny"):
        raise ConfigError(
            f"invalid filter type {kind!r}: use allow or deny (empty means allow)",
            f"{path}.filter.type",
        )
    for key, names, pattern in (
        ("users", rule.filter.users, USER_NAME_RE),
        ("groups", rule.filter.groups, GROUP_NAME_RE),
    ):
        if len(names) == 1 and not pattern.fullmatch(names[0]) and not _is_regexp(names[0]):
            raise ConfigError(
                f"filter {key} entry {names[0]!r} is neither a valid name nor a "
                "regular expression",
                f"{path}.filter.{key}[0]",
            )


def _check_rule_build(rule: PlacementRuleConfig, path: str) -> None:
    """YuniKorn ``newRule`` and the rules' ``initialise``: a known name (any case; never
    ``recovery``), a ``fixed`` value of valid queue names that is not a full path
    (starting ``root``) below a parent rule, a ``tag`` value; the parent rule's first."""
    if rule.parent is not None:
        _check_rule_build(rule.parent, f"{path}.parent")
    name = rule.name.lower()
    if name == RECOVERY_RULE:
        raise ConfigError(
            "the recovery rule cannot be configured: the core adds it after the "
            "configured rules", f"{path}.name")
    if name not in (*PLACEMENT_RULES, TEST_RULE):
        raise ConfigError(
            f"unknown placement rule {rule.name!r} (known, in any case: "
            f"{', '.join(PLACEMENT_RULES)})", f"{path}.name")
    value = rule.value.lower()
    if name == "tag" and not value:
        raise ConfigError("a tag rule needs the tag to read in value (e.g. namespace)",
                          f"{path}.value")
    if name != "fixed":
        return
    if not value:
        raise ConfigError("a fixed rule needs a queue name in value", f"{path}.value")
    for part in value.split("."):
        if not QUEUE_NAME_RE.fullmatch(part):
            raise ConfigError(
                f"invalid queue name {part!r} in the fixed rule's value {rule.value!r}: use "
                "1 to 64 characters from a-z A-Z 0-9 _ - : # / @ between the dots",
                f"{path}.value")
    if value.startswith(ROOT_QUEUE) and rule.parent is not None:
        raise ConfigError(
            f"the fixed rule's value {rule.value!r} is a full queue path (it starts with "
            f"{ROOT_QUEUE!r}), so the rule can have no parent rule", f"{path}.value")


def _normalise(rule: PlacementRuleConfig) -> None:
    """YuniKorn's rules read their name, and a ``fixed`` or ``tag`` value, in lower case."""
    rule.name = rule.name.lower()
    if rule.name in ("fixed", "tag"):
        rule.value = rule.value.lower()
    if rule.parent is not None:
        _normalise(rule.parent)


def _static_path(chain: list[PlacementRuleConfig], as_written: bool) -> tuple[str, bool]:
    """The queue path the leading ``fixed`` links of a chain (top first) spell out, and
    whether a dynamic rule follows them; ``""`` when the chain starts with another rule.

    ``as_written`` reads it as YuniKorn's validator does (``getLongestStaticPath``): only
    a rule named exactly ``fixed`` is fixed, and a value is a full path when it starts
    ``root`` with that case; otherwise as the rules place (names and values in lower
    case). A full path below another link never gets here (:func:`_check_rule_build`).
    """
    static = ""
    for link in chain:
        name, value = (link.name, link.value) if as_written else \
            (link.name.lower(), link.value.lower())
        if name != "fixed":
            return static, True
        static = value if value.startswith(ROOT_QUEUE) else f"{static or ROOT_QUEUE}.{value}"
    return static, False


def _check_rule_target(index: int, rule: PlacementRuleConfig, path: str,
                       queues: list[QueueConfig], flagged: Collection[int]) -> None:
    """A rule chain's fixed queue path is refused when the rules would fail on it and
    YuniKorn's validator refuses it too.

    YuniKorn: the path must end at a leaf (at a parent when a dynamic rule follows); a
    missing queue needs ``create: true`` and can not be created below a leaf. Its
    validator matches the path, in lower case, against the names as written and takes
    a queue for a parent only when written ``parent: true``; its queues are stored in
    lower case and a queue with children is a parent. A refusal needs both readings, so
    what the validator accepts loads here too.
    """
    chain: list[PlacementRuleConfig] = []
    link: PlacementRuleConfig | None = rule
    while link is not None:
        chain.append(link)
        link = link.parent
    chain.reverse()
    static, dynamic = _static_path(chain, as_written=False)
    if not static:
        return
    problem = _placement_problem(static, static.split("."), rule.create, dynamic, queues, None)
    if not problem:
        return
    written, written_dynamic = _static_path(chain, as_written=True)
    if not written or not _validator_refuses(
            written.lower().split("."), rule.create, written_dynamic, queues, None, flagged):
        return
    described = "->".join(link.name for link in chain)
    raise ConfigError(f"placement rule #{index} ({described}) {problem}", path)


def _placement_problem(
    static: str,
    parts: list[str],
    create: bool,
    dynamic: bool,
    queues: list[QueueConfig],
    parent: QueueConfig | None,
) -> str:
    if not queues and parent is not None and not parent.is_parent:
        return f"needs queues below the leaf queue {parent.name!r}"
    match = next((queue for queue in queues if queue.name.lower() == parts[0]), None)
    if match is None:
        return "" if create else f"references the missing queue {static!r} and create is false"
    if len(parts) == 1:
        if dynamic and not match.is_parent:
            return f"adds dynamic queues below the leaf queue {match.name!r}"
        if not dynamic and match.is_parent:
            return f"places applications in the parent queue {match.name!r}, not a leaf"
        return ""
    return _placement_problem(static, parts[1:], create, dynamic, match.queues, match)


def _validator_refuses(
    parts: list[str],
    create: bool,
    dynamic: bool,
    queues: list[QueueConfig],
    parent: QueueConfig | None,
    flagged: Collection[int],
) -> bool:
    """YuniKorn's ``checkQueueHierarchyForPlacement``: names as written, parents as flagged."""
    if not queues and parent is not None:
        return id(parent) not in flagged or not create
    match = next((queue for queue in queues if queue.name == parts[0]), None)
    if match is None:
        return not create
    if len(parts) == 1:
        return (id(match) in flagged) != dynamic
    return _validator_refuses(parts[1:], create, dynamic, match.queues, match, flagged)


def _is_regexp(text: str) -> bool:
    """Whether a lone filter entry is a regular expression: special characters, and it compiles."""
    if not _REGEXP_SPECIAL_RE.search(text):
        return False
    try:
        re.compile(text)
    except re.error:
        return False
    return True
