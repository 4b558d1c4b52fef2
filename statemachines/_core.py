"""The machinery shared by every lifecycle: declarations, the shared Machine, firing.

A lifecycle is declared as data (:class:`StateSpec`, :class:`TransitionSpec`) and
compiled once into a single ``transitions.Machine`` shared by every object of
that kind. Objects are plain (slotted) Python objects with a ``state`` attribute;
they are never added to the machine as models, because ``add_model`` costs tens
of microseconds per object while firing a shared event on a foreign object costs
a few (measured for the scheduling benchmark, see ``docs/performance.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from transitions import Machine
from transitions.core import Event


class Stateful(Protocol):
    """Anything a lifecycle can move: it only needs a ``state`` attribute."""

    state: str


@dataclass(frozen=True, slots=True)
class StateSpec:
    """One state of a lifecycle with the seed section that justifies it."""

    name: str
    doc: str
    final: bool = False


@dataclass(frozen=True, slots=True)
class TransitionSpec:
    """One edge: firing ``trigger`` in ``source`` moves the object to ``dest``.

    ``dormant`` says why the core never fires the edge (yet), for an edge
    declared for fidelity to the seed's drawing; coverage reports leave such
    edges out of the reachable set and diagrams draw them apart.
    """

    trigger: str
    source: str
    dest: str
    doc: str
    dormant: str = ""

    @property
    def label(self) -> str:
        """``source --trigger--> dest``: how reports name the edge."""
        return f"{self.source} --{self.trigger}--> {self.dest}"


@dataclass(frozen=True, slots=True)
class TransitionRecord:
    """What an observer is told after every successful transition."""

    lifecycle: str
    obj: Any
    trigger: str
    source: str
    dest: str


Observer = Callable[[TransitionRecord], None]


class InvalidTransition(Exception):
    """A trigger fired in a state that has no edge for it; nothing changed."""

    def __init__(self, lifecycle: str, trigger: str, state: str, allowed: Sequence[str]) -> None:
        self.lifecycle = lifecycle
        self.trigger = trigger
        self.state = state
        self.allowed = tuple(allowed)
        options = ", ".join(self.allowed) or "none"
        super().__init__(
            f"{lifecycle}: trigger '{trigger}' is not allowed in state '{state}' "
            f"(allowed there: {options})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.lifecycle, self.trigger, self.state, self.allowed))


class UnknownTrigger(InvalidTransition):
    """A trigger name the lifecycle does not declare at all."""


class _Event(Event):
    """An event of a lifecycle's machine: an edge that is not declared raises
    :class:`InvalidTransition` (not ``transitions.MachineError``), even for a caller that
    fires through ``Lifecycle.machine`` directly, and leaves the object as it was."""

    def _is_valid_source(self, state: Any) -> bool:
        if state.name not in self.transitions:
            lc: Lifecycle = self.machine.lifecycle
            raise InvalidTransition(lc.name, self.name, state.name, lc.allowed(state.name))
        return True


class _Machine(Machine):
    """The ``transitions`` machine of one lifecycle, knowing which lifecycle it is."""

    event_cls = _Event

    def __init__(self, lifecycle: Lifecycle, **kwargs: Any) -> None:
        self.lifecycle = lifecycle
        super().__init__(**kwargs)

    def put(self, model: Any, value: Any) -> None:
        """``Machine.set_state(state, model)`` for one object, given ``state.value``: what
        ``Lifecycle.fire`` calls (once per ask and per allocation), without set_state's
        normalising of its arguments."""
        setattr(model, self.model_attribute, value)


_global_observers: list[Observer] = []


def add_observer(observer: Observer) -> Callable[[], None]:
    """Observe every transition of every lifecycle in this process.

    Returns a function that removes the observer again. Scheduler instances
    also offer a per-instance hook; this global one is for tools (tracing,
    the lifecycle-legality checker) that want to see everything.
    """
    _global_observers.append(observer)

    def remove() -> None:
        if observer in _global_observers:
            _global_observers.remove(observer)

    return remove


class Lifecycle:
    """A declared lifecycle compiled into one shared ``transitions.Machine``."""

    __slots__ = (
        "_by_source",
        "_events",
        "_table",
        "_targets",
        "description",
        "initial",
        "machine",
        "name",
        "state_sets",
        "state_specs",
        "states",
        "transitions",
        "triggers",
    )

    def __init__(
        self,
        name: str,
        description: str,
        initial: str,
        states: Sequence[StateSpec],
        transitions: Sequence[TransitionSpec],
        state_sets: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.initial = initial
        self.state_specs: dict[str, StateSpec] = {s.name: s for s in states}
        self.states: list[str] = [s.name for s in states]
        self.transitions: list[TransitionSpec] = list(transitions)
        self.state_sets: dict[str, frozenset[str]] = {
            key: frozenset(members) for key, members in (state_sets or {}).items()
        }
        self._validate()
        self.triggers: list[str] = list(dict.fromkeys(t.trigger for t in self.transitions))
        self._table: dict[tuple[str, str], str] = {
            (t.source, t.trigger): t.dest for t in self.transitions
        }
        self._by_source: dict[str, list[str]] = {s: [] for s in self.states}
        for t in self.transitions:
            self._by_source[t.source].append(t.trigger)
        self.machine = _Machine(
            self,
            model=None,
            states=self.states,
            transitions=[
                {"trigger": t.trigger, "source": t.source, "dest": t.dest}
                for t in self.transitions
            ],
            initial=initial,
            auto_transitions=False,
            ignore_invalid_triggers=False,
            send_event=False,
        )
        self._events = {trigger: self.machine.events[trigger] for trigger in self.triggers}
        self._targets = {name: self.machine.get_state(name).value for name in self.states}

    def _validate(self) -> None:
        if len(self.state_specs) != len(self.states):
            raise ValueError(f"{self.name}: duplicate state names")
        if self.initial not in self.state_specs:
            raise ValueError(f"{self.name}: initial state {self.initial!r} is not declared")
        seen: set[tuple[str, str]] = set()
        for t in self.transitions:
            for end in (t.source, t.dest):
                if end not in self.state_specs:
                    raise ValueError(f"{self.name}: {t.trigger} uses undeclared state {end!r}")
            if (t.source, t.trigger) in seen:
                raise ValueError(f"{self.name}: {t.trigger} from {t.source} declared twice")
            if self.state_specs[t.source].final:
                raise ValueError(f"{self.name}: final state {t.source} has an exit")
            seen.add((t.source, t.trigger))
        for key, members in self.state_sets.items():
            unknown = sorted(members - set(self.state_specs))
            if unknown:
                raise ValueError(f"{self.name}: state set {key} names undeclared {unknown}")

    def can(self, state: str, trigger: str) -> bool:
        """Whether ``trigger`` is allowed in ``state``."""
        return (state, trigger) in self._table

    def dest(self, state: str, trigger: str) -> str | None:
        """Where ``trigger`` leads from ``state``, or None when it is not allowed."""
        return self._table.get((state, trigger))

    def allowed(self, state: str) -> list[str]:
        """The triggers allowed in ``state``, in declaration order."""
        return list(self._by_source.get(state, ()))

    def is_declared(self, source: str, trigger: str, dest: str) -> bool:
        """Whether the edge ``source --trigger--> dest`` is part of the declaration."""
        return self._table.get((source, trigger)) == dest

    def fire(self, obj: Stateful, trigger: str, observer: Observer | None = None) -> str:
        """Move ``obj`` along ``trigger``: the one way the core changes a state.

        Raises :class:`InvalidTransition` (leaving ``obj`` untouched) when the
        trigger is not allowed in the object's current state. On success the
        per-call ``observer`` and then every global observer are told, and the
        new state is returned.

        The edge is looked up in the table compiled from the declaration and the
        shared machine sets the state (what ``Machine.set_state`` does). Going through
        ``Event.trigger`` instead would do the same thing, since no lifecycle
        declares conditions or callbacks, at ten times the cost: it was a fifth
        of the scheduling cycle (``docs/performance.md``). ``tests/test_statemachines.py``
        fires every declared and undeclared pair both ways and compares.
        """
        source = obj.state
        dest = self._table.get((source, trigger))
        if dest is None:
            if trigger not in self._events:
                raise UnknownTrigger(self.name, trigger, source, self.allowed(source))
            raise InvalidTransition(self.name, trigger, source, self.allowed(source))
        self.machine.put(obj, self._targets[dest])
        if observer is not None or _global_observers:
            record = TransitionRecord(self.name, obj, trigger, source, dest)
            if observer is not None:
                observer(record)
            for hook in tuple(_global_observers):
                hook(record)
        return dest

    def reachable(self) -> list[str]:
        """States reachable from the initial state (declaration order)."""
        seen = {self.initial}
        frontier = [self.initial]
        while frontier:
            state = frontier.pop()
            for trigger in self._by_source[state]:
                nxt = self._table[(state, trigger)]
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return [s for s in self.states if s in seen]

    def __repr__(self) -> str:
        return f"Lifecycle({self.name!r}, states={self.states!r})"


def edges(*specs: tuple[str, Iterable[str], str, str]) -> list[TransitionSpec]:
    """Expand ``(trigger, sources, dest, doc)`` rows into one spec per source."""
    return [
        TransitionSpec(trigger, source, dest, doc)
        for trigger, sources, dest, doc in specs
        for source in sources
    ]


def dormant(reason: str, *specs: TransitionSpec) -> list[TransitionSpec]:
    """The same edges, marked as never fired by the core (yet), with the reason."""
    return [TransitionSpec(t.trigger, t.source, t.dest, t.doc, reason) for t in specs]
