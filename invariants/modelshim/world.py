"""A world: one core, its clock, the model shim and the recorder, run step by step.

Every step (an SI call, a ``schedule()``, the clock moving) goes through
:meth:`World.run`, which tells the model shim, executes the step, and returns
every violation: the shim's protocol checks and every registered invariant
(``scheduling.maximal`` after each ``schedule()``). The random checker, the
shrinker, the replay of a trace file and the explorer all use it, so a step
means the same everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from invariants.modelshim import bridge
from invariants.modelshim.monitor import ModelShim, Predicate
from invariants.modelshim.step_coverage import StepCoverage
from invariants.properties.catalog import REGISTRY, CheckContext, Violation, WireFault
from invariants.properties.coverage import Coverage
from invariants.properties.protocol import NO_EXCEPTION, SCHEDULE_COUNT
from invariants.properties.recorder import LifecycleRecorder
from invariants.properties.scheduling import PREEMPTED, REPLACED
from invariants.readings import view
from scheduler import ManualClock, Scheduler, si
from scheduler.errors import ConfigError, UnknownResourceManager
from scheduler.trace import REQUEST_CALLS, RM_CALLS, Step
from statemachines import TransitionRecord

if TYPE_CHECKING:
    from invariants.modelshim.loopback import Wire

TT = si.TerminationType
DIRECT, GRPC = "direct", "grpc"
TRANSPORTS = (DIRECT, GRPC)
"""How the world's steps reach the core: in process, or through a real server on loopback
(``invariants/modelshim/loopback.py``)."""


class World:
    """A fresh scheduler driven by steps, checked after each one."""

    def __init__(
        self,
        clock_start: float = 0.0,
        predicate: Predicate | None = None,
        coverage: Coverage | None = None,
        translate: Mapping[str, tuple[str, str, int]] | None = None,
        scheduler_options: Mapping[str, Any] | None = None,
        timings: dict[str, float] | None = None,
        transport: str = DIRECT,
    ) -> None:
        if transport not in TRANSPORTS:
            raise ValueError(f"transport: {transport!r} is not one of {', '.join(TRANSPORTS)}")
        self.clock = ManualClock(start=clock_start)
        self.api = Scheduler(clock=self.clock, **dict(scheduler_options or {}))
        self.recorder = LifecycleRecorder(self.api)
        self.shim = ModelShim(self.api, self.clock, predicate)
        self.transport = transport
        self.wire: Wire | None = None
        """With ``transport="grpc"``: the core served on loopback, the RMs' clients."""
        if transport == GRPC:
            from invariants.modelshim.loopback import Wire

            self.wire = Wire(self.api)
        self.predicate = predicate
        self.coverage = coverage
        self.timings = timings
        """When given, seconds spent per invariant and in the model shim (``--stats``)."""
        self.steps: list[Step] = []
        self.checked = 0
        self._transitions: list[TransitionRecord] = []
        self._reserved_before: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
        self._states_before: dict[tuple[str, str, str], str] = {}
        self._backoff_before: dict[tuple[str, str, str], float] = {}
        self._replacing_before: set[str] = set()
        self.scheduled: int | None = None
        """What the last ``schedule()`` returned (None before one ran)."""
        self.refused: BaseException | None = None
        """Why the core refused the last step's call (an invalid configuration, an unknown
        RM), or None: such a call changes nothing and is not a violation."""
        self.today: set[str] = set()
        """The RMs that speak today's SI, as their traffic says (:meth:`_heard`): a shim
        driving the world (the closure's confirmations) speaks to each in its words."""
        # Shrinking replays a run without some of its steps: the core's uuids shift,
        # so requests naming the original uuids are translated by symbolic name.
        self._original = dict(translate) if translate is not None else None
        self.observed = StepCoverage(self)
        """What the steps reached, for ``coverage``."""
        if coverage is not None:
            self.api.add_transition_observer(self._on_transition)

    # ------------------------------------------------------------------ running
    def run(self, step: Step, invariants: bool = True) -> list[Violation]:
        """Execute one step; return every violation it caused (empty: all held).

        The model shim judges every message in any case; ``invariants=False``
        leaves the registered invariants to a later :meth:`check` (the
        explorer checks them once per distinct state).
        """
        if self._original is not None:
            step = self._translate(step)
        if self.wire is not None and (stalled := self.wire.before()) is not None:
            self.steps.append(step)
            return [stalled]
        self.shim.begin(step)
        self._reserved_before = self._reservations() if step.call == "schedule" else {}
        self._states_before = self._app_states() if step.call == "schedule" else {}
        self._backoff_before = self._backoffs() if step.call == "schedule" else {}
        self._replacing_before = {u for rv in self.shim.rms.values()
                                  for u, a in rv.allocs.items()
                                  if a.releasing == REPLACED} if step.call == "schedule" else set()
        error: BaseException | None = None
        crash: Violation | None = None
        try:
            self._execute(step)
        except (ConfigError, UnknownResourceManager) as exc:
            error = exc
        except WireFault as fault:
            crash = fault.violation
        except Exception as exc:  # the core must never raise here: that is a finding
            crash = Violation(NO_EXCEPTION, f"step {step.call}",
                              f"raised {type(exc).__name__}: {exc}")
        if crash is not None:
            self.shim.call = None
            self.steps.append(step)
            return [crash]
        if self.shim.errors:
            raise self.shim.errors.pop(0)
        self.shim.end(step, error)
        self.refused = error
        self._heard(step, error)
        self.steps.append(step)
        problems = list(self.shim.violations)
        self.shim.violations.clear()
        if step.call == "schedule":
            problems += self._schedule_count()
        if self.wire is not None and self.wire.violations:
            problems += self.wire.violations
            self.wire.violations.clear()
        if invariants:
            problems += self.check(after_schedule=step.call == "schedule")
        if self.coverage is not None:
            self.observed.observe(step, error)
        return problems

    def _schedule_count(self) -> list[Violation]:
        """``protocol.schedule_count``: the call's count against the new allocations the RMs
        heard from it."""
        heard = sum(len(msg.new) for kind, msg in self.shim.observed
                    if kind == "update_allocation")
        if self.scheduled == heard:
            return []
        return [Violation(SCHEDULE_COUNT, "step schedule",
                          f"returned {self.scheduled}, and its answers carry {heard} new "
                          "allocations")]

    def _heard(self, step: Step, error: BaseException | None) -> None:
        """Which RMs speak today's SI, by their traffic: a registration that says so, or a
        request in today's words after one that left it open."""
        request = step.request
        if step.call == "register_resource_manager":
            if error is None:
                self.today.discard(request.rm_id)
                if step.extra.get(bridge.REGISTERS) == bridge.TODAY:
                    self.today.add(request.rm_id)
        elif bridge.is_today(step):
            self.today.add(request.rm_id)

    def untranslated(self) -> None:
        """From now on steps name this run's uuids (the steps that drive a shrinking
        candidate to rest are read from its own shim): nothing is translated any more."""
        self._original = None

    def close(self) -> None:
        """Stop the wire's server and clients (nothing to do in process)."""
        if self.wire is not None:
            self.wire.close()

    def _execute(self, step: Step) -> None:
        if self.wire is not None:
            self.wire.execute(step, self.shim, self._direct)
        else:
            self._direct(step)

    def _direct(self, step: Step) -> None:
        api = self.api
        call = step.call
        if call == "advance":
            self.clock.advance(step.seconds)
        elif call == "schedule":
            self.scheduled = api.schedule()
        elif call == "register_resource_manager":
            dialect = step.extra.get(bridge.REGISTERS)
            api.register_resource_manager(step.request, self.shim.callback(step.request.rm_id),
                                          **({"dialect": dialect} if dialect else {}))
        elif call in REQUEST_CALLS:
            getattr(api, call)(step.request)
        elif call in RM_CALLS:
            getattr(api, call)(step.rm_id)
        else:
            raise ValueError(f"unknown step {call!r}")

    def check(self, after_schedule: bool = False, transitions_only: bool = False
              ) -> list[Violation]:
        """Every registered invariant against the current state.

        ``transitions_only``: only those about how the state was reached (the
        lifecycle recorder's, and the cycle's after a ``schedule()``), for a
        state already checked when it was first reached another way.
        """
        self.checked += 1
        # The allocations of the last schedule() call, in decision order (uuids are unique
        # across the scheduler): ``priority.order``.
        made = [a.uuid for kind, msg in self.shim.observed if kind == "update_allocation"
                for a in msg.new] if after_schedule else []
        # The asks the call reported RESERVED: a reservation it made may be gone by its end.
        reserving = {(msg.application_id, msg.allocation_key) for kind, msg in self.shim.observed
                     if kind == "update_container_scheduling_state"
                     and msg.state == si.SchedulingState.RESERVED} if after_schedule else set()
        ctx = self.context(after_schedule, made, reserving)
        out: list[Violation] = []
        timings = self.timings
        with self.api.lock:
            for inv in REGISTRY.values():
                if "after_schedule" in inv.needs and not after_schedule:
                    continue
                if transitions_only and not ({"recorder", "after_schedule"} & set(inv.needs)):
                    continue
                if timings is None:
                    out.extend(inv.run(ctx))
                    continue
                started = time.perf_counter()
                out.extend(inv.run(ctx))
                timings[inv.name] = timings.get(inv.name, 0.0) + time.perf_counter() - started
        return out

    def context(self, after_schedule: bool = False, made: list[str] | None = None,
                reserving: set[tuple[str, str]] | None = None) -> CheckContext:
        """What the checks read now: the core, the recorder, and the model shim's records."""
        view = {uuid: (a.app, a.node) for rv in self.shim.rms.values() if not rv.stopped
                for uuid, a in rv.allocs.items()}
        return CheckContext(self.api, recorder=self.recorder, shim_view=view,
                           extra={"after_schedule": after_schedule, "predicate": self.predicate,
                                  "configs": {rm: rv.config for rm, rv in self.shim.rms.items()},
                                  "allocated": made or [],
                                  "reserving": reserving or set(),
                                  "reserved_before": self._reserved_before,
                                  "states_before": self._states_before,
                                  "backoff_before": self._backoff_before,
                                  "replacing_before": self._replacing_before,
                                  "preempting": {u for rv in self.shim.rms.values()
                                                 for u, a in rv.allocs.items()
                                                 if a.releasing == PREEMPTED},
                                  "replacing": {u for rv in self.shim.rms.values()
                                                for u, a in rv.allocs.items()
                                                if a.releasing == REPLACED},
                                  "created": {(rm, name): made
                                              for rm, rv in self.shim.rms.items()
                                              for name, made in rv.created.items()},
                                  "fifo_since": {(rm, app_id): a.fifo_since
                                                 for rm, rv in self.shim.rms.items()
                                                 for app_id, a in rv.apps.items()},
                                  "groups": {(rm, app_id): a.group
                                             for rm, rv in self.shim.rms.items()
                                             for app_id, a in rv.apps.items()}})

    def _reservations(self) -> dict[tuple[str, str], dict[tuple[str, str], str]]:
        """Per (RM, partition): which node each reserved ask holds (``priority.order``)."""
        with self.api.lock:
            return {(p.rm_id, p.name): {k: n.id for k, n in p.reservations.items()}
                    for p in view.partitions(self.api)}

    def _backoffs(self) -> dict[tuple[str, str, str], float]:
        """Per (RM, partition, application): the end of its backoff before the call
        (``scheduling.backoff``)."""
        with self.api.lock:
            return {(p.rm_id, p.name, a.id): a.backoff_until for p in view.partitions(self.api)
                    for a in p.apps.values()}

    def _app_states(self) -> dict[tuple[str, str, str], str]:
        """Per (RM, partition, application): its state before the call
        (``scheduling.order``: whether a stateaware application was waiting)."""
        with self.api.lock:
            return {(p.rm_id, p.name, a.id): a.state for p in view.partitions(self.api)
                    for a in p.apps.values()}

    def _on_transition(self, rec: TransitionRecord) -> None:
        self._transitions.append(rec)

    # ------------------------------------------------------------------ shrinking
    def _translate(self, step: Step) -> Step:
        """Rename uuids of the original run to the ones this run gave the same allocations."""
        assert self._original is not None
        if bridge.is_today(step):
            return step  # today's SI names pods by key, which stays
        current = {name: uuid for uuid, name in self.shim.sym.items()}

        def new(uuid: str) -> str:
            name = self._original.get(uuid) if self._original is not None else None
            return current.get(name, uuid) if name is not None else uuid

        req = step.request
        if step.call == "update_allocation" and req.releases is not None:
            rels = [r.model_copy(update={"uuid": new(r.uuid)}) if r.uuid else r
                    for r in req.releases.allocations_to_release]
            releases = req.releases.model_copy(update={"allocations_to_release": rels})
            return replace(step, request=req.model_copy(update={"releases": releases}))
        if step.call == "update_node":
            nodes = [n.model_copy(update={"existing_allocations": [
                a.model_copy(update={"uuid": new(a.uuid)}) for a in n.existing_allocations]})
                if n.existing_allocations else n for n in req.nodes]
            return replace(step, request=req.model_copy(update={"nodes": nodes}))
        return step
