"""The checker's own reading of a queue configuration: quotas, ACLs, placement, admission.

Checks that need a rule of the configuration (a queue's ``max`` on the path,
who may submit where, which queue an application lands in, whether a gang is
admitted) read it here, from the parsed ``queues.yaml`` alone, never through
the core's helpers: a bug in the core's ACL walk, placement rules or gang
admission must not be invisible to the check of that rule. Parsing itself
uses ``scheduler.config`` (the public model of the file format, tested on its
own); everything after parsing is restated here.

Semantics restated (YuniKorn's, as ``docs/design-notes.md`` records them):
properties are inherited by configured child queues, never by the queues a
placement rule creates (a created leaf takes its parent's childtemplate); an
unknown or differently cased sort policy is fifo; submit access is granted by
the ``submitacl`` or ``adminacl`` of the leaf or any ancestor; a queue ``max``
limits only the types it names; placement rules are tried in order, a rule
whose queue is draining or refuses the user fails, and ``root.default`` takes
what no rule places; queue names are case-insensitive (every path is read in
lower case, configured or asked for); an application entering an unmanaged
leaf sets that leaf's max, guarantee and maxapplications from its namespace
tags when they read (:func:`namespace_quota`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from scheduler.config import (
    DEFAULT_CONFIG_YAML,
    PartitionConfig,
    PlacementRuleConfig,
    QueueConfig,
    parse_config,
)

ROOT = "root"


SORT_POLICY = "application.sort.policy"


POLICIES = ("fifo", "fair", "stateaware")


NAME = re.compile(r"[a-zA-Z0-9_:#/@-]{1,64}")


def lower(name: str) -> str:
    """YuniKorn's case-insensitive queue names: ASCII capitals read as small letters
    (a letter outside ASCII stays, so a name invalid as written stays invalid)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in name)


@dataclass(frozen=True)
class Template:
    """A parent's ``childtemplate``: what a leaf created below it gets."""

    max: Mapping[str, int] | None
    guaranteed: Mapping[str, int] | None
    max_applications: int
    properties: Mapping[str, str]


@dataclass(frozen=True)
class Created:
    """What a queue a placement rule created was made from, read from the configuration of
    the moment it was created: the childtemplate applied to it (a leaf's only: the one its
    parent hands down), and the one it hands down itself (a parent's only: its parent's,
    inherited). Nothing else: a created queue takes no properties from its parent
    (YuniKorn, YUNIKORN-809). A reload leaves created queues as they were, so this, not
    today's configuration, is what they must show."""

    template: Template | None
    hands_down: Template | None = None
    leaf: bool = True
    tagged: tuple[Mapping[str, int] | None, Mapping[str, int] | None] | None = None
    """Max and guarantee the last application whose namespace tags gave either set (both
    replace the template's), None while none did."""
    tagged_apps: int = 0
    """maxapplications the last application whose tags gave one set (0: the template's)."""

    def entered(self, quota: NamespaceQuota) -> Created:
        """The record once an application with these namespace tags entered the leaf."""
        out = self
        if quota.max_applications:
            out = replace(out, tagged_apps=quota.max_applications)
        if quota.max is not None or quota.guaranteed is not None:
            out = replace(out, tagged=(quota.max, quota.guaranteed))
        return out

    @property
    def properties(self) -> dict[str, str]:
        """What the queue has: its template's properties, or none."""
        t = self.template
        return dict(t.properties) if t is not None else {}


@dataclass(frozen=True)
class NamespaceQuota:
    """The namespace tags of one application as YuniKorn reads them (None, 0: unset)."""

    max: Mapping[str, int] | None
    guaranteed: Mapping[str, int] | None
    max_applications: int

    @property
    def sets_resources(self) -> bool:
        """Either resource tag read: the leaf's max and guarantee are both replaced."""
        return self.max is not None or self.guaranteed is not None


NS_TAGS = ("namespace.resourcequota", "namespace.resourceguaranteed",
           "namespace.resourcemaxapps")
"""The SI's ``AppTagNamespaceResource{Quota,Guaranteed,MaxApps}`` (apache/yunikorn-scheduler-
interface 2858f4d lib/go/common/constants.go)."""


def namespace_quota(tags: Mapping[str, str]) -> NamespaceQuota:
    """YuniKorn's reading (apache/yunikorn-core be3bb48 pkg/scheduler/objects/application.go
    ``GetTag``, ``getResourceFromTags``, ``getUint64Tag``): a tag's name in any case, the
    first the shim sent; a resource is ``si.Resource`` JSON decoded as Go does, kept only
    with a quantity above zero and none below; the count is Go's ``ParseUint`` base 10."""
    def value(name: str) -> str:
        for key in tags:
            if key.lower() == name:
                return tags[key]
        return ""

    quota, guaranteed, apps = (value(n) for n in NS_TAGS)
    count = int(apps) if re.fullmatch(r"[0-9]+", apps) else 0
    return NamespaceQuota(_si_resource(quota), _si_resource(guaranteed),
                          count if count < 2 ** 64 else 0)


class _NotGo(ValueError):
    """JSON Go's ``encoding/json`` would refuse for an ``si.Resource``."""


def _si_resource(text: str) -> Mapping[str, int] | None:
    def strict(token: str) -> int:
        raise _NotGo(token)

    try:
        doc = json.loads(text, object_pairs_hook=lambda pairs: ("obj", pairs),
                         parse_float=strict, parse_constant=strict) if text else None
        found: dict[str, int] = {}
        if doc is not None:
            for key, val in _pairs(doc):
                if key.lower() == "resources":
                    found = {} if val is None else {**found, **{
                        name: _go_quantity(q) for name, q in _pairs(val)}}
    except (ValueError, RecursionError):
        return None
    values = list(found.values())
    if min(values, default=0) < 0 or max(values, default=0) <= 0:
        return None
    return found


def _pairs(doc: object) -> list[tuple[str, object]]:
    if not (isinstance(doc, tuple) and doc[0] == "obj"):
        raise _NotGo("an object is needed")
    pairs: list[tuple[str, object]] = doc[1]
    return pairs


def _go_quantity(doc: object) -> int:
    """``{"value": n}``; a null quantity is refused (YuniKorn would panic on it)."""
    got = 0
    for key, val in _pairs(doc):
        if key.lower() == "value" and val is not None:
            if type(val) is not int or not -(2 ** 63) <= val < 2 ** 63:
                raise _NotGo("value")
            got = val
    return got


def template_from(own: Template | None, parent: Template | None) -> Template | None:
    """YuniKorn (YUNIKORN-193, YUNIKORN-814): a parent queue's template is its own
    childtemplate when that sets something, else its parent's; one that sets nothing (no
    maxapplications, and no max, guaranteed or property entry) is no template."""
    if own is not None and (own.max_applications or own.max or own.guaranteed or any(
            k and v for k, v in own.properties.items())):
        return own
    return parent


def handed_down(part: PartitionModel, made: Mapping[str, Created], path: str
                ) -> Template | None:
    """The template the existing parent ``path`` applies to a leaf created below it (the
    parents created in between inherit it): the nearest queue from ``path`` upward that
    today's configuration has gives its own, else the nearest the shim holds a creation
    record of gives the one it took then (a created queue without a record has what its
    parent has)."""
    while True:
        configured = part.queues.get(path)
        if configured is not None:
            return configured.template
        record = made.get(path)
        if record is not None:
            return record.hands_down
        if "." not in path:
            return None
        path = path.rsplit(".", 1)[0]


def created_record(part: PartitionModel, path: str, leaf: bool,
                   made: Mapping[str, Created] | None = None) -> Created:
    """The record of queue ``path`` created now under ``part`` (``made``: the records of the
    created queues that exist, its parent's included when that was created too)."""
    template = handed_down(part, made or {}, path.rsplit(".", 1)[0])
    return Created(template, None, True) if leaf else Created(None, template, False)


def created_queue(path: str, record: Created) -> QueueModel:
    """A created queue read like a configured one: a leaf has its template's quotas and
    properties as its own (nothing inherited, YUNIKORN-809), a parent has nothing."""
    t = record.template
    props = dict(t.properties) if t is not None else {}
    mx, guaranteed = record.tagged if record.tagged is not None else (
        t.max if t else None, t.guaranteed if t else None)
    apps = record.tagged_apps or (t.max_applications if t else 0)
    return QueueModel(path, record.leaf, mx, guaranteed, apps, props, None, None,
                      record.hands_down, own=props, created=True)


def queue_at(part: PartitionModel, made: Mapping[str, Created], path: str
             ) -> QueueModel | None:
    """The queue at ``path``: configured, else created (from the shim's record of its
    creation), else None (one the configuration dropped: draining)."""
    configured = part.queues.get(path)
    if configured is not None:
        return configured
    record = made.get(path)
    return created_queue(path, record) if record is not None else None


def levels(part: PartitionModel, made: Mapping[str, Created], path: str
           ) -> list[QueueModel | None]:
    """:func:`queue_at` for ``path`` and each ancestor, leaf first."""
    return [queue_at(part, made, p) for p in path_prefixes(path)]


@dataclass(frozen=True)
class LimitModel:
    """One user's or group's limit on one queue: only the types named are capped."""

    max_resources: Mapping[str, int]
    max_applications: int


@dataclass(frozen=True)
class QueueModel:
    """One configured queue as the checker reads it."""

    path: str
    leaf: bool
    max: Mapping[str, int] | None
    guaranteed: Mapping[str, int] | None
    max_applications: int
    properties: Mapping[str, str]
    """Effective properties: the queue's own over its parent's (inherited)."""
    submitacl: str | None
    adminacl: str | None
    template: Template | None
    """The template a leaf created below it gets: its own childtemplate, else its parent's."""
    users: Mapping[str, LimitModel] = field(default_factory=dict)
    """User limits by name (``*`` included), the first entry naming a user winning."""
    groups: Mapping[str, LimitModel] = field(default_factory=dict)
    """Group limits by name, in configuration order."""
    own: Mapping[str, str] = field(default_factory=dict)
    """The queue's own properties (``priority.offset`` and ``priority.policy`` are not
    inherited)."""
    created: bool = False
    """Made by a placement rule (:func:`created_queue`), not configured."""

    @property
    def sort_policy(self) -> str:
        return policy_of(self.properties)


FORCE_CREATE_TAG = "yunikorn.apache.org/force-create"


def force_created(tags: Mapping[str, str]) -> bool:
    """A recovered application with running pods, by the shim's tag (YuniKorn
    ``IsAppCreationForced``): the tag's name in any case, a value Go's ``ParseBool`` reads
    as true. The gang admission rules are not applied to it: its pods already run."""
    for name, value in tags.items():
        if name.casefold() == FORCE_CREATE_TAG:
            return value in {"1", "t", "T", "true", "TRUE", "True"}
    return False


def created_at(tags: Mapping[str, str]) -> int | None:
    """The Unix seconds of the ``creationTime`` tag (exact name), as Go's
    ``strconv.ParseInt(v, 10, 64)`` reads them: an optional sign and decimal digits
    within int64; anything else is no time (YuniKorn ``NewAllocationFromSI`` then takes
    the time it reads the pod)."""
    value = tags.get("creationTime", "")
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    n = int(value)
    return n if -(1 << 63) <= n <= (1 << 63) - 1 else None


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
         "h": 3600.0}


def positive_duration(text: str | None, default: float) -> float:
    """A property that is a Go duration, in seconds; missing, bad or not positive is
    ``default`` (YuniKorn's ``convertDelay``)."""
    body = (text or "").strip()
    sign = -1.0 if body.startswith("-") else 1.0
    body = body.lstrip("+-")
    pos, seconds = 0, 0.0
    while pos < len(body):
        match = _DURATION.match(body, pos)
        if match is None:
            return default
        seconds += float(match.group(1)) * _UNIT[match.group(2)]
        pos = match.end()
    seconds *= sign
    return seconds if body and seconds > 0 else default


def policy_of(properties: Mapping[str, str]) -> str:
    """YuniKorn: the exact value when it names a policy (case counts), else fifo."""
    value = properties.get(SORT_POLICY, "")
    return value if value in POLICIES else "fifo"


@dataclass(frozen=True)
class PartitionModel:
    """A configured partition: its queues by path and its placement rules."""

    name: str
    queues: Mapping[str, QueueModel]
    rules: Sequence[PlacementRuleConfig]
    preemption: bool = True
    """``preemption.enabled``: on unless the configuration says ``false``."""
    node_policy: str = "fair"
    """``nodesortpolicy.type``: ``fair`` or ``binpacking``."""
    node_weights: Mapping[str, float] = field(default_factory=dict)
    """``nodesortpolicy.resourceweights`` as written (empty: the defaults)."""
    quota_preemption: bool = False
    """``preemption.quotapreemptionenabled``: off unless the configuration says ``true``."""
    made: Mapping[str, Created] = field(default_factory=dict, compare=False)
    """The queues a placement rule created, as the shim read them when each was created
    (filled in by the checks that have the shim's record; empty otherwise)."""

    def leaves(self) -> list[str]:
        return [p for p, q in self.queues.items() if q.leaf]

    def parents(self) -> list[str]:
        return [p for p, q in self.queues.items() if not q.leaf]

    def chain(self, path: str) -> list[QueueModel]:
        """The configured queues from ``path`` up to root (missing levels skipped)."""
        return [q for p in path_prefixes(path) if (q := self.queues.get(p)) is not None]


@dataclass(frozen=True)
class ConfigModel:
    """A whole configuration; ``partitions`` keyed by name."""

    text: str
    partitions: Mapping[str, PartitionModel] = field(default_factory=dict)

    def partition(self, name: str) -> PartitionModel | None:
        return self.partitions.get(name or "default")


@lru_cache(maxsize=512)
def read(text: str) -> ConfigModel:
    """The checker's reading of a configuration text (cached: configs repeat)."""
    parsed = parse_config(text)
    return ConfigModel(text, {p.name: _partition(p) for p in parsed.partitions})


def read_registered(text: str) -> ConfigModel:
    """What registering (or reloading) ``text`` configures: the text's partitions, or
    YuniKorn's default configuration when it has none (an empty file, for one)."""
    config = read(text)
    if config.partitions:
        return config
    return replace(read(DEFAULT_CONFIG_YAML), text=text)


def _partition(p: PartitionConfig) -> PartitionModel:
    queues: dict[str, QueueModel] = {}

    def walk(cfg: QueueConfig, parent: QueueModel | None) -> None:
        name = lower(cfg.name)
        path = name if parent is None else f"{parent.path}.{name}"
        props = {**(parent.properties if parent is not None else {}), **cfg.properties}
        tpl = cfg.childtemplate
        own = None if tpl is None else Template(
            dict(tpl.resources.max) or None, dict(tpl.resources.guaranteed) or None,
            tpl.maxapplications, dict(tpl.properties))
        template = template_from(own, parent.template if parent is not None else None)
        limits = _limits(cfg)
        model = QueueModel(
            path=path, leaf=not cfg.queues and not cfg.parent,
            max=dict(cfg.resources.max) or None,
            guaranteed=dict(cfg.resources.guaranteed) or None,
            max_applications=cfg.maxapplications, properties=props,
            submitacl=cfg.submitacl, adminacl=cfg.adminacl, template=template,
            own=dict(cfg.properties), users=limits["users"], groups=limits["groups"])
        queues[path] = model
        for child in cfg.queues:
            walk(child, model)

    walk(p.queues[0], None)
    return PartitionModel(p.name, queues, list(p.placementrules),
                          bool(p.preemption.enabled), p.nodesortpolicy.type or "fair",
                          dict(p.nodesortpolicy.resourceweights),
                          quota_preemption=p.preemption.quotapreemptionenabled is True)


def path_prefixes(path: str) -> list[str]:
    """``root.a.b`` -> ``root.a.b``, ``root.a``, ``root``: a path and its ancestors, leaf first."""
    parts = path.split(".")
    return [".".join(parts[:d]) for d in range(len(parts), 0, -1)]


def _limits(cfg: QueueConfig) -> dict[str, dict[str, LimitModel]]:
    users: dict[str, LimitModel] = {}
    groups: dict[str, LimitModel] = {}
    for entry in cfg.limits:
        limit = LimitModel(dict(entry.maxresources), entry.maxapplications)
        for name in entry.users:
            users.setdefault(name, limit)
        for name in entry.groups:
            groups.setdefault(name, limit)
    return {"users": users, "groups": groups}


# ---------------------------------------------------------------- ACLs
