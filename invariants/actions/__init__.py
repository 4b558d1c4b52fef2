"""The search's actions: what a shim and its cluster may do next, declared by decorator.

Each rule is a generator of SI steps (a rule that needs an answer before its
next request, like an RM resyncing, reads the shim's knowledge between its
steps). A test case is a :class:`Scenario`: a configuration, node sizes,
timeouts, maybe a predicates callback, and a random subset of the rules
(swarm testing: a case that never removes applications builds long chains).
Rules that undo progress (a restart, a removal, bad input) weigh little.
"""

from __future__ import annotations

from invariants.actions.draw import (
    NA,
    RM_ID,
    RULES,
    TODAY_SHARE,
    TT,
    Gen,
    Refusing,
    Rule,
    Salted,
    Scenario,
    predicate_for,
    register,
    removal_prefix,
    rule,
)

__all__ = [
    "NA",
    "RM_ID",
    "RULES",
    "TODAY_SHARE",
    "TT",
    "Gen",
    "Refusing",
    "Rule",
    "Salted",
    "Scenario",
    "bad",
    "cluster_nodes",
    "finale",
    "gang_stories",
    "predicate_for",
    "preemption_stories",
    "priority_stories",
    "register",
    "removal_prefix",
    "rm_events",
    "rule",
    "time",
    "work",
]

# The action modules register themselves on import, in this order (the draw depends on it).
from invariants.actions import (  # noqa: I001
    cluster_nodes, rm_events, time, work, gang_stories, priority_stories, preemption_stories, bad)
from invariants.actions import finale
