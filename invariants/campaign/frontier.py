"""``explore --ray``: the breadth-first search with its visited set sharded over Ray actors.

As in TLC's distributed mode, the fingerprints are kept by fingerprint servers: shard
``fp % N`` holds fingerprint ``fp`` and its parent pointer (the path back to the root
is asked of the shards, one pointer at a time). Each level's frontier is cut into
chunks that the cluster's CPUs expand (``search.expand``, as forked workers do
locally): a worker asks the shards whether a child was known when the level began,
and this process takes the children in frontier order, keeping only the level's new
states until the level ends, when they go to their shards. So the distinct states,
the levels, the depth and the verdict are those of ``explore --workers N``, and the
first violation has a shortest path.

The shards live on this process's node: a node lost with a shard would lose states,
and this node's loss ends the campaign anyway. A chunk lost with its worker or node is
redone (``dispatch.py``) and taken once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from invariants.campaign.dispatch import CampaignError, Dispatcher
from invariants.campaign.ray_cluster import connected
from invariants.explore.search import (
    Child,
    Options,
    Parent,
    Progress,
    Result,
    Store,
    expand,
    search,
)

CHUNK = 16
"""Frontier states per unit (a few seconds of expansion at most)."""


class Shard:
    """One fingerprint server: its fingerprints and their parent pointers."""

    def __init__(self) -> None:
        self.pointers: dict[int, tuple[int, int]] = {}
        self.levels: list[list[int]] = []

    def add(self, entries: list[tuple[int, int, int]]) -> None:
        """One level's new states of this shard (an empty list for a level without any)."""
        for fp, parent, action in entries:
            self.pointers[fp] = (parent, action)
        self.levels.append([fp for fp, _, _ in entries])

    def since(self, level: int) -> list[int]:
        """The fingerprints added from level ``level`` on (a worker's copy catching up)."""
        return [fp for added in self.levels[level:] for fp in added]

    def parent(self, fp: int) -> tuple[int, int]:
        return self.pointers[fp]

    def size(self) -> tuple[int, int]:
        """Fingerprints held and the bytes they take (the dict, its keys and pointers)."""
        held = sys.getsizeof(self.pointers)
        for fp, pointer in self.pointers.items():
            held += sys.getsizeof(fp) + sys.getsizeof(pointer)
        return len(self.pointers), held


@dataclass
class _Copy:
    """A worker's copy of the fingerprints as of a level's start (not their pointers).

    Asking a shard about each child cost a round trip per generated state (most of them
    known already): the explorer ran at 41% of ``--workers 2``. The copy catches up once
    per level with only the new fingerprints, from every shard."""

    run: str = ""
    levels: int = 0
    fps: set[int] = field(default_factory=set)


_COPY = _Copy()
_MEMO: dict[int, tuple[str, ...]] = {}
"""The closures' memo of each worker process, kept across its chunks (as a forked worker's)."""


def expand_chunk(opts: Options, parents: list[Parent], last: bool, shards: list[Any],
                 run: str, levels: int, mutant: str | None) -> list[tuple[int, list[Child]]]:
    """One chunk of a level's frontier, expanded on a worker (on the broken core ``mutant``
    when given); the visited set is the one of the ``levels`` levels done in ``run``."""
    import contextlib

    import ray

    from invariants.random_search.quiet import configuration_warnings_quiet

    global _COPY
    if _COPY.run != run:
        _COPY = _Copy(run)
        _MEMO.clear()
    if _COPY.levels < levels:
        for added in ray.get([shard.since.remote(_COPY.levels) for shard in shards]):
            _COPY.fps.update(added)
        _COPY.levels = levels
    with contextlib.ExitStack() as stack:
        stack.enter_context(configuration_warnings_quiet())
        if mutant is not None:
            from invariants.selftest.mutants import applied, by_name

            stack.enter_context(applied(by_name(mutant)))
        return expand(parents, opts, _COPY.fps, _MEMO, last)


@dataclass
class ShardedStore(Store):
    """:class:`Store` on the cluster: the shards, and this level's new states here."""

    ray: Any
    shards: list[Any]
    task: Any
    run: str
    """Tells a worker's copy of one run from another's."""
    mutant: str | None = None
    lost: list[str] = field(default_factory=list)
    level: dict[int, tuple[int, int]] = field(default_factory=dict)
    levels: int = 0
    """Levels whose states the shards hold (the root's counts as one)."""

    def start(self, root_fp: int) -> ShardedStore:
        self.level = {root_fp: (-1, -1)}
        self.level_done()
        return self

    def _shard(self, fp: int) -> Any:
        return self.shards[fp % len(self.shards)]

    def has(self, fp: int, known: bool) -> bool:
        return known or fp in self.level

    def add(self, fp: int, parent: int, action: int) -> None:
        self.level[fp] = (parent, action)

    def path(self, fp: int) -> list[int]:
        path: list[int] = []
        while True:
            parent, action = self.level.get(fp) or self.ray.get(self._shard(fp).parent.remote(fp))
            if parent == -1:
                return list(reversed(path))
            path.append(action)
            fp = parent

    def level_done(self) -> None:
        parts: list[list[tuple[int, int, int]]] = [[] for _ in self.shards]
        for fp, (parent, action) in self.level.items():
            parts[fp % len(self.shards)].append((fp, parent, action))
        self.ray.get([shard.add.remote(part) for shard, part in zip(self.shards, parts,
                                                                  strict=True)])
        self.level = {}
        self.levels += 1

    def expand(self, frontier: list[Parent], opts: Options, memo: dict[int, tuple[str, ...]],
               last: bool) -> Iterator[tuple[int, list[Child]]]:
        chunks = [frontier[i:i + CHUNK] for i in range(0, len(frontier), CHUNK)]
        done: dict[int, list[tuple[int, list[Child]]]] = {}
        dispatcher: Dispatcher[int] = Dispatcher(
            self.ray, lambda i: self.task.remote(opts, chunks[i], last, self.shards, self.run,
                                                 self.levels, self.mutant),
            describe=lambda i: f"chunk {i} ({len(chunks[i])} states)")
        dispatcher.run(iter(range(len(chunks))), done.__setitem__)
        self.lost += dispatcher.lost_lines()
        for i in range(len(chunks)):
            yield from done.pop(i)

    def sizes(self) -> list[tuple[int, int]]:
        return list(self.ray.get([shard.size.remote() for shard in self.shards]))


@dataclass
class Explored:
    """A search's result, and the cluster's figures."""

    result: Result
    shards: list[tuple[int, int]]
    lost: list[str]


def explore(address: str, opts: Options, progress: Progress | None = None,
            shards: int = 4, mutant: str | None = None) -> Explored:
    """``opts`` explored on the cluster at ``address`` with ``shards`` fingerprint servers.

    With ``mutant`` the workers expand on that broken core (the caller runs this process's
    part, the root and the counterexample, on it too)."""
    with connected(address) as ray:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                              soft=False)
        server = ray.remote(num_cpus=0, max_restarts=0)(Shard)
        task = ray.remote(max_retries=0, num_cpus=1)(expand_chunk)
        store = ShardedStore(ray, [server.options(scheduling_strategy=here).remote()
                                   for _ in range(shards)], task,
                             f"{ray.get_runtime_context().get_job_id()}/{opts.scope.name}",
                             mutant)
        try:
            result = search(opts, progress, lambda root_fp: store.start(root_fp))
        except ray.exceptions.RayActorError as exc:
            raise CampaignError(f"a fingerprint shard was lost: {exc}") from None
        return Explored(result, store.sizes(), store.lost)
