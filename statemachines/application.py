"""Application lifecycle.

Sources: the gang design ``001`` (sections "Scheduler logic
changes", "Application completion", "Cleanup"), whose "waiting" state is today's
``Completing`` and whose "killed" state is ``Failing``/``Failed``; states and the
edges the seed leaves implicit follow Apache YuniKorn's application state
machine (``Starting`` is not part of our contract and is left out).
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, edges

G = "001 Gang design"

LIFECYCLE = Lifecycle(
    name="application",
    description=(
        "An application submitted by the RM: accepted with its first ask, running with "
        "its first real allocation, completing when nothing is pending or allocated, "
        "then completed after the completing timeout; gang applications can time out "
        "into Failing (hard) or Resuming (soft)."
    ),
    initial="New",
    states=[
        StateSpec("New", f"{G}, 'Scheduler logic changes': added by the RM, no ask yet"),
        StateSpec("Accepted",
                  f"{G}, 'Scheduler logic changes': has asks; placeholders keep it here"),
        StateSpec("Running", f"{G}, 'Cleanup': has real allocations or pending real asks"),
        StateSpec("Completing", f"{G}, 'Application completion': the seed's 'waiting' state"),
        StateSpec("Completed", f"{G}, 'Application completion': waiting timed out, clean"),
        StateSpec("Failing", f"{G}, 'Cleanup': 'killed', waiting for placeholder releases"),
        StateSpec("Failed", f"{G}, 'Cleanup': 'killed' once every placeholder is released"),
        StateSpec("Rejected", "002 Spec, 'RejectedApplication': refused at submission"),
        StateSpec("Resuming", f"{G}, AddApplicationRequest.gangSchedulingStyle soft: timed out"),
        StateSpec("Expired", "YuniKorn: a terminated application forgotten after expiry", True),
    ],
    transitions=edges(
        ("accept", ["New"], "Accepted",
         f"{G}, 'Scheduler logic changes': the first ask moves New to Accepted"),
        ("accept", ["Resuming"], "Accepted",
         f"{G}, gangSchedulingStyle soft: placeholders gone, schedule as a normal app"),
        ("run", ["Accepted"], "Running",
         f"{G}, 'Scheduler logic changes': a real allocation (placeholders do not count)"),
        ("run", ["Completing"], "Running",
         f"{G}, 'Cleanup': new asks move a waiting application back to running"),
        ("wait", ["Accepted", "Running"], "Completing",
         f"{G}, 'Definition': no pending asks and no real allocations"),
        ("complete", ["Completing"], "Completed",
         f"{G}, 'Cleanup': waiting timed out and no placeholder is left"),
        ("reject", ["New"], "Rejected",
         "002 Spec, 'RejectedApplication': the core can not honour the submission"),
        ("fail", ["Accepted", "Running"], "Failing",
         f"{G}, 'Cleanup': hard placeholder timeout with placeholder asks pending"),
        ("kill", ["Failing"], "Failed",
         f"{G}, 'Cleanup': the shim confirmed the release of every placeholder"),
        ("resume", ["Accepted"], "Resuming",
         f"{G}, gangSchedulingStyle soft: placeholder timeout, release placeholders"),
        ("expire", ["Completed", "Failed", "Rejected"], "Expired",
         "YuniKorn: terminated applications are forgotten after a retention period"),
    ),
    state_sets={
        "live": ["New", "Accepted", "Running", "Completing", "Failing", "Resuming"],
        "terminated": ["Completed", "Failed", "Rejected", "Expired"],
        "schedulable": ["Accepted", "Running", "Completing"],
        "takes_asks": ["New", "Accepted", "Running", "Completing", "Resuming"],
        "recoverable": ["New", "Accepted", "Running", "Completing"],
        "started": ["Running", "Completing"],
    },
)

LIVE = LIFECYCLE.state_sets["live"]
"""Not terminated: the core still tracks and may change it."""
TERMINATED = LIFECYCLE.state_sets["terminated"]
"""Finished: kept (holding nothing) until it expires."""
SCHEDULABLE = LIFECYCLE.state_sets["schedulable"]
"""The scheduling cycle may place its asks."""
TAKES_ASKS = LIFECYCLE.state_sets["takes_asks"]
"""May receive new asks from the RM (a failing application may not)."""
RECOVERABLE = LIFECYCLE.state_sets["recoverable"]
"""May take allocations recovered from the RM (it will run and release them)."""
STARTED = LIFECYCLE.state_sets["started"]
"""Has started: holds a ``maxapplications`` slot even with nothing allocated."""
