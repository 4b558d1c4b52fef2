"""The model shim: the callback the core talks to, and the monitor of the SI protocol.

The monitor is told each step before it runs (:meth:`ModelShim.begin`), sees
every callback the step causes, and judges them when the step ends
(:meth:`ModelShim.end`) against what a shim knows (``invariants/shim.py``)
and the checker's own reading of the configuration (``invariants/model.py``).
Each rule it applies is a named protocol check (``invariants/protocol.py``).
Judging that needs no more of it than ``invariants/calls.py``'s ``Monitor``
lives in modules of its own, which never import this one: the configuration
an RM registers or reloads (``invariants/configured.py``) and what the core
says (``invariants/answers.py``).
It works the same for the random checker, the explorer and the replay of a
trace a real shim recorded: it needs only the traffic, plus a read-only look
at the core (``invariants/view.py``) for the checks that compare the two.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import statemachines
from scheduler import Scheduler, si
from scheduler.clock import Clock
from scheduler.errors import UnknownResourceManager
from scheduler.trace import Step

from . import answers, configured, model, view
from . import protocol as P
from . import quantities as qty
from .calls import Call
from .registry import Violation
from .shim import AllocView, AppView, AskView, NodeView, RMView

TT = si.TerminationType
NA = si.NodeAction
APP = statemachines.APPLICATION
CORE_TYPES = (TT.TIMEOUT, TT.PLACEHOLDER_REPLACED)
NODE_PARTITION = "si/node-partition"

Predicate = Callable[[str, str], bool]
"""``(allocation key, node id) -> bool``: a deterministic predicates callback."""


class _Callback:
    """The callback one RM registers: every message goes to the monitor with the RM's id.

    The core logs and swallows what a callback raises (a shim's bug must not stop
    it), so the monitor keeps its own failures and the world raises them after the
    step: a broken check must never pass silently.
    """

    def __init__(self, shim: ModelShim, rm_id: str) -> None:
        self._shim = shim
        self._rm = rm_id
        if shim.predicate is not None:
            predicate = shim.predicate

            def predicates(args: si.PredicatesArgs) -> bool:
                return predicate(args.allocation_key, args.node_id)

            self.predicates = predicates

    def _guard(self, handler: Callable[[str, Any], None], message: Any) -> None:
        try:
            handler(self._rm, message)
        except Exception as exc:
            self._shim.errors.append(exc)

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self._guard(self._shim.on_allocation, response)

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._guard(self._shim.on_application, response)

    def update_node(self, response: si.NodeResponse) -> None:
        self._guard(self._shim.on_node, response)

    def send_event(self, events: list[si.EventRecord]) -> None:
        self._guard(self._shim.on_events, events)

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self._guard(self._shim.on_scheduling_state, request)


class ModelShim:
    """A shim that remembers what it was told and checks every answer against the SI."""

    def __init__(self, api: Scheduler, clock: Clock, predicate: Predicate | None = None) -> None:
        self.api = api
        self.clock = clock
        self.predicate = predicate
        self.rms: dict[str, RMView] = {}
        self.violations: list[Violation] = []
        self.errors: list[Exception] = []
        """Exceptions the monitor itself raised inside a callback (a checker bug)."""
        self.call: Call | None = None
        self.callbacks_after_stop: list[str] = []
        # Symbolic names of allocations, stable when earlier unrelated steps go away.
        self.sym: dict[str, tuple[str, str, int]] = {}
        self._sym_count: Counter[tuple[str, str]] = Counter()
        self.observed: list[tuple[str, Any]] = []

    # ------------------------------------------------------------------ helpers
    def callback(self, rm_id: str) -> _Callback:
        return _Callback(self, rm_id)

    def report(self, check: str, subject: str, explanation: str) -> None:
        assert check in P.PROTOCOL, check
        self.violations.append(Violation(check, subject, explanation))

    def rm(self, rm_id: str) -> RMView | None:
        return self.rms.get(rm_id)

    def _dump(self) -> str:
        return json.dumps(self.api.state_dump(), sort_keys=True)

    def core_partition(self, rm_id: str, name: str) -> Any:
        for p in view.partitions(self.api):
            if p.rm_id == rm_id and p.name == (name or "default"):
                return p
        return None

    # ------------------------------------------------------------------ steps
    def begin(self, step: Step) -> None:
        """Note what the shim expects from ``step`` before the core runs it."""
        rm_id = step.rm_id or getattr(step.request, "rm_id", "")
        call = Call(step, rm_id, self.clock.now())
        self.call = call
        self.observed = []
        rv = self.rms.get(rm_id)
        if rv is not None:
            call.states_before = {a: v.state for a, v in rv.apps.items()}
        refused = rv is not None and (rv.paused or rv.stopped) and step.call in (
            "update_application", "update_node", "update_allocation")
        configures = step.call in ("register_resource_manager", "update_configuration")
        if refused or configures or (rv is not None and self._ineffective(rv, step)):
            call.dump_before = self._dump()
        if rv is None or refused:
            return
        if step.call == "update_application":
            self._begin_apps(rv, call, step.request)
        elif step.call == "update_node":
            self._begin_nodes(rv, call, step.request)
        elif step.call == "update_allocation":
            self._begin_allocation(rv, call, step.request)

    def end(self, step: Step, error: BaseException | None = None) -> None:
        """Judge what the core answered to ``step``; record what the shim now knows."""
        call = self.call
        assert call is not None
        call.error = error
        rv = self.rms.get(call.rm_id)
        if isinstance(error, UnknownResourceManager) and rv is not None:
            self.report(P.NO_EXCEPTION, f"rm {call.rm_id}",
                        f"a request of a registered RM raised {error}")
        if step.call == "register_resource_manager":
            configured.end_register(self, call, step.request, error)
            rv = self.rms.get(call.rm_id)
        elif step.call == "update_configuration":
            configured.end_reload(self, call, rv, step.request, error)
        elif step.call == "connection_lost":
            if rv is not None and not rv.stopped and not rv.paused:
                rv.paused = True
                rv.paused_at = call.now
        elif step.call == "unregister_resource_manager":
            if rv is not None:
                rv.stopped = True
        elif rv is not None and step.call == "update_application":
            self._end_apps(rv, call)
        elif rv is not None and step.call == "update_node":
            self._end_nodes(rv, call, step.request)
        elif rv is not None and step.call == "update_allocation":
            self._end_allocation(rv, call, step.request)
        if step.call == "schedule":
            # A cycle decides (and fires timers) for every running RM, not a paused one.
            for each in [r for r in self.rms.values() if not r.stopped and not r.paused]:
                self._end_common(each, call)
                self._end_schedule(each, call)
            self._paused_timeouts(call)
        elif rv is not None and not rv.stopped:
            self._end_common(rv, call)
        self._forget_removed_partitions()
        if step.call in ("register_resource_manager", "update_configuration") and error is None:
            call.dump_before = None  # a configuration the core took changes state, rightly
        if call.dump_before is not None and self._dump() != call.dump_before:
            self.report(P.NO_CHANGE, f"step {step.call}",
                        "the core's state changed although the request was refused or "
                        "ignored as a whole")
        self.call = None

    def _forget_removed_partitions(self) -> None:
        """A partition a reload removed took its applications and nodes with it."""
        for rv in self.rms.values():
            live = {p.name: p for p in view.partitions(self.api) if p.rm_id == rv.rm_id}
            for name, seen in sorted(rv.partitions.items()):
                if live.get(name) is not seen:
                    rv.forget_partition(name)
            rv.partitions = live

    def _ineffective(self, rv: RMView, step: Step) -> bool:
        """Whether the shim can tell the request will be refused or ignored as a whole."""
        req = step.request
        partitions = {p.name for p in view.partitions(self.api) if p.rm_id == rv.rm_id}
        if step.call == "update_application":
            return all(
                (add.application_id in rv.apps and rv.apps[add.application_id].live)
                or (add.partition_name or "default") not in partitions for add in req.new
            ) and all(r.application_id not in rv.apps for r in req.remove)
        if step.call == "update_node":
            def refused(info: si.NodeInfo) -> bool:
                node = rv.nodes.get(info.node_id)
                if info.action == NA.CREATE:
                    wanted = info.attributes.get(NODE_PARTITION) or "default"
                    return node is not None or wanted not in partitions
                return (node is None or info.action == NA.UNKNOWN_ACTION_FROM_RM
                        or (info.action == NA.DRAIN_NODE and node.state != "Schedulable")
                        or (info.action == NA.DRAIN_TO_SCHEDULABLE
                            and node.state != "Draining"))
            return all(refused(info) for info in req.nodes)
        if step.call == "update_allocation":
            for ask in req.asks:
                app = rv.apps.get(ask.application_id)
                if app is not None and app.live and app.state != "Failing" \
                        and qty.positive(ask.resource_ask.as_dict()) \
                        and (ask.partition_name or "default") in partitions:
                    return False
            if req.releases is None:
                return True
            for rel in req.releases.allocations_to_release:
                if rel.termination_type == TT.STOPPED_BY_RM:
                    if (rel.uuid in rv.allocs if rel.uuid else rv.allocs_of(rel.application_id)):
                        return False
                elif rel.uuid in rv.allocs and rv.allocs[rel.uuid].releasing == \
                        rel.termination_type:
                    return False
            return all(
                r.termination_type != TT.STOPPED_BY_RM
                or not any(k[0] == r.application_id for k in rv.asks)
                for r in req.releases.allocation_asks_to_release)
        return False

    # ------------------------------------------------------------------ applications
    def _begin_apps(self, rv: RMView, call: Call, req: si.ApplicationRequest) -> None:
        overlays: dict[str, dict[str, bool]] = {}
        taken = {a for a, v in rv.apps.items() if v.live}
        for add in req.new:
            overlay = overlays.setdefault(add.partition_name, {})
            placed, why = self._admission(rv, call.rm_id, add, overlay, taken)
            call.new_apps.append((add, placed, why))
            if placed is not None:
                taken.add(add.application_id)
                for i, path in enumerate(placed.create):
                    overlay[path] = i == len(placed.create) - 1
        for remove in req.remove:
            if remove.application_id in rv.apps:
                call.removed_apps.append(remove.application_id)
                for a in rv.allocs_of(remove.application_id):
                    call.confirm_expected[a.uuid] += 1
                    call.gone[a.uuid] = rv.allocs.pop(a.uuid)

    def _admission(self, rv: RMView, rm_id: str, add: si.AddApplicationRequest,
                   overlay: dict[str, bool], taken: set[str]) -> tuple[model.Placed | None, str]:
        """The checker's own admission decision: where the application goes, or why not."""
        if add.application_id in taken:
            return None, "duplicate"
        pm = rv.config.partition(add.partition_name)
        core = self.core_partition(rm_id, add.partition_name)
        if pm is None or core is None:
            return None, "no such partition"
        lookup = configured.queue_lookup(self, rm_id, add.partition_name, overlay)
        user, groups = add.ugi.user, list(add.ugi.groups)
        placed = model.place(pm.rules, add.queue_name, user, groups, add.tags, lookup)
        if placed is None:
            return None, "placement"
        if core.state != "Active":
            return None, "partition not active"
        anchor = placed.path.rsplit(".", len(placed.create))[0] if placed.create else placed.path
        kind = lookup(anchor)
        if placed.create and (kind is None or kind):
            return None, "create below a leaf"
        if not placed.create and kind is not True:
            return None, "not a leaf"
        parts = anchor.split(".")
        for depth in range(1, len(parts) + 1):
            q = core.queues.get(".".join(parts[:depth]))
            if q is not None and q.state != "Active":
                return None, "queue not active"
        if not model.may_submit(pm.chain(anchor), user, groups):
            return None, "acl"
        style = add.gang_scheduling_style or "Soft"
        if style not in ("Hard", "Soft"):
            return None, "gang style"
        ph = add.placeholder_ask.as_dict() if add.placeholder_ask else {}
        if qty.positive(ph):
            policy, maxes = self._gang_rules(pm, core, anchor, placed)
            if policy == "fair":
                return None, "gang in a fair queue"
            if any(not qty.within(ph, mx) for mx in maxes):
                return None, "gang over a max"
        return placed, ""

    def _gang_rules(self, pm: model.PartitionModel, core: Any, anchor: str,
                    placed: model.Placed) -> tuple[str, list[dict[str, int]]]:
        """The sort policy and the maxes a gang is admitted against (created leaf included)."""
        parts = anchor.split(".")
        maxes = []
        for depth in range(len(parts), 0, -1):
            q = core.queues.get(".".join(parts[:depth]))
            if q is not None and q.max:
                maxes.append(dict(q.max))
        configured = pm.queues.get(anchor)
        if configured is not None:
            props = dict(configured.properties)
        else:
            q = core.queues.get(anchor)
            props = dict(q.properties) if q is not None else {}
        template = configured.template if configured is not None else None
        if len(placed.create) == 1 and template is not None:
            props.update(template.properties)
            if template.max:
                maxes.append(dict(template.max))
        return props.get(model.SORT_POLICY, "").lower() or "fifo", maxes

    def _end_apps(self, rv: RMView, call: Call) -> None:
        answers_per_id = Counter(add.application_id for add, _p, _w in call.new_apps)
        for add, placed, why in call.new_apps:
            app_id = add.application_id
            n = call.app_answers[app_id]
            if n != answers_per_id[app_id]:
                self.report(P.ANSWERED, f"application {app_id}",
                            f"answered {n} times in the call that added it")
            accepted = app_id in call.accepted_apps
            if placed is None and accepted:
                self.report(P.ADMISSION, f"application {app_id}",
                            f"accepted, but the checker's reading says reject ({why})")
            elif placed is not None and not accepted:
                self.report(P.ADMISSION, f"application {app_id}",
                            f"rejected, but the checker's reading accepts it into "
                            f"{placed.path}")
        for app_id in call.removed_apps:
            rv.apps.pop(app_id, None)
            rv.finished.pop(app_id, None)
            for k in [k for k in rv.asks if k[0] == app_id]:
                del rv.asks[k]

    def _accepted(self, rv: RMView, call: Call, add: si.AddApplicationRequest,
                  placed: model.Placed | None) -> None:
        app_id = add.application_id
        ph = add.placeholder_ask.as_dict() if add.placeholder_ask else {}
        timeout = add.execution_timeout_milli_seconds
        path = placed.path if placed is not None else model.qualify(add.queue_name)
        rv.apps[app_id] = AppView(
            app_id, add.partition_name or "default", add, path,
            gang=qty.positive(ph), style=add.gang_scheduling_style or "Soft",
            placeholder_timeout=timeout / 1000.0 if timeout > 0 else 15 * 60.0,
            state_since=call.now)
        rv.finished.pop(app_id, None)
        for k in [k for k in rv.asks if k[0] == app_id]:
            del rv.asks[k]
        core = self.core_partition(call.rm_id, add.partition_name)
        app = core.apps.get(app_id) if core is not None else None
        if placed is not None and (app is None or app.queue is None
                                   or app.queue.path != placed.path):
            where = None if app is None or app.queue is None else app.queue.path
            self.report(P.ADMISSION, f"application {app_id}",
                        f"accepted into {where}, the checker's placement reading says "
                        f"{placed.path}")

    # ------------------------------------------------------------------ nodes
    def _begin_nodes(self, rv: RMView, call: Call, req: si.NodeRequest) -> None:
        known = set(rv.nodes)
        for info in req.nodes:
            if info.action == NA.CREATE:
                if info.node_id in known:
                    call.must_reject_nodes.append(info.node_id)
                known.add(info.node_id)
                continue
            node = rv.nodes.get(info.node_id)
            bad = (node is None or info.action == NA.UNKNOWN_ACTION_FROM_RM
                   or (info.action == NA.DRAIN_NODE and node.state != "Schedulable")
                   or (info.action == NA.DRAIN_TO_SCHEDULABLE and node.state != "Draining"))
            if bad:
                call.must_reject_nodes.append(info.node_id)
            elif info.action == NA.DECOMISSION:
                for a in rv.allocs_on(info.node_id):
                    call.confirm_expected[a.uuid] += 1
                    call.gone[a.uuid] = rv.allocs.pop(a.uuid)

    def _end_nodes(self, rv: RMView, call: Call, req: si.NodeRequest) -> None:
        for node_id in call.must_reject_nodes:
            if node_id not in call.rejected_nodes:
                self.report(P.EXPECTED_REJECTION, f"node {node_id}",
                            "an invalid node request was not rejected")
        for info in req.nodes:
            if info.node_id in call.rejected_nodes:
                if info.action == NA.CREATE:
                    self._check_not_recovered(call, info)
                continue
            if info.action == NA.CREATE:
                if call.node_answers[info.node_id] != 1:
                    self.report(P.ANSWERED, f"node {info.node_id}",
                                f"answered {call.node_answers[info.node_id]} times")
                if info.node_id not in call.accepted_nodes:
                    continue
                self._node_created(rv, call, info)
            elif info.node_id in rv.nodes:
                self._node_action(rv, info)

    def _node_created(self, rv: RMView, call: Call, info: si.NodeInfo) -> None:
        partition = info.attributes.get(NODE_PARTITION) or "default"
        rv.nodes[info.node_id] = NodeView(
            info.node_id, partition,
            info.schedulable_resource.as_dict() if info.schedulable_resource else {},
            info.occupied_resource.as_dict() if info.occupied_resource else {})
        core = self.core_partition(call.rm_id, partition)
        for msg in info.existing_allocations:
            ask = rv.asks.get((msg.application_id, msg.allocation_key))
            rv.allocs[msg.uuid] = AllocView(
                msg.uuid, msg.application_id, msg.allocation_key, info.node_id,
                msg.resource_per_alloc.as_dict(), msg.placeholder and bool(msg.task_group_name),
                msg.task_group_name, call.now, recovered=True, message=msg)
            self.name(msg.uuid, msg.application_id, msg.allocation_key)
            if ask is None:
                # 001 "Application recovery": the core generates the ask it came from.
                ask = rv.asks[(msg.application_id, msg.allocation_key)] = AskView(
                    msg.application_id, msg.allocation_key, msg.resource_per_alloc.as_dict(),
                    0, msg.placeholder and bool(msg.task_group_name), msg.task_group_name, 0)
                ask.max_allocations = 0
            if ask.allocated >= ask.max_allocations:
                ask.max_allocations += 1
            ask.allocated += 1
            app = rv.apps.get(msg.application_id)
            if app is not None and msg.placeholder and app.placeholder_start is None:
                app.placeholder_start = call.now
            held = core.allocations.get(msg.uuid) if core is not None else None
            if held is None or held.app.id != msg.application_id or held.node.id != info.node_id \
                    or not qty.same(held.resource, msg.resource_per_alloc.as_dict()) \
                    or held.placeholder != (msg.placeholder and bool(msg.task_group_name)) \
                    or held.task_group != msg.task_group_name:
                self.report(P.RECOVERY, f"allocation {msg.uuid}",
                            "the recovered allocation is missing or differs from what the RM "
                            "reported (app, node, resource, placeholder, task group)")

    def _check_not_recovered(self, call: Call, info: si.NodeInfo) -> None:
        core = self.core_partition(call.rm_id,
                                    info.attributes.get(NODE_PARTITION) or "default")
        rv = self.rms[call.rm_id]
        for msg in info.existing_allocations:
            if msg.uuid and msg.uuid not in rv.allocs and core is not None \
                    and msg.uuid in core.allocations:
                self.report(P.RECOVERY, f"allocation {msg.uuid}",
                            f"node {info.node_id} was rejected but the allocation it "
                            "reported was recovered")

    def _node_action(self, rv: RMView, info: si.NodeInfo) -> None:
        node = rv.nodes[info.node_id]
        if info.action == NA.UPDATE:
            if info.schedulable_resource is not None:
                node.capacity = info.schedulable_resource.as_dict()
            if info.occupied_resource is not None:
                node.occupied = info.occupied_resource.as_dict()
        elif info.action == NA.DRAIN_NODE:
            node.state = "Draining"
        elif info.action == NA.DRAIN_TO_SCHEDULABLE:
            node.state = "Schedulable"
        elif info.action == NA.DECOMISSION:
            del rv.nodes[info.node_id]

    # ------------------------------------------------------------------ allocations
    def _begin_allocation(self, rv: RMView, call: Call, req: si.AllocationRequest) -> None:
        """Apply what the request does to the shim's knowledge before the core answers."""
        for ask in req.asks:
            call.asks_sent.append(ask)
            key = (ask.application_id, ask.allocation_key)
            app = rv.apps.get(ask.application_id)
            if app is None or not app.live or app.state == "Failing" \
                    or not qty.positive(ask.resource_ask.as_dict()):
                call.must_reject_asks.append(key)
                continue
            old = rv.asks.get(key)
            call.previous_asks.setdefault(key, old)
            rv.asks[key] = AskView(
                ask.application_id, ask.allocation_key, ask.resource_ask.as_dict(),
                ask.max_allocations, ask.placeholder and bool(ask.task_group_name),
                ask.task_group_name, ask.execution_timeout_milli_seconds,
                allocated=old.allocated if old is not None else 0)
        releases = req.releases
        if releases is None:
            return
        for ask_rel in releases.allocation_asks_to_release:
            if ask_rel.termination_type != TT.STOPPED_BY_RM:
                continue
            for key in [k for k in rv.asks if k[0] == ask_rel.application_id and (
                    not ask_rel.allocation_key or k[1] == ask_rel.allocation_key)]:
                # The core forgets a released ask: the same key later is a new ask.
                call.ask_confirm_expected[key] += 1
                del rv.asks[key]
        for rel in releases.allocations_to_release:
            if rel.termination_type == TT.STOPPED_BY_RM:
                if rel.uuid:
                    targets = [rv.allocs[rel.uuid]] if rel.uuid in rv.allocs else []
                else:
                    targets = rv.allocs_of(rel.application_id)
                for a in targets:
                    if rel.application_id and a.app != rel.application_id:
                        continue
                    call.confirm_expected[a.uuid] += 1
                    call.gone[a.uuid] = rv.allocs.pop(a.uuid)
            else:
                found = rv.allocs.get(rel.uuid)
                if found is not None and found.releasing == rel.termination_type:
                    call.shim_confirmed[found.uuid] = rv.allocs.pop(found.uuid)

    def _end_allocation(self, rv: RMView, call: Call, req: si.AllocationRequest) -> None:
        for key in call.must_reject_asks:
            if key not in call.rejected_asks:
                self.report(P.EXPECTED_REJECTION, f"ask {key[0]}/{key[1]}",
                            "an ask the shim knows is invalid was not rejected")
        for key, old in call.previous_asks.items():
            if key in call.rejected_asks:
                if old is None:
                    rv.asks.pop(key, None)
                else:
                    rv.asks[key] = old

    # ------------------------------------------------------------------ callbacks
    def _receiving(self, rm_id: str) -> tuple[RMView, Call] | None:
        rv = self.rms.get(rm_id)
        call = self.call
        if call is None or rv is None:
            return None
        if rv.stopped and (call.rm_id != rm_id or call.step.call == "schedule"):
            self.report(P.PAUSED, f"rm {rm_id}", "a message reached an RM that unregistered, "
                        "other than the answer to its own request")
            return None
        return rv, call

    def on_allocation(self, rm_id: str, response: si.AllocationResponse) -> None:
        self.observed.append(("update_allocation", response))
        got = self._receiving(rm_id)
        if got is None:
            return
        rv, call = got
        # The core delivers decisions in order; a response's fields read in order.
        for msg in response.new:
            answers.new_allocation(self, rv, call, msg)
        for rel in response.released:
            answers.core_release(self, rv, call, rel)
        for ask_rel in response.released_asks:
            key = (ask_rel.application_id, ask_rel.allocation_key)
            call.released_asks.append(ask_rel)
            if ask_rel.termination_type == TT.STOPPED_BY_RM:
                if call.ask_confirm_expected[key] == 0:
                    self.report(P.CONFIRMATIONS, f"ask {key[0]}/{key[1]}",
                                "ask release STOPPED_BY_RM without the RM asking for it")
                call.ask_confirmed[key] += 1
                continue
            ask = rv.asks.get(key)
            if ask_rel.termination_type != TT.TIMEOUT or ask is None or not ask.placeholder \
                    or ask.pending <= 0:
                self.report(P.RELEASES, f"ask {key[0]}/{key[1]}",
                            f"ask released {ask_rel.termination_type.name}: only pending "
                            "placeholder asks are released by the core (TIMEOUT)")
            if ask is not None:
                del rv.asks[key]
        for rej in response.rejected:
            if not rej.reason:
                self.report(P.ANSWERED, f"ask {rej.application_id}/{rej.allocation_key}",
                            "rejected without a reason")
            call.rejected_asks.append((rej.application_id, rej.allocation_key))

    def on_application(self, rm_id: str, response: si.ApplicationResponse) -> None:
        self.observed.append(("update_application", response))
        got = self._receiving(rm_id)
        if got is None:
            return
        rv, call = got
        expected = {add.application_id: (add, placed) for add, placed, _ in call.new_apps}
        for acc in response.accepted:
            call.app_answers[acc.application_id] += 1
            call.accepted_apps.append(acc.application_id)
            add, placed = expected.get(acc.application_id, (None, None))
            if add is not None:
                self._accepted(rv, call, add, placed)
        for rej in response.rejected:
            call.app_answers[rej.application_id] += 1
            call.rejected_apps.append(rej.application_id)
            if not rej.reason:
                self.report(P.ANSWERED, f"application {rej.application_id}",
                            "rejected without a reason")
        for upd in response.updated:
            answers.app_update(self, rv, call, upd)

    def on_node(self, rm_id: str, response: si.NodeResponse) -> None:
        self.observed.append(("update_node", response))
        got = self._receiving(rm_id)
        if got is None:
            return
        _rv, call = got
        for acc in response.accepted:
            call.node_answers[acc.node_id] += 1
            call.accepted_nodes.append(acc.node_id)
        for rej in response.rejected:
            call.node_answers[rej.node_id] += 1
            call.rejected_nodes.append(rej.node_id)
            if not rej.reason:
                self.report(P.ANSWERED, f"node {rej.node_id}", "rejected without a reason")

    def on_events(self, rm_id: str, events: list[si.EventRecord]) -> None:
        self.observed.append(("send_event", events))
        if self._receiving(rm_id) is None:
            return
        stamp = int(self.clock.now() * 1e9)
        for e in events:
            if not e.object_id or not e.message or e.timestamp_nano != stamp:
                self.report(P.MESSAGES, f"event {e.object_id!r}",
                            f"an event must name its object, say something and carry the "
                            f"clock's time: {e.message!r} at {e.timestamp_nano}")

    def on_scheduling_state(self, rm_id: str,
                            request: si.UpdateContainerSchedulingStateRequest) -> None:
        self.observed.append(("update_container_scheduling_state", request))
        got = self._receiving(rm_id)
        if got is None:
            return
        rv, _call = got
        if request.state == si.SchedulingState.UNKNOWN_SCHEDULING_STATE or \
                (request.application_id, request.allocation_key) not in rv.asks:
            self.report(P.MESSAGES, f"ask {request.application_id}/{request.allocation_key}",
                        f"scheduling state {request.state.name} for an ask the shim did not "
                        "send, or an unknown state")

    # ------------------------------------------------------------------ end of a call
    def _end_common(self, rv: RMView, call: Call) -> None:
        answers.confirmations(self, rv, call)
        answers.release_reasons(self, rv, call)
        answers.replacements(self, rv, call)
        answers.gang_timeout_response(self, rv, call)
        self._told_agrees(rv)

    def _told_agrees(self, rv: RMView) -> None:
        """What the shim was told is what the core holds: every application's state, every
        node as the RM reported it (a state change never reported, a node lost or resized
        silently, shows here)."""
        if rv.paused:
            return
        apps: dict[str, Any] = {}
        nodes: dict[str, Any] = {}
        for p in view.partitions(self.api):
            if p.rm_id == rv.rm_id:
                apps.update(p.apps)
                nodes.update(p.nodes)
        for app_id, told in rv.apps.items():
            held = apps.get(app_id)
            if held is not None and held.state != told.state:
                self.report(P.APP_STATES, f"application {app_id}",
                            f"the shim was last told {told.state}, the core holds it "
                            f"{held.state}")
        for node_id in sorted(set(nodes) | set(rv.nodes)):
            told_node = rv.nodes.get(node_id)
            held_node = nodes.get(node_id)
            if told_node is None or held_node is None:
                self.report(P.NODES, f"node {node_id}",
                            "the core holds a node the RM did not register or removed"
                            if told_node is None else "the core lost a node the RM registered")
            elif not (qty.same(held_node.capacity, told_node.capacity)
                      and qty.same(held_node.occupied, told_node.occupied)
                      and held_node.state == told_node.state):
                self.report(P.NODES, f"node {node_id}",
                            f"the core holds it {held_node.state} with "
                            f"{qty.show(held_node.capacity)} (occupied "
                            f"{qty.show(held_node.occupied)}), the RM reported "
                            f"{told_node.state} {qty.show(told_node.capacity)} (occupied "
                            f"{qty.show(told_node.occupied)})")

    def _end_schedule(self, rv: RMView, call: Call) -> None:
        answers.timers(self, rv, call)

    def _paused_timeouts(self, call: Call) -> None:
        """``002`` "Paused --timeout--> Stopped", when the scheduler has a pause timeout."""
        timeout = self.api.rm_pause_timeout
        states = {rm.id: rm.state for rm in view.rms(self.api)}
        for rv in self.rms.values():
            if not rv.paused or rv.stopped:
                continue
            due = timeout is not None and call.now >= rv.paused_at + timeout
            if states.get(rv.rm_id) == "Stopped":
                rv.stopped = True
                if not due:
                    self.report(P.TIMERS, f"rm {rv.rm_id}", "stopped before its pause timeout")
            elif due:
                self.report(P.TIMERS, f"rm {rv.rm_id}",
                            f"paused for {call.now - rv.paused_at:g} s, past the pause "
                            f"timeout {timeout:g} s, and not stopped")

    # ------------------------------------------------------------------ Monitor protocol
    def name(self, uuid: str, app_id: str, key: str) -> None:
        """Give an allocation a name that survives the removal of unrelated steps."""
        if uuid in self.sym:
            return
        self.sym[uuid] = (app_id, key, self._sym_count[(app_id, key)])
        self._sym_count[(app_id, key)] += 1

    def passes(self, key: str, node_id: str) -> bool:
        return self.predicate is None or self.predicate(key, node_id)


__all__ = ["ModelShim", "Predicate"]
