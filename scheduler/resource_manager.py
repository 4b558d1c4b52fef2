"""A registered resource manager: its lifecycle, callback, dialect, configuration and partitions.

``scheduler.api`` routes every request to the RM that sent it; this module holds
what belongs to one RM alone: which partitions it owns and which of them holds a
node, which SI it speaks (decided once per registration, ``scheduler.dialect``),
how a configuration text becomes its partitions, and how it ends.
"""

from __future__ import annotations

import functools
import logging
from typing import ClassVar

import statemachines
from statemachines import Lifecycle

from . import si
from .callback import (
    REQUIRED_METHODS,
    ResourceManagerCallback,
    predicates_of,
    preemption_predicates_of,
)
from .config import DEFAULT_CONFIG_YAML, PartitionConfig, SchedulerConfig, parse_config
from .context import CoreContext
from .dialect import Dialect, TodayCallback, TodayRequests
from .partition import Partition

log = logging.getLogger("yunikorn_fsm")

NODE_PARTITION_ATTRIBUTE = "si/node-partition"
"""The node attribute that names the partition a new node joins (``default`` without it)."""


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> SchedulerConfig:
    """A configuration parsed once per distinct text.

    RMs re-send the same ``queues.yaml`` on every registration and reload, and
    parsing dominates those calls. The core only reads a parsed configuration
    (queues copy what they need), so one parsed object can serve every call;
    an invalid text raises ``ConfigError`` each time (exceptions are not cached).
    """
    return parse_config(text)


def configuration(text: str) -> SchedulerConfig:
    """The configuration ``text`` gives; YuniKorn's default when it has no partitions."""
    config = _parsed(text)
    if not config.partitions:
        config = _parsed(DEFAULT_CONFIG_YAML)
    for warning in config.warnings:
        log.warning("configuration: %s", warning)
    return config


def check_callback(callback: object) -> None:
    """Refuse, at registration, a callback the core could not deliver to later."""
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(callback, m, None))]
    if missing:
        raise TypeError(
            f"the callback {type(callback).__name__} lacks {', '.join(missing)}: a "
            f"ResourceManagerCallback implements {', '.join(REQUIRED_METHODS)} "
            "(predicates and preemption_predicates are optional)")
    for optional in ("predicates", "preemption_predicates"):
        method = getattr(callback, optional, None)
        if method is not None and not callable(method):
            raise TypeError(
                f"the callback {type(callback).__name__}'s {optional} is not callable")


class ResourceManager:
    """A registered RM: its callback, configuration and partitions."""

    LIFECYCLE: ClassVar[Lifecycle] = statemachines.RM
    __slots__ = (
        "callback", "config_text", "dialect", "id", "partitions", "paused_at", "policy_group",
        "state", "today",
    )

    def __init__(
        self, rm_id: str, callback: ResourceManagerCallback, policy_group: str, config_text: str
    ) -> None:
        self.state = self.LIFECYCLE.initial
        self.id = rm_id
        self.callback = callback
        self.policy_group = policy_group
        self.config_text = config_text
        self.partitions: dict[str, Partition] = {}
        self.paused_at: float | None = None
        self.dialect: Dialect | None = None
        """The SI this RM speaks, once a request said (``scheduler.dialect``)."""
        self.today: TodayRequests | None = None
        """Today's requests as the core's operations, for an RM that speaks today's SI."""

    @property
    def event_id(self) -> str:
        return self.id

    def partition(self, name: str) -> Partition | None:
        """The RM's partition by name; an empty name means ``default``."""
        return self.partitions.get(name or si.DEFAULT_PARTITION)

    def node_partition(self, node_id: str) -> Partition | None:
        """The partition that holds the node, if any does."""
        for partition in self.partitions.values():
            if node_id in partition.nodes:
                return partition
        return None

    def node_route(self, info: si.NodeInfo) -> Partition | None:
        """The partition a node action goes to: the node's own, else the one its attribute names."""
        name = info.attributes.get(NODE_PARTITION_ATTRIBUTE) or si.DEFAULT_PARTITION
        return self.node_partition(info.node_id) or self.partitions.get(name)

    def add_partition(self, core: CoreContext, config: PartitionConfig) -> Partition:
        """A new partition of this RM, asking the RM's own predicates (if it answers any)."""
        partition = Partition(core, self.id, config)
        partition.predicates = predicates_of(self.callback)
        partition.preemption_predicates = preemption_predicates_of(self.callback)
        self.partitions[config.name] = partition
        return partition

    def reap(self) -> None:
        """Stop and forget every draining partition that has nothing left."""
        for name, partition in list(self.partitions.items()):
            if partition.state == "Draining" and partition.is_empty():
                partition.stop()
                del self.partitions[name]

    def drop(self, core: CoreContext, trigger: str = "shutdown") -> None:
        """Everything the RM owned goes; the RM ends by ``trigger`` unless it has already."""
        for partition in self.partitions.values():
            partition.stop()
        self.partitions.clear()
        if self.state != "Stopped":
            core.fire(self, trigger, self.id)

    def speak(self, core: CoreContext, dialect: Dialect) -> bool:
        """Whether the RM speaks ``dialect``, deciding it when nothing has yet."""
        if self.dialect is None:
            self.dialect = dialect
            if dialect is Dialect.TODAY:
                self.callback = TodayCallback(self.callback)
                ports = _Ports(core, self)
                self.today = TodayRequests(ports.partition, ports.reject, ports.note,
                                           core.new_uuid)
        return self.dialect is dialect

    def refusal(self, dialect: Dialect, fields: str) -> str:
        """Why a request of ``dialect`` is refused for this RM (it speaks the other)."""
        assert self.dialect is not None
        return (f"resource manager {self.id} speaks {self.dialect.label}, and this request uses "
                f"{dialect.label}{f' ({fields})' if fields else ''}: one registration speaks "
                "one dialect; register again to change")


class _Ports:
    """What the translation of today's SI may do for one RM (bound methods: a scheduler's
    state is copied by pickling, which closures would not survive)."""

    __slots__ = ("core", "rm")

    def __init__(self, core: CoreContext, rm: ResourceManager) -> None:
        self.core = core
        self.rm = rm

    def partition(self, name: str) -> Partition | None:
        return self.rm.partition(name)

    def reject(self, app_id: str, key: str, why: str) -> None:
        self.core.reject_ask(self.rm.id, app_id, key, why)

    def note(self, kind: si.EventRecordType, object_id: str, text: str, reference: str) -> None:
        self.core.event(self.rm.id, kind, object_id, text, reference_id=reference)
