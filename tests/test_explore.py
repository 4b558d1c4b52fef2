"""The explorer: exhaustive search of small scopes, liveness, symmetry, workers, counterexamples."""

from __future__ import annotations

import json
from dataclasses import fields as fields_of
from dataclasses import replace
from pathlib import Path

import pytest

from invariants.explore import SCOPES, Options, closure, search, texts
from invariants.explore.closure import run as quiesce
from invariants.explore.fingerprint import FIELDS, SHIM_FIELDS, fingerprint
from invariants.explore.search import node_classes, replay_path, root, take
from invariants.modelshim.world import World
from invariants.properties import liveness
from invariants.readings import model, shim
from invariants.selftest.mutants import applied, by_name
from scheduler import objects, si
from scheduler.cli import main
from scheduler.trace import Step


def _labels(scope: str) -> list[str]:
    return [a.label for a in SCOPES[scope].alphabet()]


def _walk(scope: str, *labels: str) -> World:
    alphabet = {a.label: a for a in SCOPES[scope].alphabet()}
    world, problems = root(SCOPES[scope])
    assert not problems
    for label in labels:
        problems, _ = take(world, alphabet[label])
        assert not problems, problems
    return world


def test_the_tiny_scope_is_exhausted_with_every_rule_holding() -> None:
    result = search(Options(SCOPES["tiny"], 40))
    assert result.found is None
    assert result.exhausted and result.reason == "exhausted"
    assert result.stats.levels[-1] == 0
    assert result.stats.distinct == sum(result.stats.levels)
    assert result.stats.generated > result.stats.distinct


def test_two_workers_find_the_same_states_as_one() -> None:
    one = search(Options(SCOPES["small"], 5, workers=1))
    two = search(Options(SCOPES["small"], 5, workers=2))
    assert (one.stats.distinct, one.stats.generated, one.stats.levels) == \
        (two.stats.distinct, two.stats.generated, two.stats.levels)
    assert one.stats.distinct_by == two.stats.distinct_by


def test_the_closures_schedule_hint_changes_nothing_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent's ``schedule`` child taken from its closure (when known) instead of again:
    the same states, children and per-action figures as taking every action."""
    hinted = search(Options(SCOPES["small"], 6))
    real = closure.run
    monkeypatch.setattr(closure, "run", lambda *a, **k: real(*a, **{**k, "hint": False}))
    taken = search(Options(SCOPES["small"], 6))
    assert (hinted.stats.distinct, hinted.stats.generated, hinted.stats.levels) == \
        (taken.stats.distinct, taken.stats.generated, taken.stats.levels)
    assert hinted.stats.generated_by == taken.stats.generated_by
    assert hinted.stats.distinct_by == taken.stats.distinct_by


def test_symmetry_merges_equal_nodes_and_only_them() -> None:
    a = _walk("small", "node node-1")
    b = _walk("small", "node node-2")
    assert fingerprint(a, True, {"node-1": "n", "node-2": "n"}) == \
        fingerprint(b, True, {"node-1": "n", "node-2": "n"})
    assert fingerprint(a, False) != fingerprint(b, False)
    with_symmetry = search(Options(SCOPES["small"], 5))
    without = search(Options(SCOPES["small"], 5, symmetry=False))
    assert with_symmetry.stats.distinct < without.stats.distinct


def test_a_node_a_required_node_ask_names_is_not_interchangeable() -> None:
    """``node-1`` and ``node-2`` are of one size, but an ask of the scope requires
    ``node-1``: a state and the same state with the nodes swapped are two states."""
    classes = node_classes(SCOPES["predicates"])
    assert classes["node-1"] != classes["node-2"]
    a = _walk("predicates", "node node-1")
    b = _walk("predicates", "node node-2")
    assert fingerprint(a, True, classes) != fingerprint(b, True, classes)


def test_symmetry_does_not_change_the_verdict_on_a_broken_core() -> None:
    with applied(by_name("nodes.drained_node_still_used")):
        reduced = search(Options(SCOPES["small"], 6))
        exact = search(Options(SCOPES["small"], 6, symmetry=False))
    assert reduced.found is not None and exact.found is not None
    assert len(reduced.found.path) == len(exact.found.path)
    assert reduced.stats.distinct <= exact.stats.distinct


def test_the_fingerprint_reads_every_field_of_every_core_object() -> None:
    """A field added to the core must be placed in the canonical form (or skipped, saying why)."""
    for name, fields in FIELDS.items():
        cls = getattr(objects, name)
        assert set(fields) == set(cls.__slots__), name


def test_the_fingerprint_reads_every_field_the_model_shim_keeps() -> None:
    """The shim's records are part of the state: each field is placed in the form or
    skipped saying why, and changing one that is placed as it is changes the fingerprint."""
    for name, table in SHIM_FIELDS.items():
        assert set(table) == {f.name for f in fields_of(getattr(shim, name))}, name
        assert all(how in ("v", "age", "offset", "node", "uuid") or how.startswith("skip: ")
                   for how in table.values()), name

    def other(value: object) -> object:
        if isinstance(value, bool):
            return not value
        if isinstance(value, int | float):
            return value + 1
        if isinstance(value, str):
            return value + "x"
        if isinstance(value, dict):
            return {**value, "other": 1}
        return object() if value is None else None

    world = _walk("small", "node node-1", "submit app-1", "ask app-1/k1", "schedule")
    (rv,) = world.shim.rms.values()
    before = fingerprint(world)
    records = {"AppView": rv.apps["app-1"], "AskView": rv.asks[("app-1", "k1")],
               "NodeView": rv.nodes["node-1"], "AllocView": next(iter(rv.allocs.values()))}
    for name, record in records.items():
        for field, how in SHIM_FIELDS[name].items():
            if how != "v" or field in ("app", "key", "id", "releasing", "sent"):
                continue  # identities (renamed with their record) and enums: below
            saved = getattr(record, field)
            object.__setattr__(record, field, other(saved))
            try:
                assert fingerprint(world) != before, f"{name}.{field}"
            finally:
                object.__setattr__(record, field, saved)
    assert fingerprint(world) == before
    rv.created["default"] = {"root.made": model.Created(None)}
    bare = fingerprint(world)
    rv.created["default"] = {"root.made": replace(
        model.Created(None), template=model.Template(None, None, 2, {}))}
    assert len({before, bare, fingerprint(world)}) == 3
    del rv.created["default"]
    records["AllocView"].sent = None
    assert fingerprint(world) != before


def test_the_fingerprint_ignores_when_things_happened_but_not_what_is_due() -> None:
    labels = ("node node-1", "submit app-1", "ask app-1/k1", "schedule")
    early = _walk("tiny", *labels)
    shifted = World(early.clock.now() - 1000.0)
    for step in early.steps:
        shifted.run(Step.advance(7) if step.call == "schedule" else step)
        if step.call == "schedule":
            shifted.run(step)
    assert shifted.clock.now() != early.clock.now()
    assert fingerprint(early) == fingerprint(shifted)  # the same, 7 s later
    early.run(Step.advance(7))
    assert fingerprint(early) != fingerprint(shifted)  # its execution timers are 7 s nearer
    assert fingerprint(_walk("tiny", "node node-1", "submit app-1")) == \
        fingerprint(_walk("tiny", "submit app-1", "node node-1"))


def test_a_seed_read_literally_leaves_an_accepted_gang_holding_placeholders_forever() -> None:
    """docs/design-notes.md finding 1, found by the explorer on a core that follows ``001``
    to the letter: the placeholder timeout acts only while placeholder asks are pending."""
    labels = _labels("gang")
    with applied(by_name("gang.literal_placeholder_timeout")):
        result = search(Options(SCOPES["gang"], 6))
        assert result.found is not None and result.found.liveness
        assert [labels[i] for i in result.found.path] == [
            "node node-1", "submit gang-1", "placeholders gang-1"]
        # The liveness properties see it on their own, whatever the protocol checks say.
        world = _walk("gang", "node node-1", "submit gang-1", "placeholders gang-1")
        for _ in range(3):
            for step in quiesce(world, lambda w: fingerprint(w))[0].steps:
                world.run(step)
        names = {v.invariant for v in liveness.judge(world)}
        assert {"liveness.applications_settle", "liveness.placeholders_time_out"} <= names
    assert search(Options(SCOPES["gang"], 6)).found is None


def test_the_counterexample_is_a_replayable_trace(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with applied(by_name("gang.literal_placeholder_timeout")):
        code = main(["explore", "--scope", "gang", "--depth", "4", "--out", str(tmp_path),
                     "--quiet"])
        out = capsys.readouterr().out
        assert code == 1, out
        trace = next(tmp_path.glob("*.jsonl"))
        head = json.loads(trace.read_text().splitlines()[0])
        assert head["checker"]["actions"] == ["node node-1", "submit gang-1",
                                              "placeholders gang-1"]
        assert main(["replay", str(trace), "--quiet"]) == 1
    assert "result: FAILED" in out and str(trace) in out
    assert main(["replay", str(trace), "--quiet"]) == 0


def test_a_trace_keeps_the_scopes_predicates(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The pairs the scope's predicates refuse go into the trace, so it replays alone."""
    with applied(by_name("reservations.reserved_without_predicates")):
        code = main(["explore", "--scope", "predicates", "--depth", "3", "--out",
                     str(tmp_path), "--quiet"])
        assert code == 1, capsys.readouterr().out
        trace = next(tmp_path.glob("*.jsonl"))
        head = json.loads(trace.read_text().splitlines()[0])
        assert head["checker"]["predicates_refuse"] == [["big", "node-1"], ["d1", "node-1"]]
        assert main(["replay", str(trace), "--quiet"]) == 1
    assert main(["replay", str(trace), "--quiet"]) == 0


def test_a_liveness_violation_replays_from_its_trace(tmp_path: Path) -> None:
    """A trace that ends quiescent is judged for liveness by ``replay`` too."""
    with applied(by_name("gang.literal_placeholder_timeout")):
        steps, violations = replay_path(SCOPES["gang"], [0, 1, 2], liveness=True)
        assert violations
    assert steps[-1].call == "schedule"


@pytest.mark.parametrize("argv, reason", [
    (["--scope", "nope"], "unknown scope"),
    (["--depth", "0"], "--depth"),
    (["--seconds", "0"], "--seconds"),
    (["--workers", "0"], "--workers"),
    (["--config", "/no/such/file.yaml"], "can not read"),
    (["--ray", "127.0.0.1:1", "--workers", "2"], "--ray uses every CPU of the cluster"),
])
def test_bad_usage_exits_2_with_one_line(argv: list[str], reason: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", *argv]) == 2
    err = capsys.readouterr().err
    assert reason in err and len(err.strip().splitlines()) == 1


def test_scopes_are_listed_with_their_alphabets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--list-scopes"]) == 0
    out = capsys.readouterr().out
    for name in SCOPES:
        assert f"{name}:" in out
    assert "confirm_unasked" in out


def test_a_scope_runs_on_another_configuration(tmp_path: Path) -> None:
    config = tmp_path / "q.yaml"
    config.write_text("partitions:\n  - name: default\n    queues:\n      - name: root\n"
                      "        submitacl: '*'\n        queues:\n          - name: x\n")
    assert main(["explore", "--scope", "tiny", "--depth", "5", "--config", str(config),
                 "--quiet"]) == 0


@pytest.mark.parametrize("mutant, scope, depth", [
    ("nodes.decommissioned_node_kept", "tiny", 2),
    ("timer.execution_timeout_early", "tiny", 3),
    ("gang.placeholder_timeout_never_fires", "gang", 3),
    ("release.rm_core_type_release_ignored", "gang", 5),
    ("quota.leaf_max_only", "quota", 4),
    ("placement.creates_without_create", "admission", 1),
    ("placement.default_queue_ignored", "admission", 1),
    ("recovery.placeholder_recovered_as_real", "gang", 5),
    ("limits.wildcard_over_named", "limits", 3),
    ("nodes.binpacking_ignored", "sorting", 5),
    # The clock stops where the shim expects a timer, not only where the core set one.
    ("recovery.placeholder_timeout_default", "small", 5),
    # A childtemplate, required-node asks, the RM's predicates (pickled with the world).
    ("queues.created_leaf_no_template_quota", "template", 1),
    ("preemption.required_higher_priority", "required", 5),
    ("nodes.reserved_allocation_skips_predicates", "predicates", 3),
    ("routing.release_anywhere", "routing", 5),
    ("release.unknown_ask_key_releases_all", "routing", 3),
    ("nodes.drain_of_draining_unanswered", "routing", 3),
    ("asks.resized_resend_ignored", "routing", 5),
])
def test_broken_cores_are_found_at_their_shortest_depth_deterministically(
        mutant: str, scope: str, depth: int) -> None:
    """Breadth-first: the first violation has a shortest path, the same on every run and
    with any number of workers (``explore --self-test`` lists every core and scope)."""
    with applied(by_name(mutant)):
        one = search(Options(SCOPES[scope], depth))
        again = search(Options(SCOPES[scope], depth, workers=2))
        shallower = search(Options(SCOPES[scope], depth - 1)) if depth > 1 else None
        assert one.found is not None and again.found is not None
        _, violations = replay_path(SCOPES[scope], one.found.path, one.found.liveness)
    assert len(one.found.path) == depth
    assert one.found.path == again.found.path
    assert shallower is None or shallower.found is None
    assert violations
    # On the real core the same path holds every rule.
    assert not replay_path(SCOPES[scope], one.found.path, one.found.liveness)[1]


def test_a_created_leaf_held_at_its_template_max_is_not_starved() -> None:
    """The ``template`` scope's configuration with two nodes: an application whose leaf a
    placement rule creates asks for two pods of 10 while the leaf's childtemplate caps it
    at 10. The second pod waits on the template's max, not for lack of a node, so
    ``liveness.asks_served`` claims nothing (it once read the configured levels only and
    reported the ask starved beside the empty second node)."""
    world = World()
    nodes = [si.NodeInfo(node_id=n, action=si.NodeAction.CREATE,
                         schedulable_resource=si.Resource.of(memory=60)) for n in ("n1", "n2")]
    ask = si.AllocationAsk(allocation_key="k1", application_id="app-1",
                           resource_ask=si.Resource.of(memory=10), max_allocations=2)
    for step in (
            Step("register_resource_manager", si.RegisterResourceManagerRequest(
                rm_id="rm", policy_group="q", config=texts.TEMPLATE)),
            Step("update_node", si.NodeRequest(rm_id="rm", nodes=nodes)),
            Step("update_application", si.ApplicationRequest(rm_id="rm", new=[
                si.AddApplicationRequest(application_id="app-1", queue_name="root.org.new",
                                         partition_name="default",
                                         ugi=si.UserGroupInformation(user="u"))])),
            Step("update_allocation", si.AllocationRequest(rm_id="rm", asks=[ask])),
            Step.schedule(), Step.schedule()):
        assert world.run(step) == []
    rv = world.shim.rms["rm"]
    assert sorted(rv.created["default"]) == ["root.org.new"]
    assert len(rv.allocs) == 1
    assert liveness.judge(world) == []


def test_the_today_scope_explores_todays_si_with_every_rule_holding() -> None:
    """The tiny scope's world said in today's SI (pods by key, releases by key, a node's
    occupied room as a foreign pod): every state to depth 10 holds every rule."""
    result = search(Options(SCOPES["today"], 10))
    assert result.found is None
    assert result.stats.distinct > 1000


@pytest.mark.parametrize("name", ["dialect.create_drain_schedulable",
                                  "dialect.ask_releases_dropped",
                                  "dialect.foreign_release_keeps_occupied"])
def test_the_today_scope_finds_broken_translations(name: str) -> None:
    with applied(by_name(name)):
        result = search(Options(SCOPES["today"], 8))
    assert result.found is not None and not result.found.liveness


def test_the_wide_scope_grows_small_by_a_node_a_leaf_and_an_application() -> None:
    """``wide`` (a scope for a cluster) holds every rule in its first levels, with more
    states per level than ``small``, and the explorer's self-test leaves it out."""
    wide, small = SCOPES["wide"], SCOPES["small"]
    assert (len(wide.nodes), len(wide.apps), wide.depth) > (len(small.nodes),
                                                            len(small.apps), small.depth)
    assert not wide.hunted and small.hunted
    grown, base = search(Options(wide, 4)), search(Options(small, 4))
    assert grown.found is None and base.found is None
    assert grown.stats.levels[1:] > base.stats.levels[1:]
    assert all(g > b for g, b in zip(grown.stats.levels[2:], base.stats.levels[2:],
                                     strict=True))
