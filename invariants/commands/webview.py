"""``yunikorn-fsm view FILE``: the auditors' page for a trace or a coverage report, as a file.

A trace is replayed as ``replay`` runs it (the same world: clock, predicates, options,
transport), and after every step the core is copied through the REST routes' own
snapshot (``scheduler.rest.snapshot.capture``), so each step's state on the page is what
the core held then. The violated rules come from this replay; a trace whose violation
this core no longer reproduces (a stored regression trace after its fix) still shows
the one the file recorded, marked as recorded only.

The page is written, not served: one self-contained HTML file (``scheduler.rest.page``)
that opens from ``file://`` with no network and can be attached to an issue.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from invariants.explore import closure
from invariants.modelshim.world import World
from invariants.properties.catalog import REGISTRY, Violation
from invariants.properties.liveness import LIVENESS
from invariants.properties.protocol import PROTOCOL
from invariants.random_search import describe, replay
from scheduler.rest import page
from scheduler.rest.snapshot import capture
from scheduler.trace import Trace, TraceError, read_trace


class NotViewable(ValueError):
    """A file that is neither a trace nor a ``check --coverage-out`` report."""


def statement(rule: str) -> str:
    """The rule's statement, wherever it is registered (invariant, protocol, liveness)."""
    for table in (REGISTRY, PROTOCOL, LIVENESS):
        found = table.get(rule)
        if found is not None:
            return str(found.statement)
    return ""


def _rules(found: Sequence[Violation] | Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    out = []
    for v in found:
        item = ({"invariant": v.invariant, "subject": v.subject, "explanation": v.explanation}
                if isinstance(v, Violation) else
                {k: str(v.get(k, "")) for k in ("invariant", "subject", "explanation")})
        out.append({**item, "statement": statement(item["invariant"])})
    return out


def _state(world: World) -> dict[str, Any]:
    return page.live_state(capture(world.api, app_detail=True))


def recorded_violation(lines: Sequence[str]) -> list[dict[str, Any]]:
    """The ``{"violation": [...]}`` line the checker wrote at a trace's end (empty: none)."""
    for text in reversed(lines):
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("violation"), list):
            return [v for v in obj["violation"] if isinstance(v, dict)]
    return []


def trace_page(trace: Trace, recorded: Sequence[Mapping[str, Any]], source: str
               ) -> dict[str, Any]:
    """Replay ``trace`` step by step and build the trace viewer's data."""
    world = replay.world_for(trace.header)
    steps: list[dict[str, Any]] = []
    problems: list[Violation] = []
    try:
        for step in trace.steps:
            problems = list(world.run(step))
            answers = [f"refused: {world.refused}"] if world.refused is not None else []
            answers += [line for kind, msg in world.shim.observed
                        for line in describe.answers(kind, msg)]
            steps.append({"text": describe.step(step), "answers": answers,
                          "state": _state(world)})
            if problems:
                break
        else:
            if replay._quiescent(trace.header):
                end = closure.settle(world, replay._judged(trace.header))
                steps.append({"text": f"(driven to quiescence: {len(end.steps)} steps, "
                                      "every release confirmed, every timer passed)",
                              "answers": [describe.step(s) for s in end.steps],
                              "state": _state(world)})
                problems = list(end.violations)
    finally:
        world.close()
    if problems:
        verdict = {"step": len(steps), "replayed": True,
                   "summary": f"Replayed on this core: step {len(steps)} breaks "
                              f"{', '.join(v.invariant for v in problems)}."}
        rules = _rules(problems)
    elif recorded:
        verdict = {"step": len(steps), "replayed": False,
                   "summary": "Recorded in the file, not reproduced by this core's replay: "
                              f"{', '.join(str(v.get('invariant')) for v in recorded)}."}
        rules = _rules(recorded)
    else:
        verdict = {"step": None, "replayed": False,
                   "summary": "No rule broken: replayed on this core, every rule held."}
        rules = []
    return page.trace_data(source, steps, rules, verdict)


def page_for(path: Path) -> dict[str, Any]:
    """The page's data for a trace or a coverage report; :class:`NotViewable` otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NotViewable(f"can not read it: {exc}") from None
    try:
        report = json.loads(text)
    except ValueError:
        report = None    # a trace: one JSON value a line
    if isinstance(report, dict) and "edges" in report:
        try:
            return page.coverage_data(report, path.name)
        except (KeyError, TypeError, ValueError) as exc:
            raise NotViewable(f"not a coverage report (check --coverage-out): "
                              f"{exc!r}") from None
    try:
        trace = read_trace(path)
    except TraceError as exc:
        raise NotViewable(f"neither a trace nor a coverage report: {exc}") from None
    return trace_page(trace, recorded_violation(text.splitlines()), path.name)


def write(path: Path, out: Path) -> Path:
    """Write the page for ``path`` to ``out``."""
    data = page_for(path)
    out.write_text(page.render(data), encoding="utf-8")
    return out
