"""``yunikorn-fsm check``: run the stateful checker and report every invariant."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import run_state_machine_as_test

from scheduler.errors import ConfigError

from .registry import REGISTRY


def add_check_command(sub: Any) -> None:
    """Register the ``check`` subcommand on the main CLI's subparsers."""
    p = sub.add_parser(
        "check",
        help="drive the scheduler at random and check every invariant after every step",
    )
    p.add_argument("--config", help="a queues.yaml to check instead of the embedded one")
    p.add_argument("--examples", type=int, default=200, help="random runs (default 200)")
    p.add_argument("--steps", type=int, default=50, help="steps per run (default 50)")
    p.add_argument("--seed", type=int, default=None, help="make the run reproducible")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run_check)

    p = sub.add_parser("flows", help="run the gang design's flows and print their traces")
    p.add_argument("--markdown", action="store_true", help="print docs/gang.md")
    p.set_defaults(func=print_flows)

    p = sub.add_parser("invariants", help="list the invariants (or write docs/invariants.md)")
    p.add_argument("--markdown", action="store_true", help="print the Markdown page instead")
    p.set_defaults(func=list_invariants)


def print_flows(args: argparse.Namespace) -> int:
    from .flows import all_flows, render

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
    from .docs import render

    if args.markdown:
        print(render(), end="")
        return 0
    for inv in REGISTRY.values():
        print(f"{inv.name:<28} {inv.statement}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from .stateful import DEFAULT_CONFIG, make_machine

    text = DEFAULT_CONFIG
    if args.config:
        try:
            text = Path(args.config).read_text(encoding="utf-8")
            machine = make_machine(text)
        except (OSError, ConfigError) as exc:
            print(f"yunikorn-fsm check: {exc}", file=sys.stderr)
            return 2
    else:
        machine = make_machine(text)
    runs = {"n": 0}
    started = time.monotonic()
    original_teardown = machine.teardown

    def teardown(self: Any) -> None:
        runs["n"] += 1
        if not args.quiet and sys.stderr.isatty():
            print(f"\r  {runs['n']} runs, {sum(machine.rule_counts.values())} steps",
                  end="", file=sys.stderr, flush=True)
        original_teardown(self)

    machine.teardown = teardown  # type: ignore[method-assign]
    test_settings = settings(
        max_examples=args.examples,
        stateful_step_count=args.steps,
        deadline=None,
        database=None,
        derandomize=args.seed is None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        print_blob=False,
    )
    print(f"checking {len(REGISTRY)} invariants: {args.examples} runs of up to "
          f"{args.steps} steps ({'embedded config' if not args.config else args.config})")
    failure: BaseException | None = None
    try:
        if args.seed is not None:
            from hypothesis.stateful import get_state_machine_test

            test = get_state_machine_test(machine, settings=test_settings)
            hypothesis_seed(args.seed)(test)()
        else:
            run_state_machine_as_test(machine, settings=test_settings)
    except Exception as exc:  # the checker's whole point is to report this
        failure = exc
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    elapsed = time.monotonic() - started
    broken = _broken_invariants(failure)
    print(f"\n{'invariant':<40} {'checks':>8}  result")
    for name in REGISTRY:
        checks = machine.invariant_checks.get(name, 0)
        status = "VIOLATED" if name in broken else ("ok" if failure is None else "ok so far")
        print(f"{name:<40} {checks:>8}  {status}")
    print("\nrules exercised:")
    for rule, count in sorted(machine.rule_counts.items()):
        print(f"  {rule:<40} {count:>7}")
    print(f"\n{runs['n']} runs in {elapsed:.1f}s")
    if failure is None:
        print("result: every invariant held after every step")
        return 0
    print("\nresult: FAILED")
    for i, leaf in enumerate(_leaves(failure), 1):
        notes = "\n".join(n for n in getattr(leaf, "__notes__", []) if "target score" not in n)
        print(f"\nfailure {i}: the shrunk scenario, replayable step by step:\n{notes}\n"
              f"\nthe error:\n{type(leaf).__name__}: {leaf}")
    return 1


def _leaves(exc: BaseException) -> list[BaseException]:
    """The distinct failures Hypothesis found (it groups several in an ExceptionGroup)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def _broken_invariants(failure: BaseException | None) -> set[str]:
    if failure is None:
        return set()
    text = "\n".join(str(e) for e in _leaves(failure))
    return {name for name in REGISTRY if f"[{name}]" in text}
