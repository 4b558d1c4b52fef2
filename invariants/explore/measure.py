"""The explorer's design choices, measured: how a state is restored and how it is hashed.

``yunikorn-fsm explore --measure`` samples states of a scope (the frontier of a
shallow search) and times, per state: restoring it from a snapshot (the
pickled world) against replaying its path from registration, and hashing its
canonical form with ``orjson`` + ``xxh3`` against the standard library's
``json`` + ``blake2b``. ``docs/performance.md`` records the figures.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson
import xxhash

from invariants.explore.fingerprint import canonical
from invariants.explore.scope import Scope
from invariants.explore.search import freeze, root, take, thaw


def _paths(scope: Scope, depth: int, limit: int) -> list[list[int]]:
    """Up to ``limit`` distinct action paths of length ``depth``, breadth-first."""
    alphabet = scope.alphabet()
    layer: list[list[int]] = [[]]
    for _ in range(depth):
        following = []
        for path in layer:
            world, _ = root(scope)
            for index in path:
                take(world, alphabet[index])
            following += [[*path, i] for i, a in enumerate(alphabet) if a.enabled(world)]
        layer = following[: limit * 4]
    return layer[:limit]


def _per_call(fn: Callable[[], Any], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - started) / rounds * 1e6


def _replay(scope: Scope, path: list[int]) -> None:
    alphabet = scope.alphabet()
    world, _ = root(scope)
    for index in path:
        take(world, alphabet[index])


def _fast(form: Any) -> int:
    return xxhash.xxh3_64_intdigest(orjson.dumps(
        form, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))


def _standard(form: Any) -> bytes:
    return hashlib.blake2b(json.dumps(form, sort_keys=True).encode(), digest_size=8).digest()


def measure(scope: Scope, depth: int = 6, samples: int = 40) -> list[str]:
    """Lines of figures (microseconds per state, mean over the sampled states)."""
    alphabet = scope.alphabet()
    paths = _paths(scope, depth, samples)
    totals = {"snapshot": 0.0, "replay": 0.0, "build": 0.0, "fast": 0.0, "standard": 0.0}
    sizes = 0
    for path in paths:
        world, _ = root(scope)
        for index in path:
            take(world, alphabet[index])
        blob = freeze(world)
        sizes += len(blob)
        form = canonical(world)
        totals["snapshot"] += _per_call(partial(thaw, blob), 20)
        totals["replay"] += _per_call(partial(_replay, scope, path), 3)
        totals["build"] += _per_call(partial(canonical, world), 20)
        totals["fast"] += _per_call(partial(_fast, form), 200)
        totals["standard"] += _per_call(partial(_standard, form), 200)
    n = max(1, len(paths))
    mean = {k: v / n for k, v in totals.items()}
    return [
        f"scope {scope.name}: {len(paths)} states at depth {depth}, "
        f"snapshots of {sizes // n:,} bytes on average",
        f"restore a state: snapshot (pickle) {mean['snapshot']:8.0f} us   "
        f"replay from registration {mean['replay']:8.0f} us",
        f"canonical form: build {mean['build']:8.0f} us",
        f"hash the form: orjson + xxh3 {mean['fast']:8.1f} us   "
        f"json + blake2b {mean['standard']:8.1f} us",
    ]
