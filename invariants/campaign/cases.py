"""``check --ray``: the stored counterexamples, the random cases and the self-test as units.

A unit of the random search is a range of one case stream: unit ``u`` runs
cases ``0 .. UNIT_CASES - 1`` of stream ``u`` (``runner.case_seed(seed, u, k)``),
so ``--seed S --ray`` draws the same cases whatever the cluster's size, and
unit 0 is the first cases of a local ``check --seed S``. With ``--examples N``
the units cover exactly N cases. The first counterexample is the one of the
lowest unit: once one is found, the units below it still run (one of them
may fail earlier in the order) and the ones above are cancelled, so the
verdict of a repeated run does not depend on which node was faster.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from invariants.campaign.dispatch import Dispatcher
from invariants.campaign.ray_cluster import connected
from invariants.random_search import runner
from invariants.random_search.runner import Outcome

UNIT_CASES = 16
"""Cases per unit: a few seconds of work, so a lost unit costs little and the cluster's
round trips (milliseconds) cost nothing against it."""


@dataclass(frozen=True, order=True)
class Unit:
    """Cases ``first .. first + count - 1`` of stream ``stream``."""

    stream: int
    first: int
    count: int

    def __str__(self) -> str:
        return f"unit {self.stream} (cases {self.first}..{self.first + self.count - 1})"


def units(examples: int | None, size: int = UNIT_CASES) -> Iterator[Unit]:
    """The run's units in order: endless for a time budget, ``examples`` cases in all
    otherwise."""
    if examples is None:
        return (Unit(u, 0, size) for u in itertools.count())
    whole, rest = divmod(examples, size)
    return iter([Unit(u, 0, size) for u in range(whole)]
                + ([Unit(whole, 0, rest)] if rest else []))


def run_unit(opts: runner.Options, unit: Unit, deadline: float, mutant: str | None) -> Outcome:
    """One unit on a worker: its cases until the run's wall-clock deadline (or a violation),
    on the broken core ``mutant`` when given."""
    import contextlib

    from invariants.random_search.quiet import configuration_warnings_quiet

    here = time.monotonic() + max(0.0, deadline - time.time())
    mine = dataclasses.replace(opts, examples=unit.count, workers=1, progress=False)
    with contextlib.ExitStack() as stack:
        stack.enter_context(configuration_warnings_quiet())
        if mutant is not None:
            from invariants.selftest.mutants import applied, by_name

            stack.enter_context(applied(by_name(mutant)))
        return runner.search(mine, unit.stream, here, first=unit.first)


def replay_stored(name: str, text: str) -> str | None:
    """One stored counterexample replayed on a worker: the violation it still shows, or None."""
    from invariants.random_search import replay
    from invariants.random_search.quiet import configuration_warnings_quiet
    from scheduler.trace import TraceError, parse_lines

    try:
        trace = parse_lines(text.splitlines())
    except TraceError:
        return None
    with configuration_warnings_quiet():
        result = replay.run(trace)
    return None if result.violation is None else str(result.violation)


@dataclass
class Report:
    """What a campaign did: the merged outcome, and what it lost and redid."""

    outcome: Outcome
    units: int = 0
    lost: list[str] = field(default_factory=list)
    redone: int = 0
    nodes: int = 0
    cpus: int = 0


Progress = Callable[[Outcome, int, int], None]
"""Told the merged outcome so far, the nodes alive and their CPUs."""


def replay_all(address: str, stored: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every stored counterexample replayed on the cluster: those that still fail."""
    with connected(address) as ray:
        task = ray.remote(max_retries=0, num_cpus=1)(replay_stored)
        failing: list[tuple[str, str]] = []
        texts = dict(stored)
        dispatcher: Dispatcher[str] = Dispatcher(ray, lambda name: task.remote(name,
                                                                                texts[name]))

        def merge(name: str, violation: Any) -> None:
            if violation is not None:
                failing.append((name, violation))

        dispatcher.run(iter(sorted(texts)), merge)
        return sorted(failing)


def search(address: str, opts: runner.Options, progress: Progress | None = None,
           mutant: str | None = None, size: int = UNIT_CASES,
           on_start: Callable[[Dispatcher[Unit]], None] | None = None) -> Report:
    """The random search of ``opts`` on the cluster at ``address``."""
    with connected(address) as ray:
        task = ray.remote(max_retries=0, num_cpus=1)(run_unit)
        started = time.monotonic()
        deadline = time.time() + opts.seconds if math.isfinite(opts.seconds) else math.inf
        total = Outcome()
        report = Report(total)
        failed: list[tuple[Unit, runner.Failure]] = []
        dispatcher: Dispatcher[Unit] = Dispatcher(
            ray, lambda unit: task.remote(opts, unit, deadline, mutant))

        def merge(unit: Unit, outcome: Outcome) -> None:
            report.units += 1
            failure, outcome.failure = outcome.failure, None
            total.merge(outcome)
            if failure is not None:
                failure.elapsed = time.monotonic() - started
                failed.append((unit, failure))
                lowest = min(failed, key=lambda pair: pair[0])[0]
                dispatcher.wanted = lambda u: u < lowest

        def tick() -> None:
            if progress is not None:
                total.elapsed = time.monotonic() - started
                progress(total, dispatcher.nodes, dispatcher.cpus)

        if on_start is not None:
            on_start(dispatcher)
        dispatcher.run(units(opts.examples, size), merge, tick,
                       until=lambda: time.time() >= deadline)
        total.elapsed = time.monotonic() - started
        if failed:
            total.failure = min(failed, key=lambda pair: pair[0])[1]
        report.lost, report.redone = dispatcher.lost_lines(), dispatcher.redone
        report.nodes, report.cpus = dispatcher.nodes, dispatcher.cpus
        return report


def hunt_all(address: str, names: Sequence[str], seed: int, examples: int | None,
             seconds: float | None, shrink_seconds: float,
             report: Callable[[Any], None]) -> Dispatcher[str]:
    """The self-test's broken cores on the cluster, one unit each (``selftest.hunt``, on a
    worker); ``report`` gets each verdict as it comes."""
    from invariants.selftest.hunt import hunt

    with connected(address) as ray:
        task = ray.remote(max_retries=0, num_cpus=1)(hunt)
        dispatcher: Dispatcher[str] = Dispatcher(
            ray, lambda name: task.remote(name, seed, examples, seconds, shrink_seconds))
        dispatcher.run(iter(names), lambda _name, verdict: report(verdict))
        return dispatcher
