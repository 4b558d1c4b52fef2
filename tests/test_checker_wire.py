"""The checker through the wire: ``check --transport grpc`` (``invariants/modelshim/loopback.py``).

A real server on loopback sits between the model shim and the core, so every rule also
judges the server; the wire's own rules (``wire.*``) catch broken servers that no
in-process run can see.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from invariants.modelshim import loopback as wire
from invariants.modelshim.world import World
from invariants.properties.protocol import PROTOCOL
from invariants.random_search.replay import run as replay
from invariants.random_search.replay import save
from invariants.random_search.runner import Options, search
from invariants.selftest.mutants import SERVERS, applied, by_name
from scheduler import si
from scheduler.cli import main
from scheduler.trace import Step, read_trace

pytest.importorskip("grpc")

CASES = 12
"""Cases of the bounded runs below: each broken server is caught in its first."""


@pytest.fixture(autouse=True)
def _quiet_server() -> Iterator[None]:
    """The checker pauses and re-registers RMs on purpose; the server's notes are noise."""
    log = logging.getLogger("yunikorn_fsm.rpc")
    level = log.level
    log.setLevel(logging.ERROR)
    yield
    log.setLevel(level)


def test_a_bounded_grpc_check_passes_and_reaches_what_the_direct_one_reaches() -> None:
    """Through the wire, the same seed runs the same cases to the same verdict: the model
    shim is fed in the core's order, so thread timing changes nothing it judges."""
    direct = search(Options(seed=3, seconds=600, examples=CASES))
    wired = search(Options(seed=3, seconds=600, examples=CASES, transport="grpc"))
    assert direct.failure is None, direct.failure and direct.failure.violation
    assert wired.failure is None, wired.failure and wired.failure.violation
    assert wired.cases == direct.cases == CASES
    assert wired.steps == direct.steps > 0
    assert wired.coverage.edges == direct.coverage.edges


def test_the_wire_rules_are_protocol_rules_with_their_seed() -> None:
    for name in ("wire.answer_lost", "wire.delivered", "wire.live", "wire.paused",
                 "wire.independent"):
        assert "RPC Interface" in PROTOCOL[name].seed or "Lifecycle" in PROTOCOL[name].seed


def _world() -> World:
    return World(1000.0, transport="grpc")


def _register(rm_id: str = "rm-1") -> Step:
    return Step("register_resource_manager", request=si.RegisterResourceManagerRequest(
        rm_id=rm_id, policy_group="queues",
        config="partitions:\n  - name: default\n    queues:\n      - name: root\n"
               "        queues:\n          - name: a\n"))


def test_a_dropped_connection_pauses_the_rm_as_in_process() -> None:
    """``connection_lost`` is the client closing its streams: the server pauses the RM, and
    its requests then get the core's own refusal (002 'Lifecycle of RM-Scheduler
    communication'; YuniKorn's core has no RPC server, its shims link it in process, so no
    Go test mirrors this one)."""
    world = _world()
    try:
        assert world.run(_register()) == []
        assert world.run(Step("connection_lost", rm_id="rm-1")) == []
        assert world.shim.rms["rm-1"].paused
        assert world.run(Step("update_application", request=si.ApplicationRequest(
            rm_id="rm-1", new=[si.AddApplicationRequest(
                application_id="app-1", queue_name="root.a", partition_name="default",
                ugi=si.UserGroupInformation(user="u"))]))) == []
        assert world.shim.observed and world.shim.observed[0][0] == "update_application"
        assert world.shim.observed[0][1].rejected
        assert world.wire is not None and world.wire.server.sessions() == {
            "rm-1": "paused", wire.BYSTANDER: "running"}
        assert world.run(_register()) == []
        assert world.wire.server.sessions()["rm-1"] == "running"
    finally:
        world.close()


@pytest.mark.parametrize("name", [m.name for m in SERVERS])
def test_each_broken_server_is_caught_through_the_wire(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that loses, repeats or waits on an answer is caught within a few cases; the
    in-process checker can not see it (the core is the real one)."""
    monkeypatch.setattr(wire, "TIMEOUT", 3.0)
    if name == "rpc.callback_waits_for_reader":
        # a transport that really stalls: megabytes the bystander never reads
        monkeypatch.setattr(wire, "FLOOD", (8, 1, 1_000_000))
    with applied(by_name(name)):
        found = search(Options(seed=1, seconds=600, examples=3, transport="grpc")).failure
        assert found is not None, f"{name} survived"
        assert found.violation.invariant.startswith("wire.")
        assert found.transport == "grpc"
        missed = search(Options(seed=1, seconds=600, examples=1)).failure
    assert missed is None, "the in-process checker has no way to see a broken server"


def test_a_grpc_trace_replays_through_the_wire(tmp_path: Path) -> None:
    """The trace of a failure found through the wire says so in its header, and replays
    through the wire: on the broken server it breaks the same rule, on the real one none."""
    with applied(by_name("rpc.release_answer_sent_twice")):
        failure = search(Options(seed=1, seconds=600, examples=3, transport="grpc")).failure
        assert failure is not None
        path = save(failure, failure.steps, tmp_path, "wire.jsonl")
        assert read_trace(path).header["checker"]["transport"] == "grpc"
        broken = replay(read_trace(path))
    assert broken.broke("wire.delivered")
    assert replay(read_trace(path)).violation is None


def test_check_transport_grpc_on_the_command_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["check", "--transport", "grpc", "--examples", "3", "--seed", "1",
                 "--no-replay", "--quiet", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "through the wire (grpc)" in out
    assert out.rstrip().splitlines()[-1].startswith("result: every invariant held")
    code = main(["check", "--transport", "grpc", "--variant", "A1", "--seconds", "1"])
    assert code == 2
    assert "--variant runs in process" in capsys.readouterr().err
