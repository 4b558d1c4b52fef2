"""The auditors' page: lifecycle diagrams, the queue tree, a trace viewer, in one HTML file.

One self-contained document serves all three uses: ``serve --rest-port`` answers ``/``
with it (live counts, refreshed from ``/ui/state``), and ``yunikorn-fsm view`` writes it
for a coverage report or a counterexample trace. Script, style, the layout library
(``@dagrejs/dagre``, pinned by ``clients/web/package-lock.json``, its built file
committed under ``assets/``) and the data are inlined, and the page's own
Content-Security-Policy forbids loading anything else: it works with no network, from
``file://`` as well as from the server.

The data is built here from a :class:`~.snapshot.Snapshot`, the copy the REST routes
read, so the page shows exactly what the core holds; the diagrams come from the
lifecycle declarations themselves (``statemachines``), so they can not drift.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import statemachines

from .snapshot import PartitionCopy, QueueCopy, Snapshot

EdgeCounts = Mapping[tuple[str, str, str, str], int]
"""``(lifecycle, source, trigger, dest) -> times fired`` (a coverage report's edges)."""

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; connect-src 'self'")
"""Inline code and the server's own ``/ui/state`` only: a page that can reach nothing else."""
ASSETS = ("dagre.min.js", "page.js", "page.css")


def lifecycles(counts: EdgeCounts | None = None,
               states: Mapping[str, Mapping[str, int]] | None = None) -> list[dict[str, Any]]:
    """Every lifecycle as the page draws it: states, edges (dormant ones say why), and the
    edge counts of a coverage report or the state counts of a core, when given."""
    out = []
    for lc in statemachines.LIFECYCLES.values():
        edges = [{"source": t.source, "trigger": t.trigger, "dest": t.dest,
                  "dormant": t.dormant,
                  "count": None if counts is None
                  else int(counts.get((lc.name, t.source, t.trigger, t.dest), 0))}
                 for t in lc.transitions]
        out.append({
            "name": lc.name, "description": lc.description, "initial": lc.initial,
            "states": [{"name": name, "final": spec.final, "doc": spec.doc}
                       for name, spec in lc.state_specs.items()],
            "edges": edges,
            "counts": None if states is None else dict(states.get(lc.name, {}))})
    return out


def state_counts(snap: Snapshot) -> dict[str, dict[str, int]]:
    """How many objects of each lifecycle the snapshot holds in each state.

    Queues and partitions share the ``object`` lifecycle; allocations are counted
    once, from their applications (a node lists the same allocations again).
    """
    counts: dict[str, Counter[str]] = {name: Counter() for name in statemachines.LIFECYCLES}
    counts["rm"].update(state for _, state in snap.rms)
    for p in snap.partitions:
        counts["object"][p.state] += 1
        counts["object"].update(q.state for q in p.queues.values())
        counts["node"].update(n.state for n in p.nodes.values())
        for a in p.apps.values():
            counts["application"][a.state] += 1
            counts["ask"].update(k.state for k in a.asks)
            counts["allocation"].update(x.state for x in a.allocations)
    return {name: dict(sorted(c.items())) for name, c in counts.items()}


def _queue(p: PartitionCopy, q: QueueCopy) -> dict[str, Any]:
    return {"name": q.path.rsplit(".", 1)[-1], "path": q.path, "state": q.state,
            "leaf": q.is_leaf, "managed": q.managed, "allocated": q.allocated,
            "pending": q.pending, "max": q.max, "guaranteed": q.guaranteed,
            "apps": len(q.apps), "running": q.running_apps,
            "children": [_queue(p, p.queues[c]) for c in q.children if c in p.queues]}


def objects(snap: Snapshot) -> list[dict[str, Any]]:
    """Per partition: the queue tree with usage, the applications with their asks and
    allocations, the nodes; every value copied from the snapshot."""
    return [{
        "rm": p.rm_id, "name": p.name, "state": p.state, "capacity": p.capacity,
        "allocated": p.allocated,
        "root": _queue(p, p.queues["root"]) if "root" in p.queues else None,
        "apps": [{"id": a.id, "state": a.state, "queue": a.queue, "user": a.user,
                  "allocated": a.allocated, "pending": a.pending,
                  "asks": [{"key": k.key, "state": k.state, "resource": k.resource,
                            "repeats": k.pending_repeats, "placeholder": k.placeholder}
                           for k in a.asks],
                  "allocations": [{"uuid": x.uuid, "key": x.key, "state": x.state,
                                   "node": x.node_id, "resource": x.resource,
                                   "placeholder": x.placeholder} for x in a.allocations]}
                 for a in p.apps.values()],
        "nodes": [{"id": n.id, "state": n.state, "capacity": n.capacity,
                   "allocated": n.allocated, "available": n.available}
                  for n in p.nodes.values()],
    } for p in snap.partitions]


def live_state(snap: Snapshot) -> dict[str, Any]:
    """What ``/ui/state`` answers and the live page starts from."""
    return {"now": snap.now, "counts": state_counts(snap), "partitions": objects(snap)}


def live_data(snap: Snapshot, refresh: float = 2.0) -> dict[str, Any]:
    """The page of a running core: diagrams with its state counts, its queues, read again
    from ``/ui/state`` every ``refresh`` seconds."""
    state = live_state(snap)
    return {"mode": "live", "title": "yunikorn-fsm: live core",
            "lifecycles": lifecycles(states=state["counts"]), "state": state,
            "refresh": "/ui/state", "interval_ms": max(100, round(refresh * 1000))}


def coverage_data(report: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The page of a ``check --coverage-out`` report: edge counts and the goals.

    Raises ``KeyError``/``TypeError``/``ValueError`` for a file that is not such a report.
    """
    counts = {(e["lifecycle"], e["source"], e["trigger"], e["dest"]): int(e["count"])
              for e in report["edges"]}
    goals = [{"name": str(g["name"]), "statement": str(g.get("statement", "")),
              "count": int(g["count"])} for g in report.get("goals", [])]
    return {"mode": "coverage", "title": f"yunikorn-fsm: coverage {source}",
            "lifecycles": lifecycles(counts=counts), "goals": goals,
            "steps": int(report.get("steps", 0)), "cases": int(report.get("cases", 0))}


def trace_data(source: str, steps: Iterable[Mapping[str, Any]], rules: Iterable[Mapping[str, Any]],
               verdict: Mapping[str, Any]) -> dict[str, Any]:
    """The page of a trace: each step's SI traffic and the core's state after it.

    ``steps``: ``{"text", "answers", "state"}`` each (``state`` from :func:`live_state`);
    ``rules``: the violated rules, each ``{"invariant", "subject", "explanation",
    "statement"}``; ``verdict``: at which step, and whether this core's replay or only the
    file recorded them.
    """
    steps = list(steps)
    first = steps[0]["state"]["counts"] if steps else None
    return {"mode": "trace", "title": f"yunikorn-fsm: trace {source}",
            "lifecycles": lifecycles(states=first), "steps": steps,
            "violations": list(rules), "verdict": dict(verdict)}


def _asset(name: str) -> str:
    return resources.files("scheduler.rest").joinpath("assets", name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    """Inline script text that can not close its own ``<script>`` element early."""
    return text.replace("</script", "<\\/script")


def render(data: Mapping[str, Any]) -> str:
    """The whole page for ``data``, every byte of it inline."""
    payload = json.dumps(data, separators=(",", ":"), sort_keys=True).replace("<", "\\u003c")
    title = str(data.get("title", "yunikorn-fsm"))
    title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>",
        f"<style>{_asset('page.css')}</style>",
        "</head><body>",
        '<noscript>This page draws everything with JavaScript.</noscript>',
        '<div id="app"></div>',
        f'<script id="page-data" type="application/json">{payload}</script>',
        f"<script>{_script(_asset('dagre.min.js'))}</script>",
        f"<script>{_script(_asset('page.js'))}</script>",
        "</body></html>", ""])
