"""The queue configuration: Apache YuniKorn's ``queues.yaml``, parsed and validated.

The seed ``004``, section "Configurations & Semantics",
defines the shape: a configuration is a list of *partitions* (a partition is a
name space), each with its own queue hierarchy below a ``root`` queue, queue
resource settings (guaranteed "capacity" and "max-capacity") and ACLs, where
capacity "is not allowed to set for root". The concrete format is the one
Apache YuniKorn reads (``pkg/common/configs`` in ``yunikorn-core``), so real
YuniKorn configuration files load unchanged: :func:`parse_config` /
:func:`load_config_file` turn YAML text into a :class:`SchedulerConfig`, or
raise :class:`scheduler.errors.ConfigError` whose ``path`` locates the
offending value.

One concept per module; each imports only those listed before it:

* :mod:`.scalars`: YAML numbers and booleans that keep their text.
* :mod:`.paths`: how a ``ConfigError`` path names a value.
* :mod:`.quantities`: resource quantities (``"4Gi"``, ``"500m"``) and resource maps.
* :mod:`.acl`: the :class:`ACL` value object and :func:`parse_acl`.
* :mod:`.models`: the pydantic schema, constants and defaults, :func:`sort_policy`.
* :mod:`.placementrules`: the checks of a partition's placement rules.
* :mod:`.validate`: the semantic checks of YuniKorn's ``configvalidator.go``.
* :mod:`.loader`: strict YAML loading and the entry points.
"""

from __future__ import annotations

from ..si import DEFAULT_PARTITION
from .acl import ACL, parse_acl
from .loader import (
    MAX_ALIAS_NODES,
    MAX_CONFIG_CHARS,
    MAX_CONFIG_DEPTH,
    load_config_file,
    parse_config,
)
from .models import (
    APPLICATION_SORT_POLICIES,
    APPLICATION_SORT_POLICY,
    DEFAULT_CONFIG_YAML,
    NODE_SORT_POLICIES,
    QUEUE_NAME_RE,
    ROOT_QUEUE,
    ChildTemplateConfig,
    FilterConfig,
    LimitConfig,
    NodeSortingPolicyConfig,
    PartitionConfig,
    PartitionPreemptionConfig,
    PlacementRuleConfig,
    QueueConfig,
    ResourcesConfig,
    SchedulerConfig,
    UserGroupResolverConfig,
    sort_policy,
)
from .quantities import parse_quantity, parse_resource, parse_resources, parse_vcore

__all__ = [
    "ACL",
    "APPLICATION_SORT_POLICIES",
    "APPLICATION_SORT_POLICY",
    "DEFAULT_CONFIG_YAML",
    "DEFAULT_PARTITION",
    "MAX_ALIAS_NODES",
    "MAX_CONFIG_CHARS",
    "MAX_CONFIG_DEPTH",
    "NODE_SORT_POLICIES",
    "QUEUE_NAME_RE",
    "ROOT_QUEUE",
    "ChildTemplateConfig",
    "FilterConfig",
    "LimitConfig",
    "NodeSortingPolicyConfig",
    "PartitionConfig",
    "PartitionPreemptionConfig",
    "PlacementRuleConfig",
    "QueueConfig",
    "ResourcesConfig",
    "SchedulerConfig",
    "UserGroupResolverConfig",
    "load_config_file",
    "parse_acl",
    "parse_config",
    "parse_quantity",
    "parse_resource",
    "parse_resources",
    "parse_vcore",
    "sort_policy",
]
