"""Checking campaigns on a Ray cluster: ``check --ray`` against local runs, a node
lost mid-run, Ctrl-C.

A real cluster on this machine (``ray.cluster_utils.Cluster``: a head and, for the
fault test, a second node that is killed), shut down whatever a test does. It binds
the machine's own address: Ray turns a loopback address given to ``ray.init`` into
that one, so a cluster bound to 127.0.0.1 alone can not be joined.
These tests need the ``ray`` extra (CI installs it); without it they are skipped.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from invariants.campaign import cases as campaign
from invariants.campaign import frontier as campaign_explore
from invariants.campaign.ray_cluster import connected
from invariants.commands import killscore
from invariants.commands.checker import configuration_warnings_quiet
from invariants.explore.named_scopes import SCOPES
from invariants.explore.search import Options as ExploreOptions
from invariants.explore.search import search as explore_here
from invariants.random_search import replay, runner, shrink
from invariants.selftest import hunt as selftest
from invariants.selftest.mutants import applied, by_name
from scheduler.cli import main
from scheduler.trace import read_trace

ray = pytest.importorskip("ray", reason="the ray extra is not installed: "
                                        "pip install 'yunikorn-fsm[ray]'")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.timeout(300, method="signal")]
"""One pytest worker runs them all, on one cluster; a test that outlives its timeout fails
(raised in the test, not by ending the worker) and the others go on."""

EARLY = ("gang.real_ask_not_parked", "waiting.never_told", "waiting.over_headroom_told")
"""Broken cores the self-test catches within the first unit's cases at seed 1."""


PROBE_SECONDS = 120
"""How long the cluster may take to come up and run one task."""


def _within(seconds: int, what: str, make: Callable[[], Any]) -> Any:
    """``make()``, interrupted (TimeoutError) after ``seconds``: Ray's start-up polls in
    Python, so an alarm reaches it."""
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return make()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head on this machine that has run one task. A machine where no Ray cluster can
    come up or run a task (a sandbox without room for Ray's processes, say) skips the
    module with the reason, once, instead of every test waiting for its timeout."""
    try:
        made = _within(PROBE_SECONDS, "starting a Ray head", lambda: cluster_utils.Cluster(
            initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}))
    except (TimeoutError, RuntimeError, ConnectionError) as exc:
        pytest.skip(f"no Ray cluster comes up on this machine: {exc}")
    try:
        with connected(made.address) as joined:
            one = joined.remote(lambda: 1)
            assert joined.get(one.remote(), timeout=PROBE_SECONDS) == 1
    except Exception as exc:  # GetTimeoutError and Ray's other start-up failures
        made.shutdown()
        pytest.skip(f"the Ray cluster on this machine runs no task: {exc}")
    try:
        yield made
    finally:
        made.shutdown()


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    with configuration_warnings_quiet():
        yield


def test_check_on_the_cluster_finds_the_self_tests_broken_cores_as_a_local_run(
        cluster: Any, tmp_path: Path) -> None:
    """Each broken core is found in the same case by the same rule as the local self-test
    (``selftest.hunt``), and the counterexample that comes back shrinks and replays here."""
    opts = runner.Options(seed=1, seconds=120, examples=campaign.UNIT_CASES)
    for name in EARLY:
        local = selftest.hunt(name, 1, campaign.UNIT_CASES)
        report = campaign.search(cluster.address, opts, mutant=name)
        failure = report.outcome.failure
        assert local.found and failure is not None, name
        assert (failure.violation.invariant, failure.case + 1) == (local.rule, local.cases)
        with applied(by_name(name)):
            shrunk = shrink.shrink(failure, 5.0)
            path = replay.save(failure, shrunk.steps, tmp_path, f"{name}.jsonl")
            assert replay.run(read_trace(path)).broke(local.rule)


def test_the_self_test_on_the_cluster_gives_the_local_verdicts(
        cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``check --self-test --ray``: the same kill score and rules as in one process."""
    assert killscore.self_test(1, 1, 20, ray=cluster.address, names=EARLY) == 0
    out = capsys.readouterr().out
    for name in EARLY:
        verdict = selftest.hunt(name, 1, 20)
        assert f"{name:<45} in" in out and f"by {verdict.rule} (case {verdict.cases}," in out


def test_check_ray_from_the_command_line(cluster: Any, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``check --ray ADDRESS``: the stored counterexamples replayed on the cluster, then the
    cases; with ``--examples`` exactly that many, the same steps as the same units run in one
    process."""
    stored = tmp_path / "failures"
    stored.mkdir()
    with applied(by_name(EARLY[0])):
        failure = runner.search(runner.Options(seed=1, examples=2, seconds=60)).failure
    assert failure is not None
    replay.save(failure, failure.steps, stored, "passes-on-the-real-core.jsonl")
    code = main(["check", "--ray", cluster.address, "--seed", "3", "--examples", "20",
                 "--seconds", "120", "--quiet", "--out", str(stored)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "on the Ray cluster at" in out and "0 unit run(s) lost" in out
    ran = sum(runner.search(runner.Options(seed=3, examples=unit.count, seconds=60),
                            unit.stream).steps for unit in campaign.units(20))
    assert f"20 cases, {ran:,} steps" in out


def test_a_node_lost_mid_run_has_its_units_redone_and_nothing_counted_twice(
        cluster: Any) -> None:
    """A second node joins, takes units, and is killed while they run: they are redone on
    the head, and the merged figures equal those of an undisturbed run of the same seed."""
    opts = runner.Options(seed=7, seconds=300, examples=24)
    calm = campaign.search(cluster.address, opts, size=4)
    for _attempt in range(3):  # a node killed between its units held none: try a fresh one
        doomed = cluster.add_node(num_cpus=2, include_dashboard=False)
        cluster.wait_for_nodes()
        killers: list[threading.Thread] = []

        def kill_once_busy(outcome: runner.Outcome, nodes: int, cpus: int,
                           doomed: Any = doomed,
                           killers: list[threading.Thread] = killers) -> None:
            if not killers and cpus >= 3 and outcome.cases >= 4:
                killers.append(threading.Thread(target=cluster.remove_node,
                                                args=(doomed, False)))
                killers[0].start()

        hit = campaign.search(cluster.address, opts, progress=kill_once_busy, size=4)
        assert len(killers) == 1
        killers[0].join()
        assert hit.redone == len(hit.lost)
        assert (hit.outcome.cases, hit.outcome.steps, hit.units) == \
            (calm.outcome.cases, calm.outcome.steps, calm.units) == (24, calm.outcome.steps, 6)
        assert hit.outcome.coverage.edges == calm.outcome.coverage.edges
        if hit.lost:
            break
    assert hit.lost


def test_ctrl_c_cancels_every_unit_in_flight(cluster: Any) -> None:
    def interrupt(outcome: runner.Outcome, nodes: int, cpus: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        campaign.search(cluster.address, runner.Options(seed=1, seconds=300), interrupt)
    with connected(cluster.address) as joined:
        deadline = time.monotonic() + 20
        while joined.available_resources().get("CPU", 0) < joined.cluster_resources()["CPU"]:
            assert time.monotonic() < deadline, "a unit outlived the interrupt"
            time.sleep(0.2)


def test_explore_on_the_cluster_counts_what_a_local_run_counts(cluster: Any) -> None:
    """``explore --ray``: the same distinct and generated states per level and per action
    as ``--workers 2`` (``test_two_workers_find_the_same_states_as_one``)."""
    opts = ExploreOptions(SCOPES["small"], 5)
    local = explore_here(ExploreOptions(SCOPES["small"], 5))
    there = campaign_explore.explore(cluster.address, opts, shards=3)
    stats = there.result.stats
    assert (stats.distinct, stats.generated, stats.levels, stats.distinct_by) == \
        (local.stats.distinct, local.stats.generated, local.stats.levels,
         local.stats.distinct_by)
    assert sum(held for held, _ in there.shards) == stats.distinct and not there.lost


@pytest.mark.parametrize(("mutant", "scope", "depth"), [
    ("nodes.partition_total_kept", "tiny", 2),
    ("gang.literal_placeholder_timeout", "gang", 4),
])
def test_explore_on_the_cluster_finds_a_broken_core_by_the_same_shortest_path(
        cluster: Any, mutant: str, scope: str, depth: int) -> None:
    """The first violation is the local run's, path and all
    (``test_broken_cores_are_found_at_their_shortest_depth_deterministically``)."""
    with applied(by_name(mutant)):
        local = explore_here(ExploreOptions(SCOPES[scope], depth))
        there = campaign_explore.explore(
            cluster.address, ExploreOptions(SCOPES[scope], depth), mutant=mutant)
    assert local.found is not None and there.result.found is not None
    assert (there.result.found.path, there.result.found.liveness,
            there.result.found.verdict) == (local.found.path, local.found.liveness,
                                            local.found.verdict)


def test_explore_loses_a_node_and_counts_every_state_once(cluster: Any) -> None:
    """A node killed while it expands chunks: they are redone, and every level counts what
    an undisturbed run counts. The node is killed just after a deep level ends, while the
    next level's chunks are out; should it have held none by then, a fresh node is tried
    (at most three), each run counting what the undisturbed one counts."""
    opts = ExploreOptions(SCOPES["tiny"], 10)
    calm = campaign_explore.explore(cluster.address, opts)
    for _attempt in range(3):
        doomed = cluster.add_node(num_cpus=2, include_dashboard=False)
        cluster.wait_for_nodes()
        kills: list[threading.Timer] = []

        def kill_after_level(stats: Any, frontier: int, level_done: bool,
                             doomed: Any = doomed, kills: list[threading.Timer] = kills) -> None:
            if level_done and len(stats.levels) >= 8 and not kills:
                kills.append(threading.Timer(0.2, cluster.remove_node, args=(doomed, False)))
                kills[0].start()

        hit = campaign_explore.explore(cluster.address, opts, progress=kill_after_level)
        assert len(kills) == 1
        kills[0].join()
        assert (hit.result.stats.levels, hit.result.stats.generated, hit.result.found) == \
            (calm.result.stats.levels, calm.result.stats.generated, None)
        if hit.lost:
            break
    assert hit.lost
