"""A partition: its queues, applications, nodes, and the scheduling cycle.

Flows follow ``003_df6a88229d753a2b.txt`` ("Operations to add/remove app",
"... remove allocations and add or remove asks", "... add, update or remove
nodes", "Allocations") with the cache gone: every decision updates the one
object model directly and in one step. Scheduling follows
``004_3abbea6d8cd34e89.txt`` ("Implementation"): sort queues, applications and
nodes, skip requests that can not be satisfied, reserve nodes against
fragmentation. Gang behaviour follows ``001_77e2b1ca48512e76.txt``.

Nothing here assigns ``state``: objects move through ``CoreContext.fire``.
Every method that answers a shim request reports through the RM's outbox.
"""

from __future__ import annotations

from typing import Any

from . import resources as res
from . import si
from .config import APPLICATION_SORT_POLICY, PartitionConfig, QueueConfig, parse_acl
from .context import CoreContext
from .dump import dump_partition
from .errors import ConfigError
from .gang import GangFlows
from .objects import (
    LIVE_APP_STATES,
    TERMINATED_APP_STATES,
    Allocation,
    Application,
    Ask,
    Node,
    Queue,
)
from .placement import Placement, QueueInfo, place, qualify
from .policies import NodeCollection, ordered_apps, ordered_children
from .resources import Resource

TT = si.TerminationType
SS = si.SchedulingState
ET = si.EventRecordType

COMPLETING_TIMEOUT = 30.0
TERMINATED_RETENTION = 3 * 24 * 3600.0

NOTHING, ALLOCATED, PROGRESS = 0, 1, 2
SCHEDULABLE_APP_STATES = ("Accepted", "Running", "Completing")

CONFIRM_TRIGGERS = {
    TT.TIMEOUT: "expire",
    TT.PREEMPTED_BY_SCHEDULER: "preempt",
    TT.PLACEHOLDER_REPLACED: "replace",
}


class Partition(GangFlows):
    """One partition of one RM (``004`` "Relations between Entities")."""

    LIFECYCLE = Queue.LIFECYCLE

    def __init__(self, core: CoreContext, rm_id: str, config: PartitionConfig) -> None:
        self.core = core
        self.rm_id = rm_id
        self.name = config.name
        self.state = self.LIFECYCLE.initial
        self.root: Queue = Queue("root", None, is_leaf=False)
        self.queues: dict[str, Queue] = {"root": self.root}
        self.apps: dict[str, Application] = {}
        self.nodes: dict[str, Node] = {}
        self.node_order = NodeCollection()
        self.allocations: dict[str, Allocation] = {}
        self.reservations: dict[tuple[str, str], Node] = {}
        self.capacity: Resource = {}
        self.predicates: Any = None
        # Per scheduling call: what can not succeed again before the call ends.
        self._failed: set[tuple[str, str]] = set()
        self._failed_shapes = res.ShapeMemo()
        self._unreservable = res.ShapeMemo()
        self._exhausted: set[str] = set()
        # Largest room any schedulable node could ever offer (capacity - occupied),
        # per type; None when a node changed and it must be recomputed.
        self._ceiling: Resource | None = None
        self._configured_leaf: dict[str, bool] = {}
        self.apply_config(config, initial=True)

    @property
    def event_id(self) -> str:
        return self.name

    # ------------------------------------------------------------------ config
    def apply_config(self, config: PartitionConfig, initial: bool = False) -> None:
        """Create, update and drain queues to match ``config`` (hot reload).

        A queue no longer configured drains (no new applications) and is removed
        once empty; one configured again while draining becomes active again.
        Quota and policy changes apply from the next scheduling cycle.
        """
        policy = config.nodesortpolicy
        self.node_order.set_policy(policy.type or "fair", policy.resourceweights or None)
        self.placement_rules = list(config.placementrules)
        seen: set[str] = set()
        self._configured_leaf = {}
        root_cfg = config.queues[0]
        self._apply_queue(root_cfg, None, seen)
        if initial:
            return
        for path in [p for p in self.queues if p not in seen]:
            queue = self.queues[path]
            if queue.state == "Active" and queue.managed:
                self.core.fire(queue, "remove", self.rm_id)
        self.cleanup_queues()
        # A parent whose children all went becomes the leaf the configuration says.
        for path, leaf in self._configured_leaf.items():
            q = self.queues.get(path)
            if q is not None and q.is_leaf != leaf and not q.children and not q.apps:
                q.is_leaf = leaf

    def check_update(self, config: PartitionConfig) -> None:
        """Refuse, before anything changes, an update the running state can not take.

        A leaf queue that holds applications can not become a parent: its
        applications would sit in a parent queue, which is never scheduled.
        """
        def walk(cfg: QueueConfig, prefix: str) -> None:
            path = f"{prefix}.{cfg.name}" if prefix else cfg.name
            queue = self.queues.get(path)
            if queue is not None and queue.is_leaf and queue.apps and (cfg.queues or cfg.parent):
                raise ConfigError(
                    f"queue {path} holds {len(queue.apps)} application(s) and can not become "
                    "a parent queue", f"partitions[{self.name}]")
            for child in cfg.queues:
                walk(child, path)

        walk(config.queues[0], "")

    def _apply_queue(self, cfg: QueueConfig, parent: Queue | None, seen: set[str]) -> None:
        path = cfg.name if parent is None else f"{parent.path}.{cfg.name}"
        is_leaf = not cfg.queues and not cfg.parent
        queue = self.queues.get(path)
        if queue is None:
            queue = Queue(cfg.name, parent, is_leaf)
            self.queues[path] = queue
            if parent is not None:
                parent.children[cfg.name] = queue
        elif queue.state == "Draining":
            self.core.fire(queue, "start", self.rm_id)
        queue.managed = True
        if queue.is_leaf != is_leaf and not queue.apps and not queue.children:
            queue.is_leaf = is_leaf
        self._configured_leaf[path] = is_leaf
        seen.add(path)
        queue.max = dict(cfg.resources.max) if cfg.resources.max else None
        queue.guaranteed = dict(cfg.resources.guaranteed) if cfg.resources.guaranteed else None
        queue.max_applications = cfg.maxapplications
        # YuniKorn: properties are inherited by child queues unless overridden.
        inherited = dict(parent.properties) if parent is not None else {}
        queue.properties = {**inherited, **cfg.properties}
        queue.sort_policy = _sort_policy(queue.properties)
        queue.child_template = cfg.childtemplate
        queue.submitacl = parse_acl(cfg.submitacl) if cfg.submitacl is not None else None
        queue.adminacl = parse_acl(cfg.adminacl) if cfg.adminacl is not None else None
        self._refresh_quota_flag(queue, "max lowered by a configuration update")
        for child in cfg.queues:
            self._apply_queue(child, queue, seen)

    def _refresh_quota_flag(self, queue: Queue, reason: str) -> None:
        if queue.max is not None and not res.within(queue.allocated, queue.max):
            if not queue.over_quota_reason:
                queue.over_quota_reason = reason
        else:
            queue.over_quota_reason = ""

    def cleanup_queues(self) -> None:
        """Remove draining and unmanaged queues that hold nothing any more (deepest first)."""
        for path in sorted(self.queues, key=lambda p: -p.count(".")):
            queue = self.queues[path]
            if (queue.state == "Draining" or not queue.managed) and not queue.apps \
                    and not queue.children and queue.parent is not None:
                self.core.fire(queue, "stop", self.rm_id)
                del self.queues[path]
                if queue.parent is not None:
                    queue.parent.children.pop(queue.name, None)

    def stop(self) -> None:
        """The owning RM left: the partition and its queues stop at once."""
        for queue in self.queues.values():
            if queue.state != "Stopped":
                self.core.fire(queue, "stop", self.rm_id)
        if self.state != "Stopped":
            self.core.fire(self, "stop", self.rm_id)

    def drain(self) -> None:
        """Removed from the configuration: no new applications or nodes."""
        if self.state == "Active":
            self.core.fire(self, "remove", self.rm_id)
            for queue in self.queues.values():
                if queue.state == "Active":
                    self.core.fire(queue, "remove", self.rm_id)

    def is_empty(self) -> bool:
        return not self.nodes and not any(
            a.state in LIVE_APP_STATES for a in self.apps.values()
        )

    # ------------------------------------------------------------ applications
    def add_application(self, req: si.AddApplicationRequest) -> None:
        box = self.core.outbox(self.rm_id)
        app_id = req.application_id
        existing = self.apps.get(app_id)
        if existing is not None and existing.state in LIVE_APP_STATES:
            self.core.reject_app(self.rm_id, app_id, f"application {app_id} already exists "
                                 f"(state {existing.state})")
            return
        user, groups = req.ugi.user, list(req.ugi.groups)
        placement = place(self.placement_rules, req.queue_name, user, groups, req.tags,
                          self._queue_info)
        path = placement.path if isinstance(placement, Placement) else qualify(req.queue_name)
        app = Application(
            app_id, self, None, path or req.queue_name, user, groups, self.core.next_seq(),
            self.core.clock.now(), dict(req.tags), req.execution_timeout_milli_seconds,
            req.placeholder_ask.as_dict() if req.placeholder_ask else None,
        )
        reason = (placement if isinstance(placement, str)
                  else self._check_submission(app, req, placement))
        if existing is not None:
            del self.apps[app_id]
        self.apps[app_id] = app
        if reason:
            app.reject_reason = reason
            self._fire_app(app, "reject", reason)
            self._start_app_timer(app, TERMINATED_RETENTION, "expire")
            self.core.reject_app(self.rm_id, app_id, reason)
            return
        if isinstance(placement, Placement) and placement.create:
            self._create_queues(placement.create)
        queue = self.queues[path]
        app.queue = queue
        app.admission = (queue.sort_policy, tuple(
            (q.path, dict(q.max)) for q in queue.ancestry() if q.max is not None))
        queue.apps[app_id] = app
        box.app_accepted.append(app_id)
        self.core.event(self.rm_id, ET.APP, app_id, f"added to queue {path}",
                        si.EventChangeType.ADD)

    def _queue_info(self, path: str) -> QueueInfo | None:
        queue = self.queues.get(path)
        return None if queue is None else QueueInfo(queue.is_leaf)

    def _check_submission(
        self, app: Application, req: si.AddApplicationRequest, placement: Placement
    ) -> str:
        """Why the application can not be accepted, or an empty string.

        For a queue a placement rule will create, the checks run against its
        nearest existing ancestor: the new queue has no ACL, quota or policy
        of its own and inherits the ancestor's properties.
        """
        if self.state != "Active":
            return f"partition {self.name} is {self.state.lower()}"
        path = placement.path
        if placement.create:
            queue = self.queues.get(path.rsplit(".", len(placement.create))[0])
            if queue is None or queue.is_leaf:
                return f"queue {path} can not be created here"
        else:
            queue = self.queues.get(path)
            if queue is None:
                return f"queue {path} does not exist"
            if not queue.is_leaf:
                return f"queue {path} is a parent queue; applications go to leaf queues"
        for q in queue.ancestry():
            if q.state != "Active":
                return f"queue {q.path} is {q.state.lower()}"
        if not self._acl_allows(queue, app.user, app.groups):
            return f"user {app.user!r} is not allowed to submit to queue {path}"
        style = req.gang_scheduling_style or "Soft"
        if style not in ("Hard", "Soft"):
            return f"gang scheduling style {req.gang_scheduling_style!r} is not Hard or Soft"
        app.gang_style = style
        if res.any_positive(app.placeholder_ask):
            policy = queue.sort_policy
            limits = [(q.path, q.max) for q in queue.ancestry() if q.max is not None]
            template = queue.child_template if len(placement.create) == 1 else None
            if template is not None:
                policy = _sort_policy({**queue.properties, **template.properties})
                if template.resources.max:
                    limits.insert(0, (path, dict(template.resources.max)))
            if policy == "fair":
                return (f"queue {path} sorts applications fair; gang applications need "
                        "fifo or stateaware (001 'Handling queue with a FAIR sort policy')")
            for where, mx in limits:
                if not res.fits_with(app.placeholder_ask, {}, mx):
                    return (f"placeholder ask {res.to_str(app.placeholder_ask)} is larger than "
                            f"the max {res.to_str(mx)} of queue {where}")
        return ""

    def _create_queues(self, paths: tuple[str, ...]) -> None:
        """Create the unmanaged queues a placement rule asked for (top first; last = leaf)."""
        for i, path in enumerate(paths):
            parent_path, _, name = path.rpartition(".")
            parent = self.queues[parent_path]
            is_leaf = i == len(paths) - 1
            queue = Queue(name, parent, is_leaf)
            queue.managed = False
            queue.properties = dict(parent.properties)
            template = parent.child_template
            if is_leaf and template is not None:
                # YuniKorn: a parent's childtemplate configures the leaves created below it.
                queue.properties.update(template.properties)
                queue.max = dict(template.resources.max) or None
                queue.guaranteed = dict(template.resources.guaranteed) or None
                queue.max_applications = template.maxapplications
            queue.sort_policy = _sort_policy(queue.properties)
            parent.children[name] = queue
            self.queues[path] = queue
            self.core.event(self.rm_id, ET.QUEUE, path, "created by a placement rule",
                            si.EventChangeType.ADD)

    @staticmethod
    def _acl_allows(queue: Queue, user: str, groups: list[str]) -> bool:
        """YuniKorn: the leaf or any ancestor granting submit or admin access is enough."""
        for q in queue.ancestry():
            for acl in (q.submitacl, q.adminacl):
                if acl is not None and acl.allows(user, groups):
                    return True
        return False

    def remove_application(self, app_id: str) -> bool:
        """The RM removes an application: its asks and allocations go, the RM is told."""
        app = self.apps.get(app_id)
        if app is None:
            return False
        for ask in list(app.pending_asks.values()):
            self._drop_ask(ask, "application removed")
        for alloc in list(app.allocations.values()):
            self._remove_allocation(alloc, "stop")
            self._report_release(alloc, TT.STOPPED_BY_RM, "application removed by the RM")
        if app.queue is not None:
            app.queue.apps.pop(app.id, None)
        app.timer_token += 1
        del self.apps[app_id]
        self._update_running_count(app)
        self.core.event(self.rm_id, ET.APP, app_id, "removed by the RM",
                        si.EventChangeType.REMOVE)
        self.cleanup_queues()
        return True

    def _fire_app(self, app: Application, trigger: str, message: str = "") -> None:
        self.core.fire(app, trigger, self.rm_id)
        if trigger == "run":
            app.completing_timed_out = False
        app.state_since = self.core.clock.now()
        app.timer_token += 1
        self.core.outbox(self.rm_id).app_updated.append(
            (app.id, app.state, app.state_since, message))
        self._update_running_count(app)
        if app.state not in SCHEDULABLE_APP_STATES:
            self._cancel_app_reservations(app, real_only=False)

    def _start_app_timer(self, app: Application, delay: float, kind: str) -> None:
        self.core.schedule_timer(delay, kind, app, app.timer_token)

    def _update_running_count(self, app: Application) -> None:
        """Keep ``running_apps`` on the queue path for ``maxapplications``.

        An application counts while it is tracked, live, and has started: it
        holds allocations, or is Running or Completing (a completing
        application may run again at any time, so it keeps its slot; YuniKorn
        frees the slot on Completing and can then exceed the limit).
        """
        counts = (
            app.id in self.apps and self.apps[app.id] is app
            and app.state in LIVE_APP_STATES
            and (bool(app.allocations) or app.state in ("Running", "Completing"))
        )
        if counts != app.counted_running and app.queue is not None:
            delta = 1 if counts else -1
            for q in app.queue.ancestry():
                q.running_apps += delta
            app.counted_running = counts

    def _can_start(self, app: Application) -> bool:
        if app.counted_running or app.queue is None:
            return True
        return all(
            q.max_applications <= 0 or q.running_apps < q.max_applications
            for q in app.queue.ancestry()
        )

    def _maybe_wait(self, app: Application) -> None:
        """``001`` "Definition": nothing pending and no real allocation -> Completing."""
        if app.state in ("Accepted", "Running") and not app.pending_asks and not any(
            not a.placeholder for a in app.allocations.values()
        ):
            self._fire_app(app, "wait")
            self._start_app_timer(app, COMPLETING_TIMEOUT, "complete")

    # -------------------------------------------------------------------- asks
    def add_ask(self, msg: si.AllocationAsk) -> None:
        app = self.apps.get(msg.application_id)
        reason = ""
        if app is None:
            reason = f"application {msg.application_id} is not known in partition {self.name}"
        elif app.state not in LIVE_APP_STATES or app.state == "Failing":
            reason = f"application {app.id} is {app.state.lower()}"
        resource = msg.resource_ask.as_dict()
        if not reason and not res.any_positive(resource):
            reason = "the ask requests no resources"
        existing = app.asks.get(msg.allocation_key) if app is not None else None
        allocated_before = existing.allocated_count if existing is not None else 0
        if not reason and existing is not None and existing.parked_on:
            reason = (f"ask {msg.allocation_key} is waiting for placeholder "
                      f"{existing.parked_on} to be released and can not be changed now")
        if not reason and msg.max_allocations <= allocated_before:
            reason = (f"maxAllocations {msg.max_allocations} is not above the "
                      f"{allocated_before} repeats of ask {msg.allocation_key} already allocated")
        if not reason and app is not None and msg.placeholder and msg.task_group_name:
            reason = self._check_placeholder_room(app, msg, resource, allocated_before)
        if reason or app is None:
            self.core.reject_ask(self.rm_id, msg.application_id, msg.allocation_key, reason)
            return
        ask = Ask(
            app, msg.allocation_key, resource, msg.max_allocations, msg.priority,
            self.core.next_seq(), self.core.clock.now(), msg.execution_timeout_milli_seconds,
            dict(msg.tags), msg.task_group_name, msg.placeholder, msg.originator,
        )
        if existing is not None:
            self._drop_ask(existing, "replaced by an update from the RM")
        self.core.fire(ask, "ask", self.rm_id, app.id)
        ask.max_allocations = msg.max_allocations
        ask.allocated_count = allocated_before
        ask.pending_repeats = msg.max_allocations - allocated_before
        self._add_pending(app, ask)
        if ask.placeholder:
            # The gang's real asks wait for its placeholders again: free their nodes.
            self._cancel_app_reservations(app, real_only=True)
        if app.state == "New":
            self._fire_app(app, "accept")
        elif app.state == "Completing":
            self._fire_app(app, "run")

    def _add_pending(self, app: Application, ask: Ask) -> None:
        """Register a Pending ask's repeats on the application and its queue path."""
        app.asks[ask.key] = ask
        app.pending_asks[ask.sort_key] = ask
        delta = res.multiply(ask.resource, ask.pending_repeats)
        res.add_into(app.pending, delta)
        for q in app.queue.ancestry() if app.queue else ():
            res.add_into(q.pending, delta)

    def _drop_ask(self, ask: Ask, why: str) -> None:
        """Take a pending ask out of every account and reject it."""
        app = ask.app
        if ask.state == "Pending":
            app.pending_asks.pop(ask.sort_key, None)
            delta = res.multiply(ask.resource, ask.pending_repeats)
            res.sub_from(app.pending, delta)
            for q in app.queue.ancestry() if app.queue else ():
                res.sub_from(q.pending, delta)
            ask.pending_repeats = 0
            self.core.fire(ask, "reject", self.rm_id, app.id)
        self._cancel_reservation(app.id, ask.key)
        if ask.parked_on:
            placeholder = app.allocations.get(ask.parked_on)
            if placeholder is not None and placeholder.replacing_key == ask.key:
                placeholder.replacing_key = ""
            ask.parked_on = ""
        if app.asks.get(ask.key) is ask:
            del app.asks[ask.key]
        self.core.event(self.rm_id, ET.REQUEST, ask.key, why, si.EventChangeType.REMOVE, app.id)

    def release_asks(self, rel: si.AllocationAskRelease) -> None:
        """RM-initiated ask removal (``002`` AllocationAskRelease), confirmed back."""
        app = self.apps.get(rel.application_id)
        if rel.termination_type != TT.STOPPED_BY_RM:
            self.core.event(self.rm_id, ET.REQUEST, rel.allocation_key or rel.application_id,
                            f"ask release {rel.termination_type.name} acknowledged, "
                            "nothing to do", reference_id=rel.application_id)
            return
        if app is None:
            self.core.event(self.rm_id, ET.APP, rel.application_id,
                            "ask release for an unknown application ignored")
            return
        if rel.allocation_key:
            ask = app.asks.get(rel.allocation_key)
            asks = [ask] if ask is not None else []
        else:
            asks = list(app.asks.values())
        if not asks:
            self.core.event(self.rm_id, ET.REQUEST, rel.allocation_key,
                            "ask release for an unknown ask ignored",
                            reference_id=app.id)
            return
        box = self.core.outbox(self.rm_id)
        for ask in asks:
            self._drop_ask(ask, "released by the RM")
            box.released_asks.append((self.name, app.id, ask.key, TT.STOPPED_BY_RM,
                                      rel.message or "ask released by the RM"))
        self._maybe_wait(app)

    # ------------------------------------------------------------- allocations
    def _bind(self, alloc: Allocation) -> None:
        """Count an allocation on node, application, queue path and partition."""
        r = alloc.resource
        node, app = alloc.node, alloc.app
        node.allocations[alloc.uuid] = alloc
        res.add_into(node.allocated, r)
        res.sub_from(node.available, r)
        self.node_order.update(node)
        app.allocations[alloc.uuid] = alloc
        res.add_into(app.placeholder_allocated if alloc.placeholder else app.allocated, r)
        for q in app.queue.ancestry() if app.queue else ():
            res.add_into(q.allocated, r)
        self.allocations[alloc.uuid] = alloc
        self._update_running_count(app)

    def _unbind(self, alloc: Allocation) -> None:
        r = alloc.resource
        node, app = alloc.node, alloc.app
        if node.allocations.pop(alloc.uuid, None) is not None:
            res.sub_from(node.allocated, r)
            node.recompute_available()
            self.node_order.update(node)
        if app.allocations.pop(alloc.uuid, None) is not None:
            res.sub_from(app.placeholder_allocated if alloc.placeholder else app.allocated, r)
            for q in app.queue.ancestry() if app.queue else ():
                res.sub_from(q.allocated, r)
                if q.over_quota_reason:
                    self._refresh_quota_flag(q, q.over_quota_reason)
        self.allocations.pop(alloc.uuid, None)
        alloc.timer_token += 1
        self._update_running_count(app)

    def _remove_allocation(self, alloc: Allocation, trigger: str) -> None:
        self.core.fire(alloc, trigger, self.rm_id, alloc.app.id)
        self._unbind(alloc)
        if alloc.replacing_key and trigger != "replace":
            ask = alloc.app.asks.get(alloc.replacing_key)
            if ask is not None and ask.parked_on == alloc.uuid:
                ask.parked_on = ""

    def _report_release(self, alloc: Allocation, ttype: si.TerminationType, msg: str) -> None:
        self.core.outbox(self.rm_id).released.append(
            (self.name, alloc.app.id, alloc.uuid, alloc.ask_key, ttype, msg))

    def release_allocations(self, rel: si.AllocationRelease) -> None:
        """An ``AllocationRelease`` from the RM: a release or a confirmation.

        ``STOPPED_BY_RM`` is the RM's own release: processed and confirmed with
        the same type. The core-initiated types are the RM's confirmation of a
        release the core sent: the allocation must be Releasing with that type;
        the core never confirms a confirmation (``001`` "AllocationRelease").
        """
        ttype = rel.termination_type
        app = self.apps.get(rel.application_id) if rel.application_id else None
        if rel.uuid:
            if app is not None:
                alloc = app.allocations.get(rel.uuid)
            elif not rel.application_id:
                alloc = self.allocations.get(rel.uuid)
            else:
                alloc = None
            targets = [alloc] if alloc is not None else []
        elif app is not None and ttype == TT.STOPPED_BY_RM:
            targets = list(app.allocations.values())
        else:
            targets = []
        if not targets:
            self.core.event(self.rm_id, ET.REQUEST, rel.uuid or rel.application_id,
                            f"release {ttype.name} of an unknown allocation ignored",
                            reference_id=rel.application_id)
            return
        touched: list[Application] = []
        for alloc in targets:
            if ttype == TT.STOPPED_BY_RM:
                self._remove_allocation(alloc, "stop")
                self._report_release(alloc, TT.STOPPED_BY_RM,
                                     rel.message or "released by the RM")
            elif ttype in CONFIRM_TRIGGERS:
                if alloc.state != "Releasing" or alloc.release_type != ttype.value:
                    self.core.event(
                        self.rm_id, ET.REQUEST, alloc.uuid,
                        f"confirmation {ttype.name} for an allocation the core did not "
                        f"release that way ignored (state {alloc.state})",
                        reference_id=alloc.app.id)
                    continue
                self._remove_allocation(alloc, CONFIRM_TRIGGERS[ttype])
                if ttype == TT.PLACEHOLDER_REPLACED:
                    self._complete_replacement(alloc)
            else:
                self.core.event(self.rm_id, ET.REQUEST, alloc.uuid,
                                f"release with termination type {ttype.name} ignored",
                                reference_id=alloc.app.id)
                continue
            if alloc.app not in touched:
                touched.append(alloc.app)
        for touched_app in touched:
            self._after_release(touched_app)

    def _after_release(self, app: Application) -> None:
        """Move the application on once what it waited for has been released.

        Failing ends in Failed when nothing is allocated any more; Resuming goes
        back to Accepted when its placeholders are gone; Completing whose timeout
        already fired ends in Completed when its leftover placeholders are gone
        (``001`` "Cleanup"); otherwise an application with nothing pending and
        no real allocation starts waiting.
        """
        if self.apps.get(app.id) is not app:
            return
        if app.state == "Failing":
            if not app.allocations:
                self._finish(app, "kill")
        elif app.state == "Resuming":
            if not app.has_placeholders():
                self._fire_app(app, "accept", "placeholders released, scheduling as normal")
                app.placeholder_timer_started = False
                app.placeholder_token += 1
                self._maybe_wait(app)
        elif app.state == "Completing":
            if app.completing_timed_out and not app.allocations:
                self._finish(app, "complete")
        else:
            self._maybe_wait(app)

    def core_release(self, alloc: Allocation, ttype: si.TerminationType, msg: str) -> None:
        """Start a core-initiated release: mark released and tell the RM."""
        self.core.fire(alloc, "release", self.rm_id, alloc.app.id)
        alloc.release_type = ttype.value
        alloc.release_count += 1
        self._report_release(alloc, ttype, msg)

    # ------------------------------------------------------------------- nodes
    def add_node(self, info: si.NodeInfo) -> None:
        box = self.core.outbox(self.rm_id)
        reason = ""
        if self.state != "Active":
            reason = f"partition {self.name} is {self.state.lower()}"
        elif info.node_id in self.nodes:
            reason = f"node {info.node_id} already exists"
        capacity = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
        occupied = info.occupied_resource.as_dict() if info.occupied_resource else {}
        if not reason:
            reason = self._check_recovery(info)
        if reason:
            self.core.reject_node(self.rm_id, info.node_id, reason)
            return
        node = Node(info.node_id, self, capacity, occupied, dict(info.attributes))
        self.nodes[node.id] = node
        self.node_order.add(node)
        self.nodes_changed()
        res.add_into(self.capacity, capacity)
        for msg in info.existing_allocations:
            self._recover(node, msg)
        node.recompute_available("recovered allocations exceed the node's room")
        self.node_order.update(node)
        box.node_accepted.append(node.id)
        self.core.event(self.rm_id, ET.NODE, node.id, "node added", si.EventChangeType.ADD)

    def _check_recovery(self, info: si.NodeInfo) -> str:
        """All or nothing: a node whose recovered allocations can not attach is rejected."""
        seen: set[str] = set()
        for i, a in enumerate(info.existing_allocations):
            where = f"existingAllocations[{i}]"
            app = self.apps.get(a.application_id)
            if app is None or app.state not in ("New", *SCHEDULABLE_APP_STATES) \
                    or app.queue is None:
                return (f"{where}: application {a.application_id} is not known or not live; "
                        "the RM must add applications before their nodes")
            if not a.uuid:
                return f"{where}: a recovered allocation needs its uuid"
            if self.core.uuid_taken(a.uuid) or a.uuid in seen:
                return f"{where}: allocation uuid {a.uuid} already exists"
            if a.node_id and a.node_id != info.node_id:
                return f"{where}: allocation is for node {a.node_id}, not {info.node_id}"
            seen.add(a.uuid)
        return ""

    def _recover(self, node: Node, msg: si.Allocation) -> None:
        """Rebuild an allocation the RM reports on a node (``001`` "Application recovery").

        The core generates the ask the allocation came from (Initial -> Pending
        -> Allocated) so the application's asks and allocations stay paired.
        """
        app = self.apps[msg.application_id]
        resource = msg.resource_per_alloc.as_dict()
        placeholder = msg.placeholder and bool(msg.task_group_name)
        ask = app.asks.get(msg.allocation_key)
        if ask is None:
            ask = Ask(app, msg.allocation_key, resource, 1, msg.priority, self.core.next_seq(),
                      self.core.clock.now(), 0, dict(msg.allocation_tags), msg.task_group_name,
                      placeholder)
            self.core.fire(ask, "ask", self.rm_id, app.id)
            self._add_pending(app, ask)
            self._consume_repeat(app, ask)
        elif ask.state == "Pending":
            self._consume_repeat(app, ask)
        else:
            ask.max_allocations += 1
            ask.allocated_count += 1
        alloc = Allocation(msg.uuid, app, msg.allocation_key, node, resource,
                           self.core.clock.now(), placeholder, msg.task_group_name,
                           msg.priority, dict(msg.allocation_tags), recovered=True)
        over_quota = app.queue is not None and any(
            q.max is not None and not res.fits_with(resource, q.allocated, q.max)
            for q in app.queue.ancestry())
        alloc.over_capacity = not res.fits(resource, node.available)
        self._bind(alloc)
        node.recompute_available("recovered allocations exceed the node's room")
        if over_quota:
            alloc.over_quota = True
            for q in app.queue.ancestry() if app.queue else ():
                self._refresh_quota_flag(q, "recovered allocations exceed the max")
        if app.state == "New":
            self._fire_app(app, "accept")
        if not placeholder and app.state in ("Accepted", "Completing"):
            self._fire_app(app, "run")
        if placeholder and not app.placeholder_timer_started:
            self._start_placeholder_timer(app)
        self.core.event(self.rm_id, ET.REQUEST, alloc.uuid,
                        f"allocation recovered on node {node.id}", si.EventChangeType.ADD, app.id)

    def update_node(self, info: si.NodeInfo) -> None:
        node = self.nodes.get(info.node_id)
        if node is None:
            self.core.reject_node(self.rm_id, info.node_id, f"node {info.node_id} is not known")
            return
        action = info.action
        if action == si.NodeAction.UPDATE:
            if info.schedulable_resource is not None:
                res.sub_from(self.capacity, node.capacity)
                node.capacity = info.schedulable_resource.as_dict()
                res.add_into(self.capacity, node.capacity)
            if info.occupied_resource is not None:
                node.occupied = info.occupied_resource.as_dict()
            if info.attributes:
                node.attributes = dict(info.attributes)
            node.recompute_available("capacity or occupied changed by the RM")
            self.nodes_changed()
            self.node_order.update(node)
            if node.reservation is not None:
                app_id, key = node.reservation
                app = self.apps.get(app_id)
                if not self._reservation_still_valid(
                        app.asks.get(key) if app is not None else None, node):
                    self._cancel_reservation(app_id, key)
            self.core.event(self.rm_id, ET.NODE, node.id, "node updated", si.EventChangeType.SET)
        elif action == si.NodeAction.DRAIN_NODE:
            if node.state != "Schedulable":
                self.core.reject_node(self.rm_id, node.id,
                                      f"node {node.id} is {node.state.lower()}")
                return
            self.core.fire(node, "drain", self.rm_id)
            self.node_order.discard(node)
            self.nodes_changed()
            self._cancel_node_reservation(node)
        elif action == si.NodeAction.DRAIN_TO_SCHEDULABLE:
            if node.state != "Draining":
                self.core.reject_node(self.rm_id, node.id,
                                      f"node {node.id} is {node.state.lower()}, not draining")
                return
            self.core.fire(node, "restore", self.rm_id)
            self.node_order.add(node)
            self.nodes_changed()
        elif action == si.NodeAction.DECOMISSION:
            self.remove_node(node)
        else:
            self.core.reject_node(self.rm_id, node.id,
                                  f"node action {action.name} is not supported")

    def remove_node(self, node: Node, message: str = "node decommissioned") -> None:
        """DECOMISSION: allocations on it leave every account and the RM is told."""
        self.core.fire(node, "remove", self.rm_id)
        self.node_order.discard(node)
        self.nodes_changed()
        self._cancel_node_reservation(node)
        touched: list[Application] = []
        for alloc in list(node.allocations.values()):
            self._remove_allocation(alloc, "stop")
            self._report_release(alloc, TT.STOPPED_BY_RM, message)
            if alloc.app not in touched:
                touched.append(alloc.app)
        res.sub_from(self.capacity, node.capacity)
        del self.nodes[node.id]
        for app in touched:
            self._after_release(app)

    # ------------------------------------------------------------ reservations
    def _reserve(self, app: Application, ask: Ask, node: Node) -> None:
        node.reservation = (app.id, ask.key)
        self.reservations[(app.id, ask.key)] = node
        self.core.event(self.rm_id, ET.REQUEST, ask.key, f"reserved node {node.id}",
                        si.EventChangeType.ADD, app.id)

    def _cancel_reservation(self, app_id: str, key: str) -> None:
        node = self.reservations.pop((app_id, key), None)
        if node is not None:
            node.reservation = None
            # The node is open to every ask again: what failed earlier in this
            # scheduling call may fit now, so the call's memos no longer hold.
            self._failed = set()
            self._exhausted = set()
            self._failed_shapes = res.ShapeMemo()
            self._unreservable = res.ShapeMemo()

    def _cancel_app_reservations(self, app: Application, real_only: bool) -> None:
        """Free every node reserved for the application (or for its real asks only)."""
        for app_id, key in [k for k in self.reservations if k[0] == app.id]:
            if not (real_only and app.asks[key].placeholder):
                self._cancel_reservation(app_id, key)

    def _cancel_node_reservation(self, node: Node) -> None:
        if node.reservation is not None:
            self._cancel_reservation(*node.reservation)

    def _reservation_still_valid(self, ask: Ask | None, node: Node) -> bool:
        return (
            ask is not None and ask.state == "Pending" and self._may_schedule(ask.app, ask)
            and node.schedulable and node.id in self.nodes
            and res.fits(ask.resource, res.sub(node.capacity, node.occupied))
        )

    @staticmethod
    def _gang_waiting(app: Application) -> bool:
        """``001``: real asks wait while the application has placeholder asks pending."""
        return bool(app.placeholder_ask) and any(
            k.placeholder for k in app.pending_asks.values())

    def _may_schedule(self, app: Application, ask: Ask) -> bool:
        """Whether the cycle may place this ask at all right now (room aside)."""
        return (app.state in SCHEDULABLE_APP_STATES and not ask.parked_on
                and (ask.placeholder or not self._gang_waiting(app)))

    # -------------------------------------------------------------- scheduling
    def schedule(self) -> int:
        """Allocate until nothing more fits right now; returns the allocations made.

        Usage only grows during one call (releases are processed by API calls,
        never in the middle of a cycle), so an ask that found no node, or no
        queue headroom, is not tried again in the same call: this keeps a call
        with many unschedulable asks linear instead of quadratic.
        """
        if self.state == "Stopped":
            return 0
        self._failed = set()
        self._failed_shapes = res.ShapeMemo()
        self._unreservable = res.ShapeMemo()
        self._exhausted = set()
        count = self._allocate_reserved()
        while True:
            step = self._try_allocate(self.root)
            if step == NOTHING:
                return count
            if step == ALLOCATED:
                count += 1

    def _allocate_reserved(self) -> int:
        count = 0
        for (app_id, key), node in list(self.reservations.items()):
            app = self.apps.get(app_id)
            ask = app.asks.get(key) if app is not None else None
            if app is None or ask is None or not self._reservation_still_valid(ask, node):
                self._cancel_reservation(app_id, key)
                continue
            if (res.fits(ask.resource, node.available) and self._can_start(app)
                    and self._headroom(app, ask) and self._predicates(ask, node, True)):
                self._allocate(app, ask, node)
                count += 1
        return count

    def _try_allocate(self, queue: Queue) -> int:
        """One step below ``queue``: ALLOCATED, PROGRESS (a replacement started) or NOTHING."""
        if queue.is_leaf:
            return self._try_leaf(queue)
        for child in ordered_children(queue):
            step = self._try_allocate(child)
            if step != NOTHING:
                return step
        return NOTHING

    def _try_leaf(self, queue: Queue) -> int:
        failed = self._failed
        exhausted = self._exhausted
        for app in ordered_apps(queue, self.capacity):
            if app.state not in SCHEDULABLE_APP_STATES or app.id in exhausted:
                continue
            if not self._can_start(app):
                for ask in app.pending_asks.values():
                    self._set_scheduling_state(ask, SS.SKIPPED,
                                               "maxapplications reached on the queue path")
                continue
            # 001 "Scheduler logic changes": real asks wait until every placeholder
            # ask of the application is allocated ("ignored as a safety precaution").
            gang_pending = self._gang_waiting(app)
            for ask in list(app.pending_asks.values()):
                if ask.parked_on or (app.id, ask.key) in failed:
                    continue
                if gang_pending and not ask.placeholder:
                    self._cancel_reservation(app.id, ask.key)
                    self._set_scheduling_state(
                        ask, SS.SKIPPED, "waiting for the gang's placeholder asks to be allocated")
                    continue
                if ask.task_group and not ask.placeholder and app.placeholder_allocated \
                        and self._try_replace(app, ask):
                    return PROGRESS
                if not self._headroom(app, ask):
                    failed.add((app.id, ask.key))
                    self._set_scheduling_state(ask, SS.SKIPPED, "queue quota reached")
                    continue
                if not res.fits(ask.resource, self.room_ceiling()):
                    failed.add((app.id, ask.key))
                    self._set_scheduling_state(ask, SS.FAILED,
                                               "larger than any schedulable node can hold")
                    continue
                node = self._find_node(app, ask)
                if node is not None:
                    self._allocate(app, ask, node)
                    return ALLOCATED
                failed.add((app.id, ask.key))
                if self.predicates is None:
                    self._failed_shapes.add(ask.resource)
                self._reserve_or_fail(app, ask)
            # Nothing of this application can succeed again in this call.
            exhausted.add(app.id)
        return NOTHING

    def room_ceiling(self) -> Resource:
        """Per type, the most room any schedulable node offers when empty."""
        if self._ceiling is None:
            self._ceiling = res.component_max(
                res.sub(n.capacity, n.occupied) for n in self.node_order)
        return self._ceiling

    def nodes_changed(self) -> None:
        """A node was added, removed, resized or changed schedulability."""
        self._ceiling = None

    def _headroom(self, app: Application, ask: Ask) -> bool:
        r = ask.resource
        for q in app.queue.ancestry() if app.queue else ():
            if q.max is not None and not res.fits_with(r, q.allocated, q.max):
                return False
        return True

    def _find_node(self, app: Application, ask: Ask) -> Node | None:
        r = ask.resource
        if self.predicates is None and self._failed_shapes.covers(r):
            return None
        mine = (app.id, ask.key)
        for node in self.node_order:
            if node.reservation is not None and node.reservation != mine:
                continue
            if res.fits(r, node.available) and self._predicates(ask, node, True):
                return node
        return None

    def _reserve_or_fail(self, app: Application, ask: Ask) -> None:
        key = (app.id, ask.key)
        if key in self.reservations:
            self._set_scheduling_state(ask, SS.RESERVED, "waiting for the reserved node")
            return
        no_predicates = self.predicates is None
        if no_predicates and self._unreservable.covers(ask.resource):
            self._set_scheduling_state(ask, SS.FAILED, "no node can satisfy the ask")
            return
        for node in self.node_order:
            if node.reservation is not None:
                continue
            if res.fits(ask.resource, res.sub(node.capacity, node.occupied)) and \
                    self._predicates(ask, node, False):
                self._reserve(app, ask, node)
                self._set_scheduling_state(ask, SS.RESERVED, f"reserved node {node.id}")
                return
        if no_predicates:
            self._unreservable.add(ask.resource)
        self._set_scheduling_state(ask, SS.FAILED, "no node can satisfy the ask")

    def _predicates(self, ask: Ask, node: Node, allocate: bool) -> bool:
        if self.predicates is None:
            return True
        args = si.PredicatesArgs.model_construct(
            allocation_key=ask.key, node_id=node.id, allocate=allocate)
        try:
            return bool(self.predicates(args))
        except Exception as exc:  # a shim's bug must not break the cycle
            self.core.event(self.rm_id, ET.NODE, node.id,
                            f"predicates raised {type(exc).__name__}: {exc}",
                            reference_id=ask.key)
            return False

    def _set_scheduling_state(self, ask: Ask, state: si.SchedulingState, reason: str) -> None:
        if ask.last_scheduling_state == state:
            return
        ask.last_scheduling_state = state
        self.core.outbox(self.rm_id).scheduling.append((ask.app.id, ask.key, state, reason))

    def _allocate(self, app: Application, ask: Ask, node: Node) -> Allocation:
        core = self.core
        uuid = core.new_uuid(app.id, ask.key)
        alloc = Allocation(uuid, app, ask.key, node, ask.resource, core.clock.now(),
                           ask.placeholder, ask.task_group, ask.priority, ask.tags)
        alloc.seq = core.next_seq()
        self._bind(alloc)
        self._consume_repeat(app, ask)
        if self.reservations:
            self._cancel_reservation(app.id, ask.key)
        if not ask.placeholder and app.state in ("Accepted", "Completing"):
            self._fire_app(app, "run")
        if ask.execution_timeout_ms > 0:
            core.schedule_timer(ask.execution_timeout_ms / 1000.0, "execution", alloc,
                                alloc.timer_token)
        if ask.placeholder and not app.placeholder_timer_started:
            self._start_placeholder_timer(app)
        if ask.last_scheduling_state is not None and ask.last_scheduling_state != SS.SCHEDULED:
            self._set_scheduling_state(ask, SS.SCHEDULED, f"allocated on node {node.id}")
        box = core.outbox(self.rm_id)
        box.new.append(alloc)
        if core.emit_events:
            box.events.append((ET.REQUEST, uuid, app.id, f"allocated on node {node.id}",
                               si.EventChangeType.ADD, int(core.clock.now() * 1e9)))
        return alloc

    def _consume_repeat(self, app: Application, ask: Ask) -> None:
        """One repeat of a pending ask became an allocation: move it out of pending."""
        r = ask.resource
        res.sub_from(app.pending, r)
        for q in app.queue.ancestry() if app.queue else ():
            res.sub_from(q.pending, r)
        ask.pending_repeats -= 1
        ask.allocated_count += 1
        if ask.pending_repeats == 0:
            del app.pending_asks[ask.sort_key]
            self.core.fire(ask, "allocate", self.rm_id, app.id)

    # ------------------------------------------------------------------ timers
    def on_timer(self, kind: str, target: Any, token: int) -> None:
        """A due timer of this partition (called by the scheduler inside ``schedule()``)."""
        if kind == "execution":
            alloc: Allocation = target
            if alloc.timer_token == token and alloc.state == "Allocated" \
                    and alloc.uuid in self.allocations:
                self.core_release(alloc, TT.TIMEOUT, "execution timeout reached")
            return
        app: Application = target
        if self.apps.get(app.id) is not app:
            return
        if kind == "placeholder":
            if app.placeholder_token == token:
                self._placeholder_timeout(app)
            return
        if app.timer_token != token:
            return
        if kind == "complete" and app.state == "Completing":
            app.completing_timed_out = True
            self._release_placeholders(app, "application completing: placeholder not used")
            self._after_release(app)
        elif kind == "expire" and app.state in ("Completed", "Failed", "Rejected"):
            self._fire_app(app, "expire")
            del self.apps[app.id]

    def _finish(self, app: Application, trigger: str) -> None:
        self._fire_app(app, trigger)
        if app.queue is not None:
            app.queue.apps.pop(app.id, None)
        for ask in list(app.asks.values()):
            self._drop_ask(ask, f"application {app.state.lower()}")
        self._start_app_timer(app, TERMINATED_RETENTION, "expire")
        self.cleanup_queues()

    # -------------------------------------------------------------------- dump
    def dump(self) -> dict[str, Any]:
        return dump_partition(self)


def _sort_policy(properties: dict[str, str]) -> str:
    return properties.get(APPLICATION_SORT_POLICY, "").lower() or "fifo"


__all__ = ["TERMINATED_APP_STATES", "Partition"]
