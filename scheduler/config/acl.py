"""Access control lists: who may submit to, or administer, a queue.

Parsed the way YuniKorn's ``security.NewACL`` does, names checked by its rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from scheduler.errors import ConfigError

WILDCARD: Final = "*"

# Name rules of YuniKorn 1.6+ (configvalidator.go and the queue_config docs).
USER_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_:#/@.-]*\$?")
GROUP_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_:.-]*")


@dataclass(frozen=True)
class ACL:
    """Who may act on a queue: everyone, or listed users and groups.

    ``users`` and ``groups`` are frozensets used for membership tests only;
    ``sorted_users`` / ``sorted_groups`` are the same names in a stable order
    for display. The default instance allows nobody.
    """

    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    allow_all: bool = False
    ignored: tuple[str, ...] = ()
    """Entries YuniKorn skips (invalid names, a wildcard inside a list), in input order."""
    sorted_users: tuple[str, ...] = field(init=False, compare=False, repr=False)
    sorted_groups: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sorted_users", tuple(sorted(self.users)))
        object.__setattr__(self, "sorted_groups", tuple(sorted(self.groups)))

    def allows(self, user: str, groups: Sequence[str] = ()) -> bool:
        """True when ``user``, or one of its ``groups``, is granted by this ACL."""
        if self.allow_all or user in self.users:
            return True
        if isinstance(groups, str):
            groups = (groups,)
        return any(group in self.groups for group in groups)

    def __str__(self) -> str:
        if self.allow_all:
            return WILDCARD
        text = ",".join(self.sorted_users)
        if self.sorted_groups:
            text += " " + ",".join(self.sorted_groups)
        return text


def parse_acl(text: str | None) -> ACL:
    """Parse an ACL string the way YuniKorn's ``security.NewACL`` does.

    ``None`` or ``""`` allows nobody; ``*`` (blanks around it ignored) allows
    everyone. Otherwise ``"user1,user2 group1,group2"``: one space separates
    the user list from the group list, a leading space means groups only, and
    more than one separating space is an error (:class:`ConfigError`).
    YuniKorn: invalid user or group names are skipped, not errors; a list that
    is exactly ``*`` (users or groups) allows everyone.
    """
    if not text:
        return ACL()
    fields = text.split(" ")
    if len(fields) > 2 or len(text.split()) > 2:
        raise ConfigError(f"multiple spaces found in ACL {text!r}")
    if text.strip() == WILDCARD:
        return ACL(allow_all=True)
    ignored: list[str] = []
    user_list = fields[0].split(",")
    if user_list == [WILDCARD]:
        return ACL(allow_all=True)
    group_list = fields[1].split(",") if len(fields) == 2 else []
    if group_list == [WILDCARD]:
        return ACL(allow_all=True)
    users = _acl_names(user_list, USER_NAME_RE, ignored)
    groups = _acl_names(group_list, GROUP_NAME_RE, ignored)
    return ACL(users=users, groups=groups, ignored=tuple(ignored))


def _acl_names(names: list[str], pattern: re.Pattern[str], ignored: list[str]) -> frozenset[str]:
    kept: list[str] = []
    for name in names:
        if not name:
            continue
        if pattern.fullmatch(name):
            kept.append(name)
        else:
            ignored.append(name)
    return frozenset(kept)
