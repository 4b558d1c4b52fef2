"""The queue tree: built from the configuration, reloaded, drained and cleaned up.

``004`` "Configurations & Semantics" gives the hierarchy; ``003`` "Update and
Remove partition" the reload: queues no longer configured drain (no new
applications) and the periodic cleanup removes them once empty (YuniKorn's
partition manager, every :data:`CLEAN_INTERVAL` seconds); a queue configured
again while draining is active again. Queues a placement rule creates are
unmanaged: configuration updates leave them alone and they go once empty. Queues
are kept under their lower-case name (YuniKorn: names are case-insensitive),
whatever case the configuration writes them in.
"""

from __future__ import annotations

from .. import policies, preemption, priority, si, ugm
from ..config import ChildTemplateConfig, PartitionConfig, QueueConfig, parse_acl, sort_policy
from ..errors import ConfigError
from ..objects import Queue
from ..placement import fold
from . import ledger
from .state import PartitionState


def apply_config(p: PartitionState, config: PartitionConfig, initial: bool = False) -> None:
    """Create, update and drain queues to match ``config`` (hot reload).

    Quota and policy changes apply from the next scheduling cycle.
    """
    policy = config.nodesortpolicy
    p.node_order.set_policy(policy.type or "fair", policy.resourceweights or None)
    p.placement_rules = list(config.placementrules)
    # ``preemption.quotapreemptionenabled`` is read by ``quota_preemption.reloaded``.
    p.preemption_enabled = config.preemption.enabled
    seen: set[str] = set()
    p.configured_leaf = {}
    _apply_queue(p, config.queues[0], None, seen)
    priority.rebuild(p.root)
    if not initial:
        _drain_unconfigured(p, seen)
    # Guarantees, policies and priorities may all have changed: every order is rebuilt.
    policies.forget(p.queues.values())
    p.limited = any(q.limits is not None for q in p.queues.values())


CLEAN_INTERVAL = 10.0
"""Seconds between two runs of the queue cleanup (apache/yunikorn-core be3bb48
pkg/scheduler/partition_manager.go ``DefaultCleanRootInterval``)."""


def _drain_unconfigured(p: PartitionState, seen: set[str]) -> None:
    """Queues no longer configured drain (and lose their limits), empty ones included: the
    periodic cleanup removes them (apache/yunikorn-core be3bb48
    pkg/scheduler/objects/queue.go ``MarkQueueForRemoval``, partition_manager.go
    ``cleanQueues``), so a shim sees a removed queue ``Draining`` until it goes."""
    for path in [path for path in p.queues if path not in seen]:
        queue = p.queues[path]
        if queue.managed:
            queue.limits = None  # YuniKorn: a reload clears the limits it no longer sets
        if queue.state == "Active" and queue.managed:
            p.core.fire(queue, "remove", p.rm_id)
    cleanup(p)
    _settle_leaves(p)


def _settle_leaves(p: PartitionState) -> None:
    """A parent whose children all went becomes the leaf the configuration says."""
    for path, leaf in p.configured_leaf.items():
        q = p.queues.get(path)
        if q is not None and q.is_leaf != leaf and not q.children and not q.apps:
            q.is_leaf = leaf


def check_update(p: PartitionState, config: PartitionConfig) -> None:
    """Refuse, before anything changes, an update the running state can not take.

    A leaf queue that holds applications can not become a parent: its
    applications would sit in a parent queue, which is never scheduled.
    """
    def walk(cfg: QueueConfig, prefix: str) -> None:
        name = fold(cfg.name)
        path = f"{prefix}.{name}" if prefix else name
        queue = p.queues.get(path)
        if queue is not None and queue.is_leaf and queue.apps and (cfg.queues or cfg.parent):
            raise ConfigError(
                f"queue {path} holds {len(queue.apps)} application(s) and can not become "
                "a parent queue", f"partitions[{p.name}]")
        for child in cfg.queues:
            walk(child, path)

    walk(config.queues[0], "")


def _apply_queue(
    p: PartitionState, cfg: QueueConfig, parent: Queue | None, seen: set[str]
) -> None:
    name = fold(cfg.name)
    path = name if parent is None else f"{parent.path}.{name}"
    is_leaf = not cfg.queues and not cfg.parent
    queue = p.queues.get(path)
    if queue is None:
        queue = Queue(name, parent, is_leaf)
        p.queues[path] = queue
        if parent is not None:
            parent.children[name] = queue
    elif queue.state == "Draining":
        p.core.fire(queue, "start", p.rm_id)
    queue.managed = True
    if queue.is_leaf != is_leaf and not queue.apps and not queue.children:
        queue.is_leaf = is_leaf
    p.configured_leaf[path] = is_leaf
    seen.add(path)
    queue.max = dict(cfg.resources.max) if cfg.resources.max else None
    queue.guaranteed = dict(cfg.resources.guaranteed) if cfg.resources.guaranteed else None
    queue.max_applications = cfg.maxapplications
    queue.limits = ugm.QueueLimits.from_config(cfg.limits)
    # YuniKorn: properties are inherited by child queues unless overridden.
    inherited = dict(parent.properties) if parent is not None else {}
    queue.properties = {**inherited, **cfg.properties}
    queue.sort_policy = sort_policy(queue.properties)
    priority.configure(queue, cfg.properties)
    preemption.configure(queue, cfg.properties)
    # YuniKorn: a parent's own childtemplate, else the one it inherits (recomputed on every
    # apply: a configured queue follows today's configuration, see design notes).
    queue.child_template = effective_template(cfg.childtemplate, parent)
    queue.submitacl = parse_acl(cfg.submitacl) if cfg.submitacl is not None else None
    queue.adminacl = parse_acl(cfg.adminacl) if cfg.adminacl is not None else None
    ledger.refresh_quota_flag(queue, "max lowered by a configuration update")
    for child in cfg.queues:
        _apply_queue(p, child, queue, seen)


def template_is_empty(template: ChildTemplateConfig) -> bool:
    """YuniKorn: a childtemplate setting nothing (no maxapplications, and no property, max or
    guaranteed entry with both a name and a value) is no template."""
    return template.maxapplications == 0 and not any(
        k and v for k, v in template.properties.items()) and not template.resources.is_set


def effective_template(
    own: ChildTemplateConfig | None, parent: Queue | None
) -> ChildTemplateConfig | None:
    """The template a parent queue applies to the leaves created below it: its own when it
    sets something, else the one its parent has (YUNIKORN-193, YUNIKORN-814)."""
    if own is not None and not template_is_empty(own):
        return own
    return parent.child_template if parent is not None else None


def create(p: PartitionState, paths: tuple[str, ...]) -> None:
    """Create the unmanaged queues a placement rule asked for (top first; last = leaf)."""
    for i, path in enumerate(paths):
        parent_path, _, name = path.rpartition(".")
        parent = p.queues[parent_path]
        is_leaf = i == len(paths) - 1
        queue = Queue(name, parent, is_leaf)
        queue.managed = False
        template = parent.child_template
        # YuniKorn (YUNIKORN-809): a created queue takes nothing from its parent's
        # properties; a created leaf takes its parent's childtemplate, properties included.
        queue.properties = dict(template.properties) if is_leaf and template is not None \
            else {}
        if is_leaf and template is not None:
            queue.max = dict(template.resources.max) or None
            queue.guaranteed = dict(template.resources.guaranteed) or None
            queue.max_applications = template.maxapplications
        if not is_leaf:
            # YuniKorn: a created parent hands its parent's template down to the leaves
            # created below it, at any depth (kept as it is: a reload leaves it alone).
            queue.child_template = template
        queue.sort_policy = sort_policy(queue.properties)
        priority.configure(queue, queue.properties)
        preemption.configure(queue, queue.properties, inherits=False)
        parent.children[name] = queue
        p.queues[path] = queue
        policies.queue_changed(queue)
        p.core.event(p.rm_id, si.EventRecordType.QUEUE, path,
                     f"queue {path} created by a placement rule", si.EventChangeType.ADD)


def _empty(queue: Queue) -> bool:
    """YuniKorn ``IsEmpty``: a leaf without applications, a parent without children."""
    return not queue.apps and not queue.children


def _remove(p: PartitionState, path: str) -> None:
    queue = p.queues[path]
    assert queue.parent is not None
    p.core.fire(queue, "stop", p.rm_id)
    del p.queues[path]
    queue.parent.children.pop(queue.name, None)
    policies.queue_changed(queue)


def cleanup(p: PartitionState) -> None:
    """Remove the unmanaged queues that hold nothing any more (deepest first), and arm the
    periodic cleanup when a removed queue waits, empty, to go."""
    for path in sorted(p.queues, key=lambda path: -path.count(".")):
        queue = p.queues[path]
        if not queue.managed and _empty(queue) and queue.parent is not None:
            _remove(p, path)
    waiting = any(q.state == "Draining" and _empty(q) and q.parent is not None
                  for q in p.queues.values())
    if waiting and not p.cleanup_armed:
        p.cleanup_armed = True
        p.core.schedule_timer(CLEAN_INTERVAL, "queues", p, p.cleanup_token, (p.rm_id, p.name))
    elif not waiting and p.cleanup_armed:
        p.cleanup_armed = False
        p.cleanup_token += 1


def clean_drained(p: PartitionState, token: int) -> None:
    """The periodic cleanup (apache/yunikorn-core be3bb48 pkg/scheduler/partition_manager.go
    ``cleanQueues``): children first, every draining or unmanaged queue that is empty goes,
    so a parent emptied by its children's removal goes in the same run.

    It runs only while a queue waits (:func:`cleanup` arms it), so a removed queue goes
    within :data:`CLEAN_INTERVAL` of emptying and an idle partition sets no timer.
    """
    if token != p.cleanup_token or not p.cleanup_armed:
        return
    p.cleanup_armed = False
    p.cleanup_token += 1
    for path in sorted(p.queues, key=lambda path: -path.count(".")):
        queue = p.queues[path]
        if (queue.state == "Draining" or not queue.managed) and _empty(queue) \
                and queue.parent is not None:
            _remove(p, path)
    _settle_leaves(p)
    cleanup(p)


def stop(p: PartitionState) -> None:
    """The owning RM left: the partition and its queues stop at once."""
    for queue in p.queues.values():
        if queue.state != "Stopped":
            p.core.fire(queue, "stop", p.rm_id)
    if p.state != "Stopped":
        p.core.fire(p, "stop", p.rm_id)


def drain(p: PartitionState) -> None:
    """Removed from the configuration: no new applications or nodes, and no limits (a
    reload clears the limits it no longer sets).

    Its configured queues drain; the queues placement rules created do not (YuniKorn's
    ``MarkQueueForRemoval`` marks managed queues only): nothing reaches them while the
    partition drains, and if a reload brings the partition back they serve again.
    """
    for queue in p.queues.values():
        queue.limits = None
    p.limited = False
    if p.state == "Active":
        p.core.fire(p, "remove", p.rm_id)
        for queue in p.queues.values():
            if queue.state == "Active" and queue.managed:
                p.core.fire(queue, "remove", p.rm_id)
        cleanup(p)
