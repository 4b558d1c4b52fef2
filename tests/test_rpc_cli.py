"""``yunikorn-fsm serve`` as a process: the listening line, clean stops, usage errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("grpc")

from rpc_helpers import app, ask, nodes, register, wait_until

from scheduler.rpc import Client
from scheduler.testing import RecordingShim

SERVE = [sys.executable, "-m", "scheduler", "serve"]


def start(*args: str) -> tuple[subprocess.Popen[str], int]:
    """``serve --port 0 ARGS`` and the port it printed."""
    proc = subprocess.Popen([*SERVE, "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on 127.0.0.1:"):
        proc.kill()
        raise AssertionError(f"no listening line: {line!r} {proc.communicate()}")
    return proc, int(line.rsplit(":", 1)[1])


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], int]]:
    proc, port = start()
    yield proc, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_serve_stops_cleanly_on_a_signal(signum: int) -> None:
    proc, port = start()
    shim = RecordingShim()
    seen: list[object] = []
    client = Client(f"127.0.0.1:{port}", on_disconnect=lambda *a: seen.append(a))
    client.register_resource_manager(register("rm-1"), shim)
    client.update_application(app("rm-1", "app-1"))
    wait_until(lambda: shim.accepted_apps, what="served")
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out == ""                          # the listening line was read already, once
    assert "Traceback" not in err
    wait_until(lambda: seen, what="the streams closed by the server")
    client.close()


def test_listening_line_is_printed_exactly_once(served: tuple[subprocess.Popen[str], int]
                                                ) -> None:
    proc, port = served
    with Client(f"127.0.0.1:{port}") as client:
        assert client.state_dump() == {"rms": [], "partitions": []}
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=20)
    assert "listening" not in out


def test_rm_pause_timeout_is_handed_to_the_core() -> None:
    proc, port = start("--rm-pause-timeout", "0.2")
    try:
        shim = RecordingShim()
        client = Client(f"127.0.0.1:{port}")
        client.register_resource_manager(register("rm-1"), shim)
        client.update_application(app("rm-1", "app-1"))
        wait_until(lambda: shim.accepted_apps, what="served")
        client.close()                            # the RM is paused, then stopped
        with Client(f"127.0.0.1:{port}") as other:
            wait_until(lambda: other.state_dump()["rms"] == [
                {"rm_id": "rm-1", "state": "Stopped"}], what="stopped by the core")
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(("delay", "reserves"), [("0", True), ("inf", False)])
def test_reservation_delay_is_handed_to_the_core(delay: str, reserves: bool) -> None:
    """An ask no node's free room holds reserves the node at once with delay 0 (the state
    dump shows the reservation while the RM still runs); with ``inf`` it has not past
    YuniKorn's default delay of 2 s, a cycle later."""
    proc, port = start("--reservation-delay", delay)
    try:
        shim = RecordingShim()
        with Client(f"127.0.0.1:{port}") as client:
            client.register_resource_manager(register("rm-1"), shim)
            client.update_node(nodes("rm-1", "node-1", memory=10))
            client.update_application(app("rm-1", "app-1"))
            wait_until(lambda: shim.accepted_apps and shim.accepted_nodes, what="accepted")
            client.update_allocation(ask("rm-1", "app-1", "fill", memory=8))
            wait_until(lambda: shim.allocations, what="the filler placed")
            client.update_allocation(ask("rm-1", "app-1", "big", memory=8))

            def reserved() -> list[object]:
                node = client.state_dump()["partitions"][0]["nodes"][0]
                return list(node["reserved"])

            if reserves:
                wait_until(reserved, what="the node reserved")
                assert reserved() == [{"application_id": "app-1", "allocation_key": "big"}]
            else:
                wait_until(lambda: any(
                    k["allocation_key"] == "big"
                    for a in client.state_dump()["partitions"][0]["applications"]
                    for k in a.get("asks", [])), what="the big ask held")
                time.sleep(2.5)           # past YuniKorn's default delay of 2 s
                client.update_allocation(ask("rm-1", "app-1", "other", memory=8))
                wait_until(lambda: any(
                    k["allocation_key"] == "other"
                    for a in client.state_dump()["partitions"][0]["applications"]
                    for k in a.get("asks", [])), what="a later cycle")
                assert reserved() == []
    finally:
        proc.kill()
        proc.wait()


def test_port_in_use_is_a_usage_error(served: tuple[subprocess.Popen[str], int]) -> None:
    _proc, port = served
    result = subprocess.run([*SERVE, "--port", str(port)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 2
    assert "can not listen on 127.0.0.1" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--tls-cert", "x.pem"], "--tls-cert and --tls-key go together"),
    (["--token-file", "/nonexistent/token"], "can not read --token-file"),
    (["--port", "70000"], "is not a port"),
    (["--rm-pause-timeout", "-1"], "--rm-pause-timeout >= 0"),
    (["--predicate-timeout", "0"], "--predicate-timeout > 0"),
    (["--reservation-delay", "-1"], "--reservation-delay >= 0"),
])
def test_bad_flags_exit_2(args: list[str], message: str) -> None:
    result = subprocess.run([*SERVE, *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert message in result.stderr


def test_empty_token_file_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("\n")
    result = subprocess.run([*SERVE, "--token-file", str(token)], capture_output=True,
                            text=True, timeout=30)
    assert (result.returncode, "is empty" in result.stderr) == (2, True)


def test_serve_without_the_grpc_extra_says_which_to_install() -> None:
    code = ("import sys; sys.modules['grpc'] = None; "
            "from scheduler.cli import main; sys.exit(main(['serve']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=30, env={**os.environ})
    assert result.returncode == 2
    assert "pip install 'yunikorn-fsm[grpc]'" in result.stderr
    # every other command still works without it
    code = ("import sys; sys.modules['grpc'] = None; "
            "from scheduler.cli import main; sys.exit(main(['invariants']))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True,
                          timeout=60).returncode == 0


def test_bench_over_grpc_reports_throughput_and_latency() -> None:
    result = subprocess.run([*SERVE[:-1], "bench", "--grpc", "--nodes", "20", "--pods", "200",
                             "--samples", "5"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert (figures["mode"], figures["nodes"], figures["pods"]) == ("grpc", 20, 200)
    assert figures["allocations_per_second"] > 0 and figures["doubled"] == 0
    assert figures["latency_samples"] == 5
    assert 0 < figures["latency_p50_ms"] <= figures["latency_p99_ms"]
    assert "throughput" in result.stderr               # progress, line by line when piped


def test_soak_over_grpc_agrees_with_the_state_dump() -> None:
    result = subprocess.run([*SERVE[:-1], "bench", "--grpc", "--soak", "2", "--rms", "2"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["views_agree_with_state_dump"] is True
    assert figures["doubled"] == 0 and figures["errors"] == []
    assert figures["allocations"] > 0 and figures["rounds"] > 0
