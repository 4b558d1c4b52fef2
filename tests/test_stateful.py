"""The stateful checker, run under the active Hypothesis profile (``ci`` by default).

Every registered invariant is checked after every step; a failure prints the
shrunk sequence of steps. ``HYPOTHESIS_PROFILE=deep`` runs it much longer.
The mutation tests below break the core on purpose and expect the checker to
notice, so a checker that silently stopped checking would fail here.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import scheduler.partition as partition_module
from invariants.stateful import SchedulerMachine, make_machine

TestSchedulerMachine = SchedulerMachine.TestCase

MUTATION_SETTINGS = settings(
    max_examples=300, stateful_step_count=50, deadline=None, database=None,
    derandomize=True, suppress_health_check=list(HealthCheck), print_blob=False,
    phases=[Phase.generate])  # no shrinking: the failure itself is what we want to see


def _run_expecting(invariant_name: str) -> None:
    with pytest.raises(BaseException) as info:
        run_state_machine_as_test(make_machine(), settings=MUTATION_SETTINGS)
    text = str(info.value) + "".join(str(e) for e in getattr(info.value, "exceptions", []))
    assert invariant_name in text, text[:2000]


def test_checker_catches_a_stale_node_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition_module.Partition, "nodes_changed", lambda self: None)
    _run_expecting("scheduling.maximal")


def test_checker_catches_a_lost_queue_update(monkeypatch: pytest.MonkeyPatch) -> None:
    original = partition_module.ledger.unbind

    def leaky_unbind(self: Any, alloc: Any) -> None:
        queue = alloc.app.queue
        saved = dict(queue.allocated) if queue is not None else None
        original(self, alloc)
        if queue is not None and saved is not None and alloc.placeholder:
            queue.allocated.clear()
            queue.allocated.update(saved)

    monkeypatch.setattr(partition_module.ledger, "unbind", leaky_unbind)
    _run_expecting("accounting.queue")


def test_checker_catches_a_state_set_without_a_trigger(monkeypatch: pytest.MonkeyPatch) -> None:
    original = partition_module.appstate.maybe_wait

    def sloppy_wait(self: Any, app: Any) -> None:
        if app.state == "Running" and not app.pending_asks and not app.allocations:
            app.state = "Completing"
            return
        original(self, app)

    monkeypatch.setattr(partition_module.appstate, "maybe_wait", sloppy_wait)
    _run_expecting("lifecycle.legal")
