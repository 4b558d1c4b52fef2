"""The kept orders (``policies.AppOrder``, ``ChildOrder``) equal a full sort, at every step.

The cycle used to sort a leaf's applications and a parent's children from
scratch before every allocation. They are now kept sorted and re-keyed only
when something their key reads changes, so a forgotten re-key would silently
change which application or queue goes first. This test keeps the full sort
as it was (the reference below, here and not in the library) and drives the
public API with random applications, asks of mixed priorities, gangs,
scheduling, releases, removals, nodes coming and going (the fair base) and
configuration reloads that change policies, priority sorting, offsets, fences
and guarantees. Every time the cycle asks for an order, and for every queue
after every call, the kept order must be the reference's, ties included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scenario_helpers import NA, TT, Env, config, res

from scheduler import policies
from scheduler import resources as rs
from scheduler.objects import Application, Queue

# ------------------------------------------------------------ the reference: the old full sort


def ref_queue_key(queue: Queue) -> tuple[list[float], int, str]:
    return (rs.shares(queue.allocated, queue.guaranteed or {}), -sum(queue.pending.values()),
            queue.path)


def ref_children(queue: Queue) -> list[Queue]:
    """The full sort of the children with pending resources, without those the cycle set
    to rest in this call (``PartitionState.rest_queue``: nothing below them can be placed
    again before the call ends), as ``ref_apps`` leaves out resting applications."""
    kids = [q for q in queue.children.values() if q.pending and not q.resting]
    if len(kids) > 1:
        if queue.priority_sort:
            kids.sort(key=lambda q: (-q.priority, ref_queue_key(q)))
        else:
            kids.sort(key=lambda q: (rs.shares(q.allocated, q.guaranteed or {}), -q.priority,
                                     -sum(q.pending.values()), q.path))
    return kids


def ref_fifo_key(app: Application) -> tuple[float, int, str]:
    return (app.submit_time, -app.priority, app.id)


def ref_state_aware(apps: list[Application], queue: Queue) -> list[Application]:
    starting = any(a.state == "Accepted" and a.allocations for a in queue.apps.values())
    out: list[Application] = []
    admitted = False
    for app in apps:
        if app.state in ("Running", "Completing") or (
                app.state == "Accepted" and app.allocations):
            out.append(app)
        elif app.state == "Accepted" and not starting and not admitted:
            out.append(app)
            admitted = True
    return out


def ref_apps(queue: Queue, capacity: Any) -> list[Application]:
    """The full sort, without the applications the cycle set to rest in this call (it
    skipped them by id before they left the kept order; stateaware still admits no
    other waiting application while the first one rests). Between calls none rests."""
    return [a for a in full_sort(queue, capacity) if not a.resting]


def full_sort(queue: Queue, capacity: Any) -> list[Application]:
    apps = [a for a in queue.apps.values() if a.pending_asks]
    policy = queue.sort_policy
    if len(apps) < 2:
        return ref_state_aware(apps, queue) if policy == "stateaware" else apps
    first = queue.priority_sort
    if policy == "fair":
        base = queue.guaranteed or capacity
        if first:
            apps.sort(key=lambda a: (-a.priority, rs.shares(
                rs.add(a.allocated, a.placeholder_allocated), base), a.submit_seq))
        else:
            apps.sort(key=lambda a: (rs.shares(
                rs.add(a.allocated, a.placeholder_allocated), base), -a.priority, a.submit_seq))
        return apps
    apps.sort(key=ref_fifo_key)
    if policy == "stateaware":
        apps = ref_state_aware(apps, queue)
    if first and len(apps) > 1:
        apps.sort(key=lambda a: -a.priority)
    return apps


# ------------------------------------------------------------ checking every read

CHECKS = {"apps": 0, "children": 0}


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Compare every order the cycle reads with the reference, at the moment it reads it."""

    kept_apps, kept_children = policies.ordered_apps, policies.ordered_children

    def apps(queue: Queue, capacity: Any) -> Iterator[Application]:
        want = ref_apps(queue, capacity)
        got = list(kept_apps(queue, capacity))
        assert [a.id for a in got] == [a.id for a in want], queue.path
        CHECKS["apps"] += 1
        return iter(got)

    def children(queue: Queue) -> Iterator[Queue]:
        want = ref_children(queue)
        got = list(kept_children(queue))
        assert [q.path for q in got] == [q.path for q in want], queue.path
        CHECKS["children"] += 1
        return iter(got)

    # The cycle reads the orders through the policies module (so broken cores can edit them).
    monkeypatch.setattr(policies, "ordered_apps", apps)
    monkeypatch.setattr(policies, "ordered_children", children)
    yield


def check_all(env: Env) -> None:
    """Every queue's kept order against the reference, between calls."""
    from invariants.readings.view import partitions

    for p in partitions(env.api):
        assert not any(a.resting for a in p.apps.values())
        for queue in p.queues.values():
            assert [q.path for q in policies.ordered_children(queue)] == \
                [q.path for q in ref_children(queue)], queue.path
            if queue.is_leaf:
                assert [a.id for a in policies.ordered_apps(queue, p.capacity)] == \
                    [a.id for a in ref_apps(queue, p.capacity)], queue.path


# ------------------------------------------------------------ random configurations

LEAVES = ("root.p.x", "root.p.y", "root.f", "root.s", "root.o")


@st.composite
def configs(draw: st.DrawFn) -> str:
    def props(policy: bool) -> str:
        out = []
        if policy:
            out.append(f"application.sort.policy: "
                       f"{draw(st.sampled_from(['fifo', 'fair', 'stateaware']))}")
        if draw(st.booleans()):
            out.append("application.sort.priority: disabled")
        if draw(st.booleans()):
            out.append(f"priority.offset: \"{draw(st.sampled_from([-20, -1, 5, 50]))}\"")
        if draw(st.integers(0, 3)) == 0:
            out.append("priority.policy: fence")
        if not out:
            return ""
        return "  properties:\n" + "".join(f"    {line}\n" for line in out)

    def guaranteed(parent: bool = False) -> str:
        if draw(st.booleans()):
            return ""
        if parent:  # at least what its two children may be guaranteed together
            return "  resources:\n    guaranteed: {memory: 100, vcore: 50}\n"
        return (f"  resources:\n    guaranteed: {{memory: {draw(st.sampled_from([4, 10, 40]))}"
                f", vcore: {draw(st.sampled_from([2, 20]))}}}\n")

    def leaf(name: str, policy: str | None) -> str:
        body = props(policy is None) + guaranteed()
        if policy is not None:
            body = (f"  properties:\n    application.sort.policy: {policy}\n"
                    + body.replace("  properties:\n", ""))
        return f"- name: {name}\n{body}"

    def indent(text: str) -> str:
        return "".join(f"    {line}\n" for line in text.splitlines())

    parent = "- name: p\n" + props(False) + guaranteed(True) + "  queues:\n" + indent(
        leaf("x", None) + leaf("y", None))
    queues = parent + leaf("f", "fair") + leaf("s", "stateaware") + leaf("o", None)
    extra = ""
    if draw(st.booleans()):
        extra = "    properties:\n      application.sort.priority: disabled\n"
    text = config(queues)
    return text.replace("        submitacl: \"*\"\n", "        submitacl: \"*\"\n"
                        + extra.replace("    properties", "        properties")
                        .replace("      application", "          application"))


APP = st.tuples(st.just("app"), st.sampled_from(LEAVES), st.booleans())
ASK = st.tuples(st.just("ask"), st.integers(0, 30), st.integers(0, 3),
                st.sampled_from([-5, 0, 0, 3, 10]), st.integers(1, 4), st.integers(1, 3))
OPS = st.one_of(
    APP, ASK, ASK, ASK,
    st.tuples(st.just("schedule")),
    st.tuples(st.just("schedule")),
    st.tuples(st.just("release"), st.integers(0, 50)),
    st.tuples(st.just("release"), st.integers(0, 50)),
    st.tuples(st.just("release_ask"), st.integers(0, 30), st.integers(0, 3)),
    st.tuples(st.just("remove_app"), st.integers(0, 30)),
    st.tuples(st.just("node"), st.sampled_from([4, 8, 16]), st.sampled_from([1, 2, 8])),
    st.tuples(st.just("node_off"), st.integers(0, 10)),
    st.tuples(st.just("reload"), st.integers(0, 2)),
    st.tuples(st.just("tick"), st.sampled_from([1.0, 31.0])),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                               HealthCheck.data_too_large])
@given(st.lists(configs(), min_size=3, max_size=3),
       st.lists(APP, min_size=4, max_size=10), st.lists(ASK, min_size=8, max_size=20),
       st.lists(OPS, min_size=10, max_size=60))
def test_kept_orders_equal_a_full_sort(
    checked: None, texts: list[str], first_apps: list[tuple[Any, ...]],
    first_asks: list[tuple[Any, ...]], ops: list[tuple[Any, ...]],
) -> None:
    env = Env(texts[0])
    from invariants.readings.view import partitions

    part = partitions(env.api)[0]
    apps: list[str] = []
    nodes: list[str] = []
    env.add_node("n0", 8, vcore=4)
    nodes.append("n0")
    for op in [*first_apps, *first_asks, *ops]:
        kind = op[0]
        if kind == "app":
            app_id = f"app-{len(apps)}"
            apps.append(app_id)
            env.add_app(app_id, op[1], user=f"u{len(apps) % 3}",
                        placeholder_ask=res(memory=4, vcore=4) if op[2] else None)
        elif kind == "ask" and apps:
            app_id = apps[op[1] % len(apps)]
            app = part.apps.get(app_id)
            gang = app is not None and bool(app.placeholder_ask) and op[2] == 0
            env.ask(app_id, f"k{op[2]}", 1 if gang else op[4], vcore=1, repeats=op[5],
                    priority=op[3], placeholder=gang, task_group="tg" if gang else "")
        elif kind == "schedule":
            env.schedule()
        elif kind == "release" and part.allocations:
            uuids = sorted(part.allocations)
            alloc = part.allocations[uuids[op[1] % len(uuids)]]
            ttype = (TT(alloc.release_type) if alloc.release_type is not None
                     else TT.STOPPED_BY_RM)
            env.release(alloc.app.id, alloc.uuid, ttype)
        elif kind == "release_ask" and apps:
            env.release_ask(apps[op[1] % len(apps)], f"k{op[2]}")
        elif kind == "remove_app" and apps:
            env.remove_app(apps[op[1] % len(apps)])
        elif kind == "node":
            node_id = f"n{len(nodes)}"
            nodes.append(node_id)
            env.add_node(node_id, op[1], vcore=op[2])
        elif kind == "node_off" and nodes:
            env.node_action(nodes[op[1] % len(nodes)], NA.DECOMISSION)
        elif kind == "reload":
            env.update_config(texts[op[1]])
        elif kind == "tick":
            env.advance(op[1])
        check_all(env)
    env.schedule()
    check_all(env)


def test_the_property_test_reads_orders_mid_call(checked: None) -> None:
    """The wrapper sees the cycle's reads (a guard against testing nothing)."""
    env = Env(config("- name: a\n  properties:\n    application.sort.policy: fair\n- name: b"))
    env.add_node("n1", 100)
    for i in range(3):
        env.add_app(f"app-{i}", "root.a")
        env.ask(f"app-{i}", "k", 10, repeats=2, priority=i)
    before = dict(CHECKS)
    assert env.schedule() == 6
    assert CHECKS["apps"] - before["apps"] >= 6
    assert CHECKS["children"] - before["children"] >= 6


def test_fair_order_follows_the_capacity_when_a_node_comes(checked: None) -> None:
    """Without a guarantee, fair shares are taken of the partition's capacity: a node that
    changes the memory:vcore ratio of the capacity reorders the applications at once."""
    env = Env(config("- name: a\n  properties:\n    application.sort.policy: fair\n"
                     "    application.sort.priority: disabled\n- name: b"))
    from invariants.readings.view import partitions

    part = partitions(env.api)[0]
    env.add_node("n1", 100, vcore=100)
    env.add_app("wide", "root.a")
    env.add_app("tall", "root.a")
    env.ask("wide", "k", 40, vcore=1)
    env.ask("tall", "k", 10, vcore=10)
    assert env.schedule() == 2
    env.ask("wide", "more", 1000, vcore=1)  # pending, never fits: both stay in the order
    env.ask("tall", "more", 1000, vcore=1)
    env.schedule()
    leaf = part.queues["root.a"]
    assert [a.id for a in policies.ordered_apps(leaf, part.capacity)] == ["tall", "wide"]
    env.add_node("n2", 1000, vcore=10)
    assert [a.id for a in policies.ordered_apps(leaf, part.capacity)] == ["wide", "tall"]
    check_all(env)
