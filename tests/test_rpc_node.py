"""A shim in another language: the Node.js client (clients/node) against ``yunikorn-fsm serve``.

It loads the same ``si.proto`` with ``@grpc/proto-loader``; ``.ci/run``
installs its packages with ``npm ci`` from the committed lockfile. Skipped
only when ``node`` is not installed.
"""

from __future__ import annotations

import json
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
    if not (CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail(f"run 'npm ci' in {CLIENT} first (.ci/run does)")


def test_node_client_allocates_releases_and_replaces_placeholders(tmp_path: Path) -> None:
    node_modules()
    token = tmp_path / "token"
    token.write_text("node-test-token\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "scheduler", "serve", "--port", "0", "--token-file", str(token)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        target = f"127.0.0.1:{port}"
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
