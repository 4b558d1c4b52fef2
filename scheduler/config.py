"""The queue configuration: Apache YuniKorn's ``queues.yaml``, parsed and validated.

The seed ``004_3abbea6d8cd34e89.txt``, section "Configurations & Semantics",
defines the shape: a configuration is a list of *partitions* (a partition is a
name space), each with its own queue hierarchy below a ``root`` queue, queue
resource settings (guaranteed "capacity" and "max-capacity") and ACLs, where
capacity "is not allowed to set for root". The concrete format is the one
Apache YuniKorn reads (``pkg/common/configs`` in ``yunikorn-core``), so real
YuniKorn configuration files load unchanged:

* :func:`parse_config` / :func:`load_config_file` turn YAML text into a
  :class:`SchedulerConfig` of pydantic models whose field names are the YAML
  keys exactly as YuniKorn spells them. Unknown keys are rejected, as YuniKorn's
  strict YAML decoding does. Resource quantities are stored already converted to
  plain ints (``vcore`` in milli-cores).
* After the structural (pydantic) pass the checks of YuniKorn's
  ``configvalidator.go`` run; every failure raises
  :class:`scheduler.errors.ConfigError` whose ``path`` locates the offending
  value (``partitions[0].queues[0].queues[1].resources.max.memory``).
  Map keys that are not plain words are written ``["nvidia.com/gpu"]``.
* :func:`parse_acl` gives the :class:`ACL` value object the core uses to check
  submit and admin access.

Two rules of the seed are *not* enforced because YuniKorn dropped them: the
seed wants the same queue to sit at the same place in every partition and a
queue name to be unique in a whole hierarchy; YuniKorn validates every
partition on its own and only requires unique names among siblings (its docs:
``root.testqueue`` and ``root.parent.testqueue`` may coexist).

Where a check follows YuniKorn behaviour that the seed does not state, the
docstring of that check says so in one line starting with "YuniKorn:".

A model validated directly (``SchedulerConfig.model_validate(...)``) expects
resource values that are already plain non-negative ints; only
:func:`parse_config` parses quantity strings such as ``"4Gi"``, so a
``model_dump()`` / ``model_validate()`` round trip never converts ``vcore`` twice.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Final

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

from scheduler.errors import ConfigError

__all__ = [
    "ACL",
    "APPLICATION_SORT_POLICIES",
    "APPLICATION_SORT_POLICY",
    "DEFAULT_CONFIG_YAML",
    "DEFAULT_PARTITION",
    "NODE_SORT_POLICIES",
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
]

ROOT_QUEUE: Final = "root"
DEFAULT_PARTITION: Final = "default"
APPLICATION_SORT_POLICY: Final = "application.sort.policy"
APPLICATION_SORT_POLICIES: Final = ("fifo", "fair", "stateaware")
NODE_SORT_POLICIES: Final = ("fair", "binpacking")
VCORE: Final = "vcore"
WILDCARD: Final = "*"

DEFAULT_CONFIG_YAML: Final = """\
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: "*"
"""
"""YuniKorn's default configuration: one partition, an open root queue, and
the ``provided`` placement rule that may create the queue it names."""

# Name rules of YuniKorn 1.6+ (configvalidator.go and the queue_config docs).
_QUEUE_NAME_RE: Final = re.compile(r"[a-zA-Z0-9_:#/@-]{1,64}")
_USER_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_:#/@.-]*\$?")
_GROUP_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_:.-]*")
_RULE_NAME_RE: Final = re.compile(r"[_a-zA-Z][a-zA-Z0-9_]*")
_REGEXP_SPECIAL_RE: Final = re.compile(r"[\^$*+?()\[{}|]")
_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z0-9_-]+")

_INT64_MAX: Final = 2**63 - 1
_UINT64_MAX: Final = 2**64 - 1

# ---------------------------------------------------------------------------
# YAML loading
# ---------------------------------------------------------------------------


class _YamlInt(int):
    """An int read from YAML that remembers how it was written.

    YuniKorn decodes resource quantities and other string fields from the
    scalar's text, so ``010`` is ten there, not YAML 1.1's octal eight.
    """

    yaml_text: str


class _YamlFloat(float):
    """A float read from YAML that remembers how it was written."""

    yaml_text: str


class _DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping repeats a key (YuniKorn's strict decoder rejects that)."""


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that keeps scalar text and rejects duplicate keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: the base class reports it
                continue
            if duplicate:
                raise _DuplicateKeyError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key!r}",
                    key_node.start_mark,
                )
            seen.add(key)
        return dict(super().construct_mapping(node, deep=deep))


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    value = _YamlInt(loader.construct_yaml_int(node))
    value.yaml_text = str(node.value)
    return value


def _construct_float(loader: _Loader, node: yaml.ScalarNode) -> float:
    value = _YamlFloat(loader.construct_yaml_float(node))
    value.yaml_text = str(node.value)
    return value


def _construct_timestamp_as_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    # YuniKorn has no timestamps: "2024-01-01" is a valid queue name.
    return str(loader.construct_scalar(node))


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)


def _scalar_text(value: object) -> object:
    """A YAML scalar as the text YuniKorn's string fields would hold; others unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _YamlInt | _YamlFloat):
        return value.yaml_text
    if isinstance(value, int | float):
        return str(value)
    return value


YamlStr = Annotated[str, BeforeValidator(_scalar_text)]
"""A string field; YAML numbers and booleans are taken as their text, as YuniKorn does."""

MaxApplications = Annotated[int, Field(strict=True, ge=0, le=_UINT64_MAX)]
"""YuniKorn's ``uint64`` application counts: a YAML integer, 0 means unlimited."""

# ---------------------------------------------------------------------------
# Quantities
# ---------------------------------------------------------------------------

_QUANTITY_RE: Final = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-z]*)")
_MULTIPLIERS: Final[Mapping[str, int]] = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}


def _quantity_text(value: object) -> str:
    if isinstance(value, bool):
        raise ConfigError(f"invalid quantity {value!r}: a boolean is not a quantity")
    if isinstance(value, _YamlInt | _YamlFloat):
        return value.yaml_text
    if isinstance(value, float):
        raise ConfigError(f"invalid quantity {value!r}: fractional values are not supported")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise ConfigError(
        f"invalid quantity: expected an integer or a string, got {type(value).__name__}"
    )


def _parse(value: object, *, milli: bool) -> int:
    text = _quantity_text(value)
    match = _QUANTITY_RE.fullmatch(text.strip())
    if match is None:
        stripped = text.strip()
        if stripped.startswith("-"):
            raise ConfigError(f"invalid quantity {text!r}: negative values are not allowed")
        if "." in stripped:
            raise ConfigError(f"invalid quantity {text!r}: fractional values are not supported")
        raise ConfigError(f"invalid quantity {text!r}")
    digits, suffix = match.group(1), match.group(2)
    if suffix == "m":
        if not milli:
            raise ConfigError(f"invalid quantity {text!r}: the 'm' suffix is only valid for vcore")
        scale = 1
    elif suffix in _MULTIPLIERS:
        scale = _MULTIPLIERS[suffix] * (1000 if milli else 1)
    else:
        raise ConfigError(
            f"invalid quantity {text!r}: unknown suffix {suffix!r} "
            "(k M G T P E, Ki Mi Gi Ti Pi Ei" + (", m" if milli else "") + ")"
        )
    if len(digits) > 19 or int(digits) * scale > _INT64_MAX:
        raise ConfigError(f"invalid quantity {text!r}: overflow (more than 2^63-1)")
    return int(digits) * scale


def parse_quantity(value: str | int) -> int:
    """A resource quantity as YuniKorn's ``ParseQuantity`` reads it.

    Digits with an optional suffix: ``k M G T P E`` (powers of 1000) or
    ``Ki Mi Gi Ti Pi Ei`` (powers of 1024); surrounding blanks and blanks
    before the suffix are allowed. Signs, fractions, other suffixes (``K``
    included) and values above 2^63-1 raise :class:`ConfigError` (empty path).
    """
    return _parse(value, milli=False)


def parse_vcore(value: str | int) -> int:
    """A ``vcore`` quantity in milli-cores, as YuniKorn's ``ParseVCore``.

    The config value is in cores (``2`` -> 2000, ``1k`` -> 1000000) unless it
    carries the ``m`` suffix (``500m`` -> 500).
    YuniKorn: fractions are rejected even where they would be whole milli-cores
    (``0.5`` is an error; write ``500m``).
    """
    return _parse(value, milli=True)


def parse_resource(resource: str, value: str | int) -> int:
    """One configured value: :func:`parse_vcore` for ``vcore``, else :func:`parse_quantity`."""
    return _parse(value, milli=resource == VCORE)


def parse_resources(values: Mapping[str, str | int]) -> dict[str, int]:
    """A whole resource map; a bad value raises :class:`ConfigError` whose path is its key."""
    out: dict[str, int] = {}
    for name, raw in values.items():
        try:
            out[name] = parse_resource(name, raw)
        except ConfigError as exc:
            raise ConfigError(exc.reason, _key_path("", name)) from None
    return out


def _resource_map(value: object, info: ValidationInfo) -> object:
    """Validate a resource map; with the ``quantities`` context, parse YuniKorn quantities."""
    if not isinstance(value, Mapping):
        return value  # pydantic reports the type error
    parse = bool(info.context and info.context.get("quantities"))
    out: dict[str, int] = {}
    for key, raw in value.items():
        name = _scalar_text(key)
        if not isinstance(name, str):
            raise PydanticCustomError("resource_name", "resource names must be strings")
        if parse:
            try:
                out[name] = parse_resource(name, raw)
            except ConfigError as exc:
                raise PydanticCustomError(
                    "quantity", "{reason}", {"reason": exc.reason, "resource": name}
                ) from None
        elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= _INT64_MAX:
            out[name] = int(raw)
        else:
            raise PydanticCustomError(
                "quantity",
                "{reason}",
                {
                    "reason": f"expected a non-negative integer quantity, got {raw!r}",
                    "resource": name,
                },
            )
    return out


ResourceMap = Annotated[dict[str, int], BeforeValidator(_resource_map)]
"""``{resource type: quantity}``; ``vcore`` in milli-cores."""

# ---------------------------------------------------------------------------
# ACLs
# ---------------------------------------------------------------------------


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
    users = _acl_names(user_list, _USER_NAME_RE, ignored)
    groups = _acl_names(group_list, _GROUP_NAME_RE, ignored)
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


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


class _ConfigModel(BaseModel):
    """Base of the config models: unknown keys are errors; ``key:`` with no value is unset."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        # YuniKorn's decoder leaves a field at its zero value for ``key: null``.
        if isinstance(data, Mapping):
            return {_scalar_text(k): v for k, v in data.items() if v is not None}
        return data


class ResourcesConfig(_ConfigModel):
    """Guaranteed and maximum resources of a queue (types not listed are not limited)."""

    guaranteed: ResourceMap = Field(default_factory=dict)
    max: ResourceMap = Field(default_factory=dict)

    @property
    def is_set(self) -> bool:
        """True when a guaranteed or max value is given for at least one resource type."""
        return bool(self.guaranteed or self.max)


def _sort_policy(properties: Mapping[str, str]) -> str:
    return properties.get(APPLICATION_SORT_POLICY, "").lower() or "fifo"


class ChildTemplateConfig(_ConfigModel):
    """Settings applied to dynamic leaf queues created below a parent queue."""

    maxapplications: MaxApplications = 0
    properties: dict[YamlStr, YamlStr] = Field(default_factory=dict)
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)

    @property
    def sort_policy(self) -> str:
        """``application.sort.policy`` in lower case; ``fifo`` when not set."""
        return _sort_policy(self.properties)


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
    parent: StrictBool = False
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
        """``application.sort.policy`` in lower case; ``fifo`` when not set."""
        return _sort_policy(self.properties)

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
    create: StrictBool = False
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

    enabled: StrictBool = True
    quotapreemptionenabled: StrictBool | None = None
    """Accepted because newer YuniKorn releases know it; unset when absent."""


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

    def partition(self, name: str) -> PartitionConfig | None:
        """The partition called ``name`` (case-insensitive, as YuniKorn compares them)."""
        wanted = name.lower()
        for partition in self.partitions:
            if partition.name.lower() == wanted:
                return partition
        return None


# ---------------------------------------------------------------------------
# Parsing entry points
# ---------------------------------------------------------------------------


def parse_config(text: str) -> SchedulerConfig:
    """Parse and validate ``queues.yaml`` text; any problem raises :class:`ConfigError`.

    The result is normalised as YuniKorn does: a missing root queue is inserted,
    ``root`` is spelled in lower case and every queue with children has
    ``parent`` set, an empty or "default" partition name becomes ``default``
    and an empty node sort policy type becomes ``fair``.
    """
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(_yaml_reason(exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"the configuration must be a YAML mapping with a 'partitions' list, "
            f"got {type(data).__name__}"
        )
    try:
        config = SchedulerConfig.model_validate(data, context={"quantities": True})
    except ValidationError as exc:
        raise _config_error(exc) from None
    _validate(config)
    return config


def load_config_file(path: str | os.PathLike[str]) -> SchedulerConfig:
    """Read a ``queues.yaml`` file (UTF-8) and :func:`parse_config` it."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {os.fspath(path)!r} is not UTF-8: {exc.reason}") from None
    return parse_config(text)


def _yaml_reason(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    what = exc.problem or exc.context or "syntax error"
    kind = "duplicate key" if isinstance(exc, _DuplicateKeyError) else "YAML syntax error"
    return f"{kind}{where}: {what}"


def _key_path(prefix: str, key: str) -> str:
    if _PLAIN_KEY_RE.fullmatch(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{json.dumps(key)}]"


def _format_loc(loc: Sequence[str | int]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part != "[key]":
            path = _key_path(path, part)
    return path


def _config_error(exc: ValidationError) -> ConfigError:
    error = exc.errors(include_url=False)[0]
    loc: list[str | int] = list(error["loc"])
    ctx = error.get("ctx") or {}
    if error["type"] == "quantity" and "resource" in ctx:
        loc.append(str(ctx["resource"]))
    if error["type"] == "extra_forbidden":
        reason = f"unknown field {str(loc[-1])!r}"
    elif error["type"] == "missing":
        reason = "required field is missing"
    elif error["type"] == "quantity":
        reason = str(ctx.get("reason", error["msg"]))
    else:
        shown = repr(error.get("input"))
        if len(shown) > 60:
            shown = shown[:57] + "..."
        reason = f"{error['msg']} (got {shown})"
    return ConfigError(reason, _format_loc(loc))


# ---------------------------------------------------------------------------
# Semantic validation (YuniKorn's configvalidator)
# ---------------------------------------------------------------------------


def _validate(config: SchedulerConfig) -> None:
    """Run every semantic check, normalising the config in place on the way."""
    if not config.partitions:
        raise ConfigError("at least one partition must be defined", "partitions")
    seen: set[str] = set()
    for index, partition in enumerate(config.partitions):
        path = f"partitions[{index}]"
        _normalise_partition_name(partition)
        if partition.name.lower() in seen:
            raise ConfigError(f"duplicate partition name {partition.name!r}", f"{path}.name")
        seen.add(partition.name.lower())
        _PartitionChecker(partition, path).run()


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

    def __init__(self, partition: PartitionConfig, path: str) -> None:
        self.partition = partition
        self.path = path
        self.paths: dict[int, str] = {}

    def run(self) -> None:
        self.check_structure()
        root = self.partition.root
        self.check_queues(root)
        self.check_resources(root, None)
        self.check_placement_rules()
        self.check_limit_list(self.partition.limits, f"{self.path}.limits", root)
        self.check_node_sort_policy()
        self.check_max_applications(root)
        self.check_limit_hierarchy(root, {}, {}, {}, {})

    def qpath(self, queue: QueueConfig) -> str:
        return self.paths[id(queue)]

    # -- structure ---------------------------------------------------------

    def check_structure(self) -> None:
        """Exactly one top-level queue, ``root`` (a parent), which sets no resources.

        YuniKorn: when the top level is not a single ``root`` queue (several
        queues, one other queue, or an empty list) a root queue is inserted
        above them, so YuniKorn's own example files load; ``root`` matches in
        any case and is stored as ``root``. (YuniKorn also rejects an explicitly
        empty ``max: {}`` on root; here only a listed resource type is an error.)
        """
        part, path = self.partition, self.path
        queues = part.queues
        if len(queues) == 1 and queues[0].name.lower() == ROOT_QUEUE:
            root = queues[0]
            root.name = ROOT_QUEUE
            self.paths[id(root)] = f"{path}.queues[0]"
            children = f"{path}.queues[0].queues"
            if root.resources.is_set:
                where = "guaranteed" if root.resources.guaranteed else "max"
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
        self._assign_paths(root, children)

    def _assign_paths(self, queue: QueueConfig, children: str) -> None:
        for index, child in enumerate(queue.queues):
            child_path = f"{children}[{index}]"
            self.paths[id(child)] = child_path
            self._assign_paths(child, f"{child_path}.queues")

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
        self.check_limit_list(queue.limits, f"{path}.limits", queue)
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
        if not _QUEUE_NAME_RE.fullmatch(name):
            raise ConfigError(
                f"invalid queue name {name!r}: use 1 to 64 characters from a-z A-Z 0-9 _ - : # / @",
                path,
            )

    @staticmethod
    def check_sort_policy(properties: Mapping[str, str], path: str) -> None:
        """``application.sort.policy`` is fifo, fair or stateaware in any case (empty is fifo)."""
        value = properties.get(APPLICATION_SORT_POLICY, "")
        if value.lower() not in ("", *APPLICATION_SORT_POLICIES):
            raise ConfigError(
                f"unknown application sort policy {value!r} "
                f"(known: {', '.join(APPLICATION_SORT_POLICIES)})",
                _key_path(path, APPLICATION_SORT_POLICY),
            )

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
                _key_path(f"{path}.resources.guaranteed", over),
            )
        if parent_max is not None:
            over = _fits(parent_max, maximum)
            if over is not None:
                raise ConfigError(
                    f"max {over} {maximum[over]} is larger than the max {parent_max[over]} "
                    "set on a parent queue",
                    _key_path(f"{path}.resources.max", over),
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
                _key_path(f"{path}.resources.guaranteed", over),
            )
        over = _fits(effective_max, children_sum)
        if over is not None:
            where = (
                _key_path(f"{path}.resources.max", over) if over in maximum else f"{path}.queues"
            )
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
        """User/group limits of one queue (or of the partition, checked against root).

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
            self._check_limit_names(limit.users, f"{lpath}.users", users, _USER_NAME_RE, "user")
            self._check_limit_names(
                limit.groups, f"{lpath}.groups", groups, _GROUP_NAME_RE, "group"
            )
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
                        _key_path(f"{lpath}.maxresources", over),
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

        YuniKorn: resources compare per type where both set one; an ancestor's
        non-zero maxapplications requires a non-zero, not larger, value below.
        """
        path = self.qpath(queue)
        own_user_res, own_group_res = dict(user_res), dict(group_res)
        own_user_apps, own_group_apps = dict(user_apps), dict(group_apps)
        for index, limit in enumerate(queue.limits):
            lpath = f"{path}.limits[{index}]"
            for names, kind, res_map, apps_map, parent_res, parent_apps in (
                (limit.users, "user", own_user_res, own_user_apps, user_res, user_apps),
                (limit.groups, "group", own_group_res, own_group_apps, group_res, group_apps),
            ):
                for name in names:
                    above = parent_res.get(name)
                    if above is not None:
                        over = _fits(above, limit.maxresources)
                        if over is not None:
                            raise ConfigError(
                                f"{kind} {name!r} maxresources {over} "
                                f"{limit.maxresources[over]} is larger than "
                                f"{above[over]} set on a parent queue",
                                _key_path(f"{lpath}.maxresources", over),
                            )
                    res_map[name] = _min_permissive(limit.maxresources, above)
                    above_apps = parent_apps.get(name)
                    if above_apps:
                        if limit.maxapplications == 0 or limit.maxapplications > above_apps:
                            raise ConfigError(
                                f"{kind} {name!r} maxapplications {limit.maxapplications} "
                                f"must be between 1 and {above_apps} set on a parent queue",
                                f"{lpath}.maxapplications",
                            )
                        apps_map[name] = min(limit.maxapplications, above_apps)
                    else:
                        apps_map[name] = limit.maxapplications
        for child in queue.queues:
            self.check_limit_hierarchy(
                child, own_user_res, own_group_res, own_user_apps, own_group_apps
            )

    # -- placement rules -----------------------------------------------------

    def check_placement_rules(self) -> None:
        """Rule syntax, then each rule chain's fixed queue path against the hierarchy.

        YuniKorn: a chain whose fixed part names a configured queue must end at
        a leaf (or at a parent when a dynamic rule follows); a missing queue
        needs ``create: true`` and can never be created below a leaf.
        """
        for index, rule in enumerate(self.partition.placementrules):
            self._check_rule_syntax(rule, f"{self.path}.placementrules[{index}]")
        for index, rule in enumerate(self.partition.placementrules):
            self._check_rule_target(index, rule)

    def _check_rule_syntax(self, rule: PlacementRuleConfig, path: str) -> None:
        if not _RULE_NAME_RE.fullmatch(rule.name):
            raise ConfigError(
                f"invalid placement rule name {rule.name!r}: it must be an identifier",
                f"{path}.name",
            )
        if rule.parent is not None:
            self._check_rule_syntax(rule.parent, f"{path}.parent")
        kind = rule.filter.type
        if kind and kind.lower() not in ("allow", "deny"):
            raise ConfigError(
                f"invalid filter type {kind!r}: use allow or deny (empty means allow)",
                f"{path}.filter.type",
            )
        for key, names, pattern in (
            ("users", rule.filter.users, _USER_NAME_RE),
            ("groups", rule.filter.groups, _GROUP_NAME_RE),
        ):
            if len(names) == 1 and not pattern.fullmatch(names[0]) and not _is_regexp(names[0]):
                raise ConfigError(
                    f"filter {key} entry {names[0]!r} is neither a valid name nor a "
                    "regular expression",
                    f"{path}.filter.{key}[0]",
                )

    def _check_rule_target(self, index: int, rule: PlacementRuleConfig) -> None:
        chain: list[PlacementRuleConfig] = []
        link: PlacementRuleConfig | None = rule
        while link is not None:
            chain.append(link)
            link = link.parent
        chain.reverse()
        path = f"{self.path}.placementrules[{index}]"
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
        problem = self._placement_problem(parts, rule.create, dynamic, self.partition.queues, None)
        if problem:
            raise ConfigError(f"placement rule #{index} ({described}) {problem}", path)

    def _placement_problem(
        self,
        parts: list[str],
        create: bool,
        dynamic: bool,
        queues: list[QueueConfig],
        parent: QueueConfig | None,
    ) -> str:
        target = ".".join(parts)
        if not queues and parent is not None:
            if not parent.is_parent:
                return f"needs queues below the leaf queue {parent.name!r}"
            return "" if create else f"references the missing queue {target!r} and create is false"
        match = next((queue for queue in queues if queue.name.lower() == parts[0]), None)
        if match is None:
            return "" if create else f"references the missing queue {target!r} and create is false"
        if len(parts) == 1:
            if dynamic and not match.is_parent:
                return f"adds dynamic queues below the leaf queue {match.name!r}"
            if not dynamic and match.is_parent:
                return f"places applications in the parent queue {match.name!r}, not a leaf"
            return ""
        return self._placement_problem(parts[1:], create, dynamic, match.queues, match)

    # -- node sorting --------------------------------------------------------

    def check_node_sort_policy(self) -> None:
        """Type ``fair`` or ``binpacking`` (exact case; empty is fair); weights >= 0."""
        policy, path = self.partition.nodesortpolicy, f"{self.path}.nodesortpolicy"
        if policy.type == "":
            policy.type = "fair"
        if policy.type not in NODE_SORT_POLICIES:
            raise ConfigError(
                f"unknown node sort policy {policy.type!r} (known: fair, binpacking)",
                f"{path}.type",
            )
        for name, weight in policy.resourceweights.items():
            if weight < 0:
                raise ConfigError(
                    f"negative resource weight {weight} for {name!r}",
                    _key_path(f"{path}.resourceweights", name),
                )


def _is_regexp(text: str) -> bool:
    if not _REGEXP_SPECIAL_RE.search(text):
        return False
    try:
        re.compile(text)
    except re.error:
        return False
    return True
