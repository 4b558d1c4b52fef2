"""The benchmark and the soak over gRPC: ``yunikorn-fsm bench --grpc [--soak SECONDS]``.

Both drive a ``yunikorn-fsm serve`` process (started here on a free loopback
port, or ``--target``) with the Python :class:`~scheduler.rpc.Client`, so the
figures include everything a shim in another process pays: conversion to
protobuf, the loopback transport, parsing and validation on the client.

- ``run_bench``: YuniKorn's ``BenchmarkScheduling`` shape (``scheduler.bench``).
  First the latency of one ask on the idle cluster (request sent until its
  allocation arrived, ``samples`` times, each released again), then the
  throughput: both asks sent until the client received the last allocation.
- ``run_soak``: ``rms`` RMs at once, each adding asks and releasing
  allocations in a loop for ``seconds``; at the end every RM's view (what it
  was allocated minus what was confirmed released) must equal the core's
  ``state_dump()``, no allocation may arrive twice, and the server's RSS
  growth after warm-up is reported.

Progress goes to stderr (one rewritten line on a terminal, plain lines when
piped); the result is the last line of stdout, as JSON.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scheduler import si
from scheduler.bench import BENCH_CONFIG, RM_ID, CountingShim, peak_rss_mb
from scheduler.si import today

from .client import Client


class _Progress:
    """A live status line on a terminal, plain lines when piped."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, text: str, *, force: bool = False) -> None:
        if self._tty:
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()
        elif force or time.monotonic() - self._last >= 5:
            print(text, file=sys.stderr, flush=True)
            self._last = time.monotonic()

    def done(self) -> None:
        if self._tty:
            sys.stderr.write("\n")


@contextmanager
def served(target: str | None) -> Iterator[tuple[str, int | None]]:
    """``(target, server pid)``: the given target, or a ``serve`` process of our own."""
    if target is not None:
        yield target, None
        return
    proc = subprocess.Popen([sys.executable, "-m", "scheduler", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            raise RuntimeError(f"yunikorn-fsm serve did not start: {line!r}")
        yield line.removeprefix("listening on "), proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rss_mb(pid: int | None, field: str = "VmRSS") -> float | None:
    """A process's resident set (``VmRSS``) or peak (``VmHWM``) in MiB, from /proc (Linux)."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


class _Shim(CountingShim):
    """A callback that keeps what one RM holds and lets the driver wait for changes."""

    def __init__(self, timing: bool = False, dialect: str = "seed") -> None:
        super().__init__()
        self.timing = timing
        self.today = dialect == "today"
        """Today's SI: allocations and releases by allocation key, not by uuid."""
        self.cond = threading.Condition()
        self.held: dict[str, si.Allocation] = {}
        self.seen: set[str] = set()
        self.doubled: list[str] = []
        self.allocated = 0
        self.released = 0
        self.arrived: dict[str, float] = {}

    def update_allocation(self, response: Any) -> None:
        now = time.perf_counter()
        today = self.today
        with self.cond:
            for alloc in response.new:
                ident = alloc.allocation_key if today else alloc.uuid
                if ident in self.seen:
                    self.doubled.append(ident)
                self.seen.add(ident)
                self.held[ident] = alloc
                if self.timing:
                    self.arrived.setdefault(alloc.allocation_key, now)
            self.allocated += len(response.new)
            for rel in response.released:
                if self.held.pop(rel.allocation_key if today else rel.uuid, None) is not None:
                    self.released += 1
            rejected = response.rejected_allocations if today else response.rejected
            self.rejections += [r.reason for r in rejected]
            self.cond.notify_all()

    def update_application(self, response: si.ApplicationResponse) -> None:
        with self.cond:
            super().update_application(response)
            self.cond.notify_all()

    def update_node(self, response: si.NodeResponse) -> None:
        with self.cond:
            super().update_node(response)
            self.cond.notify_all()

    def wait(self, check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        with self.cond:
            if not self.cond.wait_for(check, timeout):
                raise RuntimeError(f"timed out waiting for {what} ({self.rejections[:3]})")


def _set_up(client: Client, shim: _Shim, rm_id: str, config: str,
            apps: list[tuple[str, str]], nodes: list[si.NodeInfo]) -> None:
    client.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=rm_id, config=config), shim)
    client.update_application(si.ApplicationRequest(rm_id=rm_id, new=[
        si.AddApplicationRequest(application_id=a, queue_name=q,
                                 ugi=si.UserGroupInformation(user="bench")) for a, q in apps]))
    shim.wait(lambda: shim.accepted_apps == len(apps), "the applications")
    client.update_node(si.NodeRequest(rm_id=rm_id, nodes=nodes))
    shim.wait(lambda: shim.accepted_nodes == len(nodes), "the nodes")


def _ask(rm_id: str, app: str, key: str, count: int, memory: int = 10) -> si.AllocationRequest:
    return si.AllocationRequest(rm_id=rm_id, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app, max_allocations=count,
        resource_ask=si.Resource.of(memory=memory, vcore=1))])


def _release(rm_id: str, allocations: list[si.Allocation]) -> si.AllocationRequest:
    return si.AllocationRequest(rm_id=rm_id, releases=si.AllocationReleasesRequest(
        allocations_to_release=[si.AllocationRelease(
            application_id=a.application_id, uuid=a.uuid,
            termination_type=si.TerminationType.STOPPED_BY_RM) for a in allocations]))


def _pods(rm_id: str, counts: list[tuple[str, int]], prefix: str) -> today.AllocationRequest:
    """Today's form of the asks: one pod per key (an ask of ``n`` is ``n`` pods)."""
    resource = si.Resource.of(memory=10, vcore=1)
    return today.AllocationRequest(rm_id=rm_id, allocations=[
        today.Allocation(allocation_key=f"{prefix}-{app}-{i}", application_id=app,
                         resource_per_alloc=resource)
        for app, n in counts for i in range(n)])


def _release_keys(rm_id: str, allocations: list[Any]) -> today.AllocationRequest:
    return today.AllocationRequest(rm_id=rm_id, releases=today.AllocationReleasesRequest(
        allocations_to_release=[today.AllocationRelease(
            application_id=a.application_id, allocation_key=a.allocation_key,
            termination_type=si.TerminationType.STOPPED_BY_RM) for a in allocations]))


def _throughput(counts: list[tuple[str, int]], dialect: str
                ) -> si.AllocationRequest | today.AllocationRequest:
    """The throughput phase's one request, as ``dialect`` says it."""
    if dialect == "today":
        return _pods(RM_ID, counts, "alloc")
    if dialect == "seed-pods":
        resource = si.Resource.of(memory=10, vcore=1)
        return si.AllocationRequest(rm_id=RM_ID, asks=[
            si.AllocationAsk(allocation_key=f"alloc-{app}-{i}", application_id=app,
                             resource_ask=resource)
            for app, n in counts for i in range(n)])
    return si.AllocationRequest(rm_id=RM_ID, asks=[
        _ask(RM_ID, app, "alloc-1", n).asks[0] for app, n in counts])


def run_bench(nodes: int, pods: int, samples: int = 200,
              target: str | None = None, dialect: str = "seed") -> dict[str, Any]:
    """The benchmark over gRPC: idle-cluster latency, then end-to-end throughput.

    ``dialect`` is the SI the client speaks. In today's (``"today"``) each
    pod is its own ``Allocation`` with its own key, sent in one request as
    the seed's two repeated asks are, and released by key: the same work for
    the core, the wire carrying one message per pod.
    """
    progress = _Progress()
    now = dialect == "today"
    speaks = "today" if now else "seed"
    with served(target) as (address, pid):
        shim = _Shim(timing=True, dialect=speaks)
        client = Client(address, dialect=speaks)
        try:
            per_node = pods // nodes + 1
            progress(f"set-up: {nodes} nodes", force=True)
            _set_up(client, shim, RM_ID, BENCH_CONFIG, [("app-1", "root.a"), ("app-2", "root.b")],
                    [si.NodeInfo(node_id=f"node-{i}:1234", action=si.NodeAction.CREATE,
                                 schedulable_resource=si.Resource.of(
                                     memory=10 * per_node, vcore=per_node))
                     for i in range(nodes)])
            latencies = []
            for i in range(samples):
                key = f"latency-{i}"
                start = time.perf_counter()
                client.update_allocation(
                    today.AllocationRequest(rm_id=RM_ID, allocations=[today.Allocation(
                        allocation_key=key, application_id="app-1",
                        resource_per_alloc=si.Resource.of(memory=10, vcore=1))])
                    if now else _ask(RM_ID, "app-1", key, 1))
                shim.wait(lambda k=key: k in shim.arrived, "an allocation")  # type: ignore[misc]
                latencies.append(shim.arrived[key] - start)
                mine = [a for a in shim.held.values() if a.allocation_key == key]
                client.update_allocation(_release_keys(RM_ID, mine) if now
                                         else _release(RM_ID, mine))
                shim.wait(lambda: not shim.held, "the release confirmation")
                progress(f"latency: {i + 1}/{samples}")
            progress(f"throughput: {pods} pods", force=True)
            before = shim.allocated
            half = pods // 2
            counts = [(app, n) for app, n in (("app-1", half), ("app-2", pods - half)) if n > 0]
            start = time.perf_counter()
            client.update_allocation(_throughput(counts, dialect))
            while not shim.allocated - before >= pods:
                with shim.cond:
                    shim.cond.wait(0.5)
                progress(f"throughput: {shim.allocated - before}/{pods} allocations")
            seconds = time.perf_counter() - start
        finally:
            client.close()
        progress.done()
        quantiles = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else [0.0] * 99
        return {
            "mode": "grpc", "dialect": dialect, "nodes": nodes, "pods": pods,
            "seconds": round(seconds, 4),
            "allocations_per_second": round(pods / seconds, 1),
            "latency_samples": len(latencies),
            "latency_p50_ms": round(statistics.median(latencies) * 1000, 3) if latencies else None,
            "latency_p99_ms": round(quantiles[98] * 1000, 3) if latencies else None,
            "peak_rss_mb": round(peak_rss_mb(), 1),      # this (the client's) process
            "server_peak_rss_mb": rss_mb(pid, "VmHWM"),
            "doubled": len(shim.doubled),
        }


WARMUP_SECONDS = 30.0
"""The soak's warm-up (at most half the run): the core's completing timeout."""



_APP_ROUNDS = 50
"""Rounds an application of the soak lives: applications end, as a shim's do (the core keeps
an application's asks until it is removed, so one everlasting application would grow)."""


def _next_app(client: Client, shim: _Shim, rm_id: str, old: str, new: str) -> None:
    """Remove ``old`` (the core releases what it holds) and add ``new``."""
    client.update_application(si.ApplicationRequest(rm_id=rm_id, remove=[
        si.RemoveApplicationRequest(application_id=old)]))
    shim.wait(lambda: all(a.application_id != old for a in shim.held.values()),
              f"the release of {old}'s allocations")
    accepted = shim.accepted_apps + 1
    client.update_application(si.ApplicationRequest(rm_id=rm_id, new=[
        si.AddApplicationRequest(application_id=new, queue_name="root.a",
                                 ugi=si.UserGroupInformation(user="bench"))]))
    shim.wait(lambda: shim.accepted_apps >= accepted, f"{new} accepted")


def _soak_rm(address: str, rm_id: str, deadline: float, seed: int,
             out: dict[str, Any], stop: threading.Event) -> None:
    """One RM of the soak: ask, wait, release some, until the deadline (or 100,000 rounds)."""
    rng = random.Random(seed)
    shim = _Shim()
    client = Client(address)
    rounds = 0
    try:
        _set_up(client, shim, rm_id, BENCH_CONFIG, [("app-0", "root.a")],
                [si.NodeInfo(node_id=f"{rm_id}-node-{i}", action=si.NodeAction.CREATE,
                             schedulable_resource=si.Resource.of(memory=100, vcore=10))
                 for i in range(10)])
        while time.monotonic() < deadline and rounds < 100_000 and not stop.is_set():
            app = f"app-{rounds // _APP_ROUNDS}"
            if rounds and rounds % _APP_ROUNDS == 0:
                _next_app(client, shim, rm_id, f"app-{rounds // _APP_ROUNDS - 1}", app)
            count = rng.randint(1, 5)
            target = shim.allocated + count
            client.update_allocation(_ask(rm_id, app, f"ask-{rounds}", count))
            shim.wait(lambda t=target: shim.allocated >= t, "allocations")  # type: ignore[misc]
            with shim.cond:
                held = list(shim.held.values())
            if len(held) > 40 or rng.random() < 0.3:
                gone = rng.sample(held, k=rng.randint(1, len(held)))
                expected = shim.released + len(gone)
                client.update_allocation(_release(rm_id, gone))
                shim.wait(lambda e=expected: shim.released >= e,  # type: ignore[misc]
                          "release confirmations")
            rounds += 1
        out.update(rounds=rounds, allocated=shim.allocated, released=shim.released,
                   held=sorted(shim.held), doubled=list(shim.doubled), error=None)
    except Exception as error:
        out.update(rounds=rounds, error=f"{type(error).__name__}: {error}")
        stop.set()
    finally:
        out["client"] = client


def run_soak(rms: int = 8, seconds: float = 60.0, target: str | None = None) -> dict[str, Any]:
    """``rms`` RMs adding and releasing work for ``seconds``; views checked against the dump."""
    progress = _Progress()
    with served(target) as (address, pid):
        start = time.monotonic()
        deadline = start + seconds
        # Warm-up: the core's completing timeout (30 s). Until it has passed once, the
        # lazily cancelled completing timers of the soak's applications pile up (and keep
        # those applications) by design; after it they expire as fast as they come.
        warm_at = start + min(WARMUP_SECONDS, seconds / 2)
        trajectory: list[tuple[float, float | None]] = []
        results: list[dict[str, Any]] = [{} for _ in range(rms)]
        stop = threading.Event()
        threads = [threading.Thread(target=_soak_rm, args=(
            address, f"soak-{i}", deadline, i, results[i], stop), daemon=True)
            for i in range(rms)]
        for t in threads:
            t.start()
        warm_rss = None
        while any(t.is_alive() for t in threads):
            time.sleep(0.5)
            if warm_rss is None and time.monotonic() >= warm_at:
                warm_rss = rss_mb(pid)
            if time.monotonic() - start >= 10 * len(trajectory):
                trajectory.append((round(time.monotonic() - start), rss_mb(pid)))
            progress(f"soak: {time.monotonic() - start:5.1f}/{seconds:.0f} s, "
                     f"server RSS {rss_mb(pid)} MiB")
        end_rss = rss_mb(pid)
        progress.done()
        checker = Client(address)
        try:
            dump = checker.state_dump()
        finally:
            checker.close()
        core: dict[str, set[str]] = {}
        for partition in dump["partitions"]:
            uuids = core.setdefault(partition["rm_id"], set())
            for app in partition["applications"]:
                uuids.update(a["uuid"] for a in app["allocations"])
        agree = all(r.get("error") is None and set(r["held"]) == core.get(f"soak-{i}", set())
                    for i, r in enumerate(results))
        for r in results:
            client = r.pop("client", None)
            if client is not None:
                client.close()
        return {
            "mode": "grpc-soak", "rms": rms, "seconds": round(time.monotonic() - start, 1),
            "rounds": sum(r.get("rounds", 0) for r in results),
            "allocations": sum(r.get("allocated", 0) for r in results),
            "releases": sum(r.get("released", 0) for r in results),
            "doubled": sum(len(r.get("doubled", ())) for r in results),
            "views_agree_with_state_dump": agree,
            "errors": [r["error"] for r in results if r.get("error")],
            "warmup_seconds": round(warm_at - start, 1),
            "server_rss_after_warmup_mb": warm_rss,
            "server_rss_end_mb": end_rss,
            "server_rss_growth_mb": (round(end_rss - warm_rss, 1)
                                     if end_rss is not None and warm_rss is not None else None),
            "server_rss_every_10s_mb": [r for _t, r in trajectory],
        }
