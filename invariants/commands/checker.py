"""The checker's commands: ``check``, ``replay``, ``invariants`` and ``flows`` (and
``explore``, from ``invariants/commands/explorer.py``).

``check`` draws test cases from a seed for a time budget, checks every
invariant and protocol rule after every step, reports coverage, and on a
violation shrinks the run and writes it as a trace file that ``replay`` runs
again. Usage errors exit 2 with one line and no traceback.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from invariants.commands.common import (
    FAILURES,
    RAY_HELP,
    VARIANT_HELP,
    UsageError,
    on_variant,
    ray_usable,
    usage_errors_exit_2,
)
from invariants.properties.catalog import REGISTRY
from invariants.properties.protocol import PROTOCOL
from invariants.random_search.quiet import configuration_warnings_quiet
from scheduler.errors import ConfigError
from scheduler.trace import TraceError, read_trace


def add_check_command(sub: Any) -> None:
    """Register the checker's subcommands on the main CLI's subparsers."""
    p = sub.add_parser(
        "check", help="drive the core at random and check every rule after every step")
    p.add_argument("--config", help="check this queues.yaml only (default: drawn per case)")
    p.add_argument("--seed", type=int, default=None, help="repeat a run (default: a fresh seed)")
    p.add_argument("--seconds", type=float, default=None,
                   help="time budget (default 60; in --self-test, none: the budget is cases)")
    p.add_argument("--examples", type=int, default=None,
                   help="stop after this many test cases (--self-test: per broken core, "
                        "default 500)")
    p.add_argument("--steps", type=int, default=None, help="at most this many steps per case")
    p.add_argument("--workers", type=int, default=None,
                   help="processes (default: one per usable core, but 1 with --examples, "
                        "--variant or --ray, whose cases are then exactly those of --seed)")
    p.add_argument("--out", default=FAILURES, help=f"where counterexamples go ({FAILURES})")
    p.add_argument("--shrink-seconds", type=float, default=None,
                   help="time to shrink a counterexample (default 30; 0 in --self-test)")
    p.add_argument("--shorten-seconds", type=float, default=10.0,
                   help="time to look for a shorter counterexample after shrinking (default "
                        "10; 0: none)")
    p.add_argument("--coverage-out", metavar="FILE", help="write edge and goal coverage as JSON")
    p.add_argument("--stats", action="store_true", help="print throughput and where time goes")
    p.add_argument("--no-replay", action="store_true",
                   help="do not replay the stored counterexamples first")
    p.add_argument("--no-liveness", action="store_true",
                   help="do not drive each case's end to rest and judge liveness there")
    p.add_argument("--self-test", action="store_true",
                   help="run the deliberately broken cores and report the kill score")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--variant", metavar="NAME", help=VARIANT_HELP)
    p.add_argument("--ray", metavar="ADDRESS", help=RAY_HELP)
    p.add_argument("--transport", choices=("direct", "grpc"), default="direct",
                   help="direct: the shim calls the core in process (default); grpc: through "
                        "a real server on loopback, whose delivery is judged too "
                        "(docs/checker.md 'Through the wire'; needs the grpc extra)")
    p.set_defaults(func=run_check)

    p = sub.add_parser("replay", help="run a trace file, checking every rule after every step")
    p.add_argument("file")
    p.add_argument("--mermaid", metavar="OUT", help="also write a Mermaid sequence diagram")
    p.add_argument("--quiet", action="store_true", help="print only the verdict")
    p.add_argument("--variant", metavar="NAME", help=VARIANT_HELP)
    p.set_defaults(func=run_replay)

    p = sub.add_parser("view", help="write the auditors' page for a trace or a coverage "
                                    "report: one HTML file that needs no server or network")
    p.add_argument("file", help="a trace (.jsonl) or a `check --coverage-out` report")
    p.add_argument("--out", metavar="HTML", help="where to write it (default: FILE.html)")
    p.add_argument("--variant", metavar="NAME", help=VARIANT_HELP)
    p.set_defaults(func=run_view)

    p = sub.add_parser("flows", help="run the gang design's flows and print their traces")
    p.add_argument("--markdown", action="store_true", help="print docs/gang.md")
    p.set_defaults(func=print_flows)

    from invariants.commands.explorer import add_explore_command

    add_explore_command(sub)

    p = sub.add_parser("invariants", help="list the rules the checker holds (or the docs page)")
    p.add_argument("--markdown", action="store_true", help="print docs/invariants.md instead")
    p.set_defaults(func=list_invariants)


# ---------------------------------------------------------------- check


def run_check(args: argparse.Namespace) -> int:
    with configuration_warnings_quiet():
        return usage_errors_exit_2("check", on_variant(_check))(args)


def _check(args: argparse.Namespace) -> int:
    from invariants.random_search.runner import Options, usable_cores

    if args.seconds is not None and args.seconds <= 0:
        raise UsageError(f"--seconds must be more than 0, got {args.seconds:g}")
    if args.examples is not None and args.examples <= 0:
        raise UsageError(f"--examples must be at least 1, got {args.examples}")
    if args.steps is not None and args.steps <= 0:
        raise UsageError(f"--steps must be at least 1, got {args.steps}")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.shorten_seconds < 0:
        raise UsageError(f"--shorten-seconds must be 0 or more, got {args.shorten_seconds:g}")
    if args.shrink_seconds is not None and args.shrink_seconds < 0:
        raise UsageError(f"--shrink-seconds must be 0 or more, got {args.shrink_seconds:g}")
    if getattr(args, "ray", None) is not None:
        ray_usable(args)
    if args.workers is None:
        args.workers = 1 if args.examples is not None or getattr(args, "ray", None) \
            else usable_cores()
    config = _config(args.config) if args.config else None
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    print(f"seed: {seed}", flush=True)
    if args.self_test:
        from invariants.commands.killscore import self_test
        from invariants.selftest.hunt import EXAMPLES

        examples = args.examples if args.examples is not None or args.seconds is not None \
            else EXAMPLES
        return self_test(seed, args.workers, examples, args.seconds, quiet=args.quiet,
                         shrink_seconds=args.shrink_seconds or 0.0, ray=args.ray)
    if not args.no_replay:
        code = _replay_stored(Path(args.out), args.ray)
        if code:
            return code
    if args.seconds is None:
        args.seconds = 60.0
    transport = getattr(args, "transport", "direct")
    if transport != "direct" and args.variant is not None:
        raise UsageError("--variant runs in process: no --transport grpc")
    opts = Options(seed=seed, seconds=args.seconds, examples=args.examples, steps=args.steps,
                   workers=args.workers, config=config, stats=args.stats,
                   liveness=not args.no_liveness, transport=transport)
    return _search(args, opts)


def _config(path: str) -> str:
    from invariants.readings import model

    try:
        text = Path(path).read_text(encoding="utf-8")
        model.read(text)
    except OSError as exc:
        raise UsageError(f"can not read {path}: {exc.strerror}") from None
    except ConfigError as exc:
        raise UsageError(f"{path}: invalid configuration: {exc}") from None
    return text


def _replay_stored(folder: Path, ray: str | None = None) -> int:
    """Counterexamples found before are replayed first: one still failing ends the run.

    With ``ray`` they are units on the cluster: this machine's folder is the database,
    read here and replayed wherever a CPU is free."""
    from invariants.random_search import replay

    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if ray is not None and paths:
        from invariants.campaign.cases import replay_all

        failing = replay_all(ray, [(str(p), p.read_text(encoding="utf-8")) for p in paths])
        for name, violation in failing[:1]:
            print(f"stored counterexample {name} still fails: {violation}")
            print(f"replay it with: yunikorn-fsm replay {name}")
            print("result: FAILED")
            return 1
        return 0
    for path in paths:
        try:
            result = replay.run(read_trace(path))
        except TraceError:
            continue
        if result.violation is not None:
            print(f"stored counterexample {path} still fails: {result.violation}")
            print(f"replay it with: yunikorn-fsm replay {path}")
            print("result: FAILED")
            return 1
    return 0


def _search(args: argparse.Namespace, opts: Any) -> int:
    from invariants.properties.liveness import CASE_ENDS
    from invariants.random_search import runner

    ends = f", {len(CASE_ENDS)} liveness properties at case ends" if opts.liveness else ""
    wire = " through the wire (grpc)" if opts.transport != "direct" else ""
    ray = getattr(args, "ray", None)
    where = f"on the Ray cluster at {ray}" if ray is not None else f"with {opts.workers} worker(s)"
    print(f"checking {len(REGISTRY)} invariants and {len(PROTOCOL)} protocol rules{ends} for "
          f"{args.seconds:g}s {where}{wire}"
          f"{' (configuration ' + args.config + ')' if args.config else ''}", flush=True)
    tty = sys.stderr.isatty() and not args.quiet

    def progress(outcome: runner.Outcome) -> None:
        rate = outcome.steps / outcome.elapsed if outcome.elapsed else 0.0
        line = (f"\r  {outcome.elapsed:6.1f}s  {outcome.steps:,} steps  {rate:,.0f} steps/s  "
                f"{outcome.cases:,} cases  {outcome.coverage.summary()}")
        sys.stderr.write(line)
        sys.stderr.flush()

    if ray is not None:
        from invariants.campaign.cases import search

        def cluster_progress(outcome: runner.Outcome, nodes: int, cpus: int) -> None:
            progress(outcome)
            sys.stderr.write(f"  {nodes} node(s), {cpus} CPU(s) alive")
            sys.stderr.flush()

        report = search(ray, opts, cluster_progress if tty else None)
        outcome = report.outcome
        if tty:
            sys.stderr.write("\n")
        print(f"cluster: {report.units:,} units merged, {report.nodes} node(s) and "
              f"{report.cpus} CPU(s) alive at the end, {len(report.lost)} unit run(s) lost "
              f"and redone")
        for line in report.lost:
            print(f"  {line}")
    else:
        outcome = runner.run(opts, progress if tty else None)
        if tty:
            sys.stderr.write("\n")
    rate = outcome.steps / outcome.elapsed if outcome.elapsed else 0.0
    print(f"{outcome.cases:,} cases, {outcome.steps:,} steps in {outcome.elapsed:.1f}s "
          f"({rate:,.0f} steps/s)")
    for line in outcome.coverage.report_lines():
        print(line)
    if args.coverage_out:
        outcome.coverage.write(args.coverage_out)
        print(f"coverage written to {args.coverage_out}")
    if args.stats:
        _print_stats(outcome, sys.stdout)
    if outcome.failure is not None:
        return _report_failure(args, outcome.failure)
    empty = runner.vacuous(outcome) if opts.config is not None else None
    if empty is not None:
        print(f"result: VACUOUS, {empty}; nothing was checked beyond registration")
        return 1
    print(f"result: every invariant held after every step ({outcome.steps:,} steps)")
    return 0


def _print_stats(outcome: Any, out: TextIO) -> None:
    rate = outcome.steps / outcome.elapsed if outcome.elapsed else 0.0
    out.write(f"stats: {rate:,.0f} steps/s over {outcome.steps:,} steps\n")
    total = sum(outcome.rule_seconds.values()) or 1.0
    out.write("  time per rule (its core calls and every check after them):\n")
    for kind, spent in sorted(outcome.rule_seconds.items(), key=lambda kv: -kv[1]):
        out.write(f"    {kind:<30} {spent:8.2f}s  {100 * spent / total:5.1f}%\n")
    out.write("  time per invariant (the model shim's protocol rules run inside each step):\n")
    for name, spent in sorted(outcome.invariant_seconds.items(), key=lambda kv: -kv[1]):
        out.write(f"    {name:<40} {spent:8.2f}s\n")
    out.write("  rules drawn:\n")
    for name, count in sorted(outcome.rule_counts.items(), key=lambda kv: -kv[1]):
        out.write(f"    {name:<30} {count:8,}\n")


def _shortened(short: Any, before: int) -> str:
    how = f"{short.states:,} states in {short.seconds:.1f}s"
    if short.shorter:
        return (f"shortened to {len(short.steps)} steps by a breadth-first search over its "
                f"own steps ({how})")
    if short.exhausted:
        return f"no shorter path through its own steps than {before} ({how}, all tried)"
    return f"no shorter path through its own steps found ({how}, budget spent)"


def _report_failure(args: argparse.Namespace, failure: Any) -> int:
    from invariants.random_search import replay, shorten, shrink

    v = failure.violation
    print(f"\nVIOLATION {v}")
    print(f"  found in case {failure.case} (worker {failure.worker}) after "
          f"{failure.elapsed:.1f}s, {len(failure.steps)} steps"
          + (", at the case's end: driven to rest (every release confirmed, every timer "
             "passed), the core broke it there" if failure.quiescent else ""))
    budget = 30.0 if args.shrink_seconds is None else args.shrink_seconds
    shrunk = shrink.shrink(failure, budget)
    print(f"  shrunk to {len(shrunk.steps)} steps with {shrunk.candidates} candidate "
          f"runs in {shrunk.seconds:.1f}s{' (1-minimal)' if shrunk.minimal else ''}")
    steps = shrunk.steps
    if args.shorten_seconds > 0 and failure.transport == "direct":
        # the breadth-first search copies worlds, which a world with a server can not be
        short = shorten.shorten(failure, steps, args.shorten_seconds)
        steps = short.steps
        print(f"  {_shortened(short, len(shrunk.steps))}")
    name = f"{time.strftime('%Y%m%d-%H%M%S')}-{v.invariant}-seed{failure.seed}.jsonl"
    path = replay.save(failure, steps, Path(args.out), name)
    print("\nthe counterexample, as SI traffic:")
    result = replay.run(read_trace(path), sys.stdout)
    if not result.broke(v.invariant):
        print("(the written trace did not reproduce the violation on replay)")
    print(f"\ncounterexample written to {path}")
    print(f"replay it with: yunikorn-fsm replay {path}")
    print("result: FAILED")
    return 1


# ---------------------------------------------------------------- replay


def run_replay(args: argparse.Namespace) -> int:
    return usage_errors_exit_2("replay", on_variant(_replay))(args)


def _replay(args: argparse.Namespace) -> int:
    from invariants.random_search import replay

    try:
        trace = read_trace(args.file)
        result = replay.run(trace, None if args.quiet else sys.stdout)
    except TraceError as exc:
        print(f"yunikorn-fsm replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    if args.mermaid:
        Path(args.mermaid).write_text(replay.mermaid(result), encoding="utf-8")
        print(f"sequence diagram written to {args.mermaid}")
    if result.violation is not None:
        print(f"result: VIOLATION {result.violation}")
        return 1
    print(f"result: every invariant held after every step ({result.steps} steps)")
    return 0


# ---------------------------------------------------------------- view


def run_view(args: argparse.Namespace) -> int:
    return usage_errors_exit_2("view", on_variant(_view))(args)


def _view(args: argparse.Namespace) -> int:
    from invariants.commands import webview

    source = Path(args.file)
    out = Path(args.out) if args.out else source.with_name(source.name + ".html")
    try:
        with configuration_warnings_quiet():
            webview.write(source, out)
    except webview.NotViewable as exc:
        print(f"yunikorn-fsm view: {args.file}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"yunikorn-fsm view: can not write {out}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"page written to {out} (self-contained: open it in a browser, no network needed)")
    return 0


# ---------------------------------------------------------------- flows, invariants


def print_flows(args: argparse.Namespace) -> int:
    from invariants.commands.flows import all_flows, render

    traces = all_flows()
    if args.markdown:
        print(render(traces), end="")
        return 0
    for trace in traces:
        print(f"== {trace.title}")
        for src, dst, text in trace.steps:
            print(f"  {src:>4} -> {dst:<4} {text}")
    return 0


def list_invariants(args: argparse.Namespace) -> int:
    from invariants.commands.docs import render

    if args.markdown:
        print(render(), end="")
        return 0
    for inv in REGISTRY.values():
        print(f"{inv.name:<40} {inv.statement}")
    for check in PROTOCOL.values():
        print(f"{check.name:<40} {check.statement}")
    return 0

