"""The checker proves its teeth: every deliberately broken core is caught by a bounded check.

Each mutant of ``invariants/mutants.py`` is a small edit of the real core that
breaks one rule of the seeds. A search with a fixed seed must find a
violation within its budget (a few seconds in practice; ``docs/checker.md``
has the figures for ``check --seconds 60`` with seeds 1, 2 and 3).
"""

from __future__ import annotations

import pytest

from invariants.mutants import MUTANTS, applied, by_name
from invariants.replay import run as replay
from invariants.replay import write
from invariants.runner import CLOCK_START, Options, search
from invariants.selftest import hunt
from invariants.shrink import shrink
from invariants.world import World
from scheduler.trace import read_trace

BUDGET = 45.0


@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_each_broken_core_is_caught(name: str) -> None:
    verdict = hunt(name, seed=1, seconds=BUDGET)
    assert verdict.found, f"{name} survived {BUDGET:g}s of checking"


def test_mutants_are_edits_of_code_that_exists() -> None:
    """A mutant whose code moved is an error, not a silent no-op."""
    assert len(MUTANTS) >= 15
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert len({m.area for m in MUTANTS}) >= 7
    for mutant in MUTANTS:
        with applied(mutant):
            assert getattr(mutant.owner, mutant.function).__code__.co_filename.startswith(
                "<mutant")
        assert not getattr(mutant.owner, mutant.function).__code__.co_filename.startswith(
            "<mutant")


@pytest.mark.parametrize("name", ["quota.leaf_max_only", "gang.real_ask_not_parked",
                                  "nodes.drained_node_still_used"])
def test_a_counterexample_is_small_and_replays_only_on_the_broken_core(
        name: str, tmp_path: object) -> None:
    with applied(by_name(name)):
        outcome = search(Options(seed=1, seconds=BUDGET))
        failure = outcome.failure
        assert failure is not None
        shrunk = shrink(failure, 20.0)
        assert shrunk.seconds <= 20.0 + 5.0
        world = World(CLOCK_START, failure.scenario.predicate(), translate=failure.sym,
                      scheduler_options={"rm_pause_timeout": failure.scenario.rm_pause_timeout})
        for step in shrunk.steps:
            world.run(step)
        config = next(s.request.config for s in world.steps
                      if s.call == "register_resource_manager")
        path = write(tmp_path / "trace.jsonl", config, CLOCK_START,  # type: ignore[operator]
                     world.steps, {"rm_pause_timeout": failure.scenario.rm_pause_timeout,
                                   "predicate_salt": failure.scenario.predicate_salt})
        assert len(read_trace(path).steps) <= 10
        broken = replay(read_trace(path))
        assert broken.violation is not None
        assert broken.violation.invariant == failure.violation.invariant
    fixed = replay(read_trace(path))
    assert fixed.violation is None
