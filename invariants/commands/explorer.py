"""``yunikorn-fsm explore``: exhaust a small scope, print TLC-style figures, write the shortest
counterexample as a trace file.

Exit 0 when the search ended without a violation (exhausted, or stopped by
its depth bound or time budget: the output says which), 1 with a violation
(the trace file's path is printed), 2 on bad usage with a one-line reason.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from invariants.actions.draw import CLOCK_START
from invariants.commands.common import (
    RAY_HELP,
    VARIANT_HELP,
    UsageError,
    on_variant,
    usage_errors_exit_2,
)
from invariants.explore.named_scopes import SCOPES
from invariants.explore.scope import RESERVATION_DELAY, Scope
from invariants.explore.search import Options, Result, Stats, replay_path, search
from invariants.explore.texts import KINDS
from invariants.random_search import replay
from invariants.random_search.quiet import configuration_warnings_quiet
from scheduler.errors import ConfigError
from scheduler.trace import read_trace

FAILURES = ".yunikorn-fsm/failures"


def add_explore_command(sub: Any) -> None:
    p = sub.add_parser("explore", help="every state of a small scope, breadth-first, with "
                                       "every rule and liveness checked")
    p.add_argument("--scope", default="small", help=f"one of {', '.join(SCOPES)} "
                                                    "(default small)")
    p.add_argument("--config", help="the scope's applications on this queues.yaml instead")
    p.add_argument("--depth", type=int, default=None, help="actions from registration "
                                                           "(default: the scope's)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument("--out", default=FAILURES, help=f"where counterexamples go ({FAILURES})")
    p.add_argument("--no-symmetry", action="store_true",
                   help="count states exactly (nodes of one size are not interchangeable)")
    p.add_argument("--no-liveness", action="store_true",
                   help="skip the quiescent closures (safety only)")
    p.add_argument("--list-scopes", action="store_true", help="describe every scope and exit")
    p.add_argument("--self-test", action="store_true",
                   help="explore every deliberately broken core in every scope")
    p.add_argument("--measure", action="store_true",
                   help="time snapshot against replay and orjson+xxh3 against json+blake2b")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--variant", metavar="NAME", help=VARIANT_HELP)
    p.add_argument("--ray", metavar="ADDRESS", help=RAY_HELP)
    p.add_argument("--shards", type=int, default=4,
                   help="with --ray: fingerprint servers (Ray actors) the visited set is "
                        "sharded over (default 4)")
    p.set_defaults(func=run_explore)


def run_explore(args: argparse.Namespace) -> int:
    with configuration_warnings_quiet():
        return usage_errors_exit_2("explore", on_variant(_explore))(args)


def _scope(args: argparse.Namespace) -> Scope:
    if args.scope not in SCOPES:
        raise UsageError(f"unknown scope {args.scope!r}; scopes: {', '.join(SCOPES)}")
    scope = SCOPES[args.scope]
    if args.config:
        try:
            text = Path(args.config).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"can not read {args.config}: {exc.strerror}") from None
        try:
            scope = scope.with_config(text)
        except (ConfigError, ValueError) as exc:
            raise UsageError(f"{args.config}: {exc}") from None
    return scope


def _explore(args: argparse.Namespace) -> int:
    if args.list_scopes:
        for scope in SCOPES.values():
            print(scope.describe())
        print("\naction kinds:")
        for kind, doc in KINDS.items():
            print(f"  {kind:<16} {doc}")
        return 0
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.ray is not None:
        from invariants.commands.common import ray_usable

        ray_usable(args)
        if args.self_test or args.measure:
            raise UsageError("--ray explores one scope: no --self-test, no --measure")
        if args.shards < 1:
            raise UsageError("--shards must be at least 1")
    if args.self_test:
        from invariants.selftest.explore_kills import self_test

        return self_test(args.seconds or 90.0, args.workers)
    scope = _scope(args)
    depth = scope.depth if args.depth is None else args.depth
    if depth < 1:
        raise UsageError("--depth must be at least 1")
    if args.measure:
        from invariants.explore.measure import measure

        for line in measure(scope, min(depth, 6)):
            print(line)
        return 0
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    opts = Options(scope, depth, args.seconds, args.workers, not args.no_symmetry,
                   not args.no_liveness)
    where = f"the Ray cluster at {args.ray} ({args.shards} fingerprint shards)" \
        if args.ray is not None else f"{opts.workers} worker(s)"
    print(f"scope: {scope.name}, depth {depth}, symmetry {'on' if opts.symmetry else 'off'}, "
          f"liveness {'on' if opts.liveness else 'off'}, {where}", flush=True)
    live = sys.stderr.isatty() and not args.quiet
    if args.ray is not None:
        from invariants.campaign.frontier import explore

        explored = explore(args.ray, opts, _Progress(live, args.quiet), args.shards)
        result = explored.result
    else:
        result = search(opts, _Progress(live, args.quiet))
    if live:
        sys.stderr.write("\n")
    _summary(result, sys.stdout)
    if args.ray is not None:
        for i, (held, size) in enumerate(explored.shards):
            print(f"shard {i}: {held:,} fingerprints, {size / 2 ** 20:.1f} MiB")
        print(f"cluster: {len(explored.lost)} chunk run(s) lost and redone")
        for line in explored.lost:
            print(f"  {line}")
    if result.found is None:
        print(f"result: no violation ({result.reason}): {result.stats.distinct:,} distinct "
              f"states to depth {result.stats.depth}")
        return 0
    return _report(args, opts, result)


class _Progress:
    """A live line on a terminal, one line per level otherwise (unless quiet)."""

    def __init__(self, live: bool, quiet: bool) -> None:
        self.live = live
        self.quiet = quiet
        self.shown = 0.0

    def __call__(self, stats: Stats, frontier: int, level_done: bool) -> None:
        line = (f"{stats.elapsed:6.1f}s  depth {stats.depth + (0 if level_done else 1)}  "
                f"{stats.distinct:,} distinct  {stats.generated:,} generated  "
                f"{stats.rate:,.0f} states/s  frontier {frontier:,}")
        if self.live:
            now = time.monotonic()
            if level_done or now - self.shown > 0.25:
                self.shown = now
                sys.stderr.write("\r" + line.ljust(90))
                sys.stderr.flush()
        elif level_done and not self.quiet:
            print(line, flush=True)


def _summary(result: Result, out: TextIO) -> None:
    stats = result.stats
    optimistic, birthday = stats.collision_odds()
    out.write(f"{stats.generated:,} states generated, {stats.distinct:,} distinct, depth "
              f"{stats.depth}, {stats.elapsed:.1f}s ({stats.rate:,.0f} distinct states/s)\n")
    out.write("distinct states per depth: " + " ".join(str(n) for n in stats.levels) + "\n")
    out.write(f"fingerprint collision odds: {optimistic:.1e} (optimistic), "
              f"{birthday:.1e} (birthday bound)\n")
    out.write("per action: generated / distinct\n")
    for label, count in sorted(stats.generated_by.items(), key=lambda kv: (-kv[1], kv[0])):
        out.write(f"  {label:<28} {count:9,} {stats.distinct_by[label]:9,}\n")


def _report(args: argparse.Namespace, opts: Options, result: Result) -> int:
    found = result.found
    assert found is not None
    steps, violations = replay_path(opts.scope, found.path, found.liveness, opts.symmetry)
    if not violations:
        print("\nVIOLATION found, but replaying its path did not reproduce it "
              "(a fingerprint merged two states that differ: run with --no-symmetry)")
        return 1
    for v in violations:
        print(f"\nVIOLATION {v}")
    where = "in the quiescent closure of" if found.liveness else "at"
    print(f"  {where} a state at depth {len(found.path)} (a shortest path), after "
          f"{result.stats.distinct:,} distinct states")
    config = next(s.request.config for s in steps if s.call == "register_resource_manager")
    name = (f"{time.strftime('%Y%m%d-%H%M%S')}-{violations[0].invariant}-"
            f"explore-{opts.scope.name}.jsonl")
    path = replay.write(Path(args.out) / name, config, CLOCK_START, steps, {
        "explore": opts.scope.name, "invariant": violations[0].invariant,
        "actions": [opts.scope.alphabet()[i].label for i in found.path],
        "quiescent": found.liveness, "reservation_delay": RESERVATION_DELAY,
        "predicates_refuse": [list(pair) for pair in opts.scope.refused]})
    print("\nthe counterexample, as SI traffic:")
    again = replay.run(read_trace(path), sys.stdout)
    if not again.broke(violations[0].invariant):
        print("(the written trace did not reproduce the violation on replay)")
    print(f"\ncounterexample written to {path}")
    print(f"replay it with: yunikorn-fsm replay {path}")
    print("result: FAILED")
    return 1
