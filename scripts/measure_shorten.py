#!/usr/bin/env python3
"""Measure the breadth-first shortening of counterexamples on the self-test's broken cores.

For every ``STEP``-th core of ``invariants.selftest.CORES`` (or the cores named):
search it with seed 1 within the self-test's case budget, shrink the failure,
then run ``invariants.random_search.shorten.shorten`` on the shrunk steps, and print one line
per core: the rule, the shrunk length, the shortened length, and whether the
search found a shorter path, exhausted every shorter one, or ran out of budget.
``docs/checker.md`` ("Counterexamples and replay") quotes its output.

    python scripts/measure_shorten.py 10                  # every tenth core
    python scripts/measure_shorten.py 1 gang.placeholder_starts_app
"""

from __future__ import annotations

import argparse
import math

from invariants.random_search.runner import Options, search
from invariants.random_search.shorten import shorten
from invariants.random_search.shrink import shrink
from invariants.selftest.hunt import CORES, EXAMPLES
from invariants.selftest.mutants import applied, by_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", type=int, help="every STEP-th core")
    parser.add_argument("names", nargs="*", help="these cores instead")
    parser.add_argument("--shrink-seconds", type=float, default=20.0)
    parser.add_argument("--shorten-seconds", type=float, default=10.0)
    args = parser.parse_args()
    names = args.names or [m.name for m in CORES][::args.step]
    for name in names:
        with applied(by_name(name)):
            failure = search(Options(seed=1, seconds=math.inf, examples=EXAMPLES)).failure
            if failure is None:
                print(f"{name:45} not caught", flush=True)
                continue
            shrunk = shrink(failure, args.shrink_seconds)
            short = shorten(failure, shrunk.steps, args.shorten_seconds)
            verdict = ("shorter" if short.shorter else "exhausted" if short.exhausted
                       else "budget")
            print(f"{name:45} {failure.violation.invariant:32} shrunk {len(shrunk.steps):3} "
                  f"-> {len(short.steps):3} {verdict} {short.states} states "
                  f"{short.seconds:.1f}s", flush=True)


if __name__ == "__main__":
    main()
