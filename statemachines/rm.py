"""Resource manager lifecycle.

Source: the interface spec ``002``, section "Lifecycle of
RM-Scheduler communication": init -> Running on registration, Running -> Paused
on connection loss, Paused -> Stopped on timeout, Running -> Stopped on a
voluntary shutdown. A paused RM may also shut down voluntarily (our addition,
see ``docs/design-notes.md``).
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, edges

S = "002 Spec, 'Lifecycle of RM-Scheduler communication'"

LIFECYCLE = Lifecycle(
    name="rm",
    description=(
        "A resource manager (shim) registered with the core: running while connected, "
        "paused when the connection is lost, stopped when it leaves."
    ),
    initial="Init",
    states=[
        StateSpec("Init", f"{S}: init"),
        StateSpec("Running", f"{S}: Running, registered and connected"),
        StateSpec("Paused", f"{S}: Paused, connection lost; must re-register to resync"),
        StateSpec("Stopped", f"{S}: Stopped, everything it owned is removed", True),
    ],
    transitions=edges(
        ("register", ["Init"], "Running", f"{S}: 'RM register with scheduler'"),
        ("disconnect", ["Running"], "Paused", f"{S}: 'Connection loss'"),
        ("time_out", ["Paused"], "Stopped", f"{S}: 'timeout'"),
        ("shutdown", ["Running"], "Stopped", f"{S}: 'RM voluntarilly Shutdown'"),
        ("shutdown", ["Paused"], "Stopped",
         "design-notes: a paused RM that unregisters is stopped like a running one"),
    ),
)
