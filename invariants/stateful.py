"""The stateful checker: a model shim drives the scheduler at random.

A Hypothesis ``RuleBasedStateMachine`` whose rules are the things a shim and
its cluster do: nodes come, change, drain and go; applications and asks are
added and removed, valid and invalid; the scheduler runs; pods are released by
the RM; core-initiated releases are confirmed late, twice, or not at all; the
clock jumps past every timeout; the RM restarts and resyncs from what the shim
knows; the configuration changes quotas or is invalid. Every registered
invariant is checked after every step, and each rule checks the protocol
answer it expects (a rejection for bad input, no state change).

``make_machine(config_text)`` builds the machine for any queue configuration;
``yunikorn-fsm check`` runs it (see :mod:`invariants.cli`).
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from scheduler import ConfigError, ManualClock, Scheduler, si

from .plan import CORE, Plan, with_max_memory
from .recorder import LifecycleRecorder
from .registry import REGISTRY, CheckContext
from .shim import ModelShim, ShimAsk

RM_ID = "checker-rm"
TT = si.TerminationType

DEFAULT_CONFIG = """\
partitions:
  - name: default
    nodesortpolicy:
      type: fair
    queues:
      - name: root
        queues:
          - name: a
            submitacl: "*"
            maxapplications: 2
            resources:
              guaranteed: {memory: 60}
              max: {memory: 120, vcore: 20}
          - name: b
            submitacl: "alice"
            properties:
              application.sort.policy: fair
            resources:
              max: {memory: 150}
            queues:
              - name: b1
                resources:
                  max: {memory: 80}
              - name: b2
          - name: c
            adminacl: " admins"
            properties:
              application.sort.policy: stateaware
"""

BAD_CONFIGS = [
    "partitions: [",
    "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    "        queues:\n          - name: x\n          - name: x\n",
    "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    "        queues:\n          - name: x\n            resources:\n"
    "              guaranteed: {memory: 10}\n              max: {memory: 5}\n",
    "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    "        queues:\n          - name: x\n            properties:\n"
    "              application.sort.policy: random\n",
]
CONFIRM_MODES = ["none", "none", "first", "all", "all_twice"]
DELAYS = [0.5, 5.0, 29.0, 31.0, 61.0, 900.0, 3 * 24 * 3600.0 + 1]


class CheckerMachine(RuleBasedStateMachine):
    """The base of every machine :func:`make_machine` builds: run statistics per class."""

    rule_counts: ClassVar[Counter[str]]
    invariant_checks: ClassVar[Counter[str]]


def make_machine(config_text: str = DEFAULT_CONFIG) -> type[CheckerMachine]:
    """A state machine class bound to one queue configuration."""
    plan = Plan.of(config_text)
    config = plan.config
    partition_name = plan.partition_name
    leaves, users, strict = plan.leaves, plan.users, plan.strict
    submittable, forbidden = plan.submittable, plan.forbidden
    gang_choices, fair_leaves = plan.gang_choices, plan.fair_leaves
    bad_queues, removable = plan.bad_queues, plan.removable

    class SchedulerMachine(CheckerMachine):
        """Rules a shim and its cluster can do; every invariant after every step."""

        rule_counts: ClassVar[Counter[str]] = Counter()
        invariant_checks: ClassVar[Counter[str]] = Counter()

        def __init__(self) -> None:
            super().__init__()
            self.clock = ManualClock(start=1_000.0)
            self.api = Scheduler(clock=self.clock)
            self.recorder = LifecycleRecorder(self.api)
            self.shim = ModelShim()
            self.config_text = config_text
            self.config = config
            self.next_id = 0
            self.nodes: dict[str, dict[str, int]] = {}
            self.factor = 1.0
            self.removed: set[str] = set()
            self.peak_running = 0
            self.peak_releasing = 0

        # -- helpers ------------------------------------------------------
        def _count(self, name: str) -> None:
            type(self).rule_counts[name] += 1

        def _new_id(self, prefix: str) -> str:
            self.next_id += 1
            return f"{prefix}{self.next_id}"

        def _dump(self) -> str:
            return json.dumps(self.api.state_dump(), sort_keys=True)

        def _register(self) -> None:
            self.api.register_resource_manager(
                si.RegisterResourceManagerRequest(rm_id=RM_ID, policy_group="queues",
                                                  config=self.config_text), self.shim)

        def _live_apps(self) -> list[str]:
            return sorted(a for a, s in self.shim.app_states.items()
                          if s not in ("Completed", "Failed", "Rejected", "Expired"))

        # -- set-up -------------------------------------------------------
        @initialize(nodes=st.integers(0, 3),
                    apps=st.lists(st.sampled_from(submittable), max_size=2)
                    if submittable else st.just([]))
        def register(self, nodes: int, apps: list[tuple[str, tuple[str, list[str]]]]) -> None:
            """Register the RM, then start from a small cluster (so rules find work)."""
            self._register()
            assert self.api.state_dump()["rms"] == [{"rm_id": RM_ID, "state": "Running"}]
            for _ in range(nodes):
                self.add_node(memory=100, vcore=8 * CORE, occupied=0)
            for choice in apps:
                self.add_app(choice)

        # -- nodes --------------------------------------------------------
        @rule(memory=st.sampled_from([20, 40, 100]), vcore=st.sampled_from([2 * CORE, 8 * CORE]),
              occupied=st.sampled_from([0, 0, 10]))
        def add_node(self, memory: int, vcore: int, occupied: int) -> None:
            self._count("add_node")
            node_id = self._new_id("node-")
            occ = si.Resource.of(memory=occupied) if occupied else None
            self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
                node_id=node_id, action=si.NodeAction.CREATE, occupied_resource=occ,
                schedulable_resource=si.Resource.of(memory=memory, vcore=vcore))]))
            assert node_id in self.shim.accepted_nodes
            self.nodes[node_id] = {"memory": memory, "vcore": vcore}

        @precondition(lambda self: bool(self.nodes))
        @rule(data=st.data(), memory=st.sampled_from([10, 40, 120]),
              occupied=st.sampled_from([0, 5, 30]))
        def update_node(self, data: st.DataObject, memory: int, occupied: int) -> None:
            self._count("update_node")
            node_id = data.draw(st.sampled_from(sorted(self.nodes)))
            self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
                node_id=node_id, action=si.NodeAction.UPDATE,
                schedulable_resource=si.Resource.of(memory=memory, vcore=8 * CORE),
                occupied_resource=si.Resource.of(memory=occupied))]))

        @precondition(lambda self: bool(self.nodes))
        @rule(data=st.data(), action=st.sampled_from([
            si.NodeAction.DRAIN_NODE, si.NodeAction.DRAIN_TO_SCHEDULABLE,
            si.NodeAction.DECOMISSION]))
        def node_action(self, data: st.DataObject, action: si.NodeAction) -> None:
            self._count(f"node_{action.name.lower()}")
            node_id = data.draw(st.sampled_from(sorted(self.nodes)))
            self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
                node_id=node_id, action=action)]))
            if action == si.NodeAction.DECOMISSION:
                del self.nodes[node_id]
                assert all(n != node_id for _a, n in self.shim.view.values()), \
                    "allocations on a decommissioned node must be reported released"

        # -- applications -------------------------------------------------
        @precondition(lambda self: bool(submittable))
        @rule(choice=st.sampled_from(submittable))
        def add_app(self, choice: tuple[str, tuple[str, list[str]]]) -> None:
            """A valid submission: a leaf queue and a user its ACLs allow."""
            self._count("add_app")
            queue, (user, groups) = choice
            app_id = self._new_id("app-")
            accepted = self._submit(app_id, queue, user, groups, partition_name)
            if queue in self.removed:
                assert not accepted or not strict, \
                    f"{app_id} was accepted into removed queue {queue}"
            else:
                assert accepted or not strict, \
                    f"{user} may submit to {queue} but {app_id} was not accepted"

        @rule(kind=st.sampled_from(["queue", "acl", "duplicate", "partition", "resubmit",
                                    "gang_fair", "gang_style"]),
              data=st.data())
        def add_bad_app(self, kind: str, data: st.DataObject) -> None:
            """A submission the core must refuse, or a resubmission of a finished id."""
            self._count(f"add_bad_app:{kind}")
            live = self._live_apps()
            finished = sorted(a for a in self.shim.app_states if a not in live)
            queue, (user, groups) = (submittable[0] if submittable
                                     else (leaves[0] if leaves else "root.x", users[0]))
            partition = partition_name
            gang: dict[str, Any] = {}
            if kind == "gang_fair" and fair_leaves:
                queue, (user, groups) = data.draw(st.sampled_from(fair_leaves))
                gang = {"placeholder_ask": si.Resource.of(memory=1)}
                app_id = self._new_id("gang-")
            elif kind == "gang_style" and submittable:
                gang = {"placeholder_ask": si.Resource.of(memory=1),
                        "gang_scheduling_style": "Medium"}
                app_id = self._new_id("gang-")
            elif kind == "queue":
                queue = data.draw(st.sampled_from(bad_queues))
                app_id = self._new_id("app-")
            elif kind == "acl" and forbidden:
                queue, (user, groups) = data.draw(st.sampled_from(forbidden))
                app_id = self._new_id("app-")
            elif kind == "duplicate" and live:
                app_id = data.draw(st.sampled_from(live))
            elif kind == "resubmit" and finished and submittable:
                app_id = data.draw(st.sampled_from(finished))
                accepted = self._submit(app_id, queue, user, groups, partition)
                assert accepted or not strict or queue in self.removed, \
                    f"finished application {app_id} could not be submitted again"
                return
            else:
                partition = "no-such-partition"
                app_id = self._new_id("app-")
            live_before = app_id in live
            before = self.api.state_dump()
            rejections = len(self.shim.rejected_apps)
            accepted = self._submit(app_id, queue, user, groups, partition, **gang)
            if accepted and not strict and kind in ("queue", "acl", "gang_fair"):
                return  # a placement rule found this application another queue
            assert self.shim.rejected_apps[rejections:] == [app_id], \
                f"bad submission ({kind}) of {app_id} was not rejected"
            _assert_only_rejected_app_added(before, self.api.state_dump(), app_id, live_before)

        def _submit(self, app_id: str, queue: str, user: str, groups: list[str],
                    partition: str, **gang: Any) -> bool:
            """Submit; remember the request when accepted (the shim replays it on restart)."""
            request = si.AddApplicationRequest(
                application_id=app_id, queue_name=queue, partition_name=partition,
                ugi=si.UserGroupInformation(user=user, groups=groups),
                tags={"namespace": "checker-ns"}, **gang)
            rejections = len(self.shim.rejected_apps)
            self.api.update_application(si.ApplicationRequest(rm_id=RM_ID, new=[request]))
            accepted = self.shim.app_states.get(app_id) == "New" and \
                len(self.shim.rejected_apps) == rejections
            if accepted:
                self.shim.apps[app_id] = request
                self.shim.gangs.pop(app_id, None)
                self.shim.asks = {k: v for k, v in self.shim.asks.items() if k[0] != app_id}
            return accepted

        # -- gang applications ----------------------------------------------
        @precondition(lambda self: bool(gang_choices))
        @rule(choice=st.sampled_from(gang_choices), style=st.sampled_from(["Hard", "Soft", ""]),
              groups=st.lists(st.tuples(st.integers(1, 3), st.sampled_from([5, 10, 20])),
                              min_size=1, max_size=2),
              timeout=st.sampled_from([0, 60_000]))
        def add_gang_app(self, choice: tuple[str, tuple[str, list[str]]], style: str,
                         groups: list[tuple[int, int]], timeout: int) -> None:
            """A gang: task groups of members, the total as placeholderAsk (001)."""
            self._count(f"add_gang_app:{style or 'default'}")
            queue, (user, user_groups) = choice
            total = {"memory": sum(n * size for n, size in groups),
                     "vcore": sum(n for n, _size in groups) * CORE}
            app_id = self._new_id("gang-")
            fits = queue not in self.removed and self._fits_path_max(queue, total)
            accepted = self._submit(
                app_id, queue, user, user_groups, partition_name,
                placeholder_ask=si.Resource.of(**total), gang_scheduling_style=style,
                execution_timeout_milli_seconds=timeout)
            assert accepted == fits or not strict, (
                f"gang {app_id} ({total}) into {queue}: accepted={accepted}, fits the queue "
                f"path's max={fits}")
            if accepted:
                self.shim.gangs[app_id] = {f"tg{i}": g for i, g in enumerate(groups)}

        def _fits_path_max(self, queue: str, total: dict[str, int]) -> bool:
            queues = {q["path"]: q for p in self.api.state_dump()["partitions"]
                      for q in p["queues"]}
            path = queue
            while path:
                mx = queues[path]["max"] or {}
                if any(k in mx and v > mx[k] for k, v in total.items()):
                    return False
                path = path.rpartition(".")[0]
            return True

        def _live_gangs(self) -> list[str]:
            live = set(self._live_apps())
            return sorted(a for a in self.shim.gangs if a in live)

        @precondition(lambda self: bool(self._live_gangs()))
        @rule(data=st.data(), then_schedule=st.booleans())
        def send_placeholders(self, data: st.DataObject, then_schedule: bool) -> None:
            """The shim creates one placeholder pod per member of a task group (option A)."""
            self._count("send_placeholders")
            app_id = data.draw(st.sampled_from(self._live_gangs()))
            group = data.draw(st.sampled_from(sorted(self.shim.gangs[app_id])))
            members, size = self.shim.gangs[app_id][group]
            asks = [ShimAsk(app_id, f"{app_id}-{group}-ph-{self._new_id('')}", size, CORE, 1, 0, 0,
                            task_group=group, placeholder=True) for _ in range(members)]
            n = len(self.shim.rejected_asks)
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM_ID, asks=[a.message(partition_name) for a in asks]))
            rejected = {k for a, k in self.shim.rejected_asks[n:]}
            for a in asks:
                if a.key not in rejected:
                    self.shim.asks[(app_id, a.key)] = a
            if rejected:
                self._count("send_placeholders:rejected")
            if then_schedule:
                self.schedule()

        @precondition(lambda self: bool(self._live_gangs()))
        @rule(data=st.data(), delta=st.sampled_from([0, 0, 0, -2, 5]),
              then_schedule=st.booleans())
        def send_real_ask(self, data: st.DataObject, delta: int, then_schedule: bool) -> None:
            """A real pod of a task group: same size as its placeholder, smaller, or larger."""
            self._count("send_real_ask")
            app_id = data.draw(st.sampled_from(self._live_gangs()))
            group = data.draw(st.sampled_from(sorted(self.shim.gangs[app_id])))
            size = max(1, self.shim.gangs[app_id][group][1] + delta)
            ask = ShimAsk(app_id, f"{app_id}-{group}-real-{self._new_id('')}", size, CORE, 1, 0, 0,
                          task_group=group)
            n = len(self.shim.rejected_asks)
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM_ID, asks=[ask.message(partition_name)]))
            if len(self.shim.rejected_asks) == n:
                self.shim.asks[(app_id, ask.key)] = ask
            if then_schedule:
                self.schedule()

        @precondition(lambda self: bool(self.shim.app_states))
        @rule(data=st.data())
        def remove_app(self, data: st.DataObject) -> None:
            self._count("remove_app")
            app_id = data.draw(st.sampled_from(sorted(self.shim.app_states)))
            self.api.update_application(si.ApplicationRequest(rm_id=RM_ID, remove=[
                si.RemoveApplicationRequest(application_id=app_id,
                                            partition_name=partition_name)]))
            held = [u for u, (a, _n) in self.shim.view.items() if a == app_id]
            assert not held, f"removed application {app_id} still holds {held}"
            self.shim.to_confirm = [r for r in self.shim.to_confirm if r.application_id != app_id]
            self.shim.app_states.pop(app_id, None)
            self.shim.apps.pop(app_id, None)
            self.shim.gangs.pop(app_id, None)
            self.shim.asks = {k: v for k, v in self.shim.asks.items() if k[0] != app_id}

        # -- asks ---------------------------------------------------------
        @precondition(lambda self: bool(self._live_apps()))
        @rule(data=st.data(), memory=st.sampled_from([5, 10, 30, 50]),
              repeats=st.integers(1, 3), priority=st.sampled_from([0, 0, 5]),
              timeout=st.sampled_from([0, 0, 20_000]), reuse_key=st.booleans(),
              then_schedule=st.booleans())
        def add_ask(self, data: st.DataObject, memory: int, repeats: int, priority: int,
                    timeout: int, reuse_key: bool, then_schedule: bool) -> None:
            self._count("add_ask")
            app_id = data.draw(st.sampled_from(self._live_apps()))
            mine = sorted(k for (a, k) in self.shim.asks if a == app_id)
            key = data.draw(st.sampled_from(mine)) if reuse_key and mine else self._new_id("ask-")
            before = self._dump()
            n_rejected = len(self.shim.rejected_asks)
            self.api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=[si.AllocationAsk(
                allocation_key=key, application_id=app_id, partition_name=partition_name,
                resource_ask=si.Resource.of(memory=memory, vcore=CORE), max_allocations=repeats,
                priority=priority, execution_timeout_milli_seconds=timeout)]))
            if len(self.shim.rejected_asks) > n_rejected:
                self._count("add_ask:rejected")
                assert self.shim.rejected_asks[-1] == (app_id, key)
                assert self._dump() == before, "a rejected ask must change nothing"
            else:
                self.shim.asks[(app_id, key)] = ShimAsk(app_id, key, memory, CORE, repeats,
                                                        priority, timeout)
            if then_schedule:
                self.schedule()

        @precondition(lambda self: bool(self.shim.asks))
        @rule(data=st.data(), whole_app=st.booleans())
        def remove_ask(self, data: st.DataObject, whole_app: bool) -> None:
            self._count("remove_ask")
            app_id, key = data.draw(st.sampled_from(sorted(self.shim.asks)))
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                    si.AllocationAskRelease(partition_name=partition_name, application_id=app_id,
                                            allocation_key="" if whole_app else key,
                                            termination_type=TT.STOPPED_BY_RM)])))
            for k in [k for k in self.shim.asks if k[0] == app_id and (whole_app or k[1] == key)]:
                del self.shim.asks[k]
            dump_apps = {a["application_id"]: a for p in self.api.state_dump()["partitions"]
                         for a in p["applications"]}
            app = dump_apps.get(app_id)
            if app is not None:
                pending = [k for k in app["asks"] if k["state"] == "Pending"
                           and (whole_app or k["allocation_key"] == key)]
                assert not pending, f"released asks still pending: {pending}"

        # -- scheduling and time ------------------------------------------
        @rule(confirm=st.sampled_from(CONFIRM_MODES))
        def schedule(self, confirm: str = "none") -> None:
            """A scheduling cycle; then the shim may confirm the releases it got (or not)."""
            self._count("schedule")
            made = self.api.schedule()
            if made:
                self._count("schedule:allocated")
            self._check_maximal()
            self._confirm(confirm)

        def _check_maximal(self) -> None:
            """Right after a cycle the core must have placed everything that fits."""
            ctx = CheckContext(self.api, extra={"after_schedule": True})
            type(self).invariant_checks["scheduling.maximal"] += 1
            problems = REGISTRY["scheduling.maximal"].run(ctx)
            if problems:
                raise AssertionError("invariant violated:\n" + "\n".join(
                    f"  {p}" for p in problems))

        def _confirm(self, mode: str) -> None:
            if mode == "none" or not self.shim.to_confirm:
                return
            batch = self.shim.to_confirm[:1] if mode == "first" else list(self.shim.to_confirm)
            for rel in batch:
                self._send_confirmation(rel, duplicate=mode == "all_twice")

        @rule(delay=st.sampled_from(DELAYS), confirm=st.sampled_from(CONFIRM_MODES))
        def advance_clock(self, delay: float, confirm: str) -> None:
            self._count("advance_clock")
            self.clock.advance(delay)
            self.api.schedule()
            self._check_maximal()
            self._confirm(confirm)

        # -- releases -----------------------------------------------------
        @precondition(lambda self: bool(self.shim.view))
        @rule(data=st.data(), whole_app=st.booleans())
        def rm_release(self, data: st.DataObject, whole_app: bool) -> None:
            self._count("rm_release")
            uuid = data.draw(st.sampled_from(sorted(self.shim.view)))
            app_id = self.shim.view[uuid][0]
            targets = [u for u, (a, _n) in self.shim.view.items() if a == app_id] \
                if whole_app else [uuid]
            for u in targets:
                self.shim.view.pop(u)
            self.shim.to_confirm = [r for r in self.shim.to_confirm if r.uuid not in targets]
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    si.AllocationRelease(partition_name=partition_name, application_id=app_id,
                                         uuid="" if whole_app else uuid,
                                         termination_type=TT.STOPPED_BY_RM)])))

        @precondition(lambda self: bool(self.shim.to_confirm))
        @rule(data=st.data(), duplicate=st.booleans())
        def confirm_release(self, data: st.DataObject, duplicate: bool) -> None:
            """A delayed confirmation, of any outstanding release, possibly sent twice."""
            i = data.draw(st.integers(0, len(self.shim.to_confirm) - 1))
            self._send_confirmation(self.shim.to_confirm[i], duplicate)

        def _send_confirmation(self, rel: si.AllocationRelease, duplicate: bool) -> None:
            self._count("confirm_release")
            self.shim.to_confirm.remove(rel)
            self.shim.view.pop(rel.uuid, None)
            self.shim.confirmed.append(rel)
            self._count(f"confirm_release:{rel.termination_type.name}")
            request = si.AllocationRequest(rm_id=RM_ID, releases=si.AllocationReleasesRequest(
                allocations_to_release=[rel]))
            self.api.update_allocation(request)
            if duplicate:
                self._count("confirm_release:duplicate")
                before = self._dump()
                self.api.update_allocation(request)
                assert self._dump() == before, "a duplicate confirmation must change nothing"

        # -- RM lifecycle -------------------------------------------------
        @rule(lose_connection=st.booleans())
        def rm_restart(self, lose_connection: bool) -> None:
            """The RM restarts (after losing the connection or not) and resyncs."""
            self._count("rm_restart")
            if lose_connection:
                self.api.connection_lost(RM_ID)
                before = self._dump()
                self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
                    node_id="while-paused", action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=10))]))
                assert self.shim.rejected_nodes[-1] == "while-paused"
                assert self._dump() == before, "a paused RM's request must change nothing"
            view = dict(self.shim.view)
            self.shim.to_confirm.clear()
            self._register()
            apps = {a: self.shim.apps[a] for a in self._live_apps() if a in self.shim.apps}
            self.shim.app_states = {}
            if apps:
                self.api.update_application(si.ApplicationRequest(
                    rm_id=RM_ID, new=list(apps.values())))
            # A shim does not report pods of an application the core refused on resync
            # (e.g. a gang over a max lowered meanwhile): it kills them instead.
            apps = {a: r for a, r in apps.items() if self.shim.app_states.get(a) == "New"}
            nodes = []
            for node_id in sorted(self.nodes):
                existing = [self.shim.alloc_info[u] for u, (a, n) in view.items()
                            if n == node_id and a in apps]
                nodes.append(si.NodeInfo(
                    node_id=node_id, action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(**self.nodes[node_id]),
                    existing_allocations=existing))
            self.shim.view = {}
            if nodes:
                self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=nodes))
            for node in nodes:
                for a in node.existing_allocations:
                    self.shim.view[a.uuid] = (a.application_id, a.node_id)
            core = {a["uuid"] for p in self.api.state_dump()["partitions"]
                    for app in p["applications"] for a in app["allocations"]}
            assert core == set(self.shim.view), "recovery lost or invented allocations"
            self.shim.asks = {k: v for k, v in self.shim.asks.items() if k[0] in apps}
            running = Counter((a.application_id, a.allocation_key)
                              for u, a in self.shim.alloc_info.items() if u in self.shim.view)
            resend = [k.message(partition_name) for k in self.shim.asks.values()
                      if running[(k.app_id, k.key)] < k.repeats]
            if resend:
                self.api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=resend))

        # -- configuration ------------------------------------------------
        @rule(factor=st.sampled_from([0.25, 0.5, 1.0, 2.0]))
        def update_config(self, factor: float) -> None:
            """Hot reload that raises or lowers every quota."""
            self._count("update_config")
            self.factor = factor
            self._reload()

        @precondition(lambda self: bool(removable))
        @rule(data=st.data())
        def reshape_config(self, data: st.DataObject) -> None:
            """Hot reload that removes a leaf (it drains) or configures it again."""
            leaf = data.draw(st.sampled_from(removable))
            if leaf in self.removed:
                self._count("reshape_config:restore")
                self.removed.discard(leaf)
            else:
                self._count("reshape_config:remove")
                self.removed.add(leaf)
            before = self._dump()
            try:
                self._reload()
            except ConfigError:
                # e.g. a placement rule names the removed queue: refused, nothing changed
                self._count("reshape_config:refused")
                self.removed ^= {leaf}
                self.config_text = with_max_memory(self.config, self.factor,
                                                    frozenset(self.removed))
                assert self._dump() == before, "a refused reload changed the state"
                return
            queues = {q["path"]: q["state"] for p in self.api.state_dump()["partitions"]
                      for q in p["queues"]}
            if leaf in self.removed:
                assert queues.get(leaf, "gone") in ("Draining", "gone"), queues.get(leaf)
            else:
                assert queues.get(leaf) == "Active", queues.get(leaf)

        def _reload(self) -> None:
            self.config_text = with_max_memory(self.config, self.factor,
                                                frozenset(self.removed))
            self.api.update_configuration(si.UpdateConfigurationRequest(
                rm_id=RM_ID, config=self.config_text))

        @rule(kind=st.sampled_from(["duplicate_node", "unknown_node", "unknown_release",
                                    "unknown_confirmation", "ghost_ask", "zero_ask",
                                    "unknown_partition_ask", "bad_config", "bad_config_quota"]),
              data=st.data())
        def bad_request(self, kind: str, data: st.DataObject) -> None:
            """A request the core must refuse or ignore, with no change of state."""
            self._count(f"bad_request:{kind}")
            before = self._dump()
            n_nodes, n_asks = len(self.shim.rejected_nodes), len(self.shim.rejected_asks)
            if kind == "duplicate_node" or kind == "unknown_node":
                node_id = (data.draw(st.sampled_from(sorted(self.nodes)))
                           if kind == "duplicate_node" and self.nodes else "ghost-node")
                action = si.NodeAction.CREATE if node_id != "ghost-node" else si.NodeAction.UPDATE
                self.api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
                    node_id=node_id, action=action,
                    schedulable_resource=si.Resource.of(memory=10))]))
                assert self.shim.rejected_nodes[n_nodes:] == [node_id]
            elif kind in ("unknown_release", "unknown_confirmation"):
                ttype = TT.STOPPED_BY_RM if kind == "unknown_release" else data.draw(
                    st.sampled_from([TT.TIMEOUT, TT.PLACEHOLDER_REPLACED,
                                     TT.PREEMPTED_BY_SCHEDULER]))
                uuid = "ghost-uuid"
                if kind == "unknown_confirmation" and self.shim.view:
                    uuid = data.draw(st.sampled_from(sorted(self.shim.view)))
                    if any(r.uuid == uuid for r in self.shim.to_confirm):
                        return
                self.api.update_allocation(si.AllocationRequest(
                    rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocations_to_release=[
                        si.AllocationRelease(partition_name=partition_name,
                                             application_id=self.shim.view.get(uuid, ("", ""))[0],
                                             uuid=uuid, termination_type=ttype)])))
            elif kind in ("ghost_ask", "zero_ask", "unknown_partition_ask"):
                live = self._live_apps()
                app_id = "ghost-app" if kind == "ghost_ask" or not live else live[0]
                resource = si.Resource.of(memory=0) if kind == "zero_ask" else \
                    si.Resource.of(memory=5)
                partition = "nowhere" if kind == "unknown_partition_ask" else partition_name
                key = self._new_id("bad-ask-")
                self.api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=[
                    si.AllocationAsk(allocation_key=key, application_id=app_id,
                                     partition_name=partition, resource_ask=resource)]))
                assert self.shim.rejected_asks[n_asks:] == [(app_id, key)]
            else:
                bad = BAD_CONFIGS[0] if kind == "bad_config" else data.draw(
                    st.sampled_from(BAD_CONFIGS[1:]))
                try:
                    self.api.update_configuration(si.UpdateConfigurationRequest(
                        rm_id=RM_ID, config=bad))
                except ConfigError as exc:
                    assert exc.reason
                else:
                    raise AssertionError("an invalid configuration was accepted")
            assert self._dump() == before, f"a bad request ({kind}) changed the state"

        # -- invariants ---------------------------------------------------
        @invariant()
        def every_invariant_holds(self) -> None:
            ctx = CheckContext(self.api, recorder=self.recorder, shim_view=self.shim.view)
            problems = []
            for name, inv in REGISTRY.items():
                if "after_schedule" in inv.needs:
                    continue
                type(self).invariant_checks[name] += 1
                problems += inv.run(ctx)
            if problems:
                raise AssertionError("invariant violated:\n" + "\n".join(
                    f"  {p}" for p in problems))
            self.peak_running = max(self.peak_running, len(self.shim.view))
            self.peak_releasing = max(self.peak_releasing, len(self.shim.to_confirm))

        def teardown(self) -> None:
            # Steer generation towards runs that hold and release more (targeted PBT).
            target(float(self.peak_running), label="allocations the shim runs")
            target(float(self.peak_releasing), label="releases awaiting confirmation")
            target(float(len(self.shim.confirmed)), label="confirmations sent")
            target(float(self.shim.core_releases), label="core-initiated releases")
            self.recorder.detach()

    SchedulerMachine.__name__ = "SchedulerMachine"
    return SchedulerMachine


def _assert_only_rejected_app_added(
    before: dict[str, Any], after: dict[str, Any], app_id: str, live_before: bool
) -> None:
    """A rejected submission adds at most a Rejected record for its id; nothing else moves."""
    b = copy.deepcopy(before)
    a = copy.deepcopy(after)
    for dump in (a, b):
        for p in dump["partitions"]:
            p["applications"] = [x for x in p["applications"]
                                 if x["application_id"] != app_id or live_before]
    assert a == b, "a rejected application changed the scheduler's state"
    if not live_before:
        states = [x["state"] for p in after["partitions"] for x in p["applications"]
                  if x["application_id"] == app_id]
        assert states in ([], ["Rejected"]), f"rejected application recorded as {states}"


SchedulerMachine = make_machine()
TestScheduler = SchedulerMachine.TestCase
