"""The case's finale: a story played after the drawn rules, on a stream of its own.

A story that needs a quiet cluster and exact sizes goes here instead of among the
rules: appended at a case's end, it leaves every step drawn before it as it was, so the
cases the self-test's broken cores were found in stay the cases they were.
"""

from __future__ import annotations

from collections.abc import Iterator

from scheduler import si
from scheduler.trace import Step

from . import Gen
from .cluster import joining
from .work import _open_home, _placed, _send, _submit_to

FINALE_SHARE = 0.15
"""How many cases end with the finale (drawn from ``Gen.finale``)."""

LANE = "example.com/lane"
"""An extended resource only the finale's nodes have, and no vcore: its pods need lanes
and no vcore, so they run there alone, and no other pod of the case (every one asks for
vcore) takes or reserves those nodes."""


def _lane_ask(g: Gen, app_id: str, memory: int, lanes: int, priority: int = 0
              ) -> si.AllocationAsk:
    rv = g.rv
    partition = rv.apps[app_id].partition if rv is not None and app_id in rv.apps \
        else "default"
    return si.AllocationAsk(
        allocation_key=g.new_id("ask-"), application_id=app_id, partition_name=partition,
        resource_ask=si.Resource.of(memory=memory, **{LANE: lanes}), max_allocations=1,
        priority=priority)


def reservation_handover(g: Gen) -> Iterator[Step]:
    """A reservation given up mid-cycle opens its node to an ask that failed on it earlier
    in the same cycle (``004`` "Implementation": skip only what can not be satisfied now).

    Node N (memory 60, lanes 5) joins and a filler takes memory 10 and 2 lanes; ask Y
    (memory 10, 4 lanes) can not fit N's free room and reserves N once past its
    reservation delay. Ask X of the same application (memory 40, 1 lane), of higher
    priority, then fails on N, reserved for Y. Node M (memory 20, 8 lanes) joins. In the
    next cycle X goes first and fails (N reserved, M too small); Y goes to M, which gives
    up N's reservation; X must then be placed on N in that same cycle. Every choice comes
    from ``g.finale``.
    """
    home = _open_home(g, {"memory": 60}, pick=g.finale)
    if home is None:
        return
    partition, leaf, user, groups = home
    yield joining(g, g.new_id("node-"), partition, si.Resource.of(memory=60, **{LANE: 5}))
    app = g.new_id("app-")
    yield _submit_to(g, app, leaf, partition,
                     si.UserGroupInformation(user=user, groups=list(groups)))
    if not _placed(g, app, leaf):
        return
    yield _send(g, _lane_ask(g, app, 10, 2))
    yield Step.schedule()
    yield _send(g, _lane_ask(g, app, 10, 4))
    yield Step.schedule()
    yield Step.advance(g.scenario.reservation_delay + 1.0)
    yield Step.schedule()
    yield _send(g, _lane_ask(g, app, 40, 1, priority=1))
    yield joining(g, g.new_id("node-"), partition, si.Resource.of(memory=20, **{LANE: 8}))
    yield Step.schedule()


def finale(g: Gen) -> Iterator[Step]:
    """The steps a case ends with: nothing, or one of the finale's stories."""
    if g.finale.random() < FINALE_SHARE:
        yield from reservation_handover(g)
