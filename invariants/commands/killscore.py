"""The self-test's kill score: every broken core hunted (in a pool of processes, or on a Ray
cluster), one line per core, and the summary."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Sequence

from invariants.selftest.hunt import CORES, EXAMPLES, Verdict, budget_text, hunt


def _task(args: tuple[str, int, int | None, float | None, float]) -> Verdict:
    return hunt(*args)


def self_test(seed: int, workers: int, examples: int | None = EXAMPLES,
              seconds: float | None = None, quiet: bool = False,
              shrink_seconds: float = 0.0, ray: str | None = None,
              names: Sequence[str] | None = None) -> int:
    """Run every mutant (or those of ``names``); exit 0 when all are caught, 1 otherwise.

    With ``ray`` (a cluster's address) each broken core is a unit on the cluster
    (``invariants/campaign``); the verdicts are the same, in the order they come."""
    if examples is None and seconds is None:
        raise ValueError("the self-test needs a budget: examples, seconds or both")
    cores = [m.name for m in CORES] if names is None else list(names)
    tasks = [(name, seed, examples, seconds, shrink_seconds) for name in cores]
    where = f" on the Ray cluster at {ray}" if ray is not None else ""
    print(f"self-test: {len(tasks)} broken cores, {budget_text(examples, seconds)} each{where}",
          flush=True)
    verdicts: list[Verdict] = []

    def report(verdict: Verdict) -> None:
        verdicts.append(verdict)
        print(f"  {_line(verdict, shrink_seconds)}", flush=True)

    if ray is not None:
        from invariants.campaign.cases import hunt_all

        dispatcher = hunt_all(ray, cores, seed, examples, seconds, shrink_seconds, report)
        for line in dispatcher.lost_lines():
            print(f"  {line}")
    else:
        ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        with ctx.Pool(max(1, workers)) as pool:
            for verdict in pool.imap(_task, tasks):
                report(verdict)
    return _summary(verdicts, shrink_seconds)


def _line(verdict: Verdict, shrink_seconds: float) -> str:
    mark = "caught " if verdict.found else "MISSED "
    detail = (f"in {verdict.seconds:5.1f}s by {verdict.rule} "
              f"(case {verdict.cases}, {verdict.steps} steps"
              + (f", shrunk to {verdict.shrunk_steps} calls in "
                 f"{verdict.shrink_seconds:.1f}s"
                 f"{', 1-minimal' if verdict.minimal else ''}"
                 f"{', replays' if verdict.replays else ', DOES NOT REPLAY'}"
                 if shrink_seconds else "")
              + ")") if verdict.found else (f"after {verdict.cases} test cases, "
                                            f"{verdict.seconds:.1f}s")
    return f"{mark} {verdict.mutant:<45} {detail}"


def _summary(verdicts: list[Verdict], shrink_seconds: float) -> int:
    caught = sum(v.found for v in verdicts)
    times = sorted(v.seconds for v in verdicts if v.found)
    cases = sorted(v.cases for v in verdicts if v.found)
    median = times[len(times) // 2] if times else 0.0
    print(f"kill score: {caught}/{len(verdicts)}; median time to detection {median:.1f}s, "
          f"slowest {times[-1] if times else 0.0:.1f}s; most test cases "
          f"{cases[-1] if cases else 0}")
    if shrink_seconds:
        shrunk = [v for v in verdicts if v.found]
        print(f"counterexamples: {sum(v.minimal for v in shrunk)}/{len(shrunk)} 1-minimal, "
              f"{sum(v.shrunk_steps <= 10 for v in shrunk)}/{len(shrunk)} within 10 calls, "
              f"{sum(v.replays for v in shrunk)}/{len(shrunk)} replay (broken fails, real "
              f"passes), longest shrink {max((v.shrink_seconds for v in shrunk), default=0):.1f}s")
    replayed = all(v.replays for v in verdicts if v.found) if shrink_seconds else True
    return 0 if caught == len(verdicts) and replayed else 1
