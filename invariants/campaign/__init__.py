"""Checking campaigns on a Ray cluster (``check --ray``, ``explore --ray``).

Ray only schedules work units and merges their results here: the cases still
run in ``invariants/random_search/runner.py`` and the states are still expanded in
``invariants/explore/search.py``, on whichever node takes the unit.

- ``ray_cluster.py``: ``ray`` imported lazily (the ``ray`` extra), connecting, the nodes alive.
- ``dispatch.py``: work units handed to the cluster's CPUs; a lost one is redone, every
  one merged once.
- ``cases.py``: ``check --ray``: the stored counterexamples, the random cases, the
  self-test's broken cores, as units.
- ``frontier.py``: ``explore --ray``: the breadth-first search with its visited set
  sharded over Ray actors.
"""
