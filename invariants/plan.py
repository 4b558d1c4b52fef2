"""The plan: what a queue configuration allows, read from the configuration alone.

Which leaves exist, which users may submit where (ACLs of the whole path),
which leaves take gangs (not fair), which queues a reload may remove, and the
configuration with its quotas scaled. The checker derives its expectations
from this reading, never from the core's answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scheduler.config import QueueConfig, SchedulerConfig, parse_config

# The SI carries vcore in milli-cores (the config's "vcore: 20" is 20 cores):
# one checker pod asks for one core.
CORE = 1000
USERS = [("alice", []), ("bob", ["admins"]), ("carol", [])]

User = tuple[str, list[str]]
Choice = tuple[str, User]


def chains_of(queues: list[QueueConfig], above: tuple[QueueConfig, ...] = ()
            ) -> dict[str, tuple[QueueConfig, ...]]:
    """Every queue path with its chain of configs from the queue up to root."""
    out: dict[str, tuple[QueueConfig, ...]] = {}
    for q in queues:
        chain = (q, *above)
        out[".".join(c.name for c in reversed(chain))] = chain
        out.update(chains_of(q.queues, chain))
    return out


def allowed(chain: tuple[QueueConfig, ...], user: str, groups: list[str]) -> bool:
    """YuniKorn's submit check, restated from the config: any level's submit or admin ACL."""
    return any(acl.allows(user, groups) for q in chain for acl in (q.submit_acl, q.admin_acl))


def policy(chain: tuple[QueueConfig, ...]) -> str:
    """The effective application sort policy: the nearest queue that sets it (inherited)."""
    for q in chain:
        if "application.sort.policy" in q.properties:
            return q.sort_policy
    return "fifo"


def users_for(chains: dict[str, tuple[QueueConfig, ...]]) -> list[tuple[str, list[str]]]:
    """The checker's users, plus one per user and group the configuration's ACLs name."""
    users = list(USERS)
    seen_users = {u for u, _g in users}
    seen_groups = {g for _u, gs in users for g in gs}
    for path in sorted(chains):
        q = chains[path][0]
        for acl in (q.submit_acl, q.admin_acl):
            for name in acl.sorted_users:
                if name not in seen_users:
                    seen_users.add(name)
                    users.append((name, []))
            for group in acl.sorted_groups:
                if group not in seen_groups:
                    seen_groups.add(group)
                    users.append((f"member-of-{group}", [group]))
    return users


def leaves_of(queues: list[QueueConfig], prefix: str = "") -> tuple[list[str], list[str]]:
    leaves: list[str] = []
    parents: list[str] = []
    for q in queues:
        path = f"{prefix}.{q.name}" if prefix else q.name
        if q.is_parent:
            parents.append(path)
            sub_leaves, sub_parents = leaves_of(q.queues, path)
            leaves += sub_leaves
            parents += sub_parents
        else:
            leaves.append(path)
    return leaves, parents


def with_max_memory(config: SchedulerConfig, factor: float,
                     removed: frozenset[str] = frozenset()) -> str:
    """The same configuration with every memory quantity scaled (rounded down, >= 1).

    Queue max and guaranteed and every limit's maxresources scale together, so
    each ordering the validator checks (guaranteed <= max, child <= parent,
    children's guaranteed sum, limits within the queue) is preserved. Queues
    whose path is in ``removed`` are left out (the first partition's tree).
    """
    data = config.model_dump(mode="python", exclude_defaults=True)

    def prune(queues: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
        kept = []
        for q in queues:
            path = f"{prefix}.{q['name']}" if prefix else q["name"]
            if path in removed:
                continue
            if "queues" in q:
                q["queues"] = prune(q["queues"], path)
            kept.append(q)
        return kept

    if removed:
        first = data["partitions"][0]
        first["queues"] = prune(first["queues"], "")

    def scale(resources: dict[str, Any]) -> None:
        for name, value in list(resources.items()):
            if name == "memory":
                resources[name] = max(1, int(value * factor))
            elif name == "vcore":
                resources[name] = f"{value}m"

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("max", "guaranteed", "maxresources") and isinstance(value, dict):
                    scale(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    return json.dumps(data)


@dataclass(frozen=True)
class Plan:
    """Everything the checker's rules draw from, for one configuration."""

    config_text: str
    config: SchedulerConfig
    partition_name: str
    leaves: list[str]
    parents: list[str]
    chains: dict[str, tuple[QueueConfig, ...]]
    users: list[User]
    strict: bool
    submittable: list[Choice]
    forbidden: list[Choice]
    gang_choices: list[Choice]
    fair_leaves: list[Choice]
    bad_queues: list[str]
    removable: list[str]

    @classmethod
    def of(cls, config_text: str) -> Plan:
        config = parse_config(config_text)
        partition = config.partitions[0]
        leaves, parents = leaves_of(partition.queues)
        chains = chains_of(partition.queues)
        users = users_for(chains)
        submittable = [(leaf, user) for leaf in leaves for user in users
                       if allowed(chains[leaf], user[0], user[1])]
        return cls(
            config_text=config_text,
            config=config,
            partition_name=partition.name,
            leaves=leaves,
            parents=parents,
            chains=chains,
            users=users,
            # With placement rules the core may put an application elsewhere than
            # the queue it names (or create one), so the ACL oracle only holds without.
            strict=not partition.placementrules,
            submittable=submittable,
            forbidden=[(leaf, user) for leaf in leaves for user in users
                       if not allowed(chains[leaf], user[0], user[1])],
            gang_choices=[(leaf, user) for leaf, user in submittable
                          if policy(chains[leaf]) != "fair"],
            fair_leaves=[(leaf, user) for leaf, user in submittable
                         if policy(chains[leaf]) == "fair"],
            bad_queues=[*parents, "root.nosuchqueue"],
            # Leaves a reload may remove without turning their parent into a leaf.
            removable=[leaf for leaf in leaves
                       if len(chains[leaf]) > 1 and len(chains[leaf][1].queues) > 1],
        )
