"""The checker's self-test: every deliberately broken core must be caught, and fast.

Each mutant of ``invariants/selftest/mutants.py`` runs in its own process: the edit is
applied, a search with the run's seed and budget looks for a violation, and a
found run is shrunk. The report gives the kill score, the time to detection
and the size of each counterexample, so a checker that lost its teeth shows it.

The budget is a number of test cases, not of seconds: with a fixed seed the
verdict is then the same on a loaded machine as on a quiet one (a wall-clock
budget made a slow core's detection depend on what else ran).
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from invariants.random_search.runner import Options, search
from invariants.selftest.mutants import LITERAL, MUTANTS, STALLED, applied, by_name
from scheduler.trace import read_trace


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
    from invariants.random_search import replay
    from invariants.random_search.shrink import shrink

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


def budget_text(examples: int | None, seconds: float | None) -> str:
    """``500 test cases``, ``30s`` or both: what one broken core's search may spend."""
    parts = ([f"{examples} test cases"] if examples is not None else []) \
        + ([f"{seconds:g}s"] if seconds is not None else [])
    return " or ".join(parts)


