"""The auditors' page without a browser: what ``/``, ``/ui/state`` and ``view`` hand over.

The page is one self-contained HTML document (``docs/observability.md``, "The page"):
these tests read the data it carries and the assets it inlines; ``test_web_browser.py``
drives it in Chromium.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from web_helpers import (
    ROOT,
    TRACE,
    TRACE_MUTANT,
    dump_counts,
    get,
    page_data,
    populated,
    served,
)

from invariants.commands import webview
from invariants.properties.coverage import Coverage, declared_edges
from invariants.selftest import mutants
from scheduler.cli import main

ASSETS = ROOT / "scheduler" / "rest" / "assets"


def _no_outside_reference(html: str) -> None:
    """Nothing the browser would load: no src/href attribute, no URL outside the page."""
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)\s*=", html, re.I)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_root_is_the_page_with_the_cores_counts() -> None:
    """``/`` answers the page, its diagrams counting exactly the objects the core holds."""
    env = populated()
    with served(env) as server:
        status, kind, body = get(server.port, "/")
    assert status == 200 and kind.startswith("text/html")
    html = body.decode()
    _no_outside_reference(html)
    data = page_data(html)
    assert data["mode"] == "live" and data["refresh"] == "/ui/state"
    counts = {lc["name"]: lc["counts"] for lc in data["lifecycles"]}
    for name, expected in dump_counts(env).items():
        assert counts[name] == expected, name
    assert counts["rm"] == {"Running": 1}
    assert counts["object"] == {"Active": 4}    # the partition and root, a, b
    drawn = {lc["name"]: {(e["source"], e["trigger"], e["dest"]) for e in lc["edges"]}
             for lc in data["lifecycles"]}
    assert drawn["ask"] == {("Initial", "ask", "Pending"), ("Initial", "reject", "Rejected"),
                            ("Pending", "allocate", "Allocated"),
                            ("Pending", "reject", "Rejected")}


def test_ui_state_follows_the_core() -> None:
    """``/ui/state`` (what the page polls) shows the queue tree's usage after each change."""
    env = populated()
    with served(env) as server:
        state = json.loads(get(server.port, "/ui/state")[2])
        [p] = state["partitions"]
        a = p["root"]["children"][0]
        assert (a["path"], a["allocated"], a["max"]) == ("root.a", {"memory": 60},
                                                         {"memory": 100})
        env.release("app-1", env.uuids("app-1")[0])
        state = json.loads(get(server.port, "/ui/state")[2])
    [p] = state["partitions"]
    dump = {q["path"]: q for q in env.partition()["queues"]}
    assert p["root"]["children"][0]["allocated"] == dump["root.a"]["allocated"] == {"memory": 30}
    assert state["counts"]["allocation"] == dump_counts(env)["allocation"]


def test_view_writes_a_trace_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``view TRACE``: every step with its traffic and the state after it; a violation this
    core no longer reproduces is shown as the one the file recorded."""
    out = tmp_path / "trace.html"
    assert main(["view", str(TRACE), "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    _no_outside_reference(html)
    data = page_data(html)
    assert data["mode"] == "trace" and len(data["steps"]) == 2
    assert data["steps"][0]["text"].startswith("RegisterResourceManager")
    assert data["steps"][1]["answers"] == ["AcceptedApplication app-38",
                                           "AcceptedApplication gang-49"]
    [app_states] = [{a["id"]: a["state"] for a in p["apps"]}
                    for p in data["steps"][1]["state"]["partitions"]]
    assert app_states == {"app-38": "New", "gang-49": "New"}
    assert data["verdict"]["step"] == 2 and data["verdict"]["replayed"] is False
    [rule] = data["violations"]
    assert rule["invariant"] == "protocol.admission" and rule["subject"] == "application gang-49"
    assert rule["statement"].startswith("An application is accepted exactly when")


def test_view_replays_the_violation_on_a_broken_core() -> None:
    """On a core that breaks the rule again the verdict is this replay's, not the file's."""
    with mutants.applied(mutants.by_name(TRACE_MUTANT)):
        data = webview.page_for(TRACE)
    assert data["verdict"]["replayed"] is True and data["verdict"]["step"] == 2
    assert data["violations"][0]["invariant"] == "protocol.admission"


def test_view_writes_a_coverage_page(tmp_path: Path) -> None:
    """``view REPORT``: each edge with the report's count, dormant edges marked."""
    coverage = Coverage()
    (fired, _), *_ = declared_edges()
    coverage.edges[fired] = 7
    report = tmp_path / "coverage.json"
    coverage.write(report)
    assert main(["view", str(report)]) == 0
    data = page_data((tmp_path / "coverage.json.html").read_text(encoding="utf-8"))
    assert data["mode"] == "coverage"
    edges = {(lc["name"], e["source"], e["trigger"], e["dest"]): e
             for lc in data["lifecycles"] for e in lc["edges"]}
    assert edges[fired]["count"] == 7
    assert sum(e["count"] for e in edges.values()) == 7
    dormant = {key for key, why in declared_edges() if why}
    assert dormant and {k for k, e in edges.items() if e["dormant"]} == dormant


@pytest.mark.parametrize("content", ["not a trace\n", '{"edges": 3}\n', ""])
def test_view_refuses_what_it_can_not_read(tmp_path: Path, content: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(content, encoding="utf-8")
    assert main(["view", str(source)]) == 2
    assert capsys.readouterr().err.startswith(f"yunikorn-fsm view: {source}: ")
    assert not (tmp_path / "bad.jsonl.html").exists()


def test_view_of_a_missing_file_is_refused(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "none.jsonl")]) == 2
    assert "can not read it" in capsys.readouterr().err


def test_the_page_escapes_what_it_carries() -> None:
    """Data holding ``</script>`` stays data: the page's element is closed only by itself."""
    from scheduler.rest import page

    html = page.render({"mode": "coverage", "title": "</script><b>x", "lifecycles": [],
                        "goals": [], "steps": 0, "cases": 0})
    assert html.count("</script>") == 3
    assert page_data(html)["title"] == "</script><b>x"
    assert "<title>&lt;/script&gt;&lt;b&gt;x</title>" in html


def test_committed_dagre_is_the_locked_package() -> None:
    """The committed ``dagre.min.js`` is the file of the version ``package-lock.json`` pins
    (checked against ``npm ci``'s install where it exists, as in CI)."""
    lock = json.loads((ROOT / "clients" / "web" / "package-lock.json").read_text())
    pinned = json.loads((ROOT / "clients" / "web" / "package.json").read_text())
    locked = lock["packages"]["node_modules/@dagrejs/dagre"]["version"]
    assert pinned["dependencies"]["@dagrejs/dagre"] == locked
    installed = ROOT / "clients" / "web" / "node_modules" / "@dagrejs" / "dagre"
    if not installed.is_dir():
        pytest.skip("clients/web/node_modules is missing: run `npm ci` in clients/web")
    assert json.loads((installed / "package.json").read_text())["version"] == locked
    for source, target in (("dist/dagre.min.js", "dagre.min.js"), ("LICENSE", "dagre.LICENSE")):
        assert hashlib.sha256((installed / source).read_bytes()).hexdigest() == \
            hashlib.sha256((ASSETS / target).read_bytes()).hexdigest(), target
