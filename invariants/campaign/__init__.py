"""Checking campaigns on a Ray cluster (``check --ray``, ``explore --ray``; issue 37).

Ray only schedules work units and merges their results here: the cases still
run in ``invariants/random_search/runner.py`` and the states are still expanded in
``invariants/explore/search.py``, on whichever node takes the unit.

- ``cluster.py``: ``ray`` imported lazily (the ``ray`` extra), connecting, the nodes alive.
- ``dispatch.py``: work units handed to the cluster's CPUs; a lost one is redone, every
  one merged once.
- ``check.py``: ``check --ray``: the stored counterexamples, the random cases, the
  self-test's broken cores, as units.
"""
