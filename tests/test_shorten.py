"""The breadth-first shortening of a shrunk counterexample
(``invariants/random_search/shorten.py``)."""

from __future__ import annotations

import math

from invariants.random_search.runner import Options, search
from invariants.random_search.shorten import alphabet, shorten
from invariants.random_search.shrink import fails, shrink
from invariants.selftest.hunt import EXAMPLES
from invariants.selftest.mutants import applied, by_name
from scheduler import si
from scheduler.trace import Step

CORE = "priority.apps_by_policy_only"
"""Caught early at seed 1 by ``priority.order`` (``docs/checker.md``)."""


def test_a_padded_counterexample_is_cut_to_a_shorter_one_that_still_fails() -> None:
    with applied(by_name(CORE)):
        failure = search(Options(seed=1, seconds=math.inf, examples=EXAMPLES)).failure
        assert failure is not None
        steps = shrink(failure, 60).steps
        last = max(i for i, s in enumerate(steps) if s.call == "schedule")
        # A no-op node request twice before the step that broke the rule: the trace's
        # alphabet gains one letter, and the shortest path does not take it.
        nothing = Step("update_node", si.NodeRequest(nodes=[], rm_id=steps[0].request.rm_id))
        padded = [*steps[:last], nothing, nothing, *steps[last:last + 1]]
        assert fails(failure, padded)
        short = shorten(failure, padded, seconds=120)
        assert short.shorter
        assert len(short.steps) < len(padded) and nothing not in short.steps
        assert short.steps[0] == steps[0]
        assert fails(failure, short.steps)


def test_the_alphabet_is_the_distinct_steps_after_the_registration_in_first_use_order(
) -> None:
    a, b = Step.schedule(), Step.advance(2)
    register = Step("register_resource_manager", si.RegisterResourceManagerRequest(
        rm_id="rm", policy_group="queues", config=""))
    assert alphabet([register, a, b, a, Step.advance(2.0)]) == [a, b]


def test_a_trace_too_short_to_shorten_is_returned_as_it_is() -> None:
    with applied(by_name(CORE)):
        failure = search(Options(seed=1, seconds=math.inf, examples=EXAMPLES)).failure
        assert failure is not None
        short = shorten(failure, failure.steps[:2])
        assert not short.shorter and short.exhausted and short.steps == failure.steps[:2]
