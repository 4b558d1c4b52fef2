"""The checker proves its teeth: every deliberately broken core is caught by a bounded check.

Each mutant of ``invariants/selftest/mutants.py`` is a small edit of the real core that
breaks one rule of the seeds. A search with a fixed seed must find a
violation within the self-test's budget of test cases (a number, not seconds:
the verdict does not depend on the machine's load; ``docs/checker.md`` has the
case each core is caught at).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.random_search.replay import run as replay
from invariants.random_search.replay import save
from invariants.random_search.runner import Options, search
from invariants.random_search.shrink import shrink
from invariants.selftest.hunt import CORES, EXAMPLES, hunt
from invariants.selftest.mutants import LITERAL, MUTANTS, STALLED, applied, by_name
from scheduler.trace import read_trace

BUDGET = 45.0
"""Seconds for the searches below that stop at their first counterexample."""


@pytest.mark.parametrize("name", [m.name for m in CORES])
def test_each_broken_core_is_caught(name: str) -> None:
    verdict = hunt(name, seed=1, examples=EXAMPLES)
    assert verdict.found, f"{name} survived {verdict.cases} test cases"
    assert verdict.cases <= EXAMPLES


def test_the_budget_is_test_cases_so_the_verdict_does_not_depend_on_the_clock() -> None:
    """Seed 1 catches ``priority.apps_by_policy_only`` at case 41 (``check --self-test``): a
    budget of 40 cases misses it after exactly 40, however fast the machine."""
    short = hunt("priority.apps_by_policy_only", seed=1, examples=40)
    assert not short.found and short.cases == 40
    enough = hunt("priority.apps_by_policy_only", seed=1, examples=41)
    assert enough.found and enough.cases == 41 and enough.rule == "priority.order"


def test_mutants_are_edits_of_code_that_exists() -> None:
    """A mutant whose code moved is an error, not a silent no-op."""
    assert len(MUTANTS) >= 15
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert len({m.area for m in MUTANTS}) >= 7
    every = (*MUTANTS, *LITERAL, *STALLED)
    assert len({m.name for m in every}) == len(every)
    for mutant in every:
        with applied(mutant):
            assert getattr(mutant.owner, mutant.function).__code__.co_filename.startswith(
                "<mutant")
        assert not getattr(mutant.owner, mutant.function).__code__.co_filename.startswith(
            "<mutant")


@pytest.mark.parametrize("name", ["quota.leaf_max_only", "gang.real_ask_not_parked",
                                  "nodes.drained_node_still_used"])
def test_a_counterexample_is_small_and_replays_only_on_the_broken_core(name: str) -> None:
    verdict = hunt(name, seed=1, shrink_seconds=20.0)
    assert verdict.found
    assert verdict.shrink_seconds <= 20.0 + 5.0
    assert verdict.shrunk_steps <= 10
    assert verdict.replays


def test_a_saved_counterexample_replays_on_its_own(tmp_path: Path) -> None:
    with applied(by_name("quota.leaf_max_only")):
        failure = search(Options(seed=1, seconds=BUDGET)).failure
        assert failure is not None
        shrunk = shrink(failure, 20.0)
        path = save(failure, shrunk.steps, tmp_path, "t.jsonl")
        broken = replay(read_trace(path))
    assert broken.broke(failure.violation.invariant)
    assert len(read_trace(path).steps) == broken.steps
    assert replay(read_trace(path)).violation is None


def test_the_docs_count_every_broken_core() -> None:
    """README and the checker guide say how many broken cores there are: keep them true."""
    root = Path(__file__).resolve().parent.parent
    n = len(CORES)
    assert f"{n} deliberately broken cores" in (root / "README.md").read_text(encoding="utf-8")
    guide = (root / "docs" / "checker.md").read_text(encoding="utf-8")
    assert f"against {n} deliberately broken cores" in guide
    assert f"kill score: {n}/{n}" in guide


def test_a_liveness_counterexample_is_found_at_a_case_end_shrunk_and_replayed() -> None:
    """The stalled core breaks no safety rule: seed 1 finds it at the end of case 269,
    driven to rest; each shrinking candidate is driven to rest again, and the trace, marked
    quiescent with the properties judged, fails on the broken core and passes on the real."""
    verdict = hunt("preemption.node_shortage_ignored", seed=1, shrink_seconds=20.0)
    assert verdict.found and verdict.cases == 269
    assert verdict.rule == "liveness.preemption_serves"
    assert verdict.shrunk_steps <= 20
    assert verdict.replays
