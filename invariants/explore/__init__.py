"""The explorer: every state of a small scope, breadth-first, every rule checked in each.

``scope`` declares the small worlds and their SI alphabets, ``fingerprint``
says when two states are one, ``closure`` drives a state to rest for the
liveness properties, and ``search`` runs the breadth-first search (in worker
processes when asked). ``yunikorn-fsm explore`` is its command line
(``invariants/commands/explorer.py``).
"""

from invariants.explore.named_scopes import SCOPES
from invariants.explore.scope import Scope
from invariants.explore.search import Options, Result, search

__all__ = ["SCOPES", "Options", "Result", "Scope", "search"]
