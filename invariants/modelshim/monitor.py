"""The model shim: the callback the core talks to, and the monitor of the SI protocol.

The monitor is told each step before it runs (:meth:`ModelShim.begin`), sees
every callback the step causes, and judges them when the step ends
(:meth:`ModelShim.end`) against what a shim knows (``invariants/readings/shim.py``)
and the checker's own reading of the configuration (``invariants/readings/model.py``).
Each rule it applies is a named protocol check (``invariants/properties/protocol.py``).
Judging that needs no more of it than ``invariants/readings/calls.py``'s ``Monitor``
lives in modules of its own, which never import this one: the configuration
an RM registers or reloads (``invariants/modelshim/configured.py``), what each request
must do (``invariants/modelshim/requests.py``) and what the core says
(``invariants/modelshim/answers.py``).
It works the same for the random checker, the explorer and the replay of a
trace a real shim recorded: it needs only the traffic, plus a read-only look
at the core (``invariants/readings/view.py``) for the checks that compare the two.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from itertools import groupby
from typing import Any

import orjson

from invariants.modelshim import (
    answers,
    bridge,
    configured,
    node_requests,
    requests,
    scheduling_states,
)
from invariants.modelshim.requests import NODE_PARTITION
from invariants.properties import limits, preemption_judging, quota_preemptions
from invariants.properties import preemptions as preemption
from invariants.properties import protocol as P
from invariants.properties.catalog import Violation
from invariants.properties.scheduling import PREEMPTED
from invariants.readings import arithmetic as qty
from invariants.readings import view
from invariants.readings.calls import Call
from invariants.readings.shim import RMView
from scheduler import Scheduler, si
from scheduler.clock import Clock
from scheduler.errors import UnknownResourceManager
from scheduler.si import today
from scheduler.trace import Step

TT = si.TerminationType
NA = si.NodeAction

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
            self.predicates = self._predicates

    def _predicates(self, args: si.PredicatesArgs) -> bool:
        """The shim's predicates; a method, so that the explorer can pickle the world."""
        assert self._shim.predicate is not None
        return self._shim.predicate(args.allocation_key, args.node_id)

    def _guard(self, handler: Callable[[str, Any], None], message: Any) -> None:
        try:
            handler(self._rm, message)
        except Exception as exc:
            self._shim.errors.append(exc)

    def update_allocation(self, response: si.AllocationResponse | today.AllocationResponse
                          ) -> None:
        self._guard(self._shim.on_allocation, response)

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._guard(self._shim.on_application, response)

    def update_node(self, response: si.NodeResponse) -> None:
        self._guard(self._shim.on_node, response)

    def send_event(self, events: list[si.EventRecord]) -> None:
        self._guard(self._shim.on_events, events)

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
        | today.UpdateContainerSchedulingStateRequest
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
        self.today_did: set[str] = set()
        self.read_as: Step | None = None
        """The last step as the seed's SI says it (today's steps read by the bridge)."""
        """Which of today's SI's paths the last step took (coverage)."""

    # ------------------------------------------------------------------ helpers
    def callback(self, rm_id: str) -> _Callback:
        return _Callback(self, rm_id)

    def report(self, check: str, subject: str, explanation: str) -> None:
        assert check in P.PROTOCOL, check
        self.violations.append(Violation(check, subject, explanation))

    def rm(self, rm_id: str) -> RMView | None:
        return self.rms.get(rm_id)

    def _dump(self) -> bytes:
        """The core's state dump as canonical bytes, to tell whether a call changed it."""
        dump = self.api.state_dump()
        try:
            return orjson.dumps(dump, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # an integer past 64 bits: then the two readings differ, rightly
            return json.dumps(dump, sort_keys=True).encode()

    def core_partition(self, rm_id: str, name: str) -> Any:
        for p in view.partitions(self.api):
            if p.rm_id == rm_id and p.name == (name or "default"):
                return p
        return None

    # ------------------------------------------------------------------ steps
    def begin(self, step: Step) -> None:
        """Note what the shim expects from ``step`` before the core runs it."""
        rm_id = step.rm_id or getattr(step.request, "rm_id", "")
        self.today_did = set()
        reading = None
        if bridge.is_today(step):
            # Today's SI, read by the checker's own reading (invariants/modelshim/bridge.py): the
            # seed's request it means is judged below, what only today's SI has by the bridge.
            # A paused or stopped RM's request is refused whole: nothing of it is applied.
            known = self.rms.get(rm_id)
            live = known if known is not None and not (known.paused or known.stopped) else None
            step, reading = bridge.read(self, live, step, self.clock.now())
        call = Call(step, rm_id, self.clock.now(), today=reading)
        self.call = call
        self.observed = []
        if step.call == "schedule":
            call.reserved_before = {key: node.id for p in view.partitions(self.api)
                                    for key, node in p.reservations.items()}
        rv = self.rms.get(rm_id)
        if rv is not None:
            call.states_before = {a: v.state for a, v in rv.apps.items()}
        refused = rv is not None and (rv.paused or rv.stopped) and step.call in (
            "update_application", "update_node", "update_allocation")
        configures = step.call in ("register_resource_manager", "update_configuration")
        if refused or configures or (rv is not None and not (reading and reading.effects)
                                     and self._ineffective(rv, step)):
            call.dump_before = self._dump()
        if rv is None or refused:
            return
        if step.call == "update_application":
            requests.begin_apps(self, rv, call, step.request)
        elif step.call == "update_node":
            node_requests.begin_nodes(rv, call, step.request)
        elif step.call == "update_allocation":
            requests.begin_allocation(rv, call, step.request)

    def end(self, step: Step, error: BaseException | None = None) -> None:
        """Judge what the core answered to ``step``; record what the shim now knows."""
        call = self.call
        assert call is not None
        call.error = error
        step = call.step
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
            requests.end_apps(self, rv, call)
        elif rv is not None and step.call == "update_node":
            node_requests.end_nodes(self, rv, call, step.request)
        elif rv is not None and step.call == "update_allocation":
            requests.end_allocation(self, rv, call, step.request)
        if rv is not None and call.today is not None and not (rv.paused or rv.stopped):
            bridge.end(self, rv, call)
            self.today_did = call.today.did
        self.read_as = step
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
            ) and all(not requests.held_by(rv, r.application_id, r.partition_name)
                      for r in req.remove)
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
                        and requests.held_by(rv, ask.application_id, ask.partition_name):
                    return False
            if req.releases is None:
                return True
            if any(requests.released_by(rv, rel)
                   for rel in req.releases.allocations_to_release):
                return False
            return not any(requests.asks_released_by(rv, r)
                           for r in req.releases.allocation_asks_to_release)
        return False

    # ------------------------------------------------------------------ callbacks
    def _receiving(self, rm_id: str, decision: bool = True) -> tuple[RMView, Call] | None:
        rv = self.rms.get(rm_id)
        call = self.call
        if call is None or rv is None:
            return None
        if rv.stopped and (call.rm_id != rm_id or call.step.call == "schedule"):
            self.report(P.PAUSED, f"rm {rm_id}", "a message reached an RM that unregistered, "
                        "other than the answer to its own request")
            return None
        if decision and rv.paused and call.step.call == "schedule":
            # A paused RM's timers do not fire and nothing is scheduled for it
            # (docs/design-notes.md, "The RM lifecycle's timeout has no length"); only
            # the events of its pause timeout may reach it.
            self.report(P.PAUSED, f"rm {rm_id}", "a message reached a paused RM in a "
                        "scheduling cycle")
            return None
        return rv, call

    def on_allocation(self, rm_id: str,
                      response: si.AllocationResponse | today.AllocationResponse) -> None:
        if isinstance(response, today.AllocationResponse):
            response = bridge.answer(self, self.rms.get(rm_id), self.call, response)
        self.observed.append(("update_allocation", response))
        got = self._receiving(rm_id)
        if got is None:
            return
        rv, call = got
        bound = call.today.bound if call.today is not None else {}
        # The core delivers decisions in order; a response's fields read in order.
        for msg in response.new:
            if (msg.application_id, msg.allocation_key) in bound:
                bridge.bound_answered(self, rv, call, msg)
            else:
                answers.new_allocation(self, rv, call, msg)
        # Consecutive PREEMPTED_BY_SCHEDULER releases with one message are one decision's
        # victims: judged together, in the state the decision was taken in, before the
        # releases mark them.
        for (preempting, message), run in groupby(
                response.released, key=lambda r: (r.termination_type == PREEMPTED, r.message)):
            group = list(run)
            if preempting:
                victims = [a for r in group if (a := rv.allocs.get(r.uuid)) is not None
                           and a.releasing is None]
                if message.startswith(preemption.QUOTA_MESSAGE):
                    quota_preemptions.judge_quota(self, rv, call, victims, message)
                else:
                    preemption_judging.judge(self, rv, call, victims, message)
            for rel in group:
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
                requests.accepted(self, rv, call, add, placed)
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
        if self._receiving(rm_id, decision=False) is None:
            return
        stamp = int(self.clock.now() * 1e9)
        bridge.judge_events(self.report, events)
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
        rv, call = got
        scheduling_states.scheduling_state(self, rv, call, request)
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
        preemption_judging.reservations_made(self, rv, call)
        self._told_agrees(rv)
        limits.groups_agree(self, rv)
        requests.settle_created(self, rv, call)
        configured.unconfigured_gone(self, rv, call)

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
        scheduling_states.waiting_for_room(self, rv, call)

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
