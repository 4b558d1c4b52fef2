"""Replaying a trace file: every step on a fresh core, every rule checked, the run in words.

``yunikorn-fsm replay FILE`` runs a trace (one the checker wrote for a
counterexample, or one ``scheduler.testing.RecordingScheduler`` wrote from a
real shim) and prints it as SI traffic; ``--mermaid OUT`` also draws it as a
sequence diagram with the violated rule as a note. The checker writes its
traces here too, so what an auditor replays is exactly what was found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from invariants.actions import predicate_for
from invariants.actions.draw import CLOCK_START
from invariants.explore.closure import settle
from invariants.modelshim.world import DIRECT, World
from invariants.properties import liveness
from invariants.properties.catalog import Violation
from invariants.random_search import describe
from invariants.random_search.runner import Failure, scheduler_options
from scheduler.trace import Step, Trace, header, write_trace

if TYPE_CHECKING:
    pass


@dataclass
class Replayed:
    """What a replay saw: the lines it printed and the first violation, if any."""

    violation: Violation | None
    steps: int
    lines: list[tuple[str, str, str]] = field(default_factory=list)
    """``(from, to, text)`` per message: Shim -> Core requests, Core -> Shim answers."""
    violations: list[Violation] = field(default_factory=list)
    """Every rule the last step broke (``violation`` is the first of them)."""

    def broke(self, invariant: str) -> bool:
        return any(v.invariant == invariant for v in self.violations)


def world_for(head: dict[str, Any]) -> World:
    """A fresh world as the trace's header describes it (clock, predicates, options)."""
    checker = head.get("checker") or {}
    options: dict[str, Any] = {"rm_pause_timeout": checker["rm_pause_timeout"]} \
        if checker.get("rm_pause_timeout") is not None else {}
    # A trace that names no reservation delay was recorded when the core reserved at once.
    options["reservation_delay"] = float(checker.get("reservation_delay", 0.0))
    # A trace the checker found through the wire replays through the wire.
    return World(float(head.get("clock_start", 0.0)), predicate_for(
        checker.get("predicate_salt"), checker.get("predicates_refuse") or ()),
        scheduler_options=options, transport=str(checker.get("transport", DIRECT)))


def run(trace: Trace, out: TextIO | None = None) -> Replayed:
    """Execute every step; stop at the first violation.

    Steps in today's SI (``scheduler.si.today``) are judged through the checker's own
    reading of it (``invariants/modelshim/bridge.py``), as ``check`` judged them.
    """
    world = world_for(trace.header)
    try:
        return _run(world, trace, out)
    finally:
        world.close()


def _run(world: World, trace: Trace, out: TextIO | None) -> Replayed:
    result = Replayed(None, 0)
    configs: dict[str, str] = {}
    for number, step in enumerate(trace.steps, 1):
        text = describe.step(step)
        result.lines.append(("Shim", "Core", text) if step.call not in ("advance",)
                            else ("Core", "Core", text))
        if out is not None:
            out.write(f"{number:4}  {text}\n")
        problems = world.run(step)
        result.steps = number
        if out is not None:
            for line in _configuration_lines(step, configs, world.refused is None):
                out.write(f"        | {line}\n")
        if world.refused is not None:
            refusal = f"refused: {world.refused}"
            result.lines.append(("Core", "Shim", refusal))
            if out is not None:
                out.write(f"        <- {refusal}\n")
        for kind, msg in world.shim.observed:
            for line in describe.answers(kind, msg):
                result.lines.append(("Core", "Shim", line))
                if out is not None:
                    out.write(f"        <- {line}\n")
        if problems:
            result.violation = problems[0]
            result.violations = list(problems)
            if out is not None:
                for v in problems:
                    out.write(f"VIOLATION {v}\n")
            return result
    if _quiescent(trace.header):
        end = settle(world, _judged(trace.header))
        if out is not None:
            for step in end.steps:
                out.write(f"   +  {describe.step(step)}  (driving to quiescence)\n")
            out.write("      quiescent: every release confirmed, every timer passed; "
                      "liveness judged\n")
            for v in end.violations:
                out.write(f"VIOLATION {v}\n")
        if end.violations:
            result.violation = end.violations[0]
            result.violations = end.violations
    return result


def _configuration_lines(step: Step, configs: dict[str, str], taken: bool) -> list[str]:
    """A registration's configuration in full, a reload's as a diff to the RM's one before
    (``configs``: each RM's configuration in force, updated when the core ``taken`` it)."""
    if step.call not in ("register_resource_manager", "update_configuration"):
        return []
    rm_id, text = step.request.rm_id, step.request.config
    before = configs.get(rm_id)
    if taken:
        configs[rm_id] = text
    if step.call == "register_resource_manager" or before is None:
        return describe.configuration(text)
    return describe.reload(before, text)


def _quiescent(head: dict[str, Any]) -> bool:
    """The explorer and the checker mark a trace whose end is judged for liveness once it
    comes to rest."""
    return bool((head.get("checker") or {}).get("quiescent"))


def _judged(head: dict[str, Any]) -> tuple[str, ...] | None:
    """The liveness properties a quiescent trace's end is judged by: the checker's case
    ends name theirs (``liveness.CASE_ENDS``); the explorer's judge every one (None)."""
    names = (head.get("checker") or {}).get("liveness")
    return tuple(str(n) for n in names) if isinstance(names, list) else None


def mermaid(replayed: Replayed) -> str:
    """The run as a Mermaid ``sequenceDiagram`` (shim <-> core, the violation as a note)."""
    out = ["sequenceDiagram", "  participant Shim", "  participant Core"]
    for src, dst, text in replayed.lines:
        arrow = "-->>" if dst == "Shim" else "->>"
        out.append(f"  {src}{arrow}{dst}: {_mermaid_text(text)}")
    if replayed.violation is not None:
        v = replayed.violation
        out.append(f"  Note over Core: VIOLATION {_mermaid_text(v.invariant)}: "
                   f"{_mermaid_text(v.subject)}: {_mermaid_text(v.explanation)}")
    return "\n".join(out) + "\n"


def _mermaid_text(text: str) -> str:
    for bad, good in ((";", ","), ("#", "no."), ("{", "("), ("}", ")"), ("\n", " ")):
        text = text.replace(bad, good)
    return text[:200]


QUIESCENCE_NOTE = "driving_to_quiescence"
"""The key of a note line holding one step the closure took after the trace's own steps
(read by people; replay ignores it and drives the end to rest again)."""


def write(path: Path, config: str, clock_start: float, steps: Sequence[Step],
          checker: dict[str, Any]) -> Path:
    """Write a counterexample: the steps with the callbacks they caused and the violation.

    The steps are run once more on a fresh core to record what it answered, so
    the file shows the same traffic ``replay`` will see.
    """
    head = header(config, clock_start, checker=checker)
    world = world_for(head)
    try:
        lines = _recorded(world, head, steps)
    finally:
        world.close()
    return write_trace(path, head, lines)


def _recorded(world: World, head: dict[str, Any], steps: Sequence[Step]
              ) -> list[dict[str, Any] | Step]:
    """The steps with what the core answered to each, and the violation they end with."""
    lines: list[dict[str, Any] | Step] = []
    for step in steps:
        lines.append(step)
        problems = world.run(step)
        for kind, msg in world.shim.observed:
            lines.append({"callback": kind, "message": _json(msg)})
        if problems:
            break
    else:
        problems = []
        if _quiescent(head):
            end = settle(world, _judged(head))
            # Notes, not steps: ``replay`` drives the end to rest itself, and a closure
            # replayed as steps would start its round budget afresh after them.
            lines.extend({QUIESCENCE_NOTE: step.to_json()} for step in end.steps)
            problems = end.violations
    if problems:
        lines.append({"violation": [{"invariant": v.invariant, "subject": v.subject,
                                     "explanation": v.explanation} for v in problems]})
    return lines


def save(failure: Failure, steps: Sequence[Step], folder: Path, name: str) -> Path:
    """Write a found failure, shrunk to ``steps``, as a trace file under ``folder``.

    The steps are the checker's, with uuids of the original run translated;
    the file holds the uuids the fresh core handed out, so it replays alone. A failure
    found at a case's end is marked ``quiescent`` with the properties judged there, so
    the trace's end is driven to rest and judged again (the closure's steps follow the
    trace's own as ``driving_to_quiescence`` notes, which replay does not execute).
    """
    world = World(CLOCK_START, failure.scenario.predicate(), translate=failure.sym,
                  scheduler_options=scheduler_options(failure.scenario),
                  transport=failure.transport)
    try:
        for step in steps:
            world.run(step)
    finally:
        world.close()
    config = next((s.request.config for s in world.steps
                   if s.call == "register_resource_manager"), "")
    ending = {"quiescent": True, "liveness": list(liveness.CASE_ENDS)} \
        if failure.quiescent else {}
    return write(folder / name, config, CLOCK_START, world.steps, {
        "seed": failure.seed, "case": failure.case, "worker": failure.worker,
        "invariant": failure.violation.invariant,
        "predicate_salt": failure.scenario.predicate_salt,
        "rm_pause_timeout": failure.scenario.rm_pause_timeout,
        "reservation_delay": failure.scenario.reservation_delay, **ending,
        **({"transport": failure.transport} if failure.transport != DIRECT else {})})


def _json(message: Any) -> Any:
    if isinstance(message, list):
        return [_json(m) for m in message]
    return json.loads(message.model_dump_json(by_alias=True))
