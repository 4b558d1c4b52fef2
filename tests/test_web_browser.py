"""The auditors' page in a real browser: headless Chromium driven by Playwright.

Debian's ``chromium`` (``.ci/run`` installs it) is launched through the Python package
``playwright`` with its executable path: Playwright's own browser download is never
used. Every request the page makes is watched: anything but the server it came from
(or the file itself) fails the test, so the page is shown to work with no network.
With ``YUNIKORN_FSM_SCREENSHOTS=DIR`` the tests also save the screenshots in ``docs/``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_helpers import TRACE, dump_counts, populated, served

from invariants.properties.coverage import Coverage, declared_edges
from scheduler.cli import main

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]  # a container's small /dev/shm crashes Chromium's tabs
SHOTS = os.environ.get("YUNIKORN_FSM_SCREENSHOTS", "")

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError as exc:      # pragma: no cover - depends on the machine
    pytest.skip(f"the Python package playwright is missing ({exc}): pip install '.[test]'",
                allow_module_level=True)
if not os.access(CHROMIUM, os.X_OK):     # pragma: no cover - depends on the machine
    pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}: apt-get install -y "
                "chromium (.ci/run does)", allow_module_level=True)


class Browser:
    """One Chromium with a fresh profile; its pages record every request they make."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="yunikorn-fsm-chromium-")
        self._pw = sync_playwright().start()
        self.context = self._pw.chromium.launch_persistent_context(
            self.profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1100, "height": 760})
        self.requests: list[str] = []
        self.errors: list[str] = []

    def open(self, url: str) -> Page:
        page = self.context.new_page()
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("body[data-ready]", timeout=10_000)
        return page

    def close(self) -> None:
        self.context.close()
        self._pw.stop()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


def _only(b: Browser, *allowed: str) -> None:
    """No request left the page's own origin; no script failed."""
    assert [u for u in b.requests if not u.startswith(allowed)] == []
    assert b.errors == []
    b.requests.clear()


def _counts(page: Page, lifecycle: str) -> dict[str, int]:
    """The numbers the diagram shows in each state (0 left out, like the core's counts)."""
    shown: dict[str, int] = page.evaluate(
        """lc => Object.fromEntries([...document.querySelectorAll(
              `[data-lifecycle="${lc}"] g.state`)].map(g => [g.dataset.state,
              Number(g.querySelector('.state-count').textContent)]))""", lifecycle)
    return {k: v for k, v in shown.items() if v}


def _shot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / name))


def test_live_page_shows_and_follows_the_core(browser: Browser) -> None:
    """The diagrams count what the core holds, the queue tree shows its usage, and both
    follow the core as it changes; every asset comes from the server itself."""
    env = populated()
    with served(env, page_refresh=0.2) as server:
        origin = f"http://127.0.0.1:{server.port}/"
        page = browser.open(origin)
        for name, expected in dump_counts(env).items():
            assert _counts(page, name) == expected, name
        assert page.locator('[data-lifecycle="allocation"] g.edge-group[data-kind="dormant"]'
                            ).count() >= 1
        assert page.locator("#legend").is_visible()
        _shot(page, "page-lifecycles.png")
        page.click('nav button[data-view="queues"]')
        row = page.locator('tr[data-queue="root.a"]')
        assert row.locator("td.allocated").text_content() == "memory=60"
        assert "memory 60%" in (row.locator("td.usage").text_content() or "")
        _shot(page, "page-queues.png")
        env.release("app-1", env.uuids("app-1")[0])
        page.wait_for_function(
            """() => document.querySelector('tr[data-queue="root.a"] td.allocated')
                 .textContent === 'memory=30'""", timeout=5_000)
        assert _counts(page, "allocation") == dump_counts(env)["allocation"]
        page.close()
    _only(browser, origin)


def test_trace_viewer_steps_to_the_violated_rule(browser: Browser, tmp_path: Path) -> None:
    """The trace opens at the step that broke the rule, highlighted, the rule's name and
    statement beside the state; stepping shows each step's state (buttons and keys)."""
    out = tmp_path / "trace.html"
    assert main(["view", str(TRACE), "--out", str(out)]) == 0
    page = browser.open(out.as_uri())
    assert page.locator("#position").text_content() == "step 2 of 2"
    violating = page.locator("#traffic li.violating")
    assert violating.count() == 1 and violating.get_attribute("data-step") == "2"
    assert "selected" in (violating.get_attribute("class") or "")
    assert page.locator("#violation .rule-name").text_content() == "protocol.admission"
    assert "gang over a max" in (page.locator("#violation").text_content() or "")
    assert page.locator('#state tr[data-app="gang-49"]').get_attribute("class") == "suspect"
    _shot(page, "page-trace.png")
    page.click("#prev")
    assert page.locator("#state-title").text_content() == "State after step 1"
    assert page.locator("#violation").count() == 0
    assert page.locator("#state tr[data-app]").count() == 0
    page.keyboard.press("ArrowRight")
    assert page.locator("#state-title").text_content() == "State after step 2"
    assert page.locator('#state tr[data-app="app-38"] td').nth(1).text_content() == "New"
    page.click('nav button[data-view="lifecycles"]')
    assert _counts(page, "application") == {"New": 2}
    page.close()
    _only(browser, "file://")


def test_coverage_page_draws_counts_and_dormant_edges(browser: Browser,
                                                      tmp_path: Path) -> None:
    """A coverage report: fired edges with their counts, never-fired ones apart, dormant
    ones marked, and the legend saying which is which."""
    coverage = Coverage()
    fired = [key for key, why in declared_edges() if not why and key[0] == "ask"]
    for n, key in enumerate(fired[:2], 1):
        coverage.edges[key] = n * 10
    report = tmp_path / "coverage.json"
    coverage.write(report)
    assert main(["view", str(report)]) == 0
    page = browser.open((tmp_path / "coverage.json.html").as_uri())
    kinds: dict[str, Any] = page.evaluate(
        """() => [...document.querySelectorAll('[data-lifecycle="ask"] g.edge-group')]
             .map(g => [g.dataset.source + ' ' + g.dataset.trigger + ' ' + g.dataset.dest,
                        g.dataset.kind, g.querySelector('text').textContent])""")
    by_edge = {edge: (kind, label) for edge, kind, label in kinds}
    for n, (_, source, trigger, dest) in enumerate(fired[:2], 1):
        assert by_edge[f"{source} {trigger} {dest}"] == ("fired", f"{trigger} \u00d7{n * 10}")
    assert [k for k, _ in by_edge.values()].count("never") == len(by_edge) - 2
    dormant = page.locator('g.edge-group[data-kind="dormant"]')
    assert dormant.count() == sum(1 for _, why in declared_edges() if why)
    legend = page.locator("#legend").text_content() or ""
    assert "never fired" in legend and "dormant" in legend
    page.click('nav button[data-view="goals"]')
    assert page.locator("table.goals tbody tr").count() == len(json.loads(
        report.read_text())["goals"])
    _shot(page, "page-coverage.png")
    page.close()
    _only(browser, "file://")
