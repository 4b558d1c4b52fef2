"""Breadth-first search over every state of a scope, with every rule checked in each.

The search starts from the RM's registration and takes every enabled action
of the scope's alphabet in every state, level by level. A state is known by
its fingerprint (``fingerprint.py``); only the first path to it is kept (as
a parent pointer and an action index), so the first violation found is one
with a shortest path, and its counterexample is that path replayed. A new
state is stored as a snapshot (the pickled world) for the next level; with
``liveness`` its quiescent closure is judged too.

With ``workers`` > 1 each level's frontier is cut into chunks that forked
processes expand, while this process keeps the visited set and takes the
children in frontier order, so the states found and the verdict are the same
as with one worker.
"""

from __future__ import annotations

import copyreg
import gc
import io
import multiprocessing
import pickle
import time
from collections import Counter
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from invariants.actions import predicate_for
from invariants.actions.draw import CLOCK_START
from invariants.explore import closure
from invariants.explore.fingerprint import fingerprint
from invariants.explore.scope import RESERVATION_DELAY, Action, Scope
from invariants.modelshim.world import World
from invariants.properties.catalog import Violation
from invariants.readings import model, view
from scheduler.trace import Step


@dataclass(frozen=True)
class Options:
    """What to explore and how."""

    scope: Scope
    depth: int
    seconds: float | None = None
    workers: int = 1
    symmetry: bool = True
    liveness: bool = True


@dataclass
class Child:
    """One action taken from one state, as a worker reports it."""

    action: int
    fp: int
    snapshot: bytes | None
    """None when the child was already known (or is on the last level)."""
    violations: list[Violation]
    verdict: tuple[str, ...] = ()
    """Liveness properties its quiescent closure broke."""
    known: bool = False
    scheduled: int | None = None
    """Its ``schedule`` child's fingerprint, when its closure began with that very step."""


Parent = tuple[int, bytes, int | None]
"""A frontier entry: fingerprint, snapshot, and the ``schedule`` child's fingerprint if known."""


@dataclass
class Found:
    """A violation and the shortest path of actions to it."""

    violations: list[Violation]
    path: list[int]
    liveness: bool
    """A rule broke in the quiescent closure of the path's last state."""
    verdict: tuple[str, ...] = ()
    """The rules that closure broke (liveness properties, or safety rules on the way)."""


@dataclass
class Stats:
    """TLC-style figures of one search."""

    generated: int = 0
    distinct: int = 1
    depth: int = 0
    levels: list[int] = field(default_factory=lambda: [1])
    generated_by: Counter[str] = field(default_factory=Counter)
    distinct_by: Counter[str] = field(default_factory=Counter)
    closures: int = 0
    elapsed: float = 0.0

    @property
    def rate(self) -> float:
        return self.distinct / self.elapsed if self.elapsed else 0.0

    def collision_odds(self) -> tuple[float, float]:
        """Chance that two distinct states shared a 64-bit fingerprint: TLC's optimistic
        estimate (distinct x (generated - distinct) / 2^64) and the birthday bound."""
        n, g = self.distinct, self.generated + 1
        return n * max(0, g - n) / 2.0 ** 64, n * n / 2.0 ** 65


@dataclass
class Result:
    """How a search ended."""

    stats: Stats
    exhausted: bool
    found: Found | None
    reason: str
    """Why it stopped: exhausted, depth bound, time budget, or a violation."""


# ---------------------------------------------------------------- snapshots


def _configuration(config: model.ConfigModel) -> tuple[Any, tuple[str]]:
    """A configuration model as its text: :func:`model.read_registered` gives it back.

    The model shim's configuration is always ``read_registered(text)``, whose
    reading is cached and never changed (every world registered with one text
    already shares one object), so a thawed world gets that object again
    instead of a copy of its queues, limits and templates.
    """
    return model.read_registered, (config.text,)


_DISPATCH = {**copyreg.dispatch_table, model.ConfigModel: _configuration}


def freeze(world: World) -> bytes:
    """The world as bytes, without its tape (the path is kept as parent pointers).

    Also without what only the last step left for :meth:`World.check` (the
    messages it observed, the reservations and application states before it):
    the search checks a state before freezing it, and :meth:`World.run` resets
    them before the next step reads them, so a thawed world never reads them.

    The lifecycle recorder's paths are written after the world, and only
    those of objects the world reached without them (pickle's memo says
    which): an object only the recorder still holds (an allocation released,
    the partition an RM restart replaced) can never move again, since moves
    come from the core, which no longer holds it, and ``lifecycle.legal``
    reads the paths of the core's live objects only. A third of a snapshot's
    objects were such entries after a restart. An object the core lists
    (``view.stateful_objects``) is reached for certain; the memo is asked only
    when some entry's object is not listed.
    """
    recorder = world.recorder
    tape, observed = world.steps, world.shim.observed
    before, states, backoffs = world._reserved_before, world._states_before, \
        world._backoff_before
    paths = recorder.take_paths()
    world.steps, world.shim.observed = [], []
    world._reserved_before, world._states_before, world._backoff_before = {}, {}, {}
    try:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.dispatch_table = _DISPATCH
        pickler.dump(world)
        live = {id(obj) for _, obj, _ in view.stateful_objects(world.api)}
        kept = list(paths.values())
        if any(id(entry[0]) not in live for entry in kept):
            # Something left the core since the thaw: ask the memo (a copy costs as much
            # as a third of the dump, so only then).
            reached = pickler.memo.copy()
            kept = [entry for entry in kept if id(entry[0]) in reached]
        pickler.dump(kept)
        return out.getvalue()
    finally:
        world.steps, world.shim.observed = tape, observed
        world._reserved_before, world._states_before = before, states
        world._backoff_before = backoffs
        recorder.put_paths(paths)


def thaw(snapshot: bytes) -> World:
    """The world :func:`freeze` wrote, with the recorder's paths keyed by the new objects."""
    unpickler = pickle.Unpickler(io.BytesIO(snapshot))
    world: World = unpickler.load()
    world.recorder.put_paths({id(entry[0]): entry for entry in unpickler.load()})
    return world


def root(scope: Scope) -> tuple[World, list[Violation]]:
    """The registered world every search starts from."""
    world = World(CLOCK_START, predicate_for(None, scope.refused),
                  scheduler_options={"reservation_delay": RESERVATION_DELAY})
    return world, world.run(scope.registration())


def take(world: World, action: Action, invariants: bool = True) -> tuple[list[Violation], bool]:
    """Run one action's steps; stop at the first step that breaks a rule.

    Returns the violations and whether the last step was a ``schedule()``.
    With ``invariants=False`` only the model shim's protocol rules run (the
    caller checks the registered invariants once it knows the state is new).
    """
    last = ""
    for step in action.steps(world):
        last = step.call
        problems = world.run(step, invariants)
        if problems:
            return problems, last == "schedule"
    return [], last == "schedule"


# ---------------------------------------------------------------- expansion

_SHARED: dict[str, object] = {}
"""What forked workers inherit: the options, the visited set as of the level's start, and
the level's chunks."""


def _expand(index: int) -> list[tuple[int, list[Child]]]:
    """The children of the level's chunk ``index``. A task is only its index: a chunk of
    snapshots sent through the pool's pipe could fill it, and a pool ended early (a
    violation found) would then wait for ever on the thread that feeds the pipe."""
    chunks = _SHARED["chunks"]
    assert isinstance(chunks, list)
    parents, last = chunks[index]
    opts = _SHARED["opts"]
    visited = _SHARED["visited"]
    memo = _SHARED.setdefault("memo", {})
    assert isinstance(opts, Options) and isinstance(visited, dict) and isinstance(memo, dict)
    return expand(parents, opts, visited, memo, last)


def expand(parents: Sequence[Parent], opts: Options, visited: Container[int],
           memo: dict[int, tuple[str, ...]], last: bool) -> list[tuple[int, list[Child]]]:
    """Every child of every parent, in order; new children with their snapshot and verdicts."""
    alphabet = opts.scope.alphabet()
    classes = node_classes(opts.scope)

    def fp_of(w: World) -> int:
        return fingerprint(w, opts.symmetry, classes)

    out: list[tuple[int, list[Child]]] = []
    seen: set[int] = set()
    for parent_fp, snapshot, scheduled in parents:
        with _collected_after():
            out.append((parent_fp, _children(snapshot, scheduled, opts, alphabet, visited,
                                             seen, memo, fp_of, last)))
    return out


@contextmanager
def _collected_after() -> Iterator[None]:
    """Pause the cyclic collector while one parent is expanded, then collect the young.

    Each child is a fresh world of a few hundred objects; left on, the collector
    ran every few hundred allocations and scanned them while still alive (half
    of a snapshot's thaw and freeze was the collector, measured). The worlds
    dropped here hold reference cycles, so they are collected once, at the end.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
        gc.collect(1)


def _children(snapshot: bytes, hint: int | None, opts: Options, alphabet: Sequence[Action],
              visited: Container[int], seen: set[int], memo: dict[int, tuple[str, ...]],
              fp_of: Callable[[World], int], last: bool) -> list[Child]:
    """Every enabled action taken from one parent's snapshot.

    ``hint`` is the parent's ``schedule`` child as its closure found it: when
    that child is known already, the search records it without taking the
    action again (a thaw, a cycle and a fingerprint saved; the same child).
    """
    first = thaw(snapshot)
    enabled = [i for i, a in enumerate(alphabet) if a.enabled(first)]
    base: World | None = first
    children: list[Child] = []
    for index in enabled:
        if hint is not None and alphabet[index].kind == "schedule" \
                and (hint in visited or hint in seen):
            children.append(Child(index, hint, None, [], known=True))
            continue
        world = base if base is not None else thaw(snapshot)
        base = None
        violations, scheduled = take(world, alphabet[index], invariants=False)
        fp = fp_of(world)
        known = fp in visited or fp in seen
        violations += world.check(after_schedule=scheduled, transitions_only=known)
        if known or violations:
            children.append(Child(index, fp, None, violations, known=known))
            continue
        seen.add(fp)
        frozen = None if last else freeze(world)
        verdict: tuple[str, ...] = ()
        ahead: int | None = None
        if opts.liveness:
            end, verdict = closure.run(world, fp_of, memo, start=fp, hint=not last)
            ahead = end.scheduled
        children.append(Child(index, fp, frozen, [], verdict, scheduled=ahead))
    return children


def node_classes(scope: Scope) -> dict[str, str]:
    """Nodes of one size are interchangeable, unless an ask names one (a required-node ask
    tells that node from the others: it is a class of its own)."""
    named = {k.required_node for a in scope.apps for k in a.asks}
    return {node_id: node_id if node_id in named else f"node{memory}"
            for node_id, memory in scope.nodes}


# ---------------------------------------------------------------- the search


Progress = Callable[[Stats, int, bool], None]
"""Told the figures so far, the frontier's size, and whether a level just ended."""


class Store:
    """The visited states with their parent pointers, and how a level is expanded: here,
    in this process (and forked workers). A campaign keeps them on a cluster instead
    (``invariants/campaign/frontier.py``)."""

    def __init__(self, root_fp: int) -> None:
        self.pointers: dict[int, tuple[int, int]] = {root_fp: (-1, -1)}

    def has(self, fp: int, known: bool) -> bool:
        """Visited already (``known``: the expanding worker found it so)."""
        return known or fp in self.pointers

    def add(self, fp: int, parent: int, action: int) -> None:
        self.pointers[fp] = (parent, action)

    def path(self, fp: int) -> list[int]:
        return _path(self.pointers, fp)

    def level_done(self) -> None:
        """Every state of the level just expanded is added."""

    def expand(self, frontier: list[Parent], opts: Options, memo: dict[int, tuple[str, ...]],
               last: bool) -> Iterator[tuple[int, list[Child]]]:
        return _level(frontier, opts, self.pointers, memo, last)


def search(opts: Options, progress: Progress | None = None,
           store: Callable[[int], Store] = Store) -> Result:
    """Explore ``opts.scope`` breadth-first to ``opts.depth`` (or the time budget)."""
    started = time.monotonic()
    stats = Stats()
    labels = [a.label for a in opts.scope.alphabet()]
    classes = node_classes(opts.scope)
    world, problems = root(opts.scope)
    root_fp = fingerprint(world, opts.symmetry, classes)
    visited = store(root_fp)
    memo: dict[int, tuple[str, ...]] = {}
    if problems:
        return Result(stats, False, Found(problems, [], False), "a violation")
    if opts.liveness:
        _, verdict = closure.run(thaw(freeze(world)), lambda w: fingerprint(
            w, opts.symmetry, classes), memo)
        if verdict:
            return Result(stats, False, Found([], [], True, verdict), "a violation")
    frontier: list[Parent] = [(root_fp, freeze(world), None)]
    reason = "depth bound"
    for depth in range(1, opts.depth + 1):
        following: list[Parent] = []
        level = 0
        for parent_fp, children in visited.expand(frontier, opts, memo, depth == opts.depth):
            if progress is not None:
                stats.elapsed = time.monotonic() - started
                progress(stats, len(frontier), False)
            for child in children:
                stats.generated += 1
                stats.generated_by[labels[child.action]] += 1
                if child.violations and not child.verdict:
                    stats.elapsed = time.monotonic() - started
                    stats.depth = depth
                    path = [*visited.path(parent_fp), child.action]
                    return Result(stats, False, Found(child.violations, path, False),
                                  "a violation")
                if visited.has(child.fp, child.known):
                    continue
                visited.add(child.fp, parent_fp, child.action)
                stats.distinct += 1
                stats.distinct_by[labels[child.action]] += 1
                level += 1
                if child.verdict:
                    stats.levels.append(level)
                    stats.depth = depth
                    stats.elapsed = time.monotonic() - started
                    return Result(stats, False, Found([], visited.path(child.fp), True,
                                                      child.verdict), "a violation")
                if child.snapshot is not None:
                    following.append((child.fp, child.snapshot, child.scheduled))
        visited.level_done()
        stats.levels.append(level)
        stats.depth = depth
        stats.elapsed = time.monotonic() - started
        if progress is not None:
            progress(stats, len(following), True)
        frontier = following
        if level == 0:
            reason = "exhausted"
            break
        if opts.seconds is not None and time.monotonic() - started > opts.seconds:
            reason = "time budget"
            break
    stats.elapsed = time.monotonic() - started
    return Result(stats, reason == "exhausted", None, reason)


def _level(frontier: list[Parent], opts: Options, visited: dict[int, tuple[int, int]],
           memo: dict[int, tuple[str, ...]], last: bool) -> Iterator[tuple[int, list[Child]]]:
    """Expand one level's frontier, in frontier order (in worker processes when asked)."""
    if opts.workers <= 1 or len(frontier) < 2 * opts.workers:
        for i in range(0, len(frontier), 16):
            yield from expand(frontier[i:i + 16], opts, visited, memo, last)
        return
    size = max(1, min(64, len(frontier) // (opts.workers * 4)))
    chunks = [(frontier[i:i + size], last) for i in range(0, len(frontier), size)]
    _SHARED.update(opts=opts, visited=visited, memo=memo, chunks=chunks)
    ctx = multiprocessing.get_context("fork")
    try:
        with ctx.Pool(opts.workers) as pool:
            for part in pool.imap(_expand, range(len(chunks))):
                yield from part
    finally:
        del _SHARED["chunks"]  # the level's snapshots go with its frontier


def _path(visited: dict[int, tuple[int, int]], fp: int) -> list[int]:
    path: list[int] = []
    while True:
        parent, action = visited[fp]
        if parent == -1:
            return list(reversed(path))
        path.append(action)
        fp = parent


# ---------------------------------------------------------------- counterexamples


def replay_path(scope: Scope, path: Sequence[int], liveness: bool,
                symmetry: bool = True) -> tuple[list[Step], list[Violation]]:
    """The SI steps of a path of actions from the root (and its closure, for liveness)."""
    alphabet = scope.alphabet()
    world, problems = root(scope)
    if problems:
        return world.steps, problems
    for index in path:
        problems, _ = take(world, alphabet[index])
        if problems:
            return world.steps, problems
    if liveness:
        classes = node_classes(scope)
        end, _ = closure.run(world, lambda w: fingerprint(w, symmetry, classes))
        return world.steps, end.violations
    return world.steps, []
