"""The checker's self-test: every deliberately broken core must be caught, and fast.

Each mutant of ``invariants/mutants.py`` runs in its own process: the edit is
applied, a search with the run's seed and budget looks for a violation, and a
found run is shrunk. The report gives the kill score, the time to detection
and the size of each counterexample, so a checker that lost its teeth shows it.

The budget is a number of test cases, not of seconds: with a fixed seed the
verdict is then the same on a loaded machine as on a quiet one (a wall-clock
budget made a slow core's detection depend on what else ran).
"""

from __future__ import annotations

import math
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scheduler.trace import read_trace

from .mutants import LITERAL, MUTANTS, STALLED, applied, by_name
from .runner import Options, search


@dataclass(frozen=True)
class Verdict:
    """What the search did against one mutant."""

    mutant: str
    found: bool
    seconds: float
    rule: str
    steps: int
    cases: int
    """Test cases run, the detecting one included."""
    shrunk_steps: int
    minimal: bool
    shrink_seconds: float = 0.0
    replays: bool = False
    """The written trace breaks the same rule on the broken core and passes on the real one."""


CORES = (*MUTANTS, *LITERAL, *STALLED)
"""Every broken core the self-test runs: the safety ones, and those only liveness catches
in the explorer (the random checker catches the literal one by ``protocol.timers`` and the
stalled one at a case's end, by ``liveness.preemption_serves``)."""


EXAMPLES = 500
"""The self-test's default budget per broken core, in test cases: with seed 1 the slowest
core needs 356 (``docs/checker.md``). A change to how cases are drawn moves every
detection: run ``check --self-test --seed 1`` after one."""


def hunt(name: str, seed: int, examples: int | None = EXAMPLES, seconds: float | None = None,
         shrink_seconds: float = 0.0) -> Verdict:
    """Search the core with the mutant ``name`` applied (in this process).

    The search stops at ``examples`` test cases or ``seconds``, whichever comes
    first (at least one of them must be given).

    With a shrink budget the counterexample is also written as a trace file and
    replayed twice: on the broken core it must break the same rule, on the real
    core it must pass (a trace that fails on both found a bug of the real core
    or of the checker, not of the mutant).
    """
    from . import replay
    from .shrink import shrink

    with tempfile.TemporaryDirectory() as folder:
        with applied(by_name(name)):
            started = time.monotonic()
            outcome = search(Options(seed=seed, seconds=seconds or math.inf,
                                     examples=examples))
            found = outcome.failure
            if found is None:
                return Verdict(name, False, time.monotonic() - started, "", 0,
                               outcome.cases, 0, False)
            rule = found.violation.invariant
            if shrink_seconds <= 0:
                return Verdict(name, True, found.elapsed, rule, len(found.steps),
                               found.case + 1, len(found.steps), False)
            shrunk = shrink(found, shrink_seconds)
            path = replay.save(found, shrunk.steps, Path(folder), "trace.jsonl")
            on_broken = replay.run(read_trace(path))
        on_real = replay.run(read_trace(path)).violation
        return Verdict(name, True, found.elapsed, rule, len(found.steps), found.case + 1,
                       len(read_trace(path).steps), shrunk.minimal, shrunk.seconds,
                       on_broken.broke(rule) and on_real is None)


def _task(args: tuple[str, int, int | None, float | None, float]) -> Verdict:
    return hunt(*args)


def budget_text(examples: int | None, seconds: float | None) -> str:
    """``500 test cases``, ``30s`` or both: what one broken core's search may spend."""
    parts = ([f"{examples} test cases"] if examples is not None else []) \
        + ([f"{seconds:g}s"] if seconds is not None else [])
    return " or ".join(parts)


def self_test(seed: int, workers: int, examples: int | None = EXAMPLES,
              seconds: float | None = None, quiet: bool = False,
              shrink_seconds: float = 0.0, ray: str | None = None,
              names: Sequence[str] | None = None) -> int:
    """Run every mutant (or those of ``names``); exit 0 when all are caught, 1 otherwise.

    With ``ray`` (a cluster's address) each broken core is a unit on the cluster
    (``invariants/campaign``); the verdicts are the same, in the order they come."""
    if examples is None and seconds is None:
        raise ValueError("the self-test needs a budget: examples, seconds or both")
    cores = [m.name for m in CORES] if names is None else list(names)
    tasks = [(name, seed, examples, seconds, shrink_seconds) for name in cores]
    where = f" on the Ray cluster at {ray}" if ray is not None else ""
    print(f"self-test: {len(tasks)} broken cores, {budget_text(examples, seconds)} each{where}",
          flush=True)
    verdicts: list[Verdict] = []

    def report(verdict: Verdict) -> None:
        verdicts.append(verdict)
        print(f"  {_line(verdict, shrink_seconds)}", flush=True)

    if ray is not None:
        from .campaign.check import hunt_all

        dispatcher = hunt_all(ray, cores, seed, examples, seconds, shrink_seconds, report)
        for line in dispatcher.lost_lines():
            print(f"  {line}")
    else:
        ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        with ctx.Pool(max(1, workers)) as pool:
            for verdict in pool.imap(_task, tasks):
                report(verdict)
    return _summary(verdicts, shrink_seconds)


def _line(verdict: Verdict, shrink_seconds: float) -> str:
    mark = "caught " if verdict.found else "MISSED "
    detail = (f"in {verdict.seconds:5.1f}s by {verdict.rule} "
              f"(case {verdict.cases}, {verdict.steps} steps"
              + (f", shrunk to {verdict.shrunk_steps} calls in "
                 f"{verdict.shrink_seconds:.1f}s"
                 f"{', 1-minimal' if verdict.minimal else ''}"
                 f"{', replays' if verdict.replays else ', DOES NOT REPLAY'}"
                 if shrink_seconds else "")
              + ")") if verdict.found else (f"after {verdict.cases} test cases, "
                                            f"{verdict.seconds:.1f}s")
    return f"{mark} {verdict.mutant:<45} {detail}"


def _summary(verdicts: list[Verdict], shrink_seconds: float) -> int:
    caught = sum(v.found for v in verdicts)
    times = sorted(v.seconds for v in verdicts if v.found)
    cases = sorted(v.cases for v in verdicts if v.found)
    median = times[len(times) // 2] if times else 0.0
    print(f"kill score: {caught}/{len(verdicts)}; median time to detection {median:.1f}s, "
          f"slowest {times[-1] if times else 0.0:.1f}s; most test cases "
          f"{cases[-1] if cases else 0}")
    if shrink_seconds:
        shrunk = [v for v in verdicts if v.found]
        print(f"counterexamples: {sum(v.minimal for v in shrunk)}/{len(shrunk)} 1-minimal, "
              f"{sum(v.shrunk_steps <= 10 for v in shrunk)}/{len(shrunk)} within 10 calls, "
              f"{sum(v.replays for v in shrunk)}/{len(shrunk)} replay (broken fails, real "
              f"passes), longest shrink {max((v.shrink_seconds for v in shrunk), default=0):.1f}s")
    replayed = all(v.replays for v in verdicts if v.found) if shrink_seconds else True
    return 0 if caught == len(verdicts) and replayed else 1
