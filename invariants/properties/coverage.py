"""Coverage: which lifecycle edges the checker fired, and which ``sometimes`` goals it reached.

An edge or a goal never reached is a part of the design the checker never
tested: the report lists them, ``--coverage-out`` writes them as JSON and
``yunikorn-fsm diagrams --coverage`` draws the counts on the lifecycles.
A goal is a named situation worth reaching (a placeholder replaced on its own
node, a Hard gang failed, a reservation honoured); each is detected from the
traffic and the transitions of one step.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import statemachines
from scheduler import si
from scheduler.trace import Step
from statemachines import TransitionRecord

TT = si.TerminationType


EdgeKey = tuple[str, str, str, str]


def declared_edges() -> list[tuple[EdgeKey, str]]:
    """Every declared edge as ``((lifecycle, source, trigger, dest), dormant reason)``."""
    return [((lc.name, t.source, t.trigger, t.dest), t.dormant)
            for lc in statemachines.LIFECYCLES.values() for t in lc.transitions]


@dataclass(frozen=True)
class Goal:
    """A situation the checker should reach sometimes."""

    name: str
    statement: str
    detect: Callable[[StepRecord], bool]


@dataclass
class StepRecord:
    """What one step did: the step, its transitions, and the callbacks it caused."""

    step: Step
    transitions: list[TransitionRecord]
    messages: list[tuple[str, Any]]
    state: dict[str, Any] = field(default_factory=dict)

    def moved(self, lifecycle: str, source: str, dest: str) -> list[Any]:
        return [t.obj for t in self.transitions
                if t.lifecycle == lifecycle and t.source == source and t.dest == dest]

    def of(self, kind: str) -> list[Any]:
        return [m for k, m in self.messages if k == kind]

    def new(self) -> list[si.Allocation]:
        return [a for r in self.of("update_allocation") for a in r.new]

    def released(self) -> list[si.AllocationRelease]:
        return [a for r in self.of("update_allocation") for a in r.released]

    def states(self, kind: si.SchedulingState) -> list[si.UpdateContainerSchedulingStateRequest]:
        return [s for s in self.of("update_container_scheduling_state") if s.state == kind]


GOALS: dict[str, Goal] = {}


def goal(name: str, statement: str) -> Callable[[Callable[[StepRecord], bool]],
                                                  Callable[[StepRecord], bool]]:
    def register(fn: Callable[[StepRecord], bool]) -> Callable[[StepRecord], bool]:
        GOALS[name] = Goal(name, statement, fn)
        return fn

    return register


class Coverage:
    """Counts of edges fired and goals reached; merged across test cases and workers."""

    def __init__(self) -> None:
        self.edges: Counter[EdgeKey] = Counter()
        self.goals: Counter[str] = Counter()
        self.steps = 0
        self.cases = 0

    def transition(self, rec: TransitionRecord) -> None:
        self.edges[(rec.lifecycle, rec.source, rec.trigger, rec.dest)] += 1

    def observe(self, record: StepRecord) -> None:
        self.steps += 1
        for name, g in GOALS.items():
            if g.detect(record):
                self.goals[name] += 1

    def merge(self, other: Coverage) -> None:
        self.edges.update(other.edges)
        self.goals.update(other.goals)
        self.steps += other.steps
        self.cases += other.cases

    # -- reporting ----------------------------------------------------------
    def reachable(self) -> list[EdgeKey]:
        return [key for key, dormant in declared_edges() if not dormant]

    def unreached_edges(self) -> list[EdgeKey]:
        return [key for key in self.reachable() if not self.edges[key]]

    def unreached_goals(self) -> list[str]:
        return [name for name in GOALS if not self.goals[name]]

    def summary(self) -> str:
        reach = self.reachable()
        hit = sum(1 for k in reach if self.edges[k])
        goals = sum(1 for n in GOALS if self.goals[n])
        return f"edges {hit}/{len(reach)}, goals {goals}/{len(GOALS)}"

    def to_json(self) -> dict[str, Any]:
        edges = [{"lifecycle": k[0], "source": k[1], "trigger": k[2], "dest": k[3],
                  "count": self.edges[k], **({"dormant": d} if d else {})}
                 for k, d in declared_edges()]
        return {
            "steps": self.steps,
            "cases": self.cases,
            "edges": edges,
            "goals": [{"name": n, "statement": g.statement, "count": self.goals[n]}
                      for n, g in GOALS.items()],
            "unreached_edges": [_label(k) for k in self.unreached_edges()],
            "unreached_goals": self.unreached_goals(),
        }

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def report_lines(self) -> Iterable[str]:
        yield f"coverage: {self.summary()}"
        for key in self.unreached_edges():
            yield f"  edge never fired: {_label(key)}"
        for name in self.unreached_goals():
            yield f"  goal never reached: {name} ({GOALS[name].statement})"


def _label(key: EdgeKey) -> str:
    return f"{key[0]}: {key[1]} --{key[2]}--> {key[3]}"


def load(path: str | Path) -> Mapping[EdgeKey, int]:
    """Edge counts from a ``--coverage-out`` file (for ``diagrams --coverage``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(e["lifecycle"], e["source"], e["trigger"], e["dest"]): int(e["count"])
            for e in data["edges"]}
