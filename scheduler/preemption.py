"""Preemption settings: the queue properties, the ask's policy and the constants, read once.

Apache YuniKorn's preemption (``preemption.md``, ``simple_preemptor.md``; the
seeds only name ``PreemptionPolicy``, the required-node tag and
``PREEMPTED_BY_SCHEDULER``). Settings are parsed when the configuration is
applied, so the cycle only compares fields:

- ``preemption.policy``: ``default`` | ``fence`` | ``disabled``, any case; an
  unknown value is ``default``. A queue that does not set it inherits only
  ``disabled`` from its parent (YuniKorn's ``filterParentProperty``): a fence
  is a boundary of one subtree, not of every subtree below it.
- ``preemption.delay``: a Go duration (``30s``, ``1ms``, ``1m30s``); bad,
  zero or negative is the default 30 s. Properties are inherited, so a value
  on a parent is its leaves' default.
- an ask without ``PreemptionPolicy`` may be a victim and may not preempt
  (``common.IsAllowPreemptSelf/Other``), so by default nothing preempts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from . import si
from .objects import REQUIRED_NODE as REQUIRED_NODE
from .objects import Queue

POLICY = "preemption.policy"
DELAY = "preemption.delay"
DEFAULT, FENCE, DISABLED = "default", "fence", "disabled"
DEFAULT_DELAY = 30.0
"""Seconds an ask waits before it may preempt, unless its leaf says otherwise."""
ATTEMPT_INTERVAL = 15.0
"""Seconds between two preemption checks of one ask (YuniKorn's ``preemptAttemptFrequency``)."""
ATTEMPTS_PER_LEAF = 10
"""Asks of one leaf that may try to preempt in one scheduling step (``maxPreemptionsPerQueue``)."""
PREDICATE_BATCH = 10
"""Nodes offered to the RM's preemption predicates per batch (``preemptCheckConcurrency``)."""

_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0,
          "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """A Go ``time.ParseDuration`` string in seconds, or None when it is not one."""
    s = text.strip()
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        return None
    total, pos = 0.0, 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def delay_of(properties: Mapping[str, str]) -> float:
    """``preemption.delay`` in seconds; missing, bad or not positive is 30 s."""
    text = properties.get(DELAY)
    if text is None:
        return DEFAULT_DELAY
    value = parse_duration(text)
    return value if value is not None and value > 0 else DEFAULT_DELAY


def policy_of(own: Mapping[str, str], parent: Queue | None) -> str:
    """The queue's preemption policy: its own value, else ``disabled`` inherited, else default."""
    text = own.get(POLICY)
    if text is None:
        return DISABLED if parent is not None and parent.preemption_policy == DISABLED \
            else DEFAULT
    value = text.strip().lower()
    return value if value in (FENCE, DISABLED) else DEFAULT


def configure(queue: Queue, own: Mapping[str, str], inherits: bool = True) -> None:
    """Set the queue's preemption settings from its own and its effective properties.

    A queue a placement rule creates (``inherits=False``) does not take ``disabled`` from
    its parent: YuniKorn merges parent properties into configured queues only.
    """
    queue.preemption_policy = policy_of(own, queue.parent if inherits else None)
    queue.preemption_delay = delay_of(queue.properties)
    queue.backoff_asks, queue.backoff_delay = backoff_of(queue.properties)


BACKOFF = "application.unschedasks.backoff"
BACKOFF_DELAY = "application.unschedasks.backoff.delay"
DEFAULT_BACKOFF_DELAY = 30.0
_UINT = re.compile(r"[0-9]+")


def backoff_of(properties: Mapping[str, str]) -> tuple[int, float]:
    """Application backoff, not preemption, read here with the other leaf delays: how many
    asks of one application may find no node in one pass before the application is skipped
    (Go's ``ParseUint``: decimal digits within uint64; anything else is 0, off), and for
    how long (a positive Go duration, else 30 s). Inherited like every property
    (apache/yunikorn-core be3bb48 pkg/scheduler/objects/queue.go applyConf,
    ``unschedulableAskBackoff``, ``convertDelay``; YUNIKORN-3115)."""
    text = properties.get(BACKOFF, "")
    asks = int(text) if _UINT.fullmatch(text) and int(text) < 2**64 else 0
    delay_text = properties.get(BACKOFF_DELAY)
    delay = parse_duration(delay_text) if delay_text is not None else None
    return asks, delay if delay is not None and delay > 0 else DEFAULT_BACKOFF_DELAY


def allow_self(policy: si.PreemptionPolicy | None) -> bool:
    """May the ask's allocations be victims (absent policy: yes)."""
    return policy is None or policy.allow_preempt_self


def allow_other(policy: si.PreemptionPolicy | None) -> bool:
    """May the ask preempt others (absent policy: no)."""
    return policy is not None and policy.allow_preempt_other
