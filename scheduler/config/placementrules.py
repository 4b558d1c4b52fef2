"""Placement rules in ``queues.yaml``: the checks of a partition's ``placementrules``.

Part of the semantic checks (:mod:`.validate`), kept apart because a rule is
judged on its own terms: its syntax (names, filters), then the queue path its
``fixed`` links spell out against the partition's hierarchy. Both run after
the queue structure is settled, so the hierarchy they walk is final.
"""

from __future__ import annotations

import re
from typing import Final

from scheduler.errors import ConfigError

from .acl import GROUP_NAME_RE, USER_NAME_RE
from .models import ROOT_QUEUE, PartitionConfig, PlacementRuleConfig, QueueConfig

_RULE_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_]*")
_REGEXP_SPECIAL_RE: Final = re.compile(r"[\^$*+?()\[{}|]")


def check_placement_rules(partition: PartitionConfig, path: str) -> None:
    """Rule syntax, then each rule chain's fixed queue path against the hierarchy.

    ``path`` is the partition's place in the document.
    YuniKorn: a chain whose fixed part names a configured queue must end at
    a leaf (or at a parent when a dynamic rule follows); a missing queue
    needs ``create: true`` and can never be created below a leaf.
    """
    for index, rule in enumerate(partition.placementrules):
        _check_rule_syntax(rule, f"{path}.placementrules[{index}]")
    for index, rule in enumerate(partition.placementrules):
        _check_rule_target(index, rule, f"{path}.placementrules[{index}]", partition.queues)


def _check_rule_syntax(rule: PlacementRuleConfig, path: str) -> None:
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


def _check_rule_target(
    index: int, rule: PlacementRuleConfig, path: str, queues: list[QueueConfig]
) -> None:
    chain: list[PlacementRuleConfig] = []
    link: PlacementRuleConfig | None = rule
    while link is not None:
        chain.append(link)
        link = link.parent
    chain.reverse()
    described = "->".join(link.name for link in chain)
    static, dynamic = "", False
    for depth, link in enumerate(chain):
        if link.name.lower() != "fixed":
            dynamic = True
            break
        if link.value.lower() == ROOT_QUEUE or link.value.lower().startswith(ROOT_QUEUE + "."):
            if static:
                value_path = path + ".parent" * (len(chain) - 1 - depth) + ".value"
                raise ConfigError(
                    f"only the first fixed rule of a chain may name a full queue path "
                    f"({link.value!r})",
                    value_path,
                )
            static = link.value
        else:
            static = f"{static or ROOT_QUEUE}.{link.value}"
    if not static:
        return
    parts = static.lower().split(".")
    problem = _placement_problem(parts, rule.create, dynamic, queues, None)
    if problem:
        raise ConfigError(f"placement rule #{index} ({described}) {problem}", path)


def _placement_problem(
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
        target = ".".join(parts)
        return "" if create else f"references the missing queue {target!r} and create is false"
    if len(parts) == 1:
        if dynamic and not match.is_parent:
            return f"adds dynamic queues below the leaf queue {match.name!r}"
        if not dynamic and match.is_parent:
            return f"places applications in the parent queue {match.name!r}, not a leaf"
        return ""
    return _placement_problem(parts[1:], create, dynamic, match.queues, match)


def _is_regexp(text: str) -> bool:
    """Whether a lone filter entry is a regular expression: special characters, and it compiles."""
    if not _REGEXP_SPECIAL_RE.search(text):
        return False
    try:
        re.compile(text)
    except re.error:
        return False
    return True
