"""The lifecycle recorder: every transition of one scheduler, checked as it happens.

Attached through ``Scheduler.add_transition_observer`` before anything
happens, it remembers each object's path through its lifecycle, so the
invariants can tell a state reached through a declared edge from a state
assigned without a trigger.
"""

from __future__ import annotations

from typing import Any

import statemachines
from scheduler import Scheduler
from statemachines import TransitionRecord

CLEAN_EXITS = {("Failing", "Failed"), ("Completing", "Completed")}


class LifecycleRecorder:
    """Watches one scheduler and remembers every object's path through its lifecycle.

    Each record is checked against the declaration as it happens; the
    invariant then also compares every live object's current state with the
    last state the recorder saw it reach, which catches a ``state`` assigned
    without a trigger.
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self._paths: dict[int, tuple[Any, list[str]]] = {}
        self.illegal: list[str] = []
        self.exit_problems: list[str] = []
        self.count = 0
        self._detach = scheduler.add_transition_observer(self.record)

    def record(self, rec: TransitionRecord) -> None:
        self.count += 1
        lc = statemachines.LIFECYCLES[rec.lifecycle]
        entry = self._paths.get(id(rec.obj))
        if entry is None:
            entry = (rec.obj, [lc.initial])
            self._paths[id(rec.obj)] = entry
        path = entry[1]
        if path[-1] != rec.source:
            self.illegal.append(
                f"{rec.lifecycle} {getattr(rec.obj, 'event_id', '?')}: {rec.trigger} fired from "
                f"{rec.source}, but the last recorded state was {path[-1]}")
        if not lc.is_declared(rec.source, rec.trigger, rec.dest):
            self.illegal.append(
                f"{rec.lifecycle} {getattr(rec.obj, 'event_id', '?')}: undeclared edge "
                f"{rec.source} --{rec.trigger}--> {rec.dest}")
        path.append(rec.dest)
        if rec.lifecycle == "application" and (rec.source, rec.dest) in CLEAN_EXITS:
            held = sorted(getattr(rec.obj, "allocations", {}))
            if held:
                self.exit_problems.append(
                    f"application {rec.obj.id}: {rec.source} -> {rec.dest} while holding {held}")

    def path(self, obj: Any) -> list[str] | None:
        entry = self._paths.get(id(obj))
        return None if entry is None or entry[0] is not obj else list(entry[1])

    def detach(self) -> None:
        self._detach()
