"""``Scheduler``: the SchedulerAPI of ``002``, the one entry point.

Requests are routed to the RM that sent them and the partition that owns the
object; the partition's flows change objects through their lifecycles and
write what the RM must hear into an outbox; at the end of the call the
outboxes are turned into SI messages and delivered through the RM's callback
(``scheduler.delivery``: one state lock, callbacks outside it in decision
order).
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from statemachines import Observer

from . import si
from .callback import ResourceManagerCallback
from .clock import Clock, SystemClock
from .context import DEFAULT_RESERVATION_DELAY, CoreContext
from .delivery import Delivery, Dispatcher
from .dialect import Dialect, seed_only, today_allocation_request, today_node_request
from .dump import dump_partition
from .errors import ConfigError, UnknownResourceManager
from .partition import Partition
from .resource_manager import (
    NODE_PARTITION_ATTRIBUTE,
    ResourceManager,
    check_callback,
    configuration,
)
from .si import today

log = logging.getLogger("yunikorn_fsm")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one call, back on after it if it was on."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _expect(value: object, cls: type | tuple[type, ...], call: str) -> None:
    """A shim that passes the wrong thing is told what the call takes; nothing changes."""
    if not isinstance(value, cls):
        classes = cls if isinstance(cls, tuple) else (cls,)
        wanted = " or ".join(
            "an rm_id string" if c is str
            else f"{'si.today' if c.__module__ == today.__name__ else 'si'}.{c.__name__}"
            for c in classes)
        raise TypeError(f"Scheduler.{call} takes {wanted}, not {type(value).__name__}")


class Scheduler:
    """The scheduler core. Every public method is safe to call from several threads."""

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        emit_events: bool = True,
        rm_pause_timeout: float | None = None,
        reservation_delay: float = DEFAULT_RESERVATION_DELAY,
    ) -> None:
        """``rm_pause_timeout``: seconds a paused RM may stay paused before it is stopped.

        The interface spec (``002`` "Lifecycle of RM-Scheduler communication")
        draws ``Paused --timeout--> Stopped`` without a length and YuniKorn has
        none, so it is off by default (``None``): a paused RM waits until it
        registers again. With a timeout, the first ``schedule()`` at or after
        it stops the RM and removes everything it owned, as an unregistration.

        ``reservation_delay``: seconds an ask waits from its arrival before it may
        reserve a node against fragmentation (``004`` asks for reservations and is
        silent on when; YuniKorn waits 2 s, ``objects/application.go`` ``tryNodes``).
        0 reserves at once; ``math.inf`` never (YuniKorn's ``DISABLE_RESERVATION``).
        Required-node asks and preempting asks reserve at once regardless.
        """
        if rm_pause_timeout is not None and rm_pause_timeout < 0:
            raise ValueError("rm_pause_timeout must be >= 0 seconds (or None for no timeout)")
        if not reservation_delay >= 0:
            raise ValueError("reservation_delay must be >= 0 seconds (math.inf: never reserve "
                             "for an ordinary ask)")
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.rm_pause_timeout = rm_pause_timeout
        self.reservation_delay = reservation_delay
        self._core = CoreContext(self.clock)
        self._core.emit_events = emit_events
        self._core.reservation_delay = reservation_delay
        self._core.uuid_taken = self._uuid_taken
        self._rms: dict[str, ResourceManager] = {}
        self._delivery = Dispatcher()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- copies
    def __getstate__(self) -> dict[str, Any]:
        """A copy (``copy.deepcopy``, ``pickle``) holds the state, not the locks or the thread.

        Only an idle scheduler can be copied: not while its background loop
        runs, and not from inside a call (a callback or a predicate). The
        RMs' callbacks are copied with it, so they must be copyable too. The
        checker's explorer restores states this way.
        """
        if self._thread is not None:
            raise RuntimeError("stop() the background loop before copying a scheduler")
        if not self._delivery.idle():
            raise RuntimeError("a scheduler can not be copied while a call is in progress")
        state = dict(self.__dict__)
        for transient in ("_delivery", "_wake", "_stop", "_thread"):
            del state[transient]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._delivery = Dispatcher()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = None

    # ---------------------------------------------------------------- plumbing
    def _transaction(self, wake: bool = True) -> AbstractContextManager[None]:
        """Hold the state lock for one call, then deliver what it decided.

        ``wake`` tells the background loop there may be new work; ``schedule()``
        itself passes False, or an idle loop would never sleep.
        """
        return self._delivery.transaction(self._collect, self._wake.set if wake else None)

    def _collect(self) -> list[Delivery]:
        """This call's messages for every RM, built from the outboxes (under the lock)."""
        core = self._core
        batch: list[Delivery] = []
        for rm_id, box in list(core.outboxes.items()):
            rm = self._rms.get(rm_id)
            if rm is not None and not box.empty():
                batch.extend((rm_id, method, message) for method, message in box.build(rm.callback))
        core.outboxes.clear()
        return batch

    def _rm(self, rm_id: str) -> ResourceManager | None:
        """The RM if it may send requests; None if it is paused or stopped (it is answered
        through its callback); raises when it never registered (no callback to answer)."""
        rm = self._rms.get(rm_id)
        if rm is None:
            raise UnknownResourceManager(rm_id)
        return rm if rm.state == "Running" else None

    def _refuse(self, rm_id: str) -> str:
        rm = self._rms.get(rm_id)
        state = rm.state.lower() if rm is not None else "not registered"
        return f"resource manager {rm_id} is {state}; register again to resync"

    def _ignored(self, rm_id: str, count: int, what: str) -> None:
        if count:
            self._core.event(rm_id, si.EventRecordType.UNKNOWN_EVENTRECORD_TYPE, rm_id,
                             f"resource manager {rm_id}: {count} {what} ignored: "
                             f"{self._refuse(rm_id)}")

    def _uuid_taken(self, uuid: str) -> bool:
        for rm in self._rms.values():
            for p in rm.partitions.values():
                if uuid in p.allocations:
                    return True
        return False

    def add_transition_observer(self, observer: Observer) -> Callable[[], None]:
        """See every lifecycle transition of this scheduler (for checkers and tracing)."""
        with self.lock:
            self._core.observers.append(observer)

        def remove() -> None:
            self.remove_transition_observer(observer)

        return remove

    def remove_transition_observer(self, observer: Observer) -> None:
        """Stop telling ``observer`` about transitions (no-op when it was not added)."""
        with self.lock:
            if observer in self._core.observers:
                self._core.observers.remove(observer)

    # ---------------------------------------------------------------- RM calls
    def register_resource_manager(
        self, request: si.RegisterResourceManagerRequest, callback: ResourceManagerCallback,
        dialect: Dialect | str | None = None,
    ) -> si.RegisterResourceManagerResponse:
        """Register an RM with its queue configuration (``002`` "RM register with scheduler").

        A known ``rm_id`` is cleaned up first: everything it owned goes and a
        full resync is expected. An invalid configuration raises ConfigError,
        and a callback that lacks a method the core calls raises TypeError,
        before anything changes.

        ``dialect`` fixes the SI the RM speaks (``"seed"`` or ``"today"``) from
        the start; without it the RM's first request that only one dialect can
        say decides (``scheduler.dialect``). Either way it holds until the RM
        registers again.
        """
        _expect(request, si.RegisterResourceManagerRequest, "register_resource_manager")
        check_callback(callback)
        speaks = None if dialect is None else Dialect(dialect)
        config = configuration(request.config)
        with self._transaction():
            old = self._rms.get(request.rm_id)
            if old is not None:
                old.drop(self._core)
            rm = ResourceManager(request.rm_id, callback, request.policy_group, request.config)
            self._rms[rm.id] = rm
            for pc in config.partitions:
                rm.add_partition(self._core, pc)
            if speaks is not None:
                rm.speak(self._core, speaks)
            self._core.fire(rm, "register", rm.id)
        return si.RegisterResourceManagerResponse()

    def dialect(self, rm_id: str) -> Dialect | None:
        """The SI the RM speaks: None until one of its requests said (or it is not known)."""
        with self.lock:
            rm = self._rms.get(rm_id)
            return rm.dialect if rm is not None else None

    def _expire_paused(self) -> None:
        """Stop every RM paused for longer than ``rm_pause_timeout`` (``002`` "timeout")."""
        timeout = self.rm_pause_timeout
        if timeout is None:
            return
        now = self.clock.now()
        for rm in list(self._rms.values()):
            if rm.state == "Paused" and rm.paused_at is not None \
                    and now >= rm.paused_at + timeout:
                rm.drop(self._core, "time_out")
                self._core.event(rm.id, si.EventRecordType.UNKNOWN_EVENTRECORD_TYPE, rm.id,
                                 f"resource manager {rm.id} stopped: paused for {timeout:g} s "
                                 "without registering again")

    def connection_lost(self, rm_id: str) -> None:
        """RM lifecycle Running -> Paused; its requests are refused until it re-registers."""
        _expect(rm_id, str, "connection_lost")
        with self._transaction():
            rm = self._rms.get(rm_id)
            if rm is not None and rm.state == "Running":
                self._core.fire(rm, "disconnect", rm.id)
                rm.paused_at = self.clock.now()

    def unregister_resource_manager(self, rm_id: str) -> None:
        """Voluntary shutdown: the RM stops and everything it owned is removed."""
        _expect(rm_id, str, "unregister_resource_manager")
        with self._transaction():
            rm = self._rms.get(rm_id)
            if rm is not None and rm.state != "Stopped":
                rm.drop(self._core)

    def update_configuration(self, request: si.UpdateConfigurationRequest) -> None:
        """Hot reload (``003`` "Update and Remove partition"); invalid -> ConfigError."""
        _expect(request, si.UpdateConfigurationRequest, "update_configuration")
        config = configuration(request.config)
        with self._transaction():
            rm = self._rms.get(request.rm_id)
            if rm is None:
                raise UnknownResourceManager(request.rm_id)
            if rm.state != "Running":
                raise ConfigError(self._refuse(request.rm_id), "rmID")
            wanted = {pc.name: pc for pc in config.partitions}
            for name, pc in wanted.items():
                existing = rm.partitions.get(name)
                if existing is not None and existing.state != "Stopped":
                    existing.check_update(pc)
            rm.config_text = request.config
            for name, pc in wanted.items():
                partition = rm.partitions.get(name)
                if partition is None or partition.state == "Stopped":
                    rm.add_partition(self._core, pc)
                else:
                    if partition.state == "Draining":
                        self._core.fire(partition, "start", rm.id)
                    partition.apply_config(pc)
            for name, partition in list(rm.partitions.items()):
                if name not in wanted:
                    partition.drain()
            rm.reap()

    # ------------------------------------------------------------ app requests
    def update_application(self, request: si.ApplicationRequest) -> None:
        """Add and remove applications; answers through ``callback.update_application``."""
        _expect(request, si.ApplicationRequest, "update_application")
        with self._transaction():
            rm = self._rm(request.rm_id)
            if rm is None:
                reason = self._refuse(request.rm_id)
                for a in request.new:
                    self._core.reject_app(request.rm_id, a.application_id, reason)
                self._ignored(request.rm_id, len(request.remove), "application removals")
                return
            for add in request.new:
                partition = rm.partition(add.partition_name)
                if partition is None:
                    self._core.reject_app(rm.id, add.application_id,
                                          f"partition {add.partition_name} does not exist")
                    continue
                partition.add_application(add)
            for remove in request.remove:
                partition = rm.partition(remove.partition_name)
                if partition is None or not partition.remove_application(remove.application_id):
                    self._core.event(rm.id, si.EventRecordType.APP, remove.application_id,
                                     f"application {remove.application_id} is not known: "
                                     "removal ignored")
            rm.reap()

    # ----------------------------------------------------------- node requests
    def update_node(self, request: si.NodeRequest | today.NodeRequest) -> None:
        """Node actions (``002`` NodeInfo.ActionFromRM); answers through ``update_node``.

        Takes the seed's ``si.NodeRequest`` or today's ``si.today.NodeRequest``.
        """
        _expect(request, (si.NodeRequest, today.NodeRequest), "update_node")
        with self._transaction():
            rm = self._rm(request.rm_id)
            if rm is None:
                reason = self._refuse(request.rm_id)
                for n in request.nodes:
                    self._core.reject_node(request.rm_id, n.node_id, reason)
                return
            if isinstance(request, si.NodeRequest):
                own = seed_only(request)
                if own and not rm.speak(self._core, Dialect.SEED):
                    reason = rm.refusal(Dialect.SEED, ", ".join(own))
                    for n in request.nodes:
                        self._core.reject_node(rm.id, n.node_id, reason)
                    return
                if not own and rm.dialect is Dialect.TODAY:
                    request = today_node_request(request)
            elif not rm.speak(self._core, Dialect.TODAY):
                reason = rm.refusal(Dialect.TODAY, "si.today.NodeRequest")
                for t in request.nodes:
                    self._core.reject_node(rm.id, t.node_id, reason)
                return
            if isinstance(request, today.NodeRequest):
                assert rm.today is not None
                for t in request.nodes:
                    rm.today.node(t, rm.node_route,
                                  lambda node, name: self._core.reject_node(
                                      rm.id, node, f"partition {name} does not exist"))
            else:
                for info in request.nodes:
                    partition = rm.node_route(info)
                    if partition is None:
                        name = info.attributes.get(NODE_PARTITION_ATTRIBUTE) or \
                            si.DEFAULT_PARTITION
                        self._core.reject_node(rm.id, info.node_id,
                                               f"partition {name} does not exist")
                    elif info.action == si.NodeAction.CREATE:
                        partition.add_node(info)
                    else:
                        partition.update_node(info)
            rm.reap()

    # ----------------------------------------------------- allocation requests
    def update_allocation(self, request: si.AllocationRequest | today.AllocationRequest) -> None:
        """Asks, RM releases and confirmations; answers through ``update_allocation``.

        Takes the seed's ``si.AllocationRequest`` or today's
        ``si.today.AllocationRequest`` (pods by key, ``scheduler.dialect``).
        The collector is paused as in :meth:`schedule`: thousands of asks arriving at
        once are thousands of objects that all stay alive, which set off full
        collections that find nothing to free (a tenth of the asks' arrival).
        """
        _expect(request, (si.AllocationRequest, today.AllocationRequest), "update_allocation")
        with _collector_paused(), self._transaction():
            rm = self._rm(request.rm_id)
            if rm is None:
                self._refuse_allocation(request, self._refuse(request.rm_id))
                return
            if isinstance(request, si.AllocationRequest):
                own = seed_only(request)
                if own and not rm.speak(self._core, Dialect.SEED):
                    self._refuse_allocation(
                        request, rm.refusal(Dialect.SEED, ", ".join(own)))
                    return
                if not own and rm.dialect is Dialect.TODAY:
                    request = today_allocation_request(request)
            elif not rm.speak(self._core, Dialect.TODAY):
                self._refuse_allocation(
                    request, rm.refusal(Dialect.TODAY, "si.today.AllocationRequest"))
                return
            if isinstance(request, today.AllocationRequest):
                assert rm.today is not None
                rm.today.update_allocation(request)
            else:
                self._seed_allocation(rm, request)
            rm.reap()

    def _refuse_allocation(self, request: si.AllocationRequest | today.AllocationRequest,
                           reason: str) -> None:
        """Every ask or pod of ``request`` rejected with ``reason``; its releases ignored."""
        rm_id = request.rm_id
        pods = request.asks if isinstance(request, si.AllocationRequest) else request.allocations
        for a in pods:
            self._core.reject_ask(rm_id, a.application_id, a.allocation_key, reason)
        releases = request.releases
        if releases is not None:
            count = len(releases.allocations_to_release)
            if isinstance(releases, si.AllocationReleasesRequest):
                count += len(releases.allocation_asks_to_release)
            if count:
                self._core.event(rm_id, si.EventRecordType.UNKNOWN_EVENTRECORD_TYPE, rm_id,
                                 f"resource manager {rm_id}: {count} releases ignored: {reason}")

    def _seed_allocation(self, rm: ResourceManager, request: si.AllocationRequest) -> None:
        for ask in request.asks:
            partition = rm.partition(ask.partition_name)
            if partition is None:
                self._core.reject_ask(rm.id, ask.application_id, ask.allocation_key,
                                      f"partition {ask.partition_name} does not exist")
                continue
            partition.add_ask(ask)
        releases = request.releases
        if releases is not None:
            for ask_rel in releases.allocation_asks_to_release:
                p = rm.partition(ask_rel.partition_name)
                if p is None:
                    self._unknown_partition(rm.id, ask_rel.partition_name, "ask release")
                else:
                    p.release_asks(ask_rel)
            for rel in releases.allocations_to_release:
                p = rm.partition(rel.partition_name)
                if p is None:
                    self._unknown_partition(rm.id, rel.partition_name, "release")
                else:
                    p.release_allocations(rel)

    def _unknown_partition(self, rm_id: str, name: str, what: str) -> None:
        self._core.event(rm_id, si.EventRecordType.QUEUE, name,
                         f"partition {name} is not known: {what} ignored")

    # -------------------------------------------------------------- scheduling
    def schedule(self) -> int:
        """Fire due timers, then allocate until nothing more can be placed now.

        Python's cyclic garbage collector is paused for the call: a large cycle
        creates hundreds of thousands of short-lived message objects and would
        otherwise trigger full collections that find nothing to free (measured:
        half the benchmark's time, docs/performance.md). Reference counting
        still frees everything; the collector resumes when the call returns.
        """
        with _collector_paused():
            return self._schedule()

    def _schedule(self) -> int:
        with self._transaction(wake=False), self._delivery.cycle():
            self._expire_paused()
            self._fire_timers()
            count = 0
            for rm in list(self._rms.values()):
                if rm.state != "Running":
                    continue
                for partition in list(rm.partitions.values()):
                    count += partition.schedule()
                rm.reap()
            return count

    def _fire_timers(self) -> None:
        """Hand every due timer to the partition that set it, if it is still there."""
        for timer in self._core.due_timers():
            rm_id, name = timer.owner
            rm = self._rms.get(rm_id)
            partition = rm.partitions.get(name) if rm is not None else None
            if rm is None or rm.state != "Running" or partition is None:
                continue
            partition.on_timer(timer.kind, timer.target, timer.token)

    def start(self, interval: float = 0.05) -> None:
        """Run ``schedule()`` on a background thread until :meth:`stop`."""
        with self.lock:
            if self._thread is not None:
                return
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._loop, args=(interval,), name="yunikorn-fsm-scheduler", daemon=True)
            self._thread.start()

    def _loop(self, interval: float) -> None:
        while not self._stop.is_set():
            try:
                made = self.schedule()
            except Exception:
                log.exception("scheduling cycle failed")
                made = 0
            if made == 0:
                self._wake.wait(interval)
                self._wake.clear()

    def stop(self) -> None:
        """Stop the background thread started by :meth:`start` (no-op otherwise)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        self._wake.set()
        thread.join()
        with self.lock:
            self._thread = None

    # -------------------------------------------------------------------- dump
    def state_dump(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot in the contract's schema."""
        with self.lock:
            return {
                "rms": [{"rm_id": rm.id, "state": rm.state} for rm in self._rms.values()],
                "partitions": [
                    dump_partition(p) for rm in self._rms.values() for p in rm.partitions.values()
                ],
            }

    # ----------------------------------------------------- read-only internals
    def partitions(self) -> list[Partition]:
        """The live partition objects (read them, never change them): for invariants."""
        with self.lock:
            return [p for rm in self._rms.values() for p in rm.partitions.values()]

    @property
    def lock(self) -> threading.RLock:
        """The state lock, for readers that need a consistent view (invariants)."""
        return self._delivery.lock
