"""Prometheus metrics with YuniKorn's names, types and labels, and what the REST routes
remember from the core's transitions (state logs, placeholder outcomes, history).

YuniKorn (apache/yunikorn-core be3bb48 pkg/metrics/scheduler.go ``InitSchedulerMetrics``,
pkg/metrics/queue.go ``InitQueueMetrics``) keeps counters it bumps where the scheduler
decides, and gauges it bumps up and down beside every state change. Here:

- counters are bumped by a transition observer (``Scheduler.add_transition_observer``,
  the one place every trigger is reported: ``CoreContext.fire``), so they count the
  transitions the core made and nothing else;
- gauges by state are read from a snapshot of the core when Prometheus scrapes, so
  they are the core's own counts and can not drift from it;
- allocations are born ``Allocated`` without a transition, so an allocation is counted
  ``allocated`` (and its latency observed) the first time this book sees it: at the
  transition that ends it, or at a scrape that finds it alive, whichever comes first.

Everything lives in a ``CollectorRegistry`` of its own (never the process's global one),
so two servers in one process never mix their counts.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from scheduler import Scheduler
from scheduler.objects import Allocation
from statemachines import TransitionRecord

from .snapshot import AllocationCopy, Snapshot, capture, live_allocations

NAMESPACE = "yunikorn"
SUBSYSTEM = "scheduler"
LATENCY_BUCKETS = tuple(0.0001 * 10**i for i in range(8))
"""YuniKorn's ``prometheus.ExponentialBuckets(0.0001, 10, 8)``: from 0.1 ms, in seconds."""
ENDED = frozenset({"Completed", "Preempted", "Expired", "Replaced"})
"""The allocation states that end it (``statemachines/allocation.py``)."""
NODE_STATES = {"Schedulable": "active", "Draining": "draining"}
"""YuniKorn's node gauge labels for our node states (``pkg/metrics/scheduler.go``)."""
HISTORY_LENGTH = 1440
"""Records kept, as YuniKorn's internal metrics history (a day of one-minute samples)."""

AppKey = tuple[str, str]
"""``(partition, application id)``."""


class Book:
    """What the observer learns from transitions, under a lock of its own."""

    def __init__(self, api: Scheduler, registry: CollectorRegistry) -> None:
        self.api = api
        self._lock = threading.Lock()
        self.allocation_attempts = Counter(
            "container_allocation_attempt", "Total number of attempts to allocate containers. "
            "State of the attempt includes `allocated`, `rejected`, `error`, `released`",
            ["state"], namespace=NAMESPACE, subsystem=SUBSYSTEM, registry=registry)
        self.submissions = Counter(
            "application_submission", "Total number of application submissions. State of "
            "the attempt includes `new`, `accepted` and `rejected`.",
            ["result"], namespace=NAMESPACE, subsystem=SUBSYSTEM, registry=registry)
        self.latency = Histogram(
            "scheduling_latency_milliseconds",
            "Latency of the main scheduling routine, in seconds.",
            namespace=NAMESPACE, subsystem=SUBSYSTEM, buckets=LATENCY_BUCKETS,
            registry=registry)
        for state in ("allocated", "rejected", "released"):
            self.allocation_attempts.labels(state)
        for result in ("new", "accepted", "rejected"):
            self.submissions.labels(result)
        self.decommissioned = 0
        self.state_logs: dict[AppKey, list[tuple[int, str]]] = {}
        self.placeholder_outcomes: dict[AppKey, dict[str, list[int]]] = {}
        """Per task group: ``[replaced, timed out]``."""
        self._counted: set[str] = set()
        """Uuids of live allocations already counted ``allocated``."""
        self.history: deque[tuple[int, int, int]] = deque(maxlen=HISTORY_LENGTH)
        """``(time ns, applications, containers)`` samples, oldest first."""

    def observe(self, record: TransitionRecord) -> None:
        """The transition observer: runs under the core's lock, on every transition."""
        lifecycle = record.lifecycle
        if lifecycle == "allocation":
            if record.dest in ENDED:
                self._ended(record)
        elif lifecycle == "application":
            self._application(record)
        elif lifecycle == "ask":
            if record.trigger == "reject":
                self.allocation_attempts.labels("rejected").inc()
        elif lifecycle == "node" and record.dest == "Removed":
            with self._lock:
                self.decommissioned += 1

    def _application(self, record: TransitionRecord) -> None:
        app = record.obj
        key = (app.partition_name, app.id)
        now = int(self.api.clock.now() * 1e9)
        if record.source == "New":
            self.submissions.labels("new").inc()
            result = "accepted" if record.dest == "Accepted" else "rejected"
            self.submissions.labels(result).inc()
        with self._lock:
            if record.dest == "Expired":
                self.state_logs.pop(key, None)
                self.placeholder_outcomes.pop(key, None)
                return
            if record.source == "New":
                self.state_logs[key] = []
                self.placeholder_outcomes.pop(key, None)
            self.state_logs.setdefault(key, []).append((now, record.dest))

    def _ended(self, record: TransitionRecord) -> None:
        alloc = record.obj
        self.allocation_attempts.labels("released").inc()
        with self._lock:
            if alloc.uuid in self._counted:
                self._counted.discard(alloc.uuid)
            else:
                ask = alloc.app.asks.get(alloc.ask_key)
                self._allocated(alloc.created, ask.created if ask is not None else None)
            if alloc.placeholder and record.dest in ("Replaced", "Expired"):
                groups = self.placeholder_outcomes.setdefault(
                    (alloc.app.partition_name, alloc.app.id), {})
                outcome = groups.setdefault(alloc.task_group, [0, 0])
                outcome[0 if record.dest == "Replaced" else 1] += 1

    def _allocated(self, created: float, asked: float | None) -> None:
        self.allocation_attempts.labels("allocated").inc()
        if asked is not None:
            self.latency.observe(max(created - asked, 0.0))

    def catch_up(self, live: Iterable[Allocation]) -> None:
        """Count the live allocations no transition has shown yet (born ``Allocated``); the
        caller holds the core's lock, so none ends meanwhile."""
        seen: set[str] = set()
        with self._lock:
            counted = self._counted
            for alloc in live:
                seen.add(alloc.uuid)
                if alloc.uuid not in counted:
                    ask = alloc.app.asks.get(alloc.ask_key)
                    self._allocated(alloc.created, ask.created if ask is not None else None)
            self._counted = seen

    def sample(self, snap: Snapshot) -> None:
        """One history record: applications and containers the core holds now."""
        apps = sum(len(p.apps) for p in snap.partitions)
        containers = sum(a.allocation_count for p in snap.partitions for a in p.apps.values())
        with self._lock:
            self.history.append((int(snap.now * 1e9), apps, containers))

    def state_log(self, partition: str, app_id: str) -> list[tuple[int, str]]:
        with self._lock:
            return list(self.state_logs.get((partition, app_id), ()))

    def outcomes(self, partition: str, app_id: str) -> dict[str, tuple[int, int]]:
        with self._lock:
            groups = self.placeholder_outcomes.get((partition, app_id), {})
            return {g: (o[0], o[1]) for g, o in groups.items()}

    def records(self) -> list[tuple[int, int, int]]:
        with self._lock:
            return list(self.history)


class _StateGauges(Collector):
    """The gauges by state, read from one snapshot per scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        book = self._metrics.book
        snap = self._metrics._snap or self._metrics.current()
        apps = GaugeMetricFamily(
            f"{NAMESPACE}_{SUBSYSTEM}_application_total",
            "Total number of applications. State of the application includes `running`, "
            "`resuming`, `failing`, `completing`, `completed` and `failed`.", labels=["state"])
        nodes = GaugeMetricFamily(
            f"{NAMESPACE}_{SUBSYSTEM}_node",
            "Total number of nodes. State of the node includes `active` and `failed`.",
            labels=["state"])
        queue_apps = GaugeMetricFamily(
            f"{NAMESPACE}_queue_app", "Queue application metrics. State of the application "
            "includes `new`, `accepted`, `rejected`, `running`, `failing`, `failed`, "
            "`resuming`, `completing`, `completed`.", labels=["queue", "state"])
        queue_res = GaugeMetricFamily(
            f"{NAMESPACE}_queue_resource", "Queue resource metrics. State of the resource "
            "includes `guaranteed`, `max`, `allocated`, `pending`, `preempting`, "
            "`maxRunningApps`.", labels=["queue", "state", "resource"])
        by_state: dict[str, int] = {}
        by_node: dict[str, int] = {"active": 0, "draining": 0}
        by_queue: dict[tuple[str, str], int] = {}
        for p in snap.partitions:
            for app in p.apps.values():
                state = app.state.lower()
                by_state[state] = by_state.get(state, 0) + 1
                by_queue[(app.queue, state)] = by_queue.get((app.queue, state), 0) + 1
            for node in p.nodes.values():
                label = NODE_STATES.get(node.state, node.state.lower())
                by_node[label] = by_node.get(label, 0) + 1
            for q in p.queues.values():
                for state, r in (("guaranteed", q.guaranteed), ("max", q.max),
                                 ("allocated", q.allocated), ("pending", q.pending),
                                 ("preempting", q.preempting)):
                    for name, value in sorted((r or {}).items()):
                        queue_res.add_metric([q.path, state, name], float(value))
                if q.max_applications:
                    queue_res.add_metric([q.path, "maxRunningApps", ""],
                                         float(q.max_applications))
        by_node["decommissioned"] = book.decommissioned
        for state, count in sorted(by_state.items()):
            apps.add_metric([state], float(count))
        for label, count in sorted(by_node.items()):
            nodes.add_metric([label], float(count))
        for (queue, state), count in sorted(by_queue.items()):
            queue_apps.add_metric([queue, state], float(count))
        yield from (apps, nodes, queue_apps, queue_res)


class Metrics:
    """One server's metrics: the transition observer, the registry, the exposition."""

    def __init__(self, api: Scheduler) -> None:
        self.api = api
        self.registry = CollectorRegistry(auto_describe=False)
        self.book = Book(api, self.registry)
        self._scrape = threading.Lock()
        self._snap: Snapshot | None = None
        self.registry.register(_StateGauges(self))
        self._detach = api.add_transition_observer(self.book.observe)

    def current(self) -> Snapshot:
        """A snapshot with every live allocation counted (before any counter is written)."""
        with self.api.lock:     # no allocation may end between the copy and the count
            snap = capture(self.api)
            self.book.catch_up(live_allocations(self.api))
        return snap

    def exposition(self) -> bytes:
        """Prometheus' text format of every metric, as of now: the counters first catch
        up with the allocations born since the last scrape, under the same lock."""
        with self._scrape:
            self._snap = self.current()
            try:
                return bytes(generate_latest(self.registry))
            finally:
                self._snap = None

    def close(self) -> None:
        """Stop observing the core."""
        self._detach()


def allocation_delay_ns(alloc: AllocationCopy) -> tuple[int, int]:
    """``(requestTime, allocationTime)`` in Unix nanoseconds (YuniKorn ``getAllocationDAO``)."""
    created = int(alloc.created * 1e9)
    asked = int(alloc.ask_created * 1e9) if alloc.ask_created is not None else created
    return asked, created
