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
        self._scheduler = scheduler
        scheduler.add_transition_observer(self.record)

    def __getstate__(self) -> dict[str, Any]:
        """Copied with its scheduler (the explorer's snapshots): paths are keyed by object
        identity, so a copy keys them again by the copied objects."""
        state = dict(self.__dict__)
        state["_paths"] = list(self._paths.values())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["_paths"] = {id(entry[0]): entry for entry in state["_paths"]}
        self.__dict__.update(state)

    def take_paths(self) -> dict[int, tuple[Any, list[str]]]:
        """Hand over every path and keep none (the explorer copies them apart, see
        ``invariants/explore/search.py``); :meth:`put_paths` gives them back."""
        paths, self._paths = self._paths, {}
        return paths

    def put_paths(self, paths: dict[int, tuple[Any, list[str]]]) -> None:
        self._paths = paths

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

    def last(self, obj: Any) -> str | None:
        """The state ``obj``'s lifecycle last moved it to (None: never moved)."""
        entry = self._paths.get(id(obj))
        return None if entry is None or entry[0] is not obj or not entry[1] else entry[1][-1]

    def path(self, obj: Any) -> list[str] | None:
        entry = self._paths.get(id(obj))
        return None if entry is None or entry[0] is not obj else list(entry[1])

    def detach(self) -> None:
        self._scheduler.remove_transition_observer(self.record)
