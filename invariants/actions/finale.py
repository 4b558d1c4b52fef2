"""The case's finale: a story played after the drawn rules, on a stream of its own.

A story that needs a quiet cluster and exact sizes goes here instead of among the
rules: appended at a case's end, it leaves every step drawn before it as it was, so the
cases the self-test's broken cores were found in stay the cases they were.
"""

from __future__ import annotations

from collections.abc import Iterator

from invariants.actions.cluster_nodes import joining
from invariants.actions.draw import Gen, ending
from invariants.actions.preemption_endings import _placed
from invariants.actions.work import _open_home, _send, _submit_to
from scheduler import si
from scheduler.trace import Step

FINALE_SHARE = 0.15
"""How many cases end with the reservation hand-over (drawn from ``Gen.finale``)."""

FALLBACK_SHARE = 0.3
"""How many of the cases with a predicates callback end with the fallback story."""

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


def _keys(g: Gen, prefix: str, wanted: list[tuple[bool, bool]], p: str, q: str
          ) -> list[str] | None:
    """Ask keys the case's predicates callback allows on nodes ``p`` and ``q`` as each of
    ``wanted`` says, or None when no key of a few dozen does (the callback refuses by a
    hash of key and node, so some pairs of nodes admit no such key)."""
    predicate = g.scenario.predicate()
    assert predicate is not None
    keys = []
    for n, (on_p, on_q) in enumerate(wanted):
        key = next((k for k in (f"{prefix}-{n}-{i}" for i in range(64))
                    if predicate(k, p) == on_p and predicate(k, q) == on_q), None)
        if key is None:
            return None
        keys.append(key)
    return keys


def fallback_beside_confirmed(g: Gen) -> Iterator[Step]:
    """A real ask whose placeholder's node the RM's predicates refuse falls back onto the
    node of another placeholder of its task group confirmed in the same request (``001``
    "Scheduler logic changes": a real ask takes a placeholder's place; goal
    ``gang.fallback_beside_confirmed_placeholder``).

    Only in a case with a predicates callback. Nodes P (memory 30, 3 lanes) and Q (the
    same) join; a Soft gang sends two placeholders of one task group (memory 10, a lane
    each), one the callback allows only on P, the other only on Q, and two real asks of
    that group allowed only on Q. The cycle places both placeholders and pairs each real
    ask with one; the shim confirms both releases in one request, and the real ask paired
    with P's placeholder goes to Q beside the other. Every choice comes from ``g.finale``.
    """
    home = _open_home(g, {"memory": 20}, gang=True, pick=g.finale)
    if home is None:
        return
    partition, leaf, user, groups = home
    gang = g.new_id("gang-")
    p, keys = g.new_id("node-"), None
    for _ in range(8):
        q = g.new_id("node-")
        keys = _keys(g, gang, [(True, False), (False, True), (False, True), (False, True)],
                     p, q)
        if keys is not None:
            break
    if keys is None:
        return
    for node in (p, q):
        yield joining(g, node, partition, si.Resource.of(memory=30, **{LANE: 3}))
    yield _submit_to(g, gang, leaf, partition,
                     si.UserGroupInformation(user=user, groups=list(groups)),
                     tags={"namespace": "ns1"},
                     placeholder_ask=si.Resource.of(memory=20, **{LANE: 2}),
                     gang_scheduling_style="Soft")
    if not _placed(g, gang, leaf):
        return

    def pod(key: str, placeholder: bool) -> si.AllocationAsk:
        return si.AllocationAsk(
            allocation_key=key, application_id=gang, partition_name=partition,
            resource_ask=si.Resource.of(memory=10, **{LANE: 1}), max_allocations=1,
            task_group_name="tg0", placeholder=placeholder)

    yield _send(g, *(pod(key, i < 2) for i, key in enumerate(keys)))
    yield Step.schedule()
    rv = g.rv
    swapping = [a for a in rv.running() if a.app == gang and a.releasing is not None] \
        if rv is not None else []
    if swapping and rv is not None:
        yield g.request("update_allocation", rv.release_request(swapping))
        yield Step.schedule()


@ending
def finale(g: Gen) -> Iterator[Step]:
    """The steps a case ends with: nothing, or one of the finale's stories (the fallback
    one only where the case has the predicates callback it needs)."""
    if g.scenario.predicate_salt is not None and g.finale.random() < FALLBACK_SHARE:
        yield from fallback_beside_confirmed(g)
    elif g.finale.random() < FINALE_SHARE:
        yield from reservation_handover(g)
