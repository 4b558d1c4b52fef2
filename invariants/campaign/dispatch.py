"""Work units on a cluster: at most one in flight per CPU, a lost one redone, each merged once.

A unit is lost when the process or the node running it dies (Ray's own
retries are off, so the campaign sees every loss and can say so). It goes
back to the queue and is redone on whichever node has a CPU free; its
result is merged under its key, so a unit is counted once however many times
it ran. An error raised by the unit's own code is not a loss: it ends the
campaign, as it would end a local run.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from invariants.campaign.ray_cluster import ClusterError, alive

MAX_ATTEMPTS = 4
"""Runs of one unit before the campaign gives up on it (the cluster is losing every node)."""

WAIT = 0.5
"""Seconds between progress reports while units run."""


class CampaignError(ClusterError):
    """The campaign can not go on (a unit lost on every attempt, or no CPU left)."""


@dataclass(frozen=True)
class Loss:
    """One run of one unit that did not come back."""

    unit: str
    attempt: int
    why: str


U = TypeVar("U", bound=Hashable)


@dataclass
class Dispatcher(Generic[U]):
    """Hands units to ``submit`` (which starts one on the cluster and returns its ref)."""

    ray: Any
    submit: Callable[[U], Any]
    describe: Callable[[U], str] = str
    losses: list[Loss] = field(default_factory=list)
    redone: int = 0
    nodes: int = 0
    cpus: int = 0
    wanted: Callable[[U], bool] | None = None
    """Set once the campaign has its answer: the units still worth running (the others
    in flight are cancelled, no new one starts)."""
    _last_poll: float = 0.0
    _exhausted: bool = False

    def run(self, units: Iterator[U], merge: Callable[[U, Any], None],
            tick: Callable[[], None] | None = None,
            until: Callable[[], bool] | None = None) -> None:
        """Run ``units`` until they or ``until`` (no new unit after it says so) end.

        ``merge`` gets each unit's result once. Ctrl-C cancels every unit in flight on
        every node before it propagates.
        """
        queue: deque[tuple[U, int]] = deque()
        flight: dict[Any, tuple[U, int]] = {}
        merged: set[U] = set()
        source: Iterator[U] | None = units
        self.poll(force=True)
        try:
            while True:
                self._fill(queue, flight, merged, source, until)
                if source is not None and self._exhausted:
                    source = None
                if not flight:
                    if queue and self.cpus == 0:
                        raise CampaignError("no CPU left on the cluster for "
                                            f"{len(queue)} unit(s)")
                    if not queue:
                        return
                    self.poll(force=True)
                    time.sleep(WAIT)
                    continue
                ready, _ = self.ray.wait(list(flight), num_returns=1, timeout=WAIT)
                for ref in ready:
                    unit, attempt = flight.pop(ref)
                    self._settle(ref, unit, attempt, queue, merged, merge)
                self._drop_unwanted(flight)
                self.poll()
                if tick is not None:
                    tick()
        except BaseException:
            for ref in flight:
                self.ray.cancel(ref, force=True)
            raise

    def _fill(self, queue: deque[tuple[U, int]], flight: dict[Any, tuple[U, int]],
              merged: set[U], source: Iterator[U] | None,
              until: Callable[[], bool] | None) -> None:
        """Start units until every CPU has one: the lost ones first, then new ones."""
        while len(flight) < max(1, self.cpus):
            if queue:
                unit, attempt = queue.popleft()
                if unit in merged or (self.wanted is not None and not self.wanted(unit)):
                    continue
            elif source is None or self._exhausted or self.wanted is not None \
                    or (until is not None and until()):
                return
            else:
                nxt = next(source, None)
                if nxt is None:
                    self._exhausted = True
                    return
                unit, attempt = nxt, 1
            flight[self.submit(unit)] = (unit, attempt)

    def _settle(self, ref: Any, unit: U, attempt: int, queue: deque[tuple[U, int]],
                merged: set[U], merge: Callable[[U, Any], None]) -> None:
        exceptions = self.ray.exceptions
        try:
            result = self.ray.get(ref)
        except exceptions.RayTaskError:
            raise
        except exceptions.TaskCancelledError:
            return
        except exceptions.RayError as exc:
            why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]}"
            self.losses.append(Loss(self.describe(unit), attempt, why))
            if attempt >= MAX_ATTEMPTS:
                raise CampaignError(f"{self.describe(unit)} lost {attempt} times; last: "
                                    f"{why}") from None
            self.redone += 1
            queue.append((unit, attempt + 1))
            return
        if unit in merged:
            return
        merged.add(unit)
        merge(unit, result)

    def _drop_unwanted(self, flight: dict[Any, tuple[U, int]]) -> None:
        if self.wanted is None:
            return
        for ref, (unit, _) in list(flight.items()):
            if not self.wanted(unit):
                self.ray.cancel(ref, force=True)
                del flight[ref]

    def poll(self, force: bool = False) -> None:
        """Ask the cluster who is alive (at most once a second)."""
        now = time.monotonic()
        if force or now - self._last_poll >= 1.0:
            self._last_poll = now
            self.nodes, self.cpus = alive(self.ray)

    def lost_lines(self) -> list[str]:
        """What the campaign lost and redid, one line each (none when nothing was lost)."""
        return [f"lost {loss.unit} (run {loss.attempt}: {loss.why}); redone"
                for loss in self.losses]
