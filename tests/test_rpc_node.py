"""A shim in another language: the Node.js client (clients/node) against ``yunikorn-fsm serve``.

It loads the same ``si.proto`` (or, with ``--dialect today``, ``si_today.proto``)
with ``@grpc/proto-loader``; ``.ci/run``
installs its packages with ``npm ci`` from the committed lockfile. Skipped,
with the reason, when ``node`` is not installed or (outside CI) its packages are not.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("grpc")

NODE = shutil.which("node")
CLIENT = Path(__file__).resolve().parent.parent / "clients" / "node"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the Node.js "
                                "client test needs Node.js (CI has it)")


def node_modules() -> None:
    """The client's packages: skipped, saying how to install them, on a machine that has not
    (the README's commands do not run npm); in CI, which installs them, their absence fails."""
    if not (CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        message = f"the Node.js client's packages are not installed: run 'npm ci' in {CLIENT}"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (.ci/run does)")
        pytest.skip(message)


def serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    """A ``yunikorn-fsm serve`` process on a free port, and its target."""
    server = subprocess.Popen([sys.executable, "-m", "scheduler", "serve", "--port", "0", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, f"127.0.0.1:{int(server.stdout.readline().rsplit(':', 1)[1])}"


def test_node_client_allocates_releases_and_replaces_placeholders(tmp_path: Path) -> None:
    node_modules()
    token = tmp_path / "token"
    token.write_text("node-test-token\n")
    server, target = serve("--token-file", str(token))
    try:
        run = subprocess.run([str(NODE), str(CLIENT / "scenario.js"), "--target", target,
                              "--token", "node-test-token"],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        assert seen["ok"] is True
        assert seen["real"] == "real"
        assert len(seen["held"]) == 3            # one pod, one placeholder, the real one
        # without the token the same client is refused
        refused = subprocess.run([str(NODE), str(CLIENT / "scenario.js"), "--target", target],
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1
        assert "UNAUTHENTICATED" in refused.stderr or "token" in refused.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        _out, err = server.communicate(timeout=20)
    assert server.returncode == 0, err
    assert "resource manager node-rm registered" in err


def test_node_client_speaks_todays_dialect() -> None:
    """Today's SI from si_today.proto: pods by key, placed or bound, released by key, and
    the application removed (its last pod released, STOPPED_BY_RM); then the seed's
    scenario against the same server, as a second RM registration."""
    node_modules()
    server, target = serve()
    try:
        seen = {}
        for dialect in ("today", "seed"):
            run = subprocess.run([str(NODE), str(CLIENT / "scenario.js"), "--target", target,
                                  "--dialect", dialect],
                                 capture_output=True, text=True, timeout=60)
            assert run.returncode == 0, run.stderr
            seen[dialect] = json.loads(run.stdout.strip().splitlines()[-1])
        assert seen["today"] == {
            "ok": True, "dialect": "today", "allocations": 2, "released": 2, "held": [],
            "removed": "application removed by the RM", "placed": ["bound", "pod-1"]}
        assert seen["seed"]["ok"] is True and seen["seed"]["real"] == "real"
    finally:
        server.send_signal(signal.SIGTERM)
        _out, err = server.communicate(timeout=20)
    assert server.returncode == 0, err


GUIDE = Path(__file__).resolve().parent.parent / "docs" / "shim-guide.md"


def test_the_guides_typescript_client_compiles_and_allocates() -> None:
    """docs/shim-guide.md, "Over gRPC": the TypeScript block, type-checked and run."""
    node_modules()
    section = GUIDE.read_text(encoding="utf-8").split("## 11. Over gRPC", 1)[1]
    [code] = re.findall(r"^```typescript\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    build = CLIENT / "build"
    shutil.rmtree(build, ignore_errors=True)
    (build / "src").mkdir(parents=True)
    (build / "src" / "doc_example.ts").write_text(code, encoding="utf-8")
    tsc = subprocess.run([str(NODE), str(CLIENT / "node_modules" / "typescript" / "bin" / "tsc"),
                          "-p", str(CLIENT / "tsconfig.json")],
                         capture_output=True, text=True, timeout=120)
    assert tsc.returncode == 0, tsc.stdout + tsc.stderr
    server, target = serve()
    try:
        run = subprocess.run([str(NODE), str(build / "out" / "doc_example.js")],
                             capture_output=True, text=True, timeout=60,
                             cwd=CLIENT.parent.parent,
                             env={"PATH": "", "YUNIKORN_FSM_TARGET": target})
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "allocated pod-1 on node-1 as app-1-pod-1-1"
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=20)
    assert server.returncode == 0
