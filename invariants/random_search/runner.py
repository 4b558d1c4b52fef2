"""The random search: test cases drawn from a seed, run against a time budget.

Case ``k`` of worker ``w`` of a run with seed ``s`` draws everything from the
seed ``(s, w, k)``, so ``--seed s`` repeats a run's cases in the same order;
a time budget only decides how many of them run. ``--workers N`` runs N
processes on that one stream, each every N-th case, and merges their coverage; a
violation stops every worker once the cases before it have run, so the run reports
the stream's first failing case, whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from invariants.actions import Gen, Scenario
from invariants.actions.draw import CLOCK_START
from invariants.modelshim.world import DIRECT, World
from invariants.properties.catalog import Violation
from invariants.properties.coverage import Coverage
from invariants.random_search.quiet import configuration_warnings_quiet
from scheduler.trace import Step


@dataclass(frozen=True)
class Options:
    """What a run searches and for how long."""

    seed: int
    seconds: float = 60.0
    examples: int | None = None
    steps: int | None = None
    workers: int = 1
    config: str | None = None
    rules: frozenset[str] | None = None
    stats: bool = False
    progress: bool = False
    liveness: bool = True
    """Each case that broke no rule ends driven to rest, where the liveness properties of
    ``liveness.CASE_ENDS`` are judged."""
    transport: str = DIRECT
    """``grpc``: every case's core is served on loopback and its shim talks to it through
    clients (``invariants/modelshim/loopback.py``)."""


@dataclass
class Failure:
    """A test case that broke a rule, with everything needed to run it again."""

    seed: int
    case: int
    worker: int
    scenario: Scenario
    steps: list[Step]
    violation: Violation
    violations: list[Violation]
    sym: dict[str, tuple[str, str, int]]
    elapsed: float
    quiescent: bool = False
    """The violation came once the case's steps were over, driving the core to rest (a
    liveness property, or a rule broken on the way there): ``steps`` are the case's, and
    whoever runs them again drives the end to rest the same way (``explore.closure.settle``)."""
    transport: str = DIRECT
    """How the case reached its core: whoever runs it again goes the same way."""


@dataclass
class Outcome:
    """What a run (or one worker of it) did."""

    cases: int = 0
    steps: int = 0
    elapsed: float = 0.0
    coverage: Coverage = field(default_factory=Coverage)
    failure: Failure | None = None
    rule_counts: Counter[str] = field(default_factory=Counter)
    rule_seconds: dict[str, float] = field(default_factory=dict)
    invariant_seconds: dict[str, float] = field(default_factory=dict)

    def merge(self, other: Outcome) -> None:
        self.cases += other.cases
        self.steps += other.steps
        self.coverage.merge(other.coverage)
        self.rule_counts.update(other.rule_counts)
        for mine, theirs in ((self.rule_seconds, other.rule_seconds),
                             (self.invariant_seconds, other.invariant_seconds)):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0.0) + value
        if self.failure is None or (other.failure is not None
                                    and other.failure.elapsed < self.failure.elapsed):
            self.failure = other.failure or self.failure


def case_seed(seed: int, worker: int, case: int) -> int:
    """The seed of one test case: a stable function of the run's seed and its position."""
    return random.Random(f"{seed}/{worker}/{case}").randrange(1 << 62)


SETTLING = "(case end: driven to rest)"
"""How ``--stats`` names the time spent driving each case to rest and judging liveness."""


def run_case(seed: int, opts: Options, coverage: Coverage | None = None,
             timings: Outcome | None = None) -> tuple[World, list[Violation], int]:
    """One test case; returns its world, the violations that stopped it, and its steps.

    A case whose steps broke nothing is driven to rest (with ``opts.liveness``) and judged
    there (:func:`case_end`); the world's steps stay the case's own."""
    world, problems, steps, _ = _case(seed, opts, coverage, timings)
    return world, problems, steps


def _case(seed: int, opts: Options, coverage: Coverage | None,
          timings: Outcome | None) -> tuple[World, list[Violation], int, bool]:
    """:func:`run_case`, and whether the violations came at the case's end."""
    scenario = Scenario.draw(seed, opts.config, opts.steps, opts.rules)
    world = World(CLOCK_START, scenario.predicate(), coverage,
                  scheduler_options=scheduler_options(scenario),
                  timings=timings.invariant_seconds if timings is not None else None,
                  transport=opts.transport)
    try:
        return _steps(world, scenario, seed, opts, timings)
    finally:
        world.close()


def _steps(world: World, scenario: Scenario, seed: int, opts: Options,
           timings: Outcome | None) -> tuple[World, list[Violation], int, bool]:
    gen = Gen(world, scenario, random.Random(seed ^ 0x5EED))
    steps = 0
    for step in gen.steps():
        started = time.perf_counter() if timings is not None else 0.0
        problems = world.run(step)
        steps += 1
        if timings is not None:
            spent = time.perf_counter() - started
            timings.rule_seconds[gen.current] = timings.rule_seconds.get(gen.current, 0.0) + spent
        if problems:
            return world, problems, steps, False
    if timings is not None:
        timings.rule_counts.update(gen.counts)
    if not opts.liveness:
        return world, [], steps, False
    return world, case_end(world, timings), steps, True


def case_end(world: World, timings: Outcome | None = None) -> list[Violation]:
    """Drive a case's world to rest and judge liveness there; the world's steps stay the
    case's own (the shrinker and the trace drive them to rest again themselves)."""
    from invariants.explore.closure import settle
    from invariants.properties import liveness

    started = time.perf_counter() if timings is not None else 0.0
    case = len(world.steps)
    end = settle(world, liveness.CASE_ENDS)
    del world.steps[case:]
    if timings is not None:
        timings.rule_seconds[SETTLING] = timings.rule_seconds.get(SETTLING, 0.0) \
            + time.perf_counter() - started
    return end.violations


def scheduler_options(scenario: Scenario) -> dict[str, Any]:
    """Constructor options of the core a scenario runs with."""
    return {"rm_pause_timeout": scenario.rm_pause_timeout,
            "reservation_delay": scenario.reservation_delay}


@dataclass(frozen=True)
class Lane:
    """One of ``count`` processes sharing one case stream: this one runs the cases
    ``index``, ``index + count``, ... and none past the first failing case any lane found
    (``first_failing``, a manager's value, with its ``lock``)."""

    index: int
    count: int
    first_failing: Any
    lock: Any

    def passed(self, case: int) -> bool:
        """Whether a lane already failed at an earlier case than ``case``."""
        return bool(case > self.first_failing.value)

    def failed(self, case: int) -> None:
        with self.lock:
            if case < self.first_failing.value:
                self.first_failing.value = case


NONE_FAILED = (1 << 63) - 1


def search(opts: Options, worker: int = 0, deadline: float | None = None,
           stop: Any = None, progress: Callable[[Outcome], None] | None = None,
           first: int = 0, lane: Lane | None = None) -> Outcome:
    """Run test cases until the budget is spent, the case count reached, or a violation.

    The cases are worker ``worker``'s from case ``first`` on, and ``opts.examples`` counts
    from there (a campaign's work unit is such a range: ``invariants/campaign``); a
    ``lane`` runs only its share of them."""
    started = time.monotonic()
    deadline = deadline if deadline is not None else started + opts.seconds
    out = Outcome()
    case, stride = (first + lane.index, lane.count) if lane is not None else (first, 1)
    end = None if opts.examples is None else first + opts.examples
    last = started
    while time.monotonic() < deadline and (end is None or case < end):
        if stop is not None and stop.is_set():
            break
        if lane is not None and lane.passed(case):
            break
        seed = case_seed(opts.seed, worker, case)
        world, problems, steps, at_end = _case(seed, opts, out.coverage,
                                               out if opts.stats else None)
        out.cases += 1
        out.coverage.cases += 1
        out.steps += steps
        if problems:
            out.failure = Failure(opts.seed, case, worker, Scenario.draw(
                seed, opts.config, opts.steps, opts.rules), list(world.steps), problems[0],
                problems, dict(world.shim.sym), time.monotonic() - started, at_end,
                opts.transport)
            if lane is not None:
                lane.failed(case)
            if stop is not None:
                stop.set()
            break
        case += stride
        now = time.monotonic()
        if progress is not None and now - last >= 0.5:
            out.elapsed = now - started
            progress(out)
            last = now
    out.elapsed = time.monotonic() - started
    return out


VACUOUS_CASES = 50
"""Cases after which a run in which no application ever ran is vacuous (fewer may be bad
luck of the draws)."""


def vacuous(outcome: Outcome) -> str | None:
    """Why a run checked nothing beyond registration, or None: no application was ever
    accepted, or over ``VACUOUS_CASES`` cases none ever ran (got a real allocation).
    Every invariant holds in such a run because no rule's premise was ever met."""
    edges = outcome.coverage.edges
    if not edges[("application", "New", "accept", "Accepted")]:
        return ("no application was ever accepted: the configuration's queues, ACLs or "
                "placement rules reject every application the checker submits")
    if outcome.cases >= VACUOUS_CASES and not edges[("application", "Accepted", "run",
                                                     "Running")]:
        return (f"no application ever ran in {outcome.cases:,} cases: the configuration's "
                "quotas or limits admit no ask")
    return None


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup v2 CPU quota.

    ``os.cpu_count()`` counts the host's cores, which a container limited to two of them
    does not have; a worker per host core would only share those two.
    """
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as limit:
            quota, period = limit.read().split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    return max(1, min(cores, -(-int(quota) // int(period))))


def _worker(args: tuple[Options, float, Lane]) -> Outcome:
    opts, deadline, lane = args
    with configuration_warnings_quiet():  # a spawned worker starts with the core's logging
        return search(opts, 0, deadline, lane=lane)


def run(opts: Options, progress: Callable[[Outcome], None] | None = None) -> Outcome:
    """The whole run, in this process or in ``opts.workers`` processes.

    The processes share the one case stream of ``--seed`` (each a :class:`Lane` of it), and
    the run reports the first failing case of the stream: the counterexample of a run
    with several workers is the one a single worker finds, only found sooner."""
    if opts.workers <= 1:
        return search(opts, progress=progress)
    # gRPC's threads do not survive a fork: a run through the wire starts fresh workers
    fork = sys.platform != "win32" and opts.transport == DIRECT
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    deadline = time.monotonic() + opts.seconds
    manager = ctx.Manager()
    first_failing, lock = manager.Value("q", NONE_FAILED), manager.Lock()
    total = Outcome()
    started = time.monotonic()
    with ctx.Pool(opts.workers) as pool:
        results = pool.map_async(_worker, [
            (opts, deadline, Lane(w, opts.workers, first_failing, lock))
            for w in range(opts.workers)])
        while not results.ready():
            results.wait(0.5)
            if progress is not None:
                total.elapsed = time.monotonic() - started
                progress(total)
        outcomes = results.get()
    manager.shutdown()
    for outcome in outcomes:
        total.merge(outcome)
    failures = [o.failure for o in outcomes if o.failure is not None]
    total.failure = min(failures, key=lambda f: f.case) if failures else None
    total.elapsed = time.monotonic() - started
    return total
