"""Shrinking a failing run to the auditor's counterexample: as few, as small SI calls as can be.

A candidate is a list of steps replayed on a fresh world (uuids of the original
run translated by symbolic name, so dropping an unrelated step does not
orphan a later confirmation); it is kept only when it breaks the same named
rule. Delta debugging removes steps, then the parts of a step (one ask of
several, one node), then numbers shrink (repeats, memory, clock jumps) and
adjacent clock moves merge, in a short run every two steps are tried together,
a registration may take a later reload's configuration, and adjacent node or
application requests merge into one call, until nothing more goes or the
deadline passes.
The result is 1-minimal when the deadline allows: removing any single step
makes the violation disappear.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from invariants.actions.draw import CLOCK_START
from invariants.explore.closure import settle
from invariants.modelshim import bridge
from invariants.modelshim.world import World
from invariants.properties import liveness
from invariants.random_search.runner import Failure, scheduler_options
from scheduler import si
from scheduler.trace import Step


@dataclass
class Shrunk:
    """The smallest failing steps found, the violation they give, and what it cost."""

    steps: list[Step]
    invariant: str
    candidates: int
    seconds: float
    minimal: bool


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.runs = 0

    def over(self) -> bool:
        return time.monotonic() >= self.deadline


def fails(failure: Failure, steps: Sequence[Step], budget: _Budget | None = None) -> bool:
    """Whether these steps, replayed on a fresh core, break the failure's rule again (one
    found at a case's end: once they are over and the core is driven to rest)."""
    if budget is not None:
        budget.runs += 1
    target = failure.violation.invariant
    world = World(CLOCK_START, failure.scenario.predicate(), translate=failure.sym,
                  scheduler_options=scheduler_options(failure.scenario),
                  transport=failure.transport)
    try:
        for step in steps:
            if any(v.invariant == target for v in world.run(step)):
                return True
        if not failure.quiescent:
            return False
        world.untranslated()
        return any(v.invariant == target for v in settle(world, liveness.CASE_ENDS).violations)
    finally:
        world.close()


def shrink(failure: Failure, seconds: float = 30.0) -> Shrunk:
    """Shrink ``failure.steps`` within ``seconds``; always returns a failing list."""
    started = time.monotonic()
    budget = _Budget(seconds)
    steps = list(failure.steps)

    def test(candidate: Sequence[Step]) -> bool:
        return not budget.over() and fails(failure, candidate, budget)

    changed = True
    while changed and not budget.over():
        before = len(steps), _size(steps)
        steps = _drop_applications(steps, test)
        steps = ddmin(steps, test)
        steps = _simplify(steps, test)
        steps = _drop_pairs(steps, test)
        steps = _fold_reloads(steps, test)
        steps = _merge_requests(steps, test)
        changed = (len(steps), _size(steps)) != before
    minimal = not budget.over() and _one_minimal(steps, test)
    return Shrunk(steps, failure.violation.invariant, budget.runs,
                  time.monotonic() - started, minimal)


def ddmin(items: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Zeller's delta debugging over a sequence: drop chunks while the test still fails."""
    n = 2
    while len(items) >= 2:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk:]
            if candidate and test(candidate):
                items = candidate
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(items), n * 2)
    return items


PAIRS_UP_TO = 25
"""Runs this short also try dropping every two steps at once (a quadratic pass)."""


_MERGEABLE = {"update_node": "nodes", "update_application": "new"}


def _merge_requests(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Two adjacent node (or application) requests of one RM about different objects as
    one call: the same messages, one SI call fewer."""
    i = 0
    while i + 1 < len(steps):
        a, b = steps[i], steps[i + 1]
        field_name = _MERGEABLE.get(a.call)
        if field_name and b.call == a.call and a.request.rm_id == b.request.rm_id \
                and type(a.request) is type(b.request) \
                and not (a.call == "update_application" and (a.request.remove
                                                             or b.request.remove)) \
                and not (_ids(getattr(a.request, field_name))
                         & _ids(getattr(b.request, field_name))):
            merged = replace(a, request=a.request.model_copy(update={
                field_name: [*getattr(a.request, field_name), *getattr(b.request, field_name)]}))
            candidate = [*steps[:i], merged, *steps[i + 2:]]
            if test(candidate):
                steps = candidate
                continue
        i += 1
    return steps


def _ids(items: Sequence[Any]) -> set[str]:
    """The nodes or applications a request's items name (one object twice in one
    request is another request, not a merge)."""
    return {getattr(x, "node_id", "") or getattr(x, "application_id", "") for x in items}


def _fold_reloads(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Register with a later reload's configuration and drop the reloads up to it.

    A run that only needs the last of several configurations keeps the reloads
    when each is tried alone (a later one may be invalid without the earlier).
    """
    first = next((i for i, s in enumerate(steps) if s.call == "register_resource_manager"), None)
    if first is None:
        return steps
    reg = steps[first]
    for k in range(len(steps) - 1, first, -1):
        reload = steps[k]
        if reload.call != "update_configuration" or reload.request.rm_id != reg.request.rm_id:
            continue
        registered = replace(reg, request=reg.request.model_copy(
            update={"config": reload.request.config}))
        candidate = [*steps[:first], registered, *(
            s for i, s in enumerate(steps[first + 1:], first + 1)
            if i > k or not (s.call == "update_configuration"
                             and s.request.rm_id == reg.request.rm_id))]
        if test(candidate):
            return candidate
    return steps


def _drop_pairs(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Drop two steps at once where neither goes alone (an ask and the only cycle that
    places it, say): one-at-a-time delta debugging stops at such local minima."""
    if len(steps) > PAIRS_UP_TO:
        return steps
    i = 0
    while i < len(steps):
        for j in range(i + 1, len(steps)):
            candidate = steps[:i] + steps[i + 1:j] + steps[j + 1:]
            if candidate and test(candidate):
                steps = candidate
                break
        else:
            i += 1
    return steps


def _drop_applications(steps: list[Step],
                       test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Remove one application from the whole run at once: every request part naming it.

    Steps about one application are scattered (its submission, asks, the
    clock moves its timers need, confirmations), so removing them one at a
    time leaves each of them still needed; removing them together does not.
    """
    for app_id in _applications(steps):
        candidate = [kept for s in steps if (kept := _without(s, app_id)) is not None]
        if len(candidate) >= len(steps):
            continue
        if test(candidate):
            steps = candidate
        elif len(steps) <= PAIRS_UP_TO:
            steps = _with_one_simpler(candidate, test) or steps
    return steps


def _with_one_simpler(candidate: list[Step],
                      test: Callable[[Sequence[Step]], bool]) -> list[Step] | None:
    """``candidate`` with one step made simpler, if that fails again (None otherwise).

    What another application did may have been needed only to fill a node or
    a queue; without it, a smaller node (or ask, or clock move) can do the same.
    """
    for i, step in enumerate(candidate):
        for smaller in _smaller(step):
            attempt = [*candidate[:i], smaller, *candidate[i + 1:]]
            if test(attempt):
                return attempt
    return None


def _applications(steps: Sequence[Step]) -> list[str]:
    seen: list[str] = []
    for s in steps:
        if s.call == "update_application":
            for add in s.request.new:
                if add.application_id not in seen:
                    seen.append(add.application_id)
    return seen


def _without(step: Step, app_id: str) -> Step | None:
    """``step`` without what it says about ``app_id``; None when nothing else is left."""
    req = step.request
    if bridge.is_today(step):
        return _today_without(step, app_id)
    if step.call == "update_application":
        new = [a for a in req.new if a.application_id != app_id]
        remove = [r for r in req.remove if r.application_id != app_id]
        if not new and not remove and (req.new or req.remove):
            return None
        return replace(step, request=req.model_copy(update={"new": new, "remove": remove}))
    if step.call == "update_allocation":
        asks = [a for a in req.asks if a.application_id != app_id]
        releases = req.releases
        if releases is not None:
            releases = releases.model_copy(update={
                "allocations_to_release": [r for r in releases.allocations_to_release
                                           if r.application_id != app_id],
                "allocation_asks_to_release": [r for r in releases.allocation_asks_to_release
                                               if r.application_id != app_id]})
            if not releases.allocations_to_release and not releases.allocation_asks_to_release:
                releases = None
        if not asks and releases is None and (req.asks or req.releases is not None):
            return None
        return replace(step, request=req.model_copy(update={"asks": asks, "releases": releases}))
    if step.call == "update_node":
        nodes = [n.model_copy(update={"existing_allocations": [
            a for a in n.existing_allocations if a.application_id != app_id]})
            for n in req.nodes]
        return replace(step, request=req.model_copy(update={"nodes": nodes}))
    return step


def _today_without(step: Step, app_id: str) -> Step | None:
    """The same for a step of today's SI: its pods and releases of other applications."""
    req = step.request
    if step.call != "update_allocation":
        return step
    pods = [p for p in req.allocations if p.application_id != app_id]
    releases = req.releases
    if releases is not None:
        releases = releases.model_copy(update={"allocations_to_release": [
            r for r in releases.allocations_to_release if r.application_id != app_id]})
        if not releases.allocations_to_release:
            releases = None
    if not pods and releases is None:
        return None
    return replace(step, request=req.model_copy(update={"allocations": pods,
                                                       "releases": releases}))


def _one_minimal(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> bool:
    return all(not test(steps[:i] + steps[i + 1:]) for i in range(len(steps)))


def _simplify(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    """Smaller parts of steps: fewer items in a request, smaller numbers, merged clock moves."""
    steps = _merge_advances(steps, test)
    i = 0
    while i < len(steps):
        for smaller in _smaller(steps[i]):
            candidate = [*steps[:i], smaller, *steps[i + 1:]]
            if test(candidate):
                steps = candidate
                break
        else:
            i += 1
    return steps


def _merge_advances(steps: list[Step], test: Callable[[Sequence[Step]], bool]) -> list[Step]:
    i = 0
    while i + 1 < len(steps):
        a, b = steps[i], steps[i + 1]
        if a.call == "advance" and b.call == "advance":
            candidate = [*steps[:i], Step.advance(a.seconds + b.seconds), *steps[i + 2:]]
            if test(candidate):
                steps = candidate
                continue
        i += 1
    return steps


def _smaller(step: Step) -> Iterator[Step]:
    """Candidates one notch simpler than ``step``, most drastic first."""
    req = step.request
    if step.call == "advance" and step.seconds > 1:
        yield Step.advance(float(int(step.seconds // 2)))
    elif step.call == "update_allocation" and bridge.is_today(step):
        for i in range(len(req.allocations)) if len(req.allocations) > 1 else ():
            yield replace(step, request=req.model_copy(
                update={"allocations": req.allocations[:i] + req.allocations[i + 1:]}))
    elif step.call == "update_allocation":
        for i in range(len(req.asks)) if len(req.asks) > 1 else ():
            yield replace(step, request=req.model_copy(
                update={"asks": req.asks[:i] + req.asks[i + 1:]}))
        for i, ask in enumerate(req.asks):
            for lighter in _lighter_ask(ask):
                asks = list(req.asks)
                asks[i] = lighter
                yield replace(step, request=req.model_copy(update={"asks": asks}))
    elif step.call == "update_node":
        for i in range(len(req.nodes)) if len(req.nodes) > 1 else ():
            yield replace(step, request=req.model_copy(
                update={"nodes": req.nodes[:i] + req.nodes[i + 1:]}))
        for i, info in enumerate(req.nodes):
            # a smaller node: what other work only filled up may then go
            size = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
            if size.get("memory", 0) > 1:
                nodes = list(req.nodes)
                nodes[i] = info.model_copy(update={"schedulable_resource": si.resource_from_dict(
                    {**size, "memory": size["memory"] // 2})})
                yield replace(step, request=req.model_copy(update={"nodes": nodes}))
    elif step.call == "update_application" and len(req.new) > 1:
        for i in range(len(req.new)):
            yield replace(step, request=req.model_copy(
                update={"new": req.new[:i] + req.new[i + 1:]}))


def _lighter_ask(ask: si.AllocationAsk) -> Iterator[si.AllocationAsk]:
    if ask.max_allocations > 1:
        yield ask.model_copy(update={"max_allocations": 1})
    update: dict[str, Any] = {}
    if ask.priority:
        update["priority"] = 0
    if ask.execution_timeout_milli_seconds:
        update["execution_timeout_milli_seconds"] = 0
    if update:
        yield ask.model_copy(update=update)


def _size(steps: Sequence[Step]) -> int:
    total = 0
    for s in steps:
        req = s.request
        if s.call == "update_allocation" and bridge.is_today(s):
            total += 2 * len(req.allocations)
        elif s.call == "update_allocation":
            total += sum(a.max_allocations for a in req.asks) + len(req.asks)
        elif s.call == "update_node":
            total += len(req.nodes)
        elif s.call == "update_application":
            total += len(req.new)
        elif s.call == "advance":
            total += int(s.seconds > 1)
    return total
