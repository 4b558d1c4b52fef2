"""The defects of YuniKorn the design findings point at (``docs/findings/``), as SI traffic.

Each variant core of ``invariants/selftest/variants.py`` follows YuniKorn's code path for one
flow. Its trace in ``tests/data/findings/`` is what the explorer found on that variant
from scratch (``yunikorn-fsm explore --variant NAME --scope findings``): it replays to
the violation on the variant and to a pass on this core.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.explore import SCOPES, Options, search
from invariants.random_search.replay import run as replay
from invariants.random_search.runner import Options as RandomOptions
from invariants.random_search.runner import search as random_search
from invariants.selftest.mutants import MUTANTS
from invariants.selftest.variants import VARIANTS, applied, by_name
from scheduler import si
from scheduler.cli import main
from scheduler.trace import read_trace

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "findings"

TRACES = {
    "A1": ("A1-force-created-gang-rejected", "protocol.admission", 9),
    "A2": ("A2-removed-ask-allocated-on-swap", "protocol.allocation_matches_ask", 8),
    "A3": ("A3-real-ask-stranded-by-placeholder-release", "gang.release_once", 7),
    "A4": ("A4-withdrawn-placeholder-blocks-task-group", "scheduling.maximal", 7),
    "A5": ("A5-placeholder-timeout-crashes-on-real-ask", "protocol.no_exception", 8),
}
EXPLORED = ("A1", "A2", "A3")
"""Found by the explorer in the findings scope; A4 and A5 by the random checker (no scope of
the explorer withdraws a placeholder pod or sends a gang a pod without a task group)."""


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_trace_breaks_the_variant_and_passes_on_this_core(name: str) -> None:
    stem, rule, steps = TRACES[name]
    trace = read_trace(DATA / f"{stem}.jsonl")
    assert len(trace.steps) == steps
    with applied(by_name(name)):
        broken = replay(trace)
    assert broken.broke(rule), broken.violation
    assert broken.steps == steps
    fine = replay(trace)
    assert fine.violation is None
    assert fine.steps == steps


@pytest.mark.parametrize("name", EXPLORED)
def test_the_explorer_finds_the_variant_from_scratch(name: str) -> None:
    rule = TRACES[name][1]
    with applied(by_name(name)):
        result = search(Options(SCOPES["findings"], 6))
    found = result.found
    assert found is not None
    assert rule in {v.invariant for v in found.violations} | set(found.verdict)
    assert len(found.path) == 6


@pytest.mark.parametrize(("name", "seed", "case"), [("A4", 1, 125), ("A5", 4, 4)])
def test_the_random_checker_finds_the_variant_from_scratch(name: str, seed: int,
                                                          case: int) -> None:
    """``check --variant NAME --seed SEED`` finds it at case ``case`` (numbered from 0), so
    within a budget of ``case + 1`` cases, not seconds: the verdict does not depend on the
    machine."""
    with applied(by_name(name)):
        failure = random_search(RandomOptions(seed=seed, examples=case + 1,
                                              workers=1)).failure
    assert failure is not None
    assert failure.case == case
    assert failure.violation.invariant == TRACES[name][1]


def test_this_core_holds_in_the_findings_scope() -> None:
    result = search(Options(SCOPES["findings"], 6))
    assert result.found is None


def test_every_variant_has_its_page_and_trace_and_is_no_broken_core() -> None:
    assert {v.name for v in VARIANTS} == set(TRACES)
    broken = {m.name for m in MUTANTS}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for variant in VARIANTS:
        assert (ROOT / variant.page).is_file()
        assert variant.page in readme
        stem = TRACES[variant.name][0]
        assert stem in variant.page
        page = (ROOT / variant.page).read_text(encoding="utf-8")
        assert f"tests/data/findings/{stem}.jsonl" in page
        assert f"--variant {variant.name}" in page
        assert not {e.name for e in variant.edits} & broken
        with applied(variant):
            pass


def test_the_a1_trace_recovers_the_gang_force_created() -> None:
    """The resync's submission carries the Kubernetes shim's force-create tag."""
    trace = read_trace(DATA / f"{TRACES['A1'][0]}.jsonl")
    resubmitted = [s.request for s in trace.steps if s.call == "update_application"][-1]
    assert isinstance(resubmitted, si.ApplicationRequest)
    assert resubmitted.new[0].tags.get("yunikorn.apache.org/force-create") == "true"


def test_replay_takes_a_variant_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / f"{TRACES['A2'][0]}.jsonl"
    assert main(["replay", "--quiet", "--variant", "A2", str(path)]) == 1
    assert "protocol.allocation_matches_ask" in capsys.readouterr().out
    assert main(["replay", "--quiet", str(path)]) == 0
    assert main(["replay", "--quiet", "--variant", "A9", str(path)]) == 2


@pytest.mark.parametrize(("tags", "forced"), [
    ({"yunikorn.apache.org/force-create": "true"}, True),
    ({"YuniKorn.Apache.org/Force-Create": "1"}, True),
    ({"yunikorn.apache.org/force-create": "True"}, True),
    ({"yunikorn.apache.org/force-create": "false"}, False),
    ({"yunikorn.apache.org/force-create": "yes"}, False),
    ({}, False),
])
def test_force_create_is_read_as_yunikorn_reads_it(tags: dict[str, str], forced: bool) -> None:
    from invariants.readings import model
    from scheduler.partition import apps

    assert apps.force_created(tags) is forced
    assert model.force_created(tags) is forced
