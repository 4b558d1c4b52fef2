"""The scheduler's lifecycles, declared as data.

``LIFECYCLES`` maps ``"application"``, ``"ask"``, ``"allocation"``, ``"node"``,
``"rm"`` and ``"object"`` (queues and partitions) to their :class:`Lifecycle`.
Each carries one shared ``transitions.Machine`` (``.machine``); objects move
only through :meth:`Lifecycle.fire`, which raises :class:`InvalidTransition`
and changes nothing when a trigger is not allowed in the current state.
"""

from __future__ import annotations

from . import allocation, application, ask, node, object, rm
from ._core import (
    InvalidTransition,
    Lifecycle,
    Observer,
    StateSpec,
    TransitionRecord,
    TransitionSpec,
    UnknownTrigger,
    add_observer,
)

APPLICATION = application.LIFECYCLE
ASK = ask.LIFECYCLE
ALLOCATION = allocation.LIFECYCLE
NODE = node.LIFECYCLE
RM = rm.LIFECYCLE
OBJECT = object.LIFECYCLE

LIFECYCLES: dict[str, Lifecycle] = {
    lc.name: lc for lc in (APPLICATION, ASK, ALLOCATION, NODE, RM, OBJECT)
}

__all__ = [
    "ALLOCATION",
    "APPLICATION",
    "ASK",
    "LIFECYCLES",
    "NODE",
    "OBJECT",
    "RM",
    "InvalidTransition",
    "Lifecycle",
    "Observer",
    "StateSpec",
    "TransitionRecord",
    "TransitionSpec",
    "UnknownTrigger",
    "add_observer",
]
