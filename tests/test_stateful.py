"""The stateful checker, run under the active Hypothesis profile (``ci`` by default).

Every registered invariant is checked after every step; a failure prints the
shrunk sequence of steps. ``HYPOTHESIS_PROFILE=deep`` runs it much longer.
"""

from __future__ import annotations

from invariants.stateful import SchedulerMachine

TestSchedulerMachine = SchedulerMachine.TestCase
