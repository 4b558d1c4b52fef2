"""The configuration schema: pydantic models of ``queues.yaml``, constants and defaults.

Field names are the YAML keys exactly as YuniKorn's ``pkg/common/configs``
spells them, and unknown keys are rejected as YuniKorn's strict decoding does,
so real YuniKorn configuration files load unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from .acl import ACL, parse_acl
from .quantities import ResourceMap
from .scalars import YamlBool, YamlStr, scalar_text

ROOT_QUEUE: Final = "root"
APPLICATION_SORT_POLICY: Final = "application.sort.policy"
APPLICATION_SORT_POLICIES: Final = ("fifo", "fair", "stateaware")
NODE_SORT_POLICIES: Final = ("fair", "binpacking")

DEFAULT_CONFIG_YAML: Final = """\
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: "*"
"""
"""YuniKorn's default configuration (``configs.DefaultSchedulerConfig``): one
partition, an open root queue, and the ``tag`` placement rule that puts an
application in ``root.<its namespace tag>``, creating that queue."""


QUEUE_NAME_RE: Final = re.compile(r"[a-zA-Z0-9_:#/@-]{1,64}")
"""A queue name by YuniKorn 1.6+'s rules (configvalidator.go and the queue_config docs)."""

_UINT64_MAX: Final = 2**64 - 1

MaxApplications = Annotated[int, Field(strict=True, ge=0, le=_UINT64_MAX)]
"""YuniKorn's ``uint64`` application counts: a YAML integer, 0 means unlimited."""


class _ConfigModel(BaseModel):
    """Base of the config models: unknown keys are errors; ``key:`` with no value is unset."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        # YuniKorn's decoder leaves a field at its zero value for ``key: null``.
        if isinstance(data, Mapping):
            return {scalar_text(k): v for k, v in data.items() if v is not None}
        return data


class ResourcesConfig(_ConfigModel):
    """Guaranteed and maximum resources of a queue (types not listed are not limited)."""

    guaranteed: ResourceMap = Field(default_factory=dict)
    max: ResourceMap = Field(default_factory=dict)

    @property
    def is_set(self) -> bool:
        """True when a guaranteed or max value is given for at least one resource type."""
        return bool(self.guaranteed or self.max)


def sort_policy(properties: Mapping[str, str]) -> str:
    """The application sort policy ``properties`` select; ``fifo`` when unset or unknown.

    YuniKorn matches the value exactly (``Fair`` is unknown) and falls back to
    fifo; the validator warns about an unknown value. Public so that the
    partition, which applies a child template's properties over its parent's
    before choosing, reads the policy the same way.
    """
    value = properties.get(APPLICATION_SORT_POLICY, "")
    return value if value in APPLICATION_SORT_POLICIES else "fifo"


class ChildTemplateConfig(_ConfigModel):
    """Settings applied to dynamic leaf queues created below a parent queue."""

    maxapplications: MaxApplications = 0
    properties: dict[YamlStr, YamlStr] = Field(default_factory=dict)
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)

    @property
    def sort_policy(self) -> str:
        """``application.sort.policy``; ``fifo`` when not set or unknown."""
        return sort_policy(self.properties)


class LimitConfig(_ConfigModel):
    """A user and/or group limit on a queue or partition (per user or group, not combined)."""

    limit: YamlStr = ""
    users: list[YamlStr] = Field(default_factory=list)
    groups: list[YamlStr] = Field(default_factory=list)
    maxresources: ResourceMap = Field(default_factory=dict)
    maxapplications: MaxApplications = 0


class QueueConfig(_ConfigModel):
    """One configured queue and, recursively, its children."""

    name: YamlStr
    parent: YamlBool = False
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    maxapplications: MaxApplications = 0
    properties: dict[YamlStr, YamlStr] = Field(default_factory=dict)
    adminacl: YamlStr | None = None
    submitacl: YamlStr | None = None
    childtemplate: ChildTemplateConfig | None = None
    queues: list[QueueConfig] = Field(default_factory=list)
    limits: list[LimitConfig] = Field(default_factory=list)

    @property
    def is_parent(self) -> bool:
        """A queue with children, or marked ``parent: true``, is a parent; else a leaf."""
        return self.parent or bool(self.queues)

    @property
    def sort_policy(self) -> str:
        """``application.sort.policy``; ``fifo`` when not set or unknown."""
        return sort_policy(self.properties)

    @property
    def submit_acl(self) -> ACL:
        """The parsed ``submitacl`` (allows nobody when not set)."""
        return parse_acl(self.submitacl)

    @property
    def admin_acl(self) -> ACL:
        """The parsed ``adminacl`` (allows nobody when not set)."""
        return parse_acl(self.adminacl)


class FilterConfig(_ConfigModel):
    """User and group filter of a placement rule (``type``: "", ``allow`` or ``deny``)."""

    type: YamlStr = ""
    users: list[YamlStr] = Field(default_factory=list)
    groups: list[YamlStr] = Field(default_factory=list)


class PlacementRuleConfig(_ConfigModel):
    """A placement rule; ``parent`` is the rule that generates the parent queue."""

    name: YamlStr
    create: YamlBool = False
    filter: FilterConfig = Field(default_factory=FilterConfig)
    parent: PlacementRuleConfig | None = None
    value: YamlStr = ""


class NodeSortingPolicyConfig(_ConfigModel):
    """How nodes are ordered for allocation: ``fair`` (default) or ``binpacking``."""

    type: YamlStr = "fair"
    resourceweights: dict[YamlStr, Annotated[float, Field(strict=True)]] = Field(
        default_factory=dict
    )


class PartitionPreemptionConfig(_ConfigModel):
    """Partition preemption switches (``enabled`` defaults to true, per YuniKorn's docs)."""

    enabled: YamlBool = True
    quotapreemptionenabled: YamlBool | None = None
    """Quota preemption's switch (YuniKorn 1.8; off unless true): ``partition.quota_preemption``."""


class UserGroupResolverConfig(_ConfigModel):
    """Newer YuniKorn: how user groups are resolved; accepted and kept, not interpreted."""

    type: YamlStr = ""


class PartitionConfig(_ConfigModel):
    """One partition: a name space with its own queue hierarchy below ``root``."""

    name: YamlStr = ""
    queues: list[QueueConfig]
    placementrules: list[PlacementRuleConfig] = Field(default_factory=list)
    limits: list[LimitConfig] = Field(default_factory=list)
    nodesortpolicy: NodeSortingPolicyConfig = Field(default_factory=NodeSortingPolicyConfig)
    preemption: PartitionPreemptionConfig = Field(default_factory=PartitionPreemptionConfig)
    usergroupresolver: UserGroupResolverConfig = Field(default_factory=UserGroupResolverConfig)
    statedumpfilepath: YamlStr = ""
    """Deprecated in YuniKorn and ignored; accepted so older files still load."""

    @property
    def root(self) -> QueueConfig:
        """The root queue (after :func:`parse_config`, the only top-level queue)."""
        return self.queues[0]


class SchedulerConfig(_ConfigModel):
    """A whole ``queues.yaml``: one or more partitions."""

    partitions: list[PartitionConfig] = Field(default_factory=list)
    checksum: YamlStr = ""
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """What the validator accepted but YuniKorn would log (``path: reason``), in order."""
        return self._warnings

    def __eq__(self, other: object) -> bool:
        # The same settings are the same configuration, whatever validation noted on the way.
        if not isinstance(other, SchedulerConfig):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def partition(self, name: str) -> PartitionConfig | None:
        """The partition called ``name`` (case-insensitive, as YuniKorn compares them)."""
        wanted = name.lower()
        for partition in self.partitions:
            if partition.name.lower() == wanted:
                return partition
        return None
