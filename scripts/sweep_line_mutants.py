#!/usr/bin/env python3
"""Hunt automatic line mutants of the core with the random checker, to find its blind spots.

The self-test's broken cores (``invariants/selftest/``) are written by hand, each for a rule
someone thought of. This script writes mutants nobody chose: in the core's flow modules, one
line of one function edited at a time (a comparison or boolean operator swapped, ``not``
dropped, ``+``/``-`` or ``min``/``max`` swapped, ``True``/``False`` returned the other way, a
simple statement, ``continue`` or ``break`` made ``pass``), only where the edited function
still compiles. A deterministic sample is hunted, each in a forked process of its own (a
mutant may loop: it is stopped after ``--timeout`` seconds), within a budget of test cases at
one seed, and one JSON line per mutant is appended to the output: the edit and whether the
checker caught it, by which rule, at which case.

A survivor is a blind spot, or an equivalent mutant (a message text, a memo, a return value
nobody reads). Read each: ``docs/checker.md`` ("Finding blind spots") says how the last sweep
was read and what it changed.

    python scripts/sweep_line_mutants.py --sample 300 --examples 200 --out sweep.jsonl
    python scripts/sweep_line_mutants.py --sample 300 --shard 1/2 --out sweep-1.jsonl
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import logging
import multiprocessing as mp
import random
import re
import sys
import textwrap
import time
from multiprocessing.queues import Queue
from types import FunctionType, ModuleType
from typing import Any

from invariants.random_search.runner import Options, search
from invariants.selftest.edits import Mutant, applied

MODULES = (
    "scheduler.partition.allocate", "scheduler.partition.apps", "scheduler.partition.appstate",
    "scheduler.partition.asks", "scheduler.partition.cycle", "scheduler.partition.eligibility",
    "scheduler.partition.gang", "scheduler.partition.ledger", "scheduler.partition.nodes",
    "scheduler.partition.nsquota", "scheduler.partition.preemptor", "scheduler.partition.queues",
    "scheduler.partition.quota_preemption", "scheduler.partition.releases",
    "scheduler.partition.required_node", "scheduler.partition.reservations",
    "scheduler.partition.victims", "scheduler.partition.waiting", "scheduler.ugm",
    "scheduler.policies", "scheduler.priority", "scheduler.preemption", "scheduler.placement",
    "scheduler.outbox", "scheduler.dialect", "scheduler.resources",
)
"""The core's flows and the readings they use; not the API, the wire or the configuration."""

SWAPS = (
    (" < ", " <= "), (" <= ", " < "), (" > ", " >= "), (" >= ", " > "), (" == ", " != "),
    (" != ", " == "), (" and ", " or "), (" or ", " and "), ("if not ", "if "),
    ("return True", "return False"), ("return False", "return True"), (" + ", " - "),
    (" - ", " + "), ("max(", "min("), ("min(", "max("),
)
STATEMENT = re.compile(r"^[A-Za-z_][\w.\[\]\(\), ]*(\+=|-=|=|\()")
NOT_SIMPLE = ("return", "yield", "if ", "elif ", "for ", "while ", "def ", "with ", "else",
              "try", "except", "raise", "assert")

Edit = tuple[str, str, str, str, str, str]
"""(module, owner, function, operator, old line, new line); owner is the module's name for a
module function, else the class's."""


def _functions(name: str) -> list[tuple[ModuleType | type, str, FunctionType]]:
    module = importlib.import_module(name)
    out: list[tuple[ModuleType | type, str, FunctionType]] = []
    for attr, obj in sorted(vars(module).items()):
        if isinstance(obj, FunctionType) and obj.__module__ == name:
            out.append((module, attr, obj))
        elif isinstance(obj, type) and obj.__module__ == name:
            out.extend((obj, m, f) for m, f in sorted(vars(obj).items())
                       if isinstance(f, FunctionType) and not m.startswith("__"))
    return out


def _edits(line: str) -> list[tuple[str, str]]:
    text = line.strip()
    out = [(f"{a.strip()}->{b.strip()}", line.replace(a, b, 1)) for a, b in SWAPS if a in line]
    indent = line[: len(line) - len(line.lstrip())]
    if STATEMENT.match(text) and not text.endswith(("(", ",", "\\", "[", "{")) \
            and not text.startswith(NOT_SIMPLE):
        out.append(("del", f"{indent}pass\n"))
    if text in ("continue", "break"):
        out.append((f"{text}->pass", f"{indent}pass\n"))
    return out


def candidates() -> list[Edit]:
    """Every edit of every line that occurs once in its function, in a fixed order."""
    out: list[Edit] = []
    for name in MODULES:
        for owner, attr, fn in _functions(name):
            source = textwrap.dedent(inspect.getsource(fn))
            for line in source.splitlines(keepends=True)[1:]:
                text = line.strip()
                if not text or text.startswith(("#", '"', "'")) or source.count(line) != 1:
                    continue
                for op, new in _edits(line):
                    try:
                        ast.parse(source.replace(line, new, 1))
                    except SyntaxError:
                        continue
                    owner_name = name if isinstance(owner, ModuleType) else owner.__name__
                    out.append((name, owner_name, attr, op, line, new))
    return out


def _hunt(edit: Edit, seed: int, examples: int, results: Queue[dict[str, Any]]) -> None:
    name, owner_name, attr, op, old, new = edit
    module = importlib.import_module(name)
    owner: ModuleType | type = module if owner_name == name else getattr(module, owner_name)
    logging.disable(logging.CRITICAL)
    started = time.monotonic()
    with applied(Mutant(f"{name}.{attr}:{op}", "sweep", "", owner, attr, old, new)):
        outcome = search(Options(seed=seed, examples=examples, workers=1))
    failure = outcome.failure
    results.put({"found": failure is not None,
                 "rule": failure.violation.invariant if failure is not None else "",
                 "case": failure.case if failure is not None else outcome.cases,
                 "seconds": round(time.monotonic() - started, 1)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300, help="mutants drawn (default 300)")
    parser.add_argument("--examples", type=int, default=200,
                        help="test cases per mutant (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="the checker's seed (default 1)")
    parser.add_argument("--shard", default="1/1", help="K/N: run the K-th of N slices")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant")
    parser.add_argument("--out", required=True, help="JSON lines appended here")
    args = parser.parse_args(argv)
    k, n = (int(x) for x in args.shard.split("/"))
    edits = candidates()
    random.Random(0).shuffle(edits)
    picked = edits[: args.sample][k - 1:: n]
    print(f"{len(edits)} candidate edits; hunting {len(picked)}", file=sys.stderr)
    context = mp.get_context("fork")
    with open(args.out, "a", encoding="utf-8") as out:
        for edit in picked:
            results: Queue[dict[str, Any]] = context.Queue()
            worker = context.Process(target=_hunt, args=(edit, args.seed, args.examples, results))
            worker.start()
            worker.join(args.timeout)
            if worker.is_alive():
                worker.terminate()
                worker.join()
                verdict: dict[str, Any] = {"found": None, "error": "timeout"}
            elif results.empty():
                verdict = {"found": None, "error": f"exit {worker.exitcode}"}
            else:
                verdict = results.get()
            name, owner_name, attr, op, old, new = edit
            out.write(json.dumps({"module": name, "owner": owner_name, "function": attr,
                                  "op": op, "old": old, "new": new, **verdict}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
