"""The semantic checks of YuniKorn's ``configvalidator.go``, run once the schema has passed.

Every failure raises :class:`~scheduler.errors.ConfigError` whose ``path``
locates the offending value
(``partitions[0].queues[0].queues[1].resources.max.memory``). The checks also
normalise the config in place, as YuniKorn does.

Two rules of the seed are *not* enforced because YuniKorn dropped them: the
seed wants the same queue to sit at the same place in every partition and a
queue name to be unique in a whole hierarchy; YuniKorn validates every
partition on its own and only requires unique names among siblings (its docs:
``root.testqueue`` and ``root.parent.testqueue`` may coexist).

Where a check follows YuniKorn behaviour that the seed does not state, the
docstring of that check says so in one line starting with "YuniKorn:".
The placement-rule checks live in :mod:`.placementrules`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from scheduler.errors import ConfigError

from ..si import DEFAULT_PARTITION
from .acl import GROUP_NAME_RE, USER_NAME_RE, WILDCARD, parse_acl
from .models import (
    APPLICATION_SORT_POLICIES,
    APPLICATION_SORT_POLICY,
    NODE_SORT_POLICIES,
    QUEUE_NAME_RE,
    ROOT_QUEUE,
    LimitConfig,
    PartitionConfig,
    QueueConfig,
    SchedulerConfig,
)
from .paths import key_path
from .placementrules import check_placement_rules


def validate(config: SchedulerConfig) -> None:
    """Run every semantic check, normalising the config in place on the way.

    What YuniKorn accepts with a log line (an unknown sort policy) is added to
    ``config.warnings`` instead of refused. A configuration without partitions
    (an empty file) is valid, as in YuniKorn; the core then loads its default.
    """
    seen: set[str] = set()
    for index, partition in enumerate(config.partitions):
        path = f"partitions[{index}]"
        _normalise_partition_name(partition)
        if partition.name.lower() in seen:
            raise ConfigError(f"duplicate partition name {partition.name!r}", f"{path}.name")
        seen.add(partition.name.lower())
        _PartitionChecker(partition, path, config.warnings).run()


def _normalise_partition_name(partition: PartitionConfig) -> None:
    """YuniKorn: an empty name, or "default" in any case, is the partition ``default``."""
    if partition.name == "" or partition.name.lower() == DEFAULT_PARTITION:
        partition.name = DEFAULT_PARTITION


def _fits(limit: Mapping[str, int], value: Mapping[str, int]) -> str | None:
    """The first type where ``value`` exceeds ``limit``; types ``limit`` lacks are unlimited."""
    for name, quantity in value.items():
        if name in limit and quantity > limit[name]:
            return name
    return None


def _min_permissive(left: Mapping[str, int], right: Mapping[str, int] | None) -> dict[str, int]:
    out = dict(left)
    for name, quantity in (right or {}).items():
        out[name] = min(quantity, out[name]) if name in out else quantity
    return out


class _PartitionChecker:
    """The checks of one partition; ``paths`` maps each queue to its place in the document."""

    def __init__(self, partition: PartitionConfig, path: str, warnings: list[str]) -> None:
        self.partition = partition
        self.path = path
        self.paths: dict[int, str] = {}
        self.warnings = warnings
        self.root_limits = ""
        self.flagged: set[int] = set()
        """Root and the queues written ``parent: true`` (YuniKorn's validator reads no more)."""

    def run(self) -> None:
        self.check_structure()
        root = self.partition.root
        self.check_limits_structure()
        self.check_queues(root)
        self.check_resources(root, None)
        check_placement_rules(self.partition, self.path, self.flagged)
        self.check_node_sort_policy()
        self.check_max_applications(root)
        self.check_limit_hierarchy(root, {}, {}, {}, {})

    def qpath(self, queue: QueueConfig) -> str:
        return self.paths[id(queue)]

    def limits_path(self, queue: QueueConfig) -> str:
        """Where a queue's ``limits`` are written (root's may be the partition's)."""
        if queue is self.partition.root and self.root_limits:
            return self.root_limits
        return f"{self.qpath(queue)}.limits"

    # -- structure ---------------------------------------------------------

    def check_structure(self) -> None:
        """Exactly one top-level queue, ``root`` (a parent), which sets no resources.

        YuniKorn: when the top level is not a single ``root`` queue (several
        queues, one other queue, or an empty list) a root queue is inserted
        above them, so YuniKorn's own example files load; ``root`` matches in
        any case and is stored as ``root``. Root's ``guaranteed`` or ``max`` is an
        error even when written as an empty map (``max: {}``), as in YuniKorn; one
        written ``null`` is unset.
        """
        part, path = self.partition, self.path
        queues = part.queues
        if len(queues) == 1 and queues[0].name.lower() == ROOT_QUEUE:
            root = queues[0]
            root.name = ROOT_QUEUE
            self.paths[id(root)] = f"{path}.queues[0]"
            children = f"{path}.queues[0].queues"
            written = [key for key in ("guaranteed", "max")
                       if key in root.resources.model_fields_set]
            if written:
                where = next((key for key in written if getattr(root.resources, key)),
                             written[0])
                raise ConfigError(
                    "the root queue must not set resource limits (its max is the partition's size)",
                    f"{path}.queues[0].resources.{where}",
                )
        else:
            root = QueueConfig(name=ROOT_QUEUE, queues=list(queues))
            part.queues = [root]
            self.paths[id(root)] = f"{path}.queues"
            children = f"{path}.queues"
        root.parent = True
        self.flagged.add(id(root))
        self._assign_paths(root, children)

    def _assign_paths(self, queue: QueueConfig, children: str) -> None:
        for index, child in enumerate(queue.queues):
            child_path = f"{children}[{index}]"
            self.paths[id(child)] = child_path
            if child.parent:
                self.flagged.add(id(child))
            self._assign_paths(child, f"{child_path}.queues")

    def check_limits_structure(self) -> None:
        """YuniKorn: partition ``limits`` are root's; given in both places they must be equal.

        Root without limits of its own takes the partition's, so they are
        checked as root's are: each entry, and against every child's limits.
        """
        part, root = self.partition, self.partition.root
        if part.limits and root.limits and part.limits != root.limits:
            raise ConfigError(
                "the partition's limits differ from the root queue's: they are the same "
                "limits, so give them once (or twice, equal)", f"{self.path}.limits")
        if part.limits and not root.limits:
            root.limits = [limit.model_copy(deep=True) for limit in part.limits]
            self.root_limits = f"{self.path}.limits"

    # -- names, ACLs, properties, per-queue limits ---------------------------

    def check_queues(self, queue: QueueConfig) -> None:
        """ACL syntax, sort policy, limits, child names (unique ignoring case); marks parents."""
        path = self.qpath(queue)
        for key in ("adminacl", "submitacl"):
            try:
                parse_acl(getattr(queue, key))
            except ConfigError as exc:
                raise ConfigError(exc.reason, f"{path}.{key}") from None
        self.check_sort_policy(queue.properties, f"{path}.properties")
        if queue.childtemplate is not None:
            self.check_sort_policy(
                queue.childtemplate.properties, f"{path}.childtemplate.properties"
            )
        self.check_limit_list(queue.limits, self.limits_path(queue), queue)
        siblings: set[str] = set()
        for child in queue.queues:
            child_path = self.qpath(child)
            self.check_queue_name(child.name, f"{child_path}.name")
            if child.name.lower() in siblings:
                raise ConfigError(
                    f"duplicate queue name {child.name!r} below {queue.name!r} "
                    "(names are compared ignoring case)",
                    f"{child_path}.name",
                )
            siblings.add(child.name.lower())
        if queue.queues:
            queue.parent = True
        for child in queue.queues:
            self.check_queues(child)

    @staticmethod
    def check_queue_name(name: str, path: str) -> None:
        """YuniKorn 1.6+: 1-64 characters of ``a-z A-Z 0-9 _ - : # / @``; never a dot."""
        if "." in name:
            raise ConfigError(
                f"invalid queue name {name!r}: a dot separates queues in a path", path
            )
        if not QUEUE_NAME_RE.fullmatch(name):
            raise ConfigError(
                f"invalid queue name {name!r}: use 1 to 64 characters from a-z A-Z 0-9 _ - : # / @",
                path,
            )

    def check_sort_policy(self, properties: Mapping[str, str], path: str) -> None:
        """YuniKorn: an ``application.sort.policy`` other than exactly fifo, fair or
        stateaware (empty is fifo) is logged and the queue sorts fifo: a warning here."""
        value = properties.get(APPLICATION_SORT_POLICY, "")
        if value not in ("", *APPLICATION_SORT_POLICIES):
            self.warnings.append(
                f"{key_path(path, APPLICATION_SORT_POLICY)}: unknown application sort policy "
                f"{value!r}, using fifo (known, matched with case: "
                f"{', '.join(APPLICATION_SORT_POLICIES)})")

    # -- resources -----------------------------------------------------------

    def check_resources(
        self, queue: QueueConfig, parent_max: dict[str, int] | None
    ) -> dict[str, int]:
        """Guaranteed <= max; max <= the ancestors' max; children's guarantees fit.

        YuniKorn: a child's max is compared with the smallest max set on any
        ancestor per type; the sum of the children's guarantees (a child without
        one counts its own children's sum) must fit the parent's guaranteed and
        effective max for the types those define; an all-zero guaranteed is unset.
        Returns the guarantee this queue contributes to its parent's sum.
        """
        path = self.qpath(queue)
        guaranteed, maximum = queue.resources.guaranteed, queue.resources.max
        over = _fits(maximum, guaranteed)
        if over is not None:
            raise ConfigError(
                f"guaranteed {over} {guaranteed[over]} is larger than max {maximum[over]}",
                key_path(f"{path}.resources.guaranteed", over),
            )
        if parent_max is not None:
            over = _fits(parent_max, maximum)
            if over is not None:
                raise ConfigError(
                    f"max {over} {maximum[over]} is larger than the max {parent_max[over]} "
                    "set on a parent queue",
                    key_path(f"{path}.resources.max", over),
                )
        effective_max = _min_permissive(maximum, parent_max)
        children_sum: dict[str, int] = {}
        for child in queue.queues:
            for name, quantity in self.check_resources(child, effective_max).items():
                children_sum[name] = children_sum.get(name, 0) + quantity
        over = _fits(guaranteed, children_sum)
        if over is not None:
            raise ConfigError(
                f"the children's guaranteed {over} add up to {children_sum[over]}, "
                f"more than this queue's guaranteed {guaranteed[over]}",
                key_path(f"{path}.resources.guaranteed", over),
            )
        over = _fits(effective_max, children_sum)
        if over is not None:
            where = key_path(f"{path}.resources.max", over) if over in maximum else f"{path}.queues"
            raise ConfigError(
                f"the children's guaranteed {over} add up to {children_sum[over]}, "
                f"more than this queue's max {effective_max[over]}",
                where,
            )
        if any(guaranteed.values()):
            return dict(guaranteed)
        return children_sum

    # -- maxapplications -----------------------------------------------------

    def check_max_applications(self, queue: QueueConfig) -> None:
        """A child's maxapplications is at most its parent's.

        YuniKorn: once a parent sets maxapplications every child must set one
        too (an unset child, 0, is an error), not only when both are set.
        """
        for child in queue.queues:
            if queue.maxapplications and (
                child.maxapplications == 0 or child.maxapplications > queue.maxapplications
            ):
                state = (
                    "is not set" if child.maxapplications == 0 else f"is {child.maxapplications}"
                )
                raise ConfigError(
                    f"maxapplications {state}; it must be between 1 and the parent's "
                    f"{queue.maxapplications}",
                    f"{self.qpath(child)}.maxapplications",
                )
            self.check_max_applications(child)

    # -- limits --------------------------------------------------------------

    def check_limit_list(self, limits: list[LimitConfig], path: str, queue: QueueConfig) -> None:
        """User/group limits of one queue (root's may be written on the partition).

        YuniKorn: names must be valid or ``*``; a name may appear once per list;
        no named entry after a wildcard; a group wildcard needs a named group
        before it; a limit sets maxapplications or non-zero maxresources, within
        the queue's own maxapplications and max (not checked for root).
        """
        users: set[str] = set()
        groups: set[str] = set()
        for index, limit in enumerate(limits):
            lpath = f"{path}[{index}]"
            if not limit.users and not limit.groups:
                raise ConfigError("a limit must name at least one user or group", lpath)
            self._check_limit_names(limit.users, f"{lpath}.users", users, USER_NAME_RE, "user")
            self._check_limit_names(limit.groups, f"{lpath}.groups", groups, GROUP_NAME_RE, "group")
            if groups == {WILDCARD}:
                raise ConfigError(
                    "a wildcard group limit needs a limit for a named group before it",
                    f"{lpath}.groups",
                )
            if limit.maxresources and not any(limit.maxresources.values()):
                raise ConfigError(
                    "maxresources sets every resource type to zero", f"{lpath}.maxresources"
                )
            if limit.maxapplications == 0 and not limit.maxresources:
                raise ConfigError("a limit must set maxapplications or maxresources", lpath)
            if queue.maxapplications and limit.maxapplications > queue.maxapplications:
                raise ConfigError(
                    f"maxapplications {limit.maxapplications} is larger than the queue's "
                    f"maxapplications {queue.maxapplications}",
                    f"{lpath}.maxapplications",
                )
            if queue.name != ROOT_QUEUE:
                over = _fits(queue.resources.max, limit.maxresources)
                if over is not None:
                    raise ConfigError(
                        f"maxresources {over} {limit.maxresources[over]} is larger than the "
                        f"queue's max {queue.resources.max[over]}",
                        key_path(f"{lpath}.maxresources", over),
                    )

    @staticmethod
    def _check_limit_names(
        names: list[str], path: str, seen: set[str], pattern: re.Pattern[str], kind: str
    ) -> None:
        for index, name in enumerate(names):
            npath = f"{path}[{index}]"
            if name != WILDCARD and not pattern.fullmatch(name):
                raise ConfigError(f"invalid {kind} name {name!r} in limit", npath)
            if name in seen:
                raise ConfigError(f"{kind} {name!r} already has a limit in this list", npath)
            if WILDCARD in seen:
                raise ConfigError(
                    f"{kind} {name!r} comes after the wildcard {kind} limit, "
                    "which must be the last",
                    npath,
                )
            seen.add(name)

    def check_limit_hierarchy(
        self,
        queue: QueueConfig,
        user_res: dict[str, dict[str, int]],
        group_res: dict[str, dict[str, int]],
        user_apps: dict[str, int],
        group_apps: dict[str, int],
    ) -> None:
        """A user's or group's limit on a queue stays within its limits on ancestor queues.

        YuniKorn (``checkLimitResource``, ``checkLimitMaxApplications``): resources
        compare per type where both set one; an ancestor's non-zero maxapplications
        requires a non-zero, not larger, value below. A name no ancestor limits is held
        to an ancestor's wildcard limit of its kind instead (and what it sets then
        binds below it, not the wildcard's).
        """
        path = self.limits_path(queue)
        own_user_res, own_group_res = dict(user_res), dict(group_res)
        own_user_apps, own_group_apps = dict(user_apps), dict(group_apps)
        for index, limit in enumerate(queue.limits):
            lpath = f"{path}[{index}]"
            for names, kind, res_map, apps_map, parent_res, parent_apps in (
                (limit.users, "user", own_user_res, own_user_apps, user_res, user_apps),
                (limit.groups, "group", own_group_res, own_group_apps, group_res, group_apps),
            ):
                for name in names:
                    self._check_limit_within(limit, name, kind, lpath, parent_res, parent_apps)
                    above = parent_res.get(name)
                    res_map[name] = _min_permissive(limit.maxresources, above)
                    apps_map[name] = limit.maxapplications
        for child in queue.queues:
            self.check_limit_hierarchy(
                child, own_user_res, own_group_res, own_user_apps, own_group_apps
            )

    @staticmethod
    def _check_limit_within(
        limit: LimitConfig,
        name: str,
        kind: str,
        lpath: str,
        parent_res: Mapping[str, Mapping[str, int]],
        parent_apps: Mapping[str, int],
    ) -> None:
        """One name of a limit against the limits above it: its own, else the wildcard's."""
        if name in parent_res:
            whose, key = "set on a parent queue", name
        elif name != WILDCARD and WILDCARD in parent_res:
            whose, key = f"set by the wildcard {kind} limit of a parent queue", WILDCARD
        else:
            return
        above = parent_res[key]
        over = _fits(above, limit.maxresources)
        if over is not None:
            raise ConfigError(
                f"{kind} {name!r} maxresources {over} {limit.maxresources[over]} is larger "
                f"than {above[over]} {whose}",
                key_path(f"{lpath}.maxresources", over),
            )
        above_apps = parent_apps[key]
        if above_apps and not 0 < limit.maxapplications <= above_apps:
            raise ConfigError(
                f"{kind} {name!r} maxapplications {limit.maxapplications} must be between "
                f"1 and {above_apps} {whose}",
                f"{lpath}.maxapplications",
            )

    # -- node sorting --------------------------------------------------------

    def check_node_sort_policy(self) -> None:
        """Type ``fair`` or ``binpacking`` (exact case; empty is fair); weights >= 0."""
        policy, path = self.partition.nodesortpolicy, f"{self.path}.nodesortpolicy"
        if policy.type == "":
            policy.type = "fair"
        if policy.type not in NODE_SORT_POLICIES:
            raise ConfigError(
                f"unknown node sort policy {policy.type!r} "
                f"(known: {', '.join(NODE_SORT_POLICIES)})",
                f"{path}.type",
            )
        for name, weight in policy.resourceweights.items():
            if weight < 0:
                raise ConfigError(
                    f"negative resource weight {weight} for {name!r}",
                    key_path(f"{path}.resourceweights", name),
                )

