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
from .core import Scheduler

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
