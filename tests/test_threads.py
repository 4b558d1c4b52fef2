"""The public API from many threads at once, background mode, and re-entrant callbacks.

The contract: calling the API from several threads at once is safe; callbacks
are synchronous and may call the API again; ``start()`` runs ``schedule()`` on
a background thread until ``stop()``. ``scheduler/core.py`` adds: messages a
callback's own API call causes are delivered right after that callback
returns, and ``predicates`` must not call the API (it raises RuntimeError
inside the cycle).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

import invariants
from scheduler import ManualClock, Scheduler, si

TT = si.TerminationType
RM = "rm-threads"
JOIN_TIMEOUT = 60.0

CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: q0
          - name: q1
            resources:
              max: {memory: 100000, vcore: 10000}
          - name: q2
            properties:
              application.sort.policy: fair
          - name: q3
"""


class SafeShim:
    """A thread-safe recording shim that keeps the RM's view of what runs where.

    Problems are recorded, not raised: the core logs and swallows exceptions
    from callbacks, so an assert in here would be lost.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.announced: Counter[str] = Counter()
        self.view: dict[str, tuple[str, str, dict[str, int]]] = {}
        self.released: list[si.AllocationRelease] = []
        self.to_confirm: list[si.AllocationRelease] = []
        self.rejected_asks: list[tuple[str, str, str]] = []
        self.rejected_apps: list[str] = []
        self.accepted_nodes: list[str] = []
        self.app_states: dict[str, str] = {}
        self.problems: list[str] = []
        self.calls = 0
        self.depth = 0
        self.max_depth = 0
        self.threads: set[str] = set()

    def _enter(self) -> None:
        with self.lock:
            self.calls += 1
            self.depth += 1
            self.max_depth = max(self.max_depth, self.depth)
            self.threads.add(threading.current_thread().name)

    def _leave(self) -> None:
        with self.lock:
            self.depth -= 1

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self._enter()
        try:
            with self.lock:
                for a in response.new:
                    self.announced[a.uuid] += 1
                    if a.uuid in self.view:
                        self.problems.append(f"allocation {a.uuid} announced twice")
                    self.view[a.uuid] = (a.application_id, a.node_id,
                                         a.resource_per_alloc.as_dict())
                for rel in response.released:
                    self.released.append(rel)
                    if rel.uuid not in self.view:
                        self.problems.append(f"release of {rel.uuid}, which the shim never ran")
                    if rel.termination_type == TT.STOPPED_BY_RM:
                        self.view.pop(rel.uuid, None)
                    else:
                        self.to_confirm.append(rel)
                self.rejected_asks += [(r.application_id, r.allocation_key, r.reason)
                                       for r in response.rejected]
            self.after_allocation(response)
        finally:
            self._leave()

    def after_allocation(self, response: si.AllocationResponse) -> None:
        """Hook for subclasses that call back into the API."""

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._enter()
        with self.lock:
            self.rejected_apps += [r.application_id for r in response.rejected]
            for a in response.accepted:
                self.app_states[a.application_id] = "New"
            for u in response.updated:
                self.app_states[u.application_id] = u.state
        self._leave()

    def update_node(self, response: si.NodeResponse) -> None:
        self._enter()
        with self.lock:
            self.accepted_nodes += [n.node_id for n in response.accepted]
        self._leave()

    def send_event(self, events: list[si.EventRecord]) -> None:
        self._enter()
        self._leave()

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self._enter()
        self._leave()

    # -- views ---------------------------------------------------------------
    def snapshot(self) -> dict[str, tuple[str, str, dict[str, int]]]:
        with self.lock:
            return dict(self.view)

    def shim_view(self) -> dict[str, tuple[str, str]]:
        with self.lock:
            return {u: (a, n) for u, (a, n, _r) in self.view.items()}

    def held_total(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        with self.lock:
            for _a, _n, r in self.view.values():
                total.update(r)
        return {k: v for k, v in sorted(total.items()) if v}


def register(api: Scheduler, shim: Any, config: str = CONFIG) -> None:
    api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=RM, config=config), shim)


def add_nodes(api: Scheduler, ids: list[str], memory: int = 1000, vcore: int = 100) -> None:
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[
        si.NodeInfo(node_id=i, action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=memory, vcore=vcore))
        for i in ids]))


def add_app(api: Scheduler, app_id: str, queue: str = "root.q0") -> None:
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id=app_id, queue_name=queue, ugi=si.UserGroupInformation(user="u"))]))


def add_ask(api: Scheduler, app_id: str, key: str, memory: int = 10, repeats: int = 1,
            timeout_ms: int = 0) -> None:
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app_id,
        resource_ask=si.Resource.of(memory=memory, vcore=1), max_allocations=repeats,
        execution_timeout_milli_seconds=timeout_ms)]))


def rm_release(api: Scheduler, app_id: str, uuid: str) -> None:
    api.update_allocation(si.AllocationRequest(
        rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[
            si.AllocationRelease(application_id=app_id, uuid=uuid,
                                 termination_type=TT.STOPPED_BY_RM)])))


def confirm(api: Scheduler, rel: si.AllocationRelease) -> None:
    api.update_allocation(si.AllocationRequest(
        rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[rel])))


def core_allocations(api: Scheduler) -> dict[str, tuple[str, str, dict[str, int]]]:
    return {x["uuid"]: (a["application_id"], x["node_id"], x["resource"])
            for p in api.state_dump()["partitions"] for a in p["applications"]
            for x in a["allocations"]}


def root_queue(api: Scheduler) -> dict[str, Any]:
    queues = api.state_dump()["partitions"][0]["queues"]
    return next(q for q in queues if q["path"] == "root")


def run_threads(targets: list[tuple[str, Callable[[], None]]]) -> list[str]:
    """Start every target at once (barrier), join with a timeout; return the errors."""
    errors: list[str] = []
    barrier = threading.Barrier(len(targets))

    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                barrier.wait(timeout=JOIN_TIMEOUT)
                fn()
            except BaseException as exc:  # any failure of a worker fails the test
                errors.append(f"{threading.current_thread().name}: {type(exc).__name__}: {exc}")
        return run

    threads = [threading.Thread(target=wrap(fn), name=name, daemon=True)
               for name, fn in targets]
    for t in threads:
        t.start()
    deadline = time.monotonic() + JOIN_TIMEOUT
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"deadlock or hang: threads still running: {alive}"
    return errors


def wait_until(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Any:
    """Switch threads every 10 microseconds: many more interleavings per test."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


@pytest.fixture
def callback_errors(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """Exceptions the core swallowed from callbacks (it logs them on 'yunikorn_fsm')."""
    caplog.set_level(logging.ERROR, logger="yunikorn_fsm")

    def errors() -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.name.startswith("yunikorn_fsm") and r.levelno >= logging.ERROR]

    return errors


# ---------------------------------------------------------------------------
# many threads on one scheduler
# ---------------------------------------------------------------------------


def test_concurrent_api_calls_lose_and_double_nothing(
    callback_errors: Callable[[], list[str]]
) -> None:
    api = Scheduler(clock=ManualClock(start=0.0))
    recorder = invariants.LifecycleRecorder(api)
    shim = SafeShim()
    register(api, shim)
    n_node_threads, nodes_per_thread = 6, 10
    n_app_threads, apps_per_thread, repeats = 6, 15, 3
    done = threading.Event()
    dumps: list[int] = []
    mid_run_violations: list[str] = []
    asks_sent: list[tuple[str, str, int]] = []
    asks_lock = threading.Lock()
    released_by_rm: list[str] = []

    def node_adder(t: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(nodes_per_thread):
                add_nodes(api, [f"node-{t}-{i}"])
        return run

    def app_adder(t: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(apps_per_thread):
                app_id = f"app-{t}-{i}"
                add_app(api, app_id, f"root.q{(t + i) % 4}")
                for k in range(2):
                    add_ask(api, app_id, f"ask-{k}", memory=10 + k, repeats=repeats)
                    with asks_lock:
                        asks_sent.append((app_id, f"ask-{k}", repeats))
        return run

    def scheduler_loop() -> None:
        while not done.is_set():
            api.schedule()

    def releaser(t: int) -> Callable[[], None]:
        def run() -> None:
            count = 0
            while not done.is_set() and count < 20:
                held = sorted(shim.snapshot().items())
                if len(held) > t:
                    uuid, (app_id, _node, _r) = held[t * 7 % len(held)]
                    rm_release(api, app_id, uuid)
                    released_by_rm.append(uuid)
                    count += 1
                time.sleep(0.001)
        return run

    def dumper() -> None:
        while not done.is_set():
            text = json.dumps(api.state_dump(), sort_keys=True)
            dumps.append(len(text))
            mid_run_violations.extend(
                str(v) for v in invariants.check_all(invariants.CheckContext(api)))

    workers = [(f"nodes-{t}", node_adder(t)) for t in range(n_node_threads)]
    workers += [(f"apps-{t}", app_adder(t)) for t in range(n_app_threads)]
    producers = len(workers)
    finished = threading.Semaphore(0)

    def counted(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            finally:
                finished.release()
        return run

    def closer() -> None:
        for _ in range(producers):
            finished.acquire(timeout=JOIN_TIMEOUT)
        time.sleep(0.05)
        done.set()

    targets = [(name, counted(fn)) for name, fn in workers]
    targets += [(f"schedule-{i}", scheduler_loop) for i in range(3)]
    targets += [(f"release-{t}", releaser(t)) for t in range(2)]
    targets += [(f"dump-{i}", dumper) for i in range(2)]
    targets.append(("closer", closer))
    errors = run_threads(targets)
    assert errors == []

    api.schedule()  # settle: every node exists now, so every ask fits
    assert callback_errors() == []
    assert shim.problems == []
    assert dumps and mid_run_violations == []
    n_nodes = n_node_threads * nodes_per_thread
    assert sorted(shim.accepted_nodes) == sorted(
        f"node-{t}-{i}" for t in range(n_node_threads) for i in range(nodes_per_thread))
    assert len(shim.accepted_nodes) == n_nodes
    assert shim.rejected_apps == [] and shim.rejected_asks == []

    # Every uuid announced exactly once; every repeat of every ask allocated once.
    assert all(n == 1 for n in shim.announced.values()), \
        [u for u, n in shim.announced.items() if n != 1]
    per_ask = Counter(u.rsplit("-", 1)[0] for u in shim.announced)
    assert len(asks_sent) == n_app_threads * apps_per_thread * 2
    for app_id, key, wanted in asks_sent:
        got = [u for u in shim.announced if u.startswith(f"{app_id}-{key}-")]
        assert len(got) == wanted, (app_id, key, got)
    assert sum(per_ask.values()) == len(asks_sent) * repeats
    assert root_queue(api)["pending"] == {}

    # RM releases were confirmed and removed; the core holds what the shim holds.
    assert released_by_rm, "the releasers never released anything"
    confirmed = {r.uuid for r in shim.released if r.termination_type == TT.STOPPED_BY_RM}
    assert set(released_by_rm) == confirmed
    assert core_allocations(api) == shim.snapshot()
    assert root_queue(api)["allocated"] == shim.held_total()
    nodes_total: Counter[str] = Counter()
    for n in api.state_dump()["partitions"][0]["nodes"]:
        nodes_total.update(n["allocated"])
    assert dict(sorted(nodes_total.items())) == shim.held_total()
    ctx = invariants.CheckContext(api, recorder=recorder, shim_view=shim.shim_view())
    assert invariants.check_all(ctx) == []


def test_concurrent_timeouts_confirmed_from_inside_callbacks(
    callback_errors: Callable[[], list[str]]
) -> None:
    """Threads schedule and advance the clock; the shim confirms TIMEOUT releases
    re-entrantly from inside ``update_allocation``, on whichever thread delivers."""
    clock = ManualClock(start=0.0)
    api = Scheduler(clock=clock)
    recorder = invariants.LifecycleRecorder(api)

    class ConfirmingShim(SafeShim):
        def after_allocation(self, response: si.AllocationResponse) -> None:
            for rel in response.released:
                if rel.termination_type == TT.TIMEOUT:
                    confirm(api, rel)
                    with self.lock:
                        self.view.pop(rel.uuid, None)
                        self.to_confirm.remove(rel)

    shim = ConfirmingShim()
    register(api, shim)
    add_nodes(api, [f"n{i}" for i in range(6)])
    done = threading.Event()

    def submitter(t: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(10):
                app_id = f"app-{t}-{i}"
                add_app(api, app_id, f"root.q{t % 4}")
                add_ask(api, app_id, "k", repeats=2, timeout_ms=500 * (1 + i % 3))
        return run

    def ticker() -> None:
        while not done.is_set():
            clock.advance(0.25)
            api.schedule()
            time.sleep(0.001)

    def scheduler_loop() -> None:
        while not done.is_set():
            api.schedule()

    def stopper() -> None:
        time.sleep(0.6)
        done.set()

    targets = [(f"submit-{t}", submitter(t)) for t in range(4)]
    targets += [("ticker", ticker), ("schedule", scheduler_loop), ("stopper", stopper)]
    assert run_threads(targets) == []
    clock.advance(10.0)
    api.schedule()
    api.schedule()
    assert callback_errors() == []
    assert shim.problems == []
    timeouts = [r for r in shim.released if r.termination_type == TT.TIMEOUT]
    assert timeouts, "no execution timeout fired"
    assert len({r.uuid for r in timeouts}) == len(timeouts), "a TIMEOUT release was sent twice"
    assert shim.to_confirm == []
    assert all(n == 1 for n in shim.announced.values())
    assert core_allocations(api) == shim.snapshot()
    ctx = invariants.CheckContext(api, recorder=recorder, shim_view=shim.shim_view())
    assert invariants.check_all(ctx) == []


# ---------------------------------------------------------------------------
# background mode
# ---------------------------------------------------------------------------


def _scheduler_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "yunikorn-fsm-scheduler"]


def test_background_mode_allocates_without_schedule_calls() -> None:
    api = Scheduler()  # the system clock, as a real shim would
    shim = SafeShim()
    register(api, shim)
    cycles = Counter[str]()
    real_schedule = api.schedule

    def counting_schedule() -> int:
        cycles["n"] += 1
        return real_schedule()

    api.schedule = counting_schedule  # type: ignore[method-assign]
    before = len(_scheduler_threads())
    api.start(interval=0.01)
    try:
        api.start(interval=0.01)  # a second start is a no-op
        assert len(_scheduler_threads()) == before + 1

        def submit() -> None:
            add_nodes(api, ["bg-1", "bg-2"])
            add_app(api, "bg-app")
            add_ask(api, "bg-app", "k", repeats=5)

        t = threading.Thread(target=submit)
        t.start()
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive()
        assert wait_until(lambda: len(shim.snapshot()) == 5), \
            f"background mode allocated {len(shim.snapshot())} of 5"
        assert cycles["n"] > 0
        assert "yunikorn-fsm-scheduler" in shim.threads, \
            "allocations were not delivered from the scheduling thread"
    finally:
        api.stop()
    api.stop()  # twice is fine
    assert len(_scheduler_threads()) == before
    # After stop nothing runs: a new ask stays pending, no cycle happens.
    ran = cycles["n"]
    add_ask(api, "bg-app", "after-stop", repeats=1)
    time.sleep(0.3)
    assert cycles["n"] == ran
    assert len(shim.snapshot()) == 5
    asks = {k["allocation_key"]: k for k in
            api.state_dump()["partitions"][0]["applications"][0]["asks"]}
    assert asks["after-stop"]["pending_repeats"] == 1
    # start() again resumes; stop() without start() is a no-op.
    api.start(interval=0.01)
    try:
        assert wait_until(lambda: len(shim.snapshot()) == 6)
    finally:
        api.stop()
    assert len(_scheduler_threads()) == before
    fresh = Scheduler()
    fresh.stop()


def test_background_mode_idles_between_cycles() -> None:
    """With nothing to do the loop waits ``interval`` between cycles instead of spinning."""
    api = Scheduler()
    register(api, SafeShim())
    cycles = Counter[str]()
    real_schedule = api.schedule

    def counting_schedule() -> int:
        cycles["n"] += 1
        return real_schedule()

    api.schedule = counting_schedule  # type: ignore[method-assign]
    api.start(interval=0.05)
    try:
        time.sleep(0.5)
    finally:
        api.stop()
    # About 10 cycles are expected; allow generous slack for wake-ups by API calls.
    assert cycles["n"] <= 50, f"{cycles['n']} idle cycles in 0.5s with interval 0.05"


def test_background_mode_fires_timers_and_accepts_reentrant_confirmations(
    callback_errors: Callable[[], list[str]]
) -> None:
    clock = ManualClock(start=0.0)
    api = Scheduler(clock=clock)
    recorder = invariants.LifecycleRecorder(api)

    class ConfirmingShim(SafeShim):
        def after_allocation(self, response: si.AllocationResponse) -> None:
            for rel in response.released:
                if rel.termination_type == TT.TIMEOUT:
                    confirm(api, rel)
                    with self.lock:
                        self.view.pop(rel.uuid, None)
                        self.to_confirm.remove(rel)

    shim = ConfirmingShim()
    register(api, shim)
    api.start(interval=0.01)
    try:
        add_nodes(api, ["n1"])
        add_app(api, "app")
        add_ask(api, "app", "k", repeats=3, timeout_ms=1000)
        assert wait_until(lambda: len(shim.announced) == 3)
        clock.advance(2.0)
        assert wait_until(lambda: len(shim.released) == 3 and not shim.snapshot()), \
            f"released {len(shim.released)}, still held {shim.snapshot()}"
        assert wait_until(lambda: core_allocations(api) == {})
    finally:
        api.stop()
    assert callback_errors() == []
    assert shim.problems == []
    assert {r.termination_type for r in shim.released} == {TT.TIMEOUT}
    node = api.state_dump()["partitions"][0]["nodes"][0]
    assert node["allocated"] == {}
    ctx = invariants.CheckContext(api, recorder=recorder, shim_view=shim.shim_view())
    assert invariants.check_all(ctx) == []


# ---------------------------------------------------------------------------
# callbacks calling back into the API
# ---------------------------------------------------------------------------


class ReentrantShim(SafeShim):
    """Confirms every TIMEOUT release from inside ``update_allocation``."""

    def __init__(self, api: Scheduler) -> None:
        super().__init__()
        self.api = api
        self.confirmations = 0

    def after_allocation(self, response: si.AllocationResponse) -> None:
        for rel in response.released:
            if rel.termination_type == TT.TIMEOUT:
                confirm(self.api, rel)
                self.confirmations += 1
                with self.lock:
                    self.view.pop(rel.uuid, None)
                    self.to_confirm.remove(rel)


def _timeout_world() -> tuple[Scheduler, ManualClock, ReentrantShim, Any]:
    clock = ManualClock(start=0.0)
    api = Scheduler(clock=clock)
    recorder = invariants.LifecycleRecorder(api)
    shim = ReentrantShim(api)
    register(api, shim)
    add_nodes(api, ["n1", "n2"])
    add_app(api, "app-t", "root.q1")
    add_ask(api, "app-t", "short", memory=30, repeats=2, timeout_ms=1000)
    add_ask(api, "app-t", "long", memory=20, repeats=1)
    assert api.schedule() == 3
    return api, clock, shim, recorder


def test_callback_may_confirm_a_timeout_release_reentrantly(
    callback_errors: Callable[[], list[str]]
) -> None:
    api, clock, shim, recorder = _timeout_world()
    clock.advance(1.5)
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(api.schedule()))
    t.start()
    t.join(JOIN_TIMEOUT)
    assert not t.is_alive(), "schedule() deadlocked on a re-entrant confirmation"
    assert result == [0]
    assert callback_errors() == []
    assert shim.confirmations == 2
    timeouts = [r for r in shim.released if r.termination_type == TT.TIMEOUT]
    assert sorted(r.uuid for r in timeouts) == ["app-t-short-1", "app-t-short-2"]
    # The core never confirms a confirmation: nothing was released after the TIMEOUTs.
    assert len(shim.released) == 2
    dump = api.state_dump()["partitions"][0]
    app = dump["applications"][0]
    assert [x["allocation_key"] for x in app["allocations"]] == ["long"]
    assert app["allocated"] == {"memory": 20, "vcore": 1}
    assert app["state"] == "Running"
    q1 = next(q for q in dump["queues"] if q["path"] == "root.q1")
    assert q1["allocated"] == {"memory": 20, "vcore": 1}
    assert sum(n["allocated"].get("memory", 0) for n in dump["nodes"]) == 20
    assert core_allocations(api) == shim.snapshot()
    ctx = invariants.CheckContext(api, recorder=recorder, shim_view=shim.shim_view())
    assert invariants.check_all(ctx) == []


def test_messages_of_a_reentrant_call_wait_for_the_callback_to_return() -> None:
    """core.py: a callback may call the API again; the messages that call causes are
    delivered right after the current callback returns, not nested inside it."""
    api, clock, shim, _recorder = _timeout_world()
    clock.advance(1.5)
    api.schedule()
    assert shim.confirmations == 2
    assert shim.max_depth == 1, (
        f"callbacks were nested {shim.max_depth} deep: a callback's API call delivered "
        "messages while that callback was still running")


def test_callback_may_read_state_and_add_work_reentrantly() -> None:
    api = Scheduler(clock=ManualClock(start=0.0))
    seen: list[int] = []

    class Chaining(SafeShim):
        def after_allocation(self, response: si.AllocationResponse) -> None:
            for a in response.new:
                seen.append(len(api.state_dump()["partitions"][0]["applications"]))
                if a.allocation_key == "first":
                    add_ask(api, a.application_id, "second")

    shim = Chaining()
    register(api, shim)
    add_nodes(api, ["n1"])
    add_app(api, "app")
    add_ask(api, "app", "first")
    assert api.schedule() == 1
    assert api.schedule() == 1
    keys = sorted(a for a, _n, _r in shim.snapshot().values())
    assert keys == ["app", "app"]
    assert seen == [1, 1]


# ---------------------------------------------------------------------------
# predicates must not call the API
# ---------------------------------------------------------------------------

API_CALLS: dict[str, Callable[[Scheduler], Any]] = {
    "schedule": lambda api: api.schedule(),
    "update_node": lambda api: add_nodes(api, ["from-predicates"]),
    "update_application": lambda api: add_app(api, "from-predicates"),
    "update_allocation": lambda api: add_ask(api, "app", "from-predicates"),
    "update_configuration": lambda api: api.update_configuration(
        si.UpdateConfigurationRequest(rm_id=RM, config=CONFIG)),
    "connection_lost": lambda api: api.connection_lost(RM),
    "unregister_resource_manager": lambda api: api.unregister_resource_manager(RM),
    "register_resource_manager": lambda api: register(api, SafeShim()),
}


@pytest.mark.parametrize("call", sorted(API_CALLS))
def test_predicates_calling_the_api_get_a_runtime_error(call: str) -> None:
    api = Scheduler(clock=ManualClock(start=0.0))
    caught: list[BaseException] = []

    class Shim(SafeShim):
        def predicates(self, args: si.PredicatesArgs) -> bool:
            try:
                API_CALLS[call](api)
            except BaseException as exc:
                caught.append(exc)
            return True

    shim = Shim()
    register(api, shim)
    add_nodes(api, ["n1"])
    add_app(api, "app")
    add_ask(api, "app", "k", repeats=2)
    before_rms = api.state_dump()["rms"]
    t = threading.Thread(target=lambda: caught.append(RuntimeError(f"made {api.schedule()}")))
    t.start()
    t.join(JOIN_TIMEOUT)
    assert not t.is_alive(), f"{call} from predicates deadlocked"
    errors = [e for e in caught if not str(e).startswith("made ")]
    assert errors, f"{call} from predicates did not raise"
    assert all(isinstance(e, RuntimeError) for e in errors), errors
    assert all("predicates" in str(e) for e in errors), errors
    # The cycle went on: both repeats were allocated, and the calls changed nothing.
    assert [str(e) for e in caught if str(e).startswith("made ")] == ["made 2"]
    assert len(shim.snapshot()) == 2
    dump = api.state_dump()
    assert dump["rms"] == before_rms
    part = dump["partitions"][0]
    assert [n["node_id"] for n in part["nodes"]] == ["n1"]
    assert [a["application_id"] for a in part["applications"]] == ["app"]
    assert {k["allocation_key"] for k in part["applications"][0]["asks"]} == {"k"}


def test_predicates_that_raise_do_not_break_the_cycle() -> None:
    """An exception escaping predicates (here the RuntimeError from an API call) fails
    that node for that ask; the cycle completes and later cycles work."""
    api = Scheduler(clock=ManualClock(start=0.0))
    broken = {"on": True}

    class Shim(SafeShim):
        def __init__(self) -> None:
            super().__init__()
            self.events: list[str] = []

        def predicates(self, args: si.PredicatesArgs) -> bool:
            if broken["on"]:
                api.update_node(si.NodeRequest(rm_id=RM, nodes=[]))  # raises RuntimeError
            return True

        def send_event(self, events: list[si.EventRecord]) -> None:
            self.events += [e.message for e in events]

    shim = Shim()
    register(api, shim)
    add_nodes(api, ["n1"])
    add_app(api, "app")
    add_ask(api, "app", "k")
    assert api.schedule() == 0
    assert shim.snapshot() == {}
    assert any("predicates for ask k raised RuntimeError" in m for m in shim.events), shim.events
    broken["on"] = False
    assert api.schedule() == 1
    assert len(shim.snapshot()) == 1
    assert invariants.check_all(invariants.CheckContext(api)) == []
