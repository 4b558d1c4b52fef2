"""The scheduling benchmark, shaped like Apache YuniKorn's ``BenchmarkScheduling``.

Two applications in two queues (``root.a``, ``root.b``), one ask each for half
of the pods (10 memory, 1 vcore per pod), ``nodes`` nodes sized so every pod
fits (``pods // nodes + 1`` pods per node). Measured in-process with the
system clock: ``seconds`` runs from submitting the asks until every pod is
allocated, through the public API and a counting callback, events included.
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from typing import Any

from . import si
from .api import Scheduler

BENCH_CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources:
              guaranteed:
                memory: 100000
                vcore: 10000
          - name: b
            resources:
              guaranteed:
                memory: 1000000
                vcore: 10000
"""

RM_ID = "rm:123"


class CountingShim:
    """A minimal RM callback that counts what it is told."""

    def __init__(self) -> None:
        self.allocations = 0
        self.accepted_nodes = 0
        self.accepted_apps = 0
        self.rejections: list[str] = []

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self.allocations += len(response.new)
        self.rejections += [r.reason for r in response.rejected]

    def update_application(self, response: si.ApplicationResponse) -> None:
        self.accepted_apps += len(response.accepted)
        self.rejections += [r.reason for r in response.rejected]

    def update_node(self, response: si.NodeResponse) -> None:
        self.accepted_nodes += len(response.accepted)
        self.rejections += [r.reason for r in response.rejected]

    def send_event(self, events: list[si.EventRecord]) -> None:
        pass

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        pass


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def run(nodes: int, pods: int) -> dict[str, Any]:
    """Run one benchmark and return its figures."""
    shim = CountingShim()
    api = Scheduler()
    api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=RM_ID, policy_group="queues",
                                          version="0.0.2", config=BENCH_CONFIG), shim)
    api.update_application(si.ApplicationRequest(rm_id=RM_ID, new=[
        si.AddApplicationRequest(application_id=app, queue_name=queue,
                                 ugi=si.UserGroupInformation(user="bench"))
        for app, queue in (("app-1", "root.a"), ("app-2", "root.b"))
    ]))
    per_node = pods // nodes + 1
    api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[
        si.NodeInfo(node_id=f"node-{i}:1234", action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=10 * per_node, vcore=per_node))
        for i in range(nodes)
    ]))
    if shim.accepted_apps != 2 or shim.accepted_nodes != nodes:
        raise RuntimeError(f"benchmark set-up failed: {shim.rejections[:3]}")
    idle = _idle_cost(api)
    half = pods // 2
    asks = [
        si.AllocationAsk(allocation_key="alloc-1", application_id=app,
                         resource_ask=si.Resource.of(memory=10, vcore=1), max_allocations=n)
        for app, n in (("app-1", half), ("app-2", pods - half)) if n > 0
    ]
    gc.collect()
    start = time.perf_counter()
    api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=asks))
    while shim.allocations < pods:
        if api.schedule() == 0:
            raise RuntimeError(f"stuck at {shim.allocations} of {pods} allocations")
    seconds = time.perf_counter() - start
    return {
        "nodes": nodes,
        "pods": pods,
        "seconds": round(seconds, 4),
        "allocations_per_second": round(pods / seconds, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "idle_schedule_us": round(idle * 1e6, 2),
    }


def _idle_cost(api: Scheduler, rounds: int = 200) -> float:
    """Seconds per ``schedule()`` with nothing pending (should not grow with nodes)."""
    api.schedule()
    start = time.perf_counter()
    for _ in range(rounds):
        api.schedule()
    return (time.perf_counter() - start) / rounds


SHAPES = ("many_small", "many_small_fair", "half_unfit", "half_unfit_distinct",
          "bench_plus_unfit", "limits", "priorities", "preemption")

SHAPE_CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
{properties}        queues:
          - name: q1
          - name: q2
          - name: q3
          - name: q4
"""

LIMITS_LEAF = """              - name: l{leaf}
                limits:
                  - users: [user-{first}, user-{second}]
                    maxresources: {{memory: 200}}
                    maxapplications: 1
                  - users: ["*"]
                    maxresources: {{memory: 400}}
                    maxapplications: 2
{group}"""

LIMITS_GROUP = """                  - groups: [team-{team}]
                    maxresources: {{memory: 20000}}
                    maxapplications: 1000
                  - groups: ["*"]
                    maxresources: {{memory: 50000}}
                    maxapplications: 1000
"""


def limits_config() -> str:
    """``limits``: four parents of five leaves; named and wildcard user and group limits on
    root, every parent and every leaf, none of them reached (each user asks for 100 memory).

    User ``user-i`` (groups ``team-{i % 10}`` and ``all``) runs one application in leaf
    ``i % 20``. Even leaves limit their team, so its users are tracked for that group
    there; odd leaves do not, so theirs resolve to a parent's named group (teams 1 and 3)
    or, failing that, to root's wildcard group.
    """
    parents = []
    for parent in range(4):
        leaves = []
        for j in range(5):
            leaf = parent * 5 + j
            group = LIMITS_GROUP.format(team=leaf % 10) if leaf % 2 == 0 else ""
            leaves.append(LIMITS_LEAF.format(leaf=leaf, first=leaf, second=leaf + 20,
                                             group=group))
        parents.append(
            f"          - name: p{parent}\n"
            "            limits:\n"
            f"              - users: [user-{parent}, user-{parent + 4}]\n"
            "                maxresources: {memory: 500}\n"
            "                maxapplications: 5\n"
            "              - users: [\"*\"]\n"
            "                maxresources: {memory: 800}\n"
            "                maxapplications: 5\n"
            "              - groups: [team-1, team-3]\n"
            "                maxresources: {memory: 50000}\n"
            "                maxapplications: 500\n"
            "              - groups: [\"*\"]\n"
            "                maxresources: {memory: 100000}\n"
            "                maxapplications: 1000\n"
            "            queues:\n" + "".join(leaves))
    return (
        "partitions:\n  - name: default\n    queues:\n      - name: root\n"
        "        submitacl: \"*\"\n"
        "        limits:\n"
        "          - users: [\"*\"]\n"
        "            maxresources: {memory: 1000}\n"
        "            maxapplications: 10\n"
        "          - groups: [team-0]\n"
        "            maxresources: {memory: 100000}\n"
        "          - groups: [\"*\"]\n"
        "            maxresources: {memory: 1000000}\n"
        "            maxapplications: 1000\n"
        "        queues:\n" + "".join(parents))


PRIORITIES_CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: high
            properties:
              priority.offset: "100"
            queues:
              - name: fifo
              - name: fair
                properties:
                  application.sort.policy: fair
          - name: fenced
            properties:
              priority.policy: fence
              priority.offset: "-10"
            queues:
              - name: fifo
              - name: stateaware
                properties:
                  application.sort.policy: stateaware
          - name: plain
            properties:
              application.sort.priority: disabled
            queues:
              - name: fifo
              - name: fair
                properties:
                  application.sort.policy: fair
"""

PRIORITY_LEAVES = ("root.high.fifo", "root.high.fair", "root.fenced.fifo",
                   "root.fenced.stateaware", "root.plain.fifo", "root.plain.fair")


def _shape_apps(shape: str) -> tuple[str, list[tuple[str, str, str, list[str]]]]:
    """The configuration and the applications (id, queue, user, groups) of a shape."""
    if shape == "limits":
        return limits_config(), [
            (f"app-{i}", f"root.p{i % 20 // 5}.l{i % 20}", f"user-{i}", [f"team-{i % 10}", "all"])
            for i in range(1000)]
    if shape == "priorities":
        return PRIORITIES_CONFIG, [
            (f"app-{i}", PRIORITY_LEAVES[i % len(PRIORITY_LEAVES)], "bench", [])
            for i in range(1000)]
    props = ("        properties:\n          application.sort.policy: fair\n"
             if shape == "many_small_fair" else "")
    config = SHAPE_CONFIG.format(properties=props)
    if shape == "bench_plus_unfit":
        apps = [("app-1", "root.q1"), ("app-2", "root.q2"), ("big-1", "root.q3"),
                ("big-2", "root.q4")]
    else:
        apps = [(f"app-{i}", f"root.q{i % 4 + 1}") for i in range(1000)]
    return config, [(a, q, "bench", []) for a, q in apps]


def run_shape(shape: str, nodes: int) -> dict[str, Any]:
    """Shapes the benchmark does not cover (docs/performance.md, "Other shapes").

    ``many_small``: 1,000 applications in 4 queues x 10 asks of one pod each;
    ``many_small_fair``: the same with fair application sorting; ``half_unfit``:
    every second application asks for 10x a node (5,000 asks never fit, one
    size); ``half_unfit_distinct``: the same with every never-fit ask of a
    different size; ``bench_plus_unfit``: the benchmark plus two applications
    whose ask is larger than any node; ``limits``: 1,000 users, one application
    each, over 20 leaves with named and wildcard user and group limits on every
    level (``limits_config``), none reached; ``priorities``: 1,000 applications
    whose ten asks have mixed priorities, in leaves under a parent with a
    ``priority.offset``, a fenced one and one with priority sorting off, with
    fifo, fair and stateaware leaves. The window runs from the asks' arrival
    until a ``schedule()`` places nothing more; ``idle_with_pending_us`` is one
    more ``schedule()`` with the unplaceable asks still pending.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
    if shape == "preemption":
        return run_preemption(nodes)
    config, apps = _shape_apps(shape)
    shim = CountingShim()
    api = Scheduler()
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=RM_ID, config=config), shim)
    api.update_application(si.ApplicationRequest(rm_id=RM_ID, new=[
        si.AddApplicationRequest(application_id=a, queue_name=q,
                                 ugi=si.UserGroupInformation(user=user, groups=groups))
        for a, q, user, groups in apps]))
    if shim.accepted_apps != len(apps):
        raise RuntimeError(f"{shape}: set-up failed: {shim.rejections[:3]}")
    per_node = 10000 // nodes + 1
    node_memory = 10 * per_node
    api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[
        si.NodeInfo(node_id=f"node-{i}", action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=node_memory, vcore=per_node))
        for i in range(nodes)]))
    asks, expected = _shape_asks(shape, [(a, q) for a, q, _u, _g in apps], node_memory)
    gc.collect()
    start = time.perf_counter()
    api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=asks))
    while api.schedule():
        pass
    seconds = time.perf_counter() - start
    if shim.allocations != expected:
        raise RuntimeError(f"{shape}: {shim.allocations} allocations, expected {expected}")
    idle = _idle_cost(api, rounds=5)
    return {
        "shape": shape, "nodes": nodes, "asks": len(asks), "allocations": shim.allocations,
        "seconds": round(seconds, 4),
        "allocations_per_second": round(shim.allocations / seconds, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "idle_with_pending_us": round(idle * 1e6, 2),
    }


def _shape_asks(
    shape: str, apps: list[tuple[str, str]], node_memory: int
) -> tuple[list[si.AllocationAsk], int]:
    def ask(app: str, key: str, memory: int, repeats: int = 1,
            priority: int = 0) -> si.AllocationAsk:
        return si.AllocationAsk(allocation_key=key, application_id=app, max_allocations=repeats,
                                resource_ask=si.Resource.of(memory=memory, vcore=1),
                                priority=priority)

    if shape == "bench_plus_unfit":
        asks = [ask(a, "alloc-1", 10, 5000) for a in ("app-1", "app-2")]
        asks += [ask(a, "big", node_memory * 10, 5000) for a in ("big-1", "big-2")]
        return asks, 10000
    asks = []
    expected = 0
    distinct = 0
    for i, (app, _queue) in enumerate(apps):
        never_fits = shape.startswith("half_unfit") and i % 2 == 1
        for k in range(10):
            if shape == "priorities":
                # Mixed within an application too, so its priority falls as asks are placed.
                asks.append(ask(app, f"ask-{k}", 10, priority=(i * 7 + k * 3) % 5 * 10 - 20))
                expected += 1
                continue
            if not never_fits:
                asks.append(ask(app, f"ask-{k}", 10))
                expected += 1
                continue
            distinct += 1
            extra = 10 * distinct if shape == "half_unfit_distinct" else 0
            asks.append(ask(app, f"ask-{k}", node_memory * 10 + extra))
    return asks, expected


PREEMPTION_CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 1s}
        queues:
          - name: batch
            resources: {guaranteed: {memory: 10}}
          - name: prod
            resources: {guaranteed: {memory: 100000}}
"""
PREEMPTING_ASKS = 1000


class ConfirmingShim(CountingShim):
    """Counts like :class:`CountingShim` and keeps every preemption to confirm."""

    def __init__(self) -> None:
        super().__init__()
        self.to_confirm: list[si.AllocationRelease] = []
        self.preempted = 0

    def update_allocation(self, response: si.AllocationResponse) -> None:
        super().update_allocation(response)
        for r in response.released:
            if r.termination_type == si.TerminationType.PREEMPTED_BY_SCHEDULER:
                self.preempted += 1
                self.to_confirm.append(r)


def run_preemption(nodes: int) -> dict[str, Any]:
    """``--shape preemption``: ``batch`` (guaranteed 10) fills every node (four pods of 10
    memory each); then 1,000 asks of ``prod`` (guaranteed far above them) that may preempt
    arrive. The shim confirms every release after each ``schedule()``; the manual clock moves
    past the delay (1 s) and, while asks wait, past the 15 s between two checks of one ask.
    ``seconds`` runs from the asks' arrival until every one of them is allocated;
    ``preemptions_per_second`` is the victims over the time spent inside ``schedule()``
    calls that preempted."""
    from .clock import ManualClock

    clock = ManualClock(start=0.0)
    shim = ConfirmingShim()
    api = Scheduler(clock=clock)
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=RM_ID, config=PREEMPTION_CONFIG), shim)
    api.update_application(si.ApplicationRequest(rm_id=RM_ID, new=[
        si.AddApplicationRequest(application_id=a, queue_name=q,
                                 ugi=si.UserGroupInformation(user="bench"))
        for a, q in (("batch", "root.batch"), ("prod", "root.prod"))]))
    api.update_node(si.NodeRequest(rm_id=RM_ID, nodes=[
        si.NodeInfo(node_id=f"node-{i}", action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=40, vcore=4))
        for i in range(nodes)]))
    api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=[si.AllocationAsk(
        allocation_key="fill", application_id="batch", max_allocations=4 * nodes,
        resource_ask=si.Resource.of(memory=10, vcore=1))]))
    while api.schedule():
        pass
    filled = shim.allocations
    policy = si.PreemptionPolicy(allow_preempt_self=True, allow_preempt_other=True)
    asks = [si.AllocationAsk(allocation_key=f"prod-{i}", application_id="prod",
                             resource_ask=si.Resource.of(memory=10, vcore=1),
                             preemption_policy=policy)
            for i in range(PREEMPTING_ASKS)]
    gc.collect()
    start = time.perf_counter()
    preempting = 0.0
    rounds = 0
    api.update_allocation(si.AllocationRequest(rm_id=RM_ID, asks=asks))
    api.schedule()
    clock.advance(1.0)
    while shim.allocations - filled < PREEMPTING_ASKS:
        rounds += 1
        if rounds > 1000:
            raise RuntimeError(f"preemption: {shim.allocations - filled} of "
                               f"{PREEMPTING_ASKS} asks placed after {rounds} rounds")
        before = shim.preempted
        t0 = time.perf_counter()
        api.schedule()
        if shim.preempted > before:
            preempting += time.perf_counter() - t0
        confirm, shim.to_confirm = shim.to_confirm, []
        if confirm:
            api.update_allocation(si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    si.AllocationRelease(application_id=r.application_id, uuid=r.uuid,
                                         termination_type=r.termination_type)
                    for r in confirm])))
        else:
            clock.advance(16.0)
    seconds = time.perf_counter() - start
    return {
        "shape": "preemption", "nodes": nodes, "asks": PREEMPTING_ASKS,
        "preempted": shim.preempted, "rounds": rounds,
        "seconds": round(seconds, 4),
        "preempting_seconds": round(preempting, 4),
        "preemptions_per_second": round(shim.preempted / preempting, 1) if preempting else 0.0,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
