"""Shared pieces of the page's tests: a core with something to show, served over REST."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scenario_helpers import Env, config

from scheduler.rest.http_server import RestServer

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "data" / "traces"
TRACE = TRACES / "admission-earlier-application-tags-clear-leaf-max.jsonl"
"""A stored counterexample: the checker recorded ``protocol.admission`` at its step 2;
the broken core ``apps.namespace_tags_ignored`` breaks it again on replay."""
TRACE_MUTANT = "apps.namespace_tags_ignored"

QUEUES = config("""
- name: a
  resources:
    max: {memory: 100}
- name: b
  resources:
    guaranteed: {memory: 30}
""")


def populated() -> Env:
    """Two nodes, two running applications in two leaves, one ask that fits nowhere."""
    env = Env(QUEUES)
    env.add_node("node-1", 100)
    env.add_node("node-2", 50)
    env.add_app("app-1", "root.a")
    env.add_app("app-2", "root.b")
    env.ask("app-1", "a1", 30, repeats=2)
    env.ask("app-2", "b1", 20)
    env.ask("app-2", "big", 500)
    env.schedule()
    return env


@contextmanager
def served(env: Env, **options: Any) -> Iterator[RestServer]:
    server = RestServer(env.api, port=0, **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def get(port: int, path: str) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, r.getheader("Content-Type") or "", body


def page_data(html: str) -> Any:
    """The JSON the page carries in its ``page-data`` element."""
    found = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html,
                      re.S)
    assert found, "no page-data element"
    return json.loads(found.group(1))


def dump_counts(env: Env) -> dict[str, dict[str, int]]:
    """What the public state dump says each lifecycle's objects are in (the page's source
    is the REST snapshot; the dump is the contract's own view of the same core)."""
    counts: dict[str, dict[str, int]] = {"application": {}, "ask": {}, "allocation": {},
                                         "node": {}}

    def add(lc: str, state: str) -> None:
        counts[lc][state] = counts[lc].get(state, 0) + 1

    for p in env.api.state_dump()["partitions"]:
        for a in p["applications"]:
            add("application", a["state"])
            for k in a["asks"]:
                add("ask", k["state"])
            for x in a["allocations"]:
                add("allocation", x["state"])
        for n in p["nodes"]:
            add("node", n["state"])
    return counts
