"""Gang stories: a whole gang sent, timed out, failed or replaced on purpose, so the
random search reaches the gang design's deep states (``docs/gang.md``)."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from invariants.actions.cluster_nodes import new_node
from invariants.actions.config_texts import PREEMPTION
from invariants.actions.configs import CORE, USERS
from invariants.actions.draw import NA, TT, Gen, rule
from invariants.actions.time import confirmations
from invariants.actions.work import (
    _add,
    _ask,
    _live_gangs,
    _open_home,
    _placeholders,
    _send,
    _submission,
    _submit_to,
)
from invariants.readings import acl_placement, model
from scheduler import si
from scheduler.trace import Step


@rule(1)
def gang_story(g: Gen) -> Iterator[Step]:
    """A whole gang at once: driver maybe first, placeholders, cycles, the timeout passed.

    The deep paths of ``001`` (a Running gang whose placeholders do not all fit
    and that times out, Hard or Soft) need a dozen steps in the right order;
    drawn one by one they are rare, so this rule plays them as a shim would.
    Sometimes (a side draw: the case's own draws stay as they were; never with the
    preemption configuration) a second gang follows, on a node of its own, that
    reaches one of two rules the first one seldom does (``failing_gang_story``,
    ``larger_real_ask_story``).
    """
    yield from _whole_gang(g)
    if g.scenario.shape.text != PREEMPTION and g.side.random() < GANG_ENDINGS:
        yield from (failing_gang_story if g.side.random() < 0.5 else larger_real_ask_story)(g)


GANG_ENDINGS = 0.4
"""How often ``gang_story`` goes on to one of its extra endings."""


def _whole_gang(g: Gen) -> Iterator[Step]:
    members, size = g.rng.randint(2, 4), g.rng.choice((10, 20, 40))
    # Sometimes a second, smaller task group, whose real pod comes while the first group's
    # placeholders run: it must take one of its own group's (001 step 1).
    second = (1, g.rng.choice((5, 10))) if g.rng.random() < 0.3 else None
    app_id, request = _story_gang(g, members, size, second)
    yield _add(g, request)
    if app_id not in _live_gangs(g):
        return
    if g.rng.random() < 0.6:
        yield _send(g, _ask(g, app_id, f"{app_id}-driver", size, task_group_name="tg0"))
        yield Step.schedule()
    yield _placeholders(g, app_id, 0)
    if second is not None:
        yield _placeholders(g, app_id, 1)
    yield Step.schedule()
    if second is not None:
        yield _send(g, _ask(g, app_id, f"{app_id}-tg1-real-{g.new_id('')}", second[1],
                            task_group_name="tg1"))
        yield Step.schedule()
    rv = g.rv
    driver = next((a for a in rv.running() if a.app == app_id and not a.placeholder), None) \
        if rv is not None else None
    if rv is not None and driver is not None and g.rng.random() < 0.5:
        # The driver ends while placeholders still run: Completing, then the leftover
        # placeholders are released at the completing timeout (001 "Allocated placeholders").
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(partition_name=rv.apps[app_id].partition,
                                     application_id=app_id, uuid=driver.uuid,
                                     termination_type=TT.STOPPED_BY_RM)])))
    yield Step.advance(g.rng.choice((10.0, 31.0)))
    yield Step.schedule()
    # A Hard gang that failed while running: its placeholders confirmed before its real pods.
    yield from confirmations(g, g.rng.choice(("none", "all")), placeholders_first=True)


def failing_gang_story(g: Gen) -> Iterator[Step]:
    """A Hard gang that fails while it runs, the shim confirming its placeholders first
    (``001`` "Cleanup", YUNIKORN-574): Failed only once its real pod's release is confirmed.

    A Hard gang fails while Running only when its timeout finds placeholder asks still
    pending; ``gang_story`` rarely gets there (its gang must fit only in part). Here a node
    of its own joins, the driver runs, one placeholder is placed (its timer starts), the
    others are sent just before the clock passes the timeout, so the timer fires before
    the cycle could place them. Every choice comes from ``g.side``.
    """
    rng = g.side
    members, size = rng.randint(2, 3), rng.choice((5, 10))
    timeout = rng.choice((10_000, 30_000))
    app_id, partition = yield from _side_gang(g, [(members, size)], "Hard", timeout, size)
    if not app_id:
        return
    yield new_node(g, partition, (members + 1) * size, 4 * CORE)
    yield _send(g, _ask(g, app_id, f"{app_id}-driver", size,
                        task_group_name=rng.choice(("tg0", ""))))
    yield Step.schedule()
    phs = [_ask(g, app_id, f"{app_id}-tg0-ph-{g.new_id('')}", size, task_group_name="tg0",
                placeholder=True) for _ in range(members)]
    yield _send(g, phs[0])
    yield Step.schedule()
    yield _send(g, *phs[1:])
    yield Step.advance(timeout / 1000 + rng.choice((0.5, 1.0)))
    yield Step.schedule()
    yield from confirmations(g, "all", placeholders_first=True)


def larger_real_ask_story(g: Gen) -> Iterator[Step]:
    """A real pod larger than the placeholders of its task group (``001`` step 1): each
    placeholder it meets is released with TIMEOUT, never swapped for it.

    ``send_real_ask`` draws a larger pod one time in five, and it matters only while the
    group's placeholders all run. Here the gang gets a node of its own, its placeholders are
    placed, then the larger pod comes (sometimes with one that fits, in the other order
    too), and the shim confirms the releases. Every choice comes from ``g.side``.
    """
    rng = g.side
    members, size = rng.randint(1, 2), rng.choice((5, 10, 20))
    app_id, partition = yield from _side_gang(g, [(members, size)], rng.choice(("Hard", "Soft")),
                                              30_000, 2 * size + 5)
    if not app_id:
        return
    yield new_node(g, partition, members * size + 5, 4 * CORE)
    yield _placeholders(g, app_id, 0)
    yield Step.schedule()
    larger = _ask(g, app_id, f"{app_id}-tg0-real-{g.new_id('')}", size + rng.choice((1, 5)),
                  task_group_name="tg0")
    asks = [larger]
    if members > 1 and rng.random() < 0.5:
        fits = _ask(g, app_id, f"{app_id}-tg0-real-{g.new_id('')}", size, task_group_name="tg0")
        asks = [larger, fits] if rng.random() < 0.5 else [fits, larger]
    yield _send(g, *asks)
    yield Step.schedule()
    yield from confirmations(g, rng.choice(("first", "all")))
    yield Step.schedule()


def _side_gang(g: Gen, task_groups: list[tuple[int, int]], style: str, timeout: int,
               extra: int) -> Generator[Step, None, tuple[str, str]]:
    """Submit a gang of an extra ending to a leaf that takes gangs and has room for it and
    ``extra`` memory more (``_open_home``), choices from ``g.side``; returns its id and
    partition once the core accepted it (``""`` otherwise)."""
    pods = sum(n for n, _ in task_groups) + 1
    home = _open_home(g, {"memory": sum(n * s for n, s in task_groups) + extra,
                          "vcore": pods * CORE}, gang=True)
    if home is None:
        return "", ""
    partition, queue, user, groups = home
    app_id = g.new_id("gang-")
    g.gangs[app_id] = task_groups
    yield _submit_to(g, app_id, queue, partition,
                     si.UserGroupInformation(user=user, groups=list(groups)),
                     tags={"namespace": "ns1"}, placeholder_ask=si.Resource.of(
                         memory=sum(n * s for n, s in task_groups),
                         vcore=sum(n for n, _ in task_groups) * CORE),
                     gang_scheduling_style=style, execution_timeout_milli_seconds=timeout)
    return (app_id, partition) if app_id in _live_gangs(g) else ("", "")


@rule(1, late=True)
def gang_timing_story(g: Gen) -> Iterator[Step]:
    """A gang whose timing matters, played as a shim would (``001`` "Cleanup", steps 3-5).

    One of three: its placeholders arrive in two batches half a timeout apart, and
    the clock then passes the timeout counted from the first placeholder but not
    from the last (the timeout starts at the first); a real pod starts a replacement
    and the placeholder's node is drained, removed or shrunk before the shim confirms
    the release (the real pod must go elsewhere, or wait); the real pod ends while
    placeholders run, and the shim deletes every placeholder pod before the
    completing timeout (Completed only after the timeout).
    """
    members, size = g.rng.randint(2, 3), g.rng.choice((5, 10, 20))
    app_id, request = _story_gang(g, members, size)
    timeout = request.execution_timeout_milli_seconds
    yield _add(g, request)
    if app_id not in _live_gangs(g):
        return
    partition = request.partition_name or "default"
    story = g.rng.choice(("staggered", "moved", "deleted"))
    if story == "staggered":
        first = _ask(g, app_id, f"{app_id}-tg0-ph-{g.new_id('')}", size,
                     task_group_name="tg0", placeholder=True)
        yield _send(g, first)
        yield new_node(g, partition, 2 * size, 4 * CORE)
        yield Step.schedule()
        yield Step.advance(timeout / 2000)
        rest = [_ask(g, app_id, f"{app_id}-tg0-ph-{g.new_id('')}", size, task_group_name="tg0",
                     placeholder=True) for _ in range(members - 1)]
        yield _send(g, *rest)
        yield Step.schedule()
        yield Step.advance(timeout / 2000 + g.rng.choice((0.5, 1.0)))
        yield Step.schedule()
        yield from confirmations(g, g.rng.choice(("none", "all")))
        return
    yield _placeholders(g, app_id, 0)
    yield new_node(g, partition, members * size, 4 * CORE)
    yield Step.schedule()
    if story == "moved":
        yield _send(g, _ask(g, app_id, f"{app_id}-tg0-real-{g.new_id('')}", size,
                            task_group_name="tg0"))
        yield Step.schedule()
        rv = g.rv
        ph = next((a for a in rv.running() if a.app == app_id and a.placeholder
                   and a.releasing == TT.PLACEHOLDER_REPLACED), None) if rv is not None else None
        if ph is None:
            return
        how = g.rng.choice(("drain", "decommission", "shrink", "new node"))
        if how == "new node":
            yield new_node(g, partition, 2 * size, 4 * CORE)
        else:
            action = {"drain": NA.DRAIN_NODE, "decommission": NA.DECOMISSION,
                      "shrink": NA.UPDATE}[how]
            fields: dict[str, Any] = {"schedulable_resource": si.Resource.of(
                memory=1, vcore=CORE)} if how == "shrink" else {}
            yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
                si.NodeInfo(node_id=ph.node, action=action, **fields)]))
        yield from confirmations(g, "all")
        yield Step.schedule()
        return
    yield _send(g, _ask(g, app_id, f"{app_id}-driver", size))
    yield Step.schedule()
    rv = g.rv
    if rv is None:
        return
    driver = next((a for a in rv.running() if a.app == app_id and not a.placeholder), None)
    if driver is not None:
        yield g.request("update_allocation", rv.release_request([driver], TT.STOPPED_BY_RM))
    rv = g.rv
    placeholders = [a for a in rv.running() if a.app == app_id and a.placeholder
                    and a.releasing is None] if rv is not None else []
    if rv is not None and placeholders:
        yield g.request("update_allocation", rv.release_request(placeholders, TT.STOPPED_BY_RM))
    yield Step.advance(g.rng.choice((1.0, 29.0, 31.0)))
    yield Step.schedule()


def _story_gang(g: Gen, members: int, size: int, second: tuple[int, int] | None = None
                ) -> tuple[str, si.AddApplicationRequest]:
    """A gang of the stories: Hard or Soft, a short timeout, in a leaf that takes gangs;
    one task group (``tg0``), or a ``second`` (members, size) one too (``tg1``)."""
    app_id = g.new_id("gang-")
    task_groups = [(members, size)] + ([second] if second is not None else [])
    g.gangs[app_id] = task_groups
    request = _submission(
        g, app_id, placeholder_ask=si.Resource.of(
            memory=sum(n * s for n, s in task_groups),
            vcore=sum(n for n, _ in task_groups) * CORE),
        gang_scheduling_style=g.rng.choice(("Hard", "Soft")),
        execution_timeout_milli_seconds=g.rng.choice((10_000, 30_000)))
    home = _gang_home(g)
    if home is not None:
        queue, partition, user, groups = home
        request = request.model_copy(update={
            "queue_name": queue, "partition_name": partition,
            "ugi": si.UserGroupInformation(user=user, groups=list(groups))})
    return app_id, request


def _gang_home(g: Gen) -> tuple[str, str, str, tuple[str, ...]] | None:
    """A leaf that takes gangs (not fair) and a user its ACLs let in, by the configuration."""
    config = model.read(g.scenario.shape.text)
    homes = []
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        for path in pm.leaves():
            if pm.queues[path].sort_policy == "fair":
                continue
            for user, groups in USERS:
                if acl_placement.may_submit(pm.chain(path), user, groups):
                    homes.append((path, name, user, groups))
    return homes[g.rng.randrange(len(homes))] if homes else None
