"""Rules of the work a shim submits: applications, gangs and their placeholders, asks.

Submissions are drawn from every queue name the configuration mentions (and
a few it does not) and every user, valid or not: the model shim's own reading
of the configuration decides what the core must answer, so the rules do not
need to know.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

from invariants.actions.cluster_nodes import joining, new_node
from invariants.actions.configs import CORE, NAMESPACES, PREEMPTION, USERS
from invariants.actions.draw import NA, TT, Gen, rule
from invariants.actions.time import confirmations
from invariants.properties import backoff, limits
from invariants.properties.preemptions import delay as preemption_delay
from invariants.properties.preemptions import disabled, fence_root
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.shim import REQUIRED_NODE, AppView, Kept, RMView
from scheduler import si
from scheduler.trace import Step


def _submission(g: Gen, app_id: str, **gang: Any) -> si.AddApplicationRequest:
    user, groups = g.pick(list(g.scenario.shape.users))
    partitions = g.partitions()
    partition = "default" if "default" in partitions and g.rng.random() < 0.8 \
        else g.pick(partitions)
    queue_name = g.pick(list(g.scenario.shape.queue_names))
    namespace = g.pick(list(NAMESPACES))
    roll = g.placing.random()
    if roll < 0.08:
        # A namespace that is a queue path: YuniKorn's tag rule takes it as one.
        paths = [q for q in g.scenario.shape.queue_names if q.startswith("root.")]
        namespace = g.placing.choice(paths) if paths else namespace
    elif roll < 0.12:
        user, groups = "root", ()          # the user rule's queue is root.root
    return si.AddApplicationRequest(
        application_id=app_id, queue_name=queue_name,
        partition_name=partition, ugi=si.UserGroupInformation(user=user, groups=list(groups)),
        tags={"namespace": namespace, **_namespace_tags(g, bool(gang))}, **gang)


def _quota(**quantities: int) -> str:
    inner = ",".join(f'"{k}":{{"value":{v}}}' for k, v in quantities.items())
    return f'{{"resources":{{{inner}}}}}'


QUOTA_VALUES = (_quota(memory=30), _quota(memory=60, vcore=4000), _quota(memory=20),
                '{"memory": 40}', "{not json", _quota(memory=-5), _quota(memory=0),
                '{"resources":{"memory":{"value":2.5}}}', '{"resources":{"memory":null}}')
"""What a shim may send as a namespace quota or guarantee: readable ones, and the kinds
YuniKorn reads as unset (the legacy form, malformed JSON, negative, zero, a float, null)."""
MAX_APPS_VALUES = ("1", "2", "0", "-1", "many", "+2")


def _namespace_tags(g: Gen, gang: bool = False) -> dict[str, str]:
    """The namespace quota tags a Kubernetes shim copies from the application's namespace
    (YuniKorn ``namespace.resourcequota``, ``namespace.resourceguaranteed``,
    ``namespace.resourcemaxapps``), on about one submission in four, a name sometimes in
    another case. A gang's carry a readable quota more often: its placeholders are held
    to the quota's max before it is accepted."""
    r = g.quotas
    if r.random() >= (0.6 if gang else 0.25):
        return {}
    tags: dict[str, str] = {}
    if r.random() < 0.7:
        small = gang and r.random() < 0.7
        tags["namespace.resourcequota" if r.random() < 0.8 else "Namespace.ResourceQuota"] = \
            r.choice(QUOTA_VALUES[:3] if small else QUOTA_VALUES)
    if r.random() < 0.4:
        tags["namespace.resourceguaranteed"] = r.choice(QUOTA_VALUES)
    if r.random() < 0.4:
        tags["namespace.resourcemaxapps"] = r.choice(MAX_APPS_VALUES)
    return tags


def _add(g: Gen, *requests: si.AddApplicationRequest, **extra: Any) -> Step:
    return g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id,
                                                                  new=list(requests)), **extra)


def _submit_to(g: Gen, app_id: str, leaf: str, partition: str, ugi: si.UserGroupInformation,
               **fields: Any) -> Step:
    """A submission to a chosen leaf (the stories pick where their applications go)."""
    return _add(g, si.AddApplicationRequest(application_id=app_id, queue_name=leaf,
                                            partition_name=partition, ugi=ugi, **fields))


@rule(5, core=True)
def add_app(g: Gen) -> Iterator[Step]:
    """A submission to a queue by a user, valid or not by the configuration."""
    yield _add(g, _submission(g, g.new_id("app-")))


@rule(3)
def add_gang_app(g: Gen) -> Iterator[Step]:
    """A gang: task groups of members, their total as placeholderAsk (``001``)."""
    groups = [(g.rng.randint(1, 3), g.rng.choice((5, 10, 20)))
              for _ in range(g.rng.choice((1, 1, 2)))]
    total = {"memory": sum(n * size for n, size in groups),
             "vcore": sum(n for n, _ in groups) * CORE}
    app_id = g.new_id("gang-")
    g.gangs[app_id] = groups
    yield _add(g, _submission(
        g, app_id, placeholder_ask=si.Resource.of(**total),
        gang_scheduling_style=g.rng.choice(("Hard", "Soft", "")),
        execution_timeout_milli_seconds=g.pick(list(g.scenario.gang_timeouts))))
    # A shim creates the placeholder pods right after the application (001 "Generic flow"),
    # sometimes after the driver pod that triggered it was already sent (and placed).
    if g.rng.random() < 0.7 and app_id in _live_gangs(g):
        if g.rng.random() < 0.3:
            yield _send(g, _ask(g, app_id, f"{app_id}-driver", groups[0][1], task_group_name="tg0"))
            yield Step.schedule()
        for index in range(len(groups)):
            yield _placeholders(g, app_id, index)


@rule(0.7)
def resubmit_app(g: Gen) -> Iterator[Step]:
    """An application id submitted again: a live one (refused) or a finished one (taken)."""
    rv = g.rv
    if rv is None or not rv.apps:
        return
    app_id = g.pick(sorted(rv.apps))
    ended = [a for a, v in sorted(rv.apps.items()) if not v.live]
    if ended:
        # An ended one while there is one (drawn off the id counter, so the case's stream
        # stays as it was): a live one is refused by every core, an ended one tells.
        app_id = ended[g.next_id % len(ended)]
    view = rv.apps[app_id]
    request = view.submitted.get().model_copy()
    yield _add(g, request)


def _live_gangs(g: Gen) -> list[str]:
    rv = g.rv
    if rv is None:
        return []
    return sorted(a for a, v in rv.apps.items() if v.live and v.gang and a in g.gangs)


def _send(g: Gen, *asks: si.AllocationAsk) -> Step:
    """The shim sends asks (new, or updates of ones it sent)."""
    return g.request("update_allocation", si.AllocationRequest(rm_id=g.rm_id, asks=list(asks)))


def _ask(g: Gen, app_id: str, key: str, memory: int, repeats: int = 1,
         **fields: Any) -> si.AllocationAsk:
    rv = g.rv
    partition = rv.apps[app_id].partition if rv is not None and app_id in rv.apps else "default"
    return si.AllocationAsk(allocation_key=key, application_id=app_id, partition_name=partition,
                            resource_ask=si.Resource.of(memory=memory, vcore=CORE),
                            max_allocations=repeats, **fields)


def _placeholders(g: Gen, app_id: str, index: int) -> Step:
    """One placeholder pod per member of a task group (option A of ``001``), or now and
    then one ask whose repeats are the members (the SI allows it): a timeout may then
    find some of an ask's repeats placed and others pending."""
    members, size = g.gangs[app_id][index]
    if members > 1 and g.grouping.random() < 0.3:
        return _send(g, _ask(g, app_id, f"{app_id}-tg{index}-ph-{g.new_id('')}", size,
                             members, task_group_name=f"tg{index}", placeholder=True))
    asks = [_ask(g, app_id, f"{app_id}-tg{index}-ph-{g.new_id('')}", size,
                 task_group_name=f"tg{index}", placeholder=True) for _ in range(members)]
    return _send(g, *asks)


@rule(4)
def send_placeholders(g: Gen) -> Iterator[Step]:
    """Placeholders for one task group of a live gang (again, or late)."""
    app_id = g.pick(_live_gangs(g))
    if app_id is None:
        return
    yield _placeholders(g, app_id, g.rng.randrange(len(g.gangs[app_id])))


@rule(4)
def send_real_ask(g: Gen) -> Iterator[Step]:
    """A real pod of a task group: the size of its placeholder, smaller, or larger."""
    app_id = g.pick(_live_gangs(g))
    if app_id is None:
        return
    index = g.rng.randrange(len(g.gangs[app_id]))
    size = max(1, g.gangs[app_id][index][1] + g.rng.choice((0, 0, 0, -2, 5)))
    yield _send(g, _ask(g, app_id, f"{app_id}-tg{index}-real-{g.new_id('')}", size,
                        task_group_name=f"tg{index}"))


@rule(6, core=True)
def add_ask(g: Gen) -> Iterator[Step]:
    """A pod (or several repeats of one) for a live application; sometimes an update."""
    rv = g.rv
    app_id = g.pick(rv.live_apps()) if rv is not None else None
    if rv is None or app_id is None:
        return
    keys = sorted(k for a, k in rv.asks if a == app_id)
    key = g.pick(keys) if keys and g.rng.random() < 0.2 else g.new_id("ask-")
    size = g.rng.choice((5, 10, 30, 50))
    repeats = g.rng.randint(1, 3)
    priority = g.rng.choice((0, 0, 5, 10, -5))
    fields = _preemption_fields(g)
    created = _created_tag(g)
    if created:
        fields["tags"] = {**fields.get("tags", {}), **created}
    yield _send(g, _ask(
        g, app_id, key, size, repeats, priority=priority,
        execution_timeout_milli_seconds=g.pick(list(g.scenario.ask_timeouts)),
        **fields))
    # Sometimes (a stream of its own: the case's draws stay as they were) a rival in the same
    # fair leaf asks for as much at once, so that one cycle places both applications' repeats
    # in turns and each allocation's usage must move its application in the leaf's order.
    rival = _fair_rival(g, app_id) if g.rival.random() < RIVAL_ASKS else None
    if rival is not None:
        yield _send(g, _ask(g, rival, g.new_id("ask-"), size, g.rival.randint(2, 3),
                            priority=priority))
    if g.backoff.random() < BACKOFF_ASKS:
        yield from _unschedulable_asks(g, app_id)


RIVAL_ASKS = 0.3
"""How often ``add_ask`` is followed by a rival's ask in the same fair leaf."""


def _fair_rival(g: Gen, app_id: str) -> str | None:
    """Another live application in ``app_id``'s leaf, when the configuration sorts that leaf
    fair, preferring one that already runs."""
    rv = g.rv
    if rv is None:
        return None
    mine = rv.apps[app_id]
    pm = rv.config.partition(mine.partition)
    leaf = pm.queues.get(mine.path) if pm is not None else None
    if leaf is None or leaf.sort_policy != "fair":
        return None
    rivals = [a for a, v in sorted(rv.apps.items()) if a != app_id and v.live
              and v.path == mine.path and v.partition == mine.partition]
    running = [a for a in rivals if rv.apps[a].state == "Running"]
    return g.rival.choice(running or rivals) if rivals else None


def _preemption_fields(g: Gen) -> dict[str, Any]:
    """Sometimes a PreemptionPolicy (opted in or out), sometimes a required node."""
    fields: dict[str, Any] = {}
    if g.rng.random() < 0.3:
        fields["preemption_policy"] = si.PreemptionPolicy(
            allow_preempt_self=g.rng.random() < 0.7, allow_preempt_other=g.rng.random() < 0.7)
    if g.rng.random() < 0.1:
        fields["originator"] = True
    rv = g.rv
    if rv is not None and rv.nodes and g.rng.random() < 0.08:
        fields["tags"] = {REQUIRED_NODE: g.pick(sorted(rv.nodes))}
    return fields


BACKOFF_ASKS = 0.3
"""How often ``add_ask`` is followed, in a leaf with application backoff, by as many asks
no node can hold as the leaf's threshold."""


def _unschedulable_asks(g: Gen, app_id: str) -> Iterator[Step]:
    """In a leaf whose ``application.unschedasks.backoff`` is N > 0 (the checker's reading),
    N asks larger than any node of the partition, sorted first (priority 10): with another
    ask of the application after them, the next cycle backs the application off."""
    rv = g.rv
    app = rv.apps.get(app_id) if rv is not None else None
    part = rv.config.partition(app.partition) if rv is not None and app is not None else None
    leaf = part.queues.get(app.path) if part is not None and app is not None else None
    if rv is None or app is None or leaf is None:
        return
    n, _delay = backoff.settings(leaf)
    if not 0 < n <= 3:
        return
    big = max((nv.capacity.get("memory", 0) for nv in rv.nodes.values()
               if nv.partition == app.partition), default=0) + g.backoff.choice((10, 100))
    yield _send(g, *(_ask(g, app_id, g.new_id("ask-"), big, priority=10) for _ in range(n)))


CREATED_TAGS = 0.35
"""How often ``add_ask`` sends a ``creationTime`` tag."""


def _created_tag(g: Gen) -> dict[str, str]:
    """Sometimes a ``creationTime`` tag: a pod created up to ten minutes ago (often before
    its application was submitted, which moves the application back in fifo order), one
    from the future, or a value YuniKorn can not read."""
    if g.created.random() >= CREATED_TAGS:
        return {}
    now = int(g.world.clock.now())
    early = now - g.created.randint(0, 600)
    value = g.created.choice((str(early), str(early), f"+{early}", str(now + 60),
                              "yesterday", ""))
    return {"creationTime": value}


@rule(1)
def resend_ask(g: Gen) -> Iterator[Step]:
    """An informer resync: the shim sends again, unchanged, an ask whose pods all run;
    sometimes resized (a pod resized in place), an update the core must refuse, as it
    asks for no repeat beyond those allocated (``docs/design-notes.md`` "Ask updates")."""
    rv = g.rv
    done = sorted(key for key, k in rv.asks.items() if k.pending == 0 and not k.recovered
                  and key[0] in rv.apps and rv.apps[key[0]].live) if rv is not None else []
    picked = g.pick(done)
    if rv is None or picked is None:
        return
    k = rv.asks[picked]
    resource = dict(k.resource)
    if g.rng.random() < 0.3:
        resource["memory"] = max(1, resource.get("memory", 0) + g.rng.choice((5, -2)))
    yield _send(g, si.AllocationAsk(allocation_key=k.key, application_id=k.app,
                                    partition_name=rv.apps[k.app].partition,
                                    resource_ask=si.resource_from_dict(resource),
                                    max_allocations=k.max_allocations, priority=k.priority,
                                    task_group_name=k.task_group, placeholder=k.placeholder,
                                    execution_timeout_milli_seconds=k.timeout_ms))


@rule(1)
def remove_ask(g: Gen) -> Iterator[Step]:
    """The RM withdraws an ask, or every ask of an application."""
    rv = g.rv
    keys = sorted(rv.asks) if rv is not None else []
    picked = g.pick(keys)
    if picked is None:
        return
    app_id, key = picked
    whole = g.rng.random() < 0.2
    partition = rv.apps[app_id].partition if rv is not None and app_id in rv.apps else "default"
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
            si.AllocationAskRelease(partition_name=partition, application_id=app_id,
                                    allocation_key="" if whole else key,
                                    termination_type=TT.STOPPED_BY_RM)])))


@rule(0.7, undo=True)
def remove_app(g: Gen) -> Iterator[Step]:
    """The RM removes an application: its asks and allocations go with it."""
    rv = g.rv
    app_id = g.pick(sorted(rv.apps)) if rv is not None else None
    if rv is None or app_id is None:
        return
    yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
        si.RemoveApplicationRequest(application_id=app_id,
                                    partition_name=rv.apps[app_id].partition)]))


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


def _open_home(g: Gen, need: dict[str, int], gang: bool = False, limited: bool = False,
               avoid: tuple[str, tuple[str, ...]] | None = None,
               pick: random.Random | None = None
               ) -> tuple[str, str, str, tuple[str, ...]] | None:
    """By the shim's records and the configuration in force, a partition, a leaf its
    placement keeps an application in, and a user who may submit there, with room for
    ``need`` more on every queue of the path and within the user's and group's limits, and
    a ``maxapplications`` slot free (not fair when for a ``gang``; with a user's or group's
    memory limit on the path when ``limited``; not ``avoid``'s user nor one sharing a group
    with it); drawn from ``pick``, else ``g.side``. None when the RM is paused or stopped,
    or no leaf qualifies."""
    rv = g.rv
    if rv is None or rv.paused or rv.stopped:
        return None
    homes = []
    for name in sorted(rv.config.partitions):
        pm = rv.config.partitions[name]
        for leaf in pm.leaves():
            if gang and pm.queues[leaf].sort_policy == "fair":
                continue
            chain = pm.chain(leaf)
            if _queue_slots(rv, name, chain) < 1 or any(
                    q.max and not qty.within(qty.plus(rv.usage_below(name, q.path), need), q.max)
                    for q in chain):
                continue
            for user, groups in USERS:
                if avoid is not None and (user == avoid[0] or set(groups) & set(avoid[1])):
                    continue
                group = limits.group_for(chain, groups)
                if limited and not any(
                        lim is not None and "memory" in lim.max_resources
                        for q in chain for lim in (limits.limit_for(q, limits.USER, user),
                                                   limits.limit_for(q, limits.GROUP, group))):
                    continue
                if not _lands(pm, leaf, user, groups) or not model.may_submit(chain, user, groups):
                    continue
                probe = AppView("", name, Kept(si.AddApplicationRequest(
                    application_id="probe", queue_name=leaf,
                    ugi=si.UserGroupInformation(user=user, groups=list(groups)))), leaf,
                    group=group)
                if not limits.held_by_limits(rv, probe, need):
                    homes.append((name, leaf, user, groups))
    return homes[(pick or g.side).randrange(len(homes))] if homes else None


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
                if model.may_submit(pm.chain(path), user, groups):
                    homes.append((path, name, user, groups))
    return homes[g.rng.randrange(len(homes))] if homes else None


@rule(1)
def priority_story(g: Gen) -> Iterator[Step]:
    """Two applications competing in one cycle, the later one (or the busier queue) of higher
    priority.

    Priority decides only when several runnable asks wait at once, and an
    order by priority differs from the policy's own only when the policy
    would pick the other one: the lower-priority application submitted first
    (fifo), or using less (fair), or sitting in the less used sibling queue.
    Drawn one request at a time, with a cycle after most of them, that
    situation is rare; this rule builds it as a shim would see it happen.
    """
    home = _priority_home(g)
    if home is None:
        return
    partition, user, groups, high_leaf, low_leaf = home
    ugi = si.UserGroupInformation(user=user, groups=list(groups))

    low, high = g.new_id("app-"), g.new_id("app-")
    size = g.rng.choice((5, 10, 30))
    yield _submit_to(g, low, low_leaf, partition, ugi,
                     tags={"namespace": g.pick(list(NAMESPACES))})
    if g.rng.random() < 0.7:
        yield Step.advance(1.0)
    yield _submit_to(g, high, high_leaf, partition, ugi,
                     tags={"namespace": g.pick(list(NAMESPACES))})
    if g.rng.random() < 0.6:
        # The higher-priority side gets ahead first: more usage, so fair order disagrees.
        yield _send(g, _ask(g, high, g.new_id("ask-"), size, priority=g.rng.choice((0, 10))))
        yield Step.schedule()
    yield _send(g, _ask(g, low, g.new_id("ask-"), size, g.rng.randint(1, 2),
                        priority=g.rng.choice((-5, 0))))
    yield _send(g, _ask(g, high, g.new_id("ask-"), size, g.rng.randint(1, 2), priority=10))
    yield Step.schedule()
    # Sometimes (a side draw: the case's own draws stay as they were) the story goes on to a
    # reservation held by an application its user's limit holds back: by maxapplications,
    # or (never with the preemption configuration) by maxresources.
    roll = g.side.random()
    if roll < 0.5:
        yield from slot_story(g)
    elif roll < 0.5 + HEADROOM_ENDINGS and g.scenario.shape.text != PREEMPTION:
        yield from headroom_story(g)


HEADROOM_ENDINGS = 0.5
"""How often ``priority_story`` goes on to ``headroom_story``."""


def headroom_story(g: Gen) -> Iterator[Step]:
    """A reserved ask whose user's (or group's) ``maxresources`` fills before its node frees
    up (YuniKorn's ugm rule 7, YUNIKORN-2030): the reserved pass must check the headroom too.

    A node joins and another user's pod fills it; application A of a user with a memory
    limit on its path asks for the node's whole room (a required-node pod, or a pod too
    large for every other node's free room) and reserves it; a second pod of A takes, on a
    node of its own, just enough of the user's room that the first no longer fits in it;
    then the filler ends. Every choice comes from ``g.side``.
    """
    home = _headroom_home(g)
    if home is None:
        return
    partition, leaf, (user, groups), size, second = home
    other = _open_home(g, {"memory": size, "vcore": CORE}, avoid=(user, groups))
    rv = g.rv
    if other is None or rv is None:
        return
    _, other_leaf, other_user, other_groups = other
    elsewhere = max((_memory(rv.free(n.id)) for n in rv.nodes.values()
                     if n.partition == partition), default=0)
    required = g.side.random() < 0.5 or size <= max(elsewhere, second)
    joined = new_node(g, partition, size, 4 * CORE)
    node = joined.request.nodes[0].node_id
    yield joined
    filler, a = g.new_id("app-"), g.new_id("app-")
    yield _submit_to(g, filler, other_leaf, partition,
                     si.UserGroupInformation(user=other_user, groups=list(other_groups)),
                     tags={"namespace": "ns1"})
    yield _send(g, _ask(g, filler, g.new_id("ask-"), size, tags={REQUIRED_NODE: node}))
    yield Step.schedule()
    yield _submit_to(g, a, leaf, partition,
                     si.UserGroupInformation(user=user, groups=list(groups)),
                     tags={"namespace": "ns1"})
    pinned: dict[str, Any] = {"tags": {REQUIRED_NODE: node}} if required else {}
    yield _send(g, _ask(g, a, g.new_id("ask-"), size, **pinned))
    yield Step.schedule()
    spare = new_node(g, partition, second, 2 * CORE)
    yield spare
    yield _send(g, _ask(g, a, g.new_id("ask-"), second,
                        tags={REQUIRED_NODE: spare.request.nodes[0].node_id}))
    yield Step.schedule()
    rv = g.rv
    held = [x for x in rv.running() if x.app == filler] if rv is not None else []
    if rv is not None and held:
        yield g.request("update_allocation", rv.release_request(held, TT.STOPPED_BY_RM))
        yield from _filler_gone(g, filler, partition)
    yield Step.schedule()


def _headroom_home(g: Gen) -> tuple[str, str, tuple[str, tuple[str, ...]], int, int] | None:
    """For ``headroom_story``: a partition, a leaf and a user (``_open_home``) with a memory
    limit on the path, the reserved pod's size within the user's room there, and the second
    pod's, which leaves the first no room (drawn from ``g.side``)."""
    rv = g.rv
    home = _open_home(g, {"memory": 5, "vcore": 2 * CORE}, limited=True)
    if rv is None or home is None:
        return None
    partition, leaf, user, groups = home
    pm = rv.config.partitions[partition]
    chain = pm.chain(leaf)
    room = min(_memory_rooms(rv, partition, chain, user, groups), default=0)
    sizes = [s for s in (5, 10, 20) if s <= room - 2]
    if not sizes:
        return None
    size = g.side.choice(sizes)
    second = room - size + 1
    need = {"memory": room + 1 + size, "vcore": 3 * CORE}
    if any(q.max and not qty.within(qty.plus(rv.usage_below(partition, q.path), need), q.max)
           for q in chain):
        return None
    return partition, leaf, (user, groups), size, second


def slot_story(g: Gen) -> Iterator[Step]:
    """An application that has not started holds a reservation, and its user's (or group's)
    ``maxapplications`` fills before the node frees up (YuniKorn's ugm rule 7, YUNIKORN-1986).

    A node joins and another user's pod fills it; application A of a user whose limit has
    a few slots left asks for the node's whole room (a required-node pod, or a pod too large
    for every other node's free room) and reserves it; as many applications B of the same
    user as there are slots start first on a node of their own; then the filler ends. The
    reserved pass must not start A while the Bs hold the user's (or group's) last slot.
    Every choice comes from ``g.side``.
    """
    home = _slot_home(g)
    if home is None:
        return
    partition, leaf, (user, groups), (other, other_groups, other_leaf), slots, cap = home
    rv = g.rv
    largest = max((_memory(n.capacity) for n in rv.nodes.values()
                   if n.partition == partition), default=0) if rv is not None else 0
    largest = max(largest, 5 * slots + 5)  # the fillers' node, which joins below
    size = g.side.choice([s for s in (10, 20, 30) if s <= cap])
    required = g.side.random() < 0.5 or size <= largest or largest + 5 > cap
    if not required:
        size = largest + 5
    joined = new_node(g, partition, size, 4 * CORE)
    node = joined.request.nodes[0].node_id
    yield joined
    spare = new_node(g, partition, 5 * slots + 5, (slots + 1) * CORE)
    spare_node = spare.request.nodes[0].node_id
    yield spare
    filler, a = g.new_id("app-"), g.new_id("app-")
    yield _submit_to(g, filler, other_leaf, partition,
                     si.UserGroupInformation(user=other, groups=list(other_groups)),
                     tags={"namespace": "ns1"})
    yield _send(g, _ask(g, filler, g.new_id("ask-"), size, tags={REQUIRED_NODE: node}))
    yield Step.schedule()
    ugi = si.UserGroupInformation(user=user, groups=list(groups))
    yield _submit_to(g, a, leaf, partition, ugi, tags={"namespace": "ns1"})
    pinned: dict[str, Any] = {"tags": {REQUIRED_NODE: node}} if required else {}
    yield _send(g, _ask(g, a, g.new_id("ask-"), size, **pinned))
    yield Step.schedule()
    for _ in range(slots):
        b = g.new_id("app-")
        yield _submit_to(g, b, leaf, partition, ugi, tags={"namespace": "ns1"})
        yield _send(g, _ask(g, b, g.new_id("ask-"), 5, tags={REQUIRED_NODE: spare_node}))
    yield Step.schedule()
    rv = g.rv
    held = [x for x in rv.running() if x.app == filler] if rv is not None else []
    if rv is not None and held:
        yield g.request("update_allocation", rv.release_request(held, TT.STOPPED_BY_RM))
        yield from _filler_gone(g, filler, partition)
    yield Step.schedule()


def _filler_gone(g: Gen, filler: str, partition: str) -> Iterator[Step]:
    """A filler pod today's RM could not bind is pending again (``SCHEDULING_FAILED_ON_RM``):
    the RM withdraws it, or, as a required-node pod, it would share the reserved node and
    take the room back (several required-node reservations on one node)."""
    rv = g.rv
    if rv is None or not any(k[0] == filler and a.pending > 0 for k, a in rv.asks.items()):
        return
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
            si.AllocationAskRelease(partition_name=partition, application_id=filler,
                                    allocation_key="", termination_type=TT.STOPPED_BY_RM)])))


def _memory(r: Mapping[str, int]) -> int:
    return int(r.get("memory", 0))


def _memory_rooms(rv: RMView, partition: str, chain: list[model.QueueModel], user: str,
                  groups: tuple[str, ...]) -> list[int]:
    """The memory each user or group limit on the path still leaves ``user``."""
    return [lim.max_resources["memory"] - _memory(rv.usage_of({a.id for a in mine}))
            for _, _, _, lim, mine in limits.limited_on_path(
                rv, partition, chain, user, limits.group_for(chain, groups))
            if "memory" in lim.max_resources]


def _slot_rooms(rv: RMView, partition: str, chain: list[model.QueueModel], user: str,
                groups: tuple[str, ...]) -> list[int]:
    """The applications each user or group ``maxapplications`` on the path still lets
    ``user`` start."""
    return [lim.max_applications - sum(1 for a in mine if rv.holds_slot(a))
            for _, _, _, lim, mine in limits.limited_on_path(
                rv, partition, chain, user, limits.group_for(chain, groups))
            if lim.max_applications > 0]


def _queue_slots(rv: RMView, partition: str, chain: list[model.QueueModel]) -> int:
    """How many more applications the queues' ``maxapplications`` on the path let start."""
    return min((q.max_applications - sum(
        rv.holds_slot(a) for a in rv.apps_below(partition, q.path))
        for q in chain if q.max_applications > 0), default=1 << 30)


SLOTS_TO_FILL = 3
"""The most applications ``slot_story`` starts to fill a user's last slots."""


def _slot_home(g: Gen) -> tuple[str, str, tuple[str, tuple[str, ...]],
                                 tuple[str, tuple[str, ...], str], int, int] | None:
    """By the shim's records and the configuration in force: a leaf its placement keeps an
    application in, a user who may submit there whose user or group limits on the path leave
    it one to ``SLOTS_TO_FILL`` more applications than it runs there now (none full
    already), another user with such a leaf, how many slots are left, and the most memory
    the held application may ask (at least 10): beside the fillers' pods (5 each) within its
    user's and group's memory limits, and with the other user's pod as large on the queues'
    maxes, whose ``maxapplications`` leave room for them all; not a stateaware leaf. Only
    the slot may hold the application back."""
    rv = g.rv
    if rv is None or rv.paused or rv.stopped:
        return None
    homes = []
    for name in sorted(rv.config.partitions):
        pm = rv.config.partitions[name]
        for leaf in pm.leaves():
            if pm.queues[leaf].sort_policy == "stateaware":
                continue  # the fillers would wait behind A, the first Accepted application
            chain = pm.chain(leaf)
            queue_slots = _queue_slots(rv, name, chain)
            for user, groups in USERS:
                if not model.may_submit(chain, user, groups) or not _lands(pm, leaf, user, groups):
                    continue
                room = _slot_rooms(rv, name, chain, user, groups)
                if not room or not 1 <= min(room) <= SLOTS_TO_FILL:
                    continue
                slots = min(room)
                if queue_slots < slots + 2:
                    continue
                cap = min([min(_memory_rooms(rv, name, chain, user, groups), default=1 << 30)
                           - 5 * slots,
                           *((_memory(q.max) - _memory(rv.usage_below(name, q.path))
                              - 5 * slots) // 2 for q in chain if q.max and "memory" in q.max)])
                if cap < 10:
                    continue
                others = [(u, gs, p) for u, gs in USERS if u != user and not set(gs) & set(groups)
                          for p in pm.leaves() if model.may_submit(pm.chain(p), u, gs)
                          and _lands(pm, p, u, gs)
                          and _free_to_fill(rv, name, p, u, gs, min(cap, 30))]
                if others:
                    homes.append((name, leaf, (user, groups),
                                  others[g.side.randrange(len(others))], slots, cap))
    return homes[g.side.randrange(len(homes))] if homes else None


def _free_to_fill(rv: RMView, partition: str, leaf: str, user: str, groups: tuple[str, ...],
                  size: int) -> bool:
    """Whether ``user``'s limits let a new application of ``size`` memory start in
    ``leaf`` (``slot_story``'s filler must run, or the node it fills stays free)."""
    chain = rv.config.partitions[partition].chain(leaf)
    return min(_slot_rooms(rv, partition, chain, user, groups), default=1) >= 1 and \
        min(_memory_rooms(rv, partition, chain, user, groups), default=size) >= size


def _placement(pm: model.PartitionModel, name: str, user: str, groups: tuple[str, ...],
               tags: Mapping[str, str]) -> model.Placed | None:
    """Where the placement rules put an application submitted to ``name`` with ``tags``,
    by the configuration alone (no queue created yet)."""

    def lookup(path: str) -> bool | None:
        q = pm.queues.get(path)
        return None if q is None else q.leaf

    def may(placed: model.Placed) -> bool:
        # A rule whose queue the user may not submit to passes the application on.
        return model.may_submit(pm.chain(placed.anchor), user, groups)

    return model.place(pm.rules, name, user, groups, tags, lookup, may)


def _lands(pm: model.PartitionModel, leaf: str, user: str, groups: tuple[str, ...]) -> bool:
    """Whether the placement rules keep an application submitted to ``leaf`` there, without
    creating a queue (a story's submissions name their leaf and the namespace ``ns1``)."""
    placed = _placement(pm, leaf, user, groups, {"namespace": "ns1"})
    return placed is not None and placed.path == leaf and not placed.create


def _priority_home(g: Gen) -> tuple[str, str, tuple[str, ...], str, str] | None:
    """A partition, a user, and two leaves it may submit to: one leaf twice, or siblings."""
    config = model.read(g.scenario.shape.text)
    homes = []
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        leaves = pm.leaves()
        for user, groups in USERS:
            open_ = [p for p in leaves if model.may_submit(pm.chain(p), user, groups)]
            for a in open_:
                homes.append((name, user, groups, a, a))
                for b in open_:
                    if a != b and a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]:
                        homes.append((name, user, groups, a, b))
    return homes[g.rng.randrange(len(homes))] if homes else None


@rule(3)
def preemption_story(g: Gen) -> Iterator[Step]:
    """A queue over its guarantee holds the room an ask of a queue under its guarantee needs.

    General preemption needs a leaf above its guarantee, an ask that may preempt
    in a leaf with a guarantee, the ask failing its headroom or every node, and
    the clock past the leaf's preemption.delay: a dozen steps in order. A node
    joins, one application fills it from one leaf, another asks from a leaf
    with a guarantee on its path; the clock passes (or not) the delay, and the
    shim confirms the victims (or not) before the cycle places the ask. One in
    four stories is a required-node ask on the full node instead.
    """
    home = _preemption_home(g)
    if home is None:
        return
    partition, user, groups, victim_leaf, ask_leaf = home
    ugi = si.UserGroupInformation(user=user, groups=list(groups))
    hog, late = g.new_id("app-"), g.new_id("app-")
    refusal = _refusal_home(g, partition, user, groups, hog)
    if refusal is not None:
        victim_leaf, ask_leaf, within = refusal
    created = _created_home(g, partition, user, groups) \
        if refusal is None and g.side.random() < 0.8 else None
    if created is not None:
        # The hog in a leaf a placement rule creates: its guarantee and its preemption
        # settings are its childtemplate's alone (YUNIKORN-809).
        victim_leaf = created[0]
        pm = model.read(g.scenario.shape.text).partitions[partition]
        chains = [pm.chain(p) for p in pm.leaves()]
        asking = [c[0].path for c in chains if model.may_submit(c, user, groups)
                  and any(q.guaranteed for q in c) and fence_root(c) == model.ROOT
                  and not any(q.own.get("priority.policy", "").lower() == "fence"
                              for q in c)]
        if asking:
            # An asking leaf whose preemption fence (root) holds the created one, and no
            # priority fence that would shield every victim.
            ask_leaf = asking[g.side.randrange(len(asking))]
    joined = new_node(g, partition, 60, 60 * CORE)
    node = joined.request.nodes[0].node_id
    size = g.rng.choice((5, 10, 20))
    filler = _refusal_filler(g, partition, user, groups, victim_leaf, hog)
    yield joined
    yield _submit_to(g, hog, victim_leaf, partition, ugi,
                     **({"tags": created[1]} if created is not None else {}))
    # The hog's asks are drawn either way, so a refusal story draws what any story does.
    asks = [_ask(g, hog, g.new_id("ask-"), size, 60 // size,
                 priority=g.rng.choice((0, 0, -5, 10)), **_victim_policy(g))
            for _ in range(g.rng.choice((1, 2)))]
    if filler is not None:
        # Just over its guarantee, by less than one allocation: any victim would take the
        # leaf below it (YuniKorn's law 2), so the ask must wait.
        guarantee = filler[1]
        size = 15 if guarantee % 15 else 20
        asks = [_ask(g, hog, asks[0].allocation_key, size, guarantee // size + 1)]
    for ask in asks:
        yield _send(g, ask)
    yield Step.schedule()
    rv = g.rv
    if rv is not None:
        # Whatever room the nodes still have: the hog takes it too (or, when it must stay
        # just over its guarantee, an application of a leaf no guarantee protects), so the
        # ask finds none.
        room = sum(rv.free(n.id).get("memory", 0) for n in rv.nodes.values()
                   if n.partition == partition and n.state == "Schedulable")
        if filler is not None and room >= 5:
            other = g.new_id("app-")
            yield _submit_to(g, other, filler[0], partition, ugi)
            yield _send(g, _ask(g, other, g.new_id("ask-"), 5, min(room // 5, 40)))
            yield Step.schedule()
            size = 5
        elif room >= size:
            yield _send(g, _ask(g, hog, g.new_id("ask-"), size, min(room // size, 40)))
            yield Step.schedule()
    yield _submit_to(g, late, ask_leaf, partition, ugi)
    # A refusal is worth its set-up only if the ask may preempt the hog and waits long
    # enough; its draws are made all the same.
    required = {"tags": {REQUIRED_NODE: node}} if g.rng.random() < 0.25 else {}
    repeats, priority = g.rng.randint(1, 2), g.rng.choice((0, 0, 10, -5))
    may_preempt = g.rng.random() < 0.9
    if filler is not None:
        required, priority, may_preempt = {}, 0, True
        if refusal is not None:
            # Within its own leaf's guarantee, or it may not preempt at all.
            size, repeats = min(size, within), 1
    yield _send(g, _ask(g, late, g.new_id("ask-"), size, repeats, priority=priority,
                        preemption_policy=si.PreemptionPolicy(
                            allow_preempt_self=True, allow_preempt_other=may_preempt),
                        **required))
    yield Step.schedule()
    wait = g.rng.choice((2.0, 31.0, 61.0))
    yield Step.advance(max(wait, 31.0 if refusal is None else 91.0) if filler is not None
                       else wait)
    if g.rng.random() < 0.2:
        # Room comes back before the cycle: the ask must take it, not preempt.
        yield new_node(g, partition, size, 4 * CORE)
    yield from _reserve_then_preempt()
    if g.side.random() < 0.4:
        yield from _second_preemption(g, late, ask_leaf, partition, size, (hog,))
    if g.rng.random() < 0.5 or (g.side.random() < 0.6 and _victims_unconfirmed(g)):
        # Late confirmations, and the clock past the 15 s between two attempts of one ask
        # (more often while victims wait: an ask preempts once, ever).
        yield Step.advance(31.0)
        yield Step.schedule()
    yield from confirmations(g, g.rng.choice(("all", "all", "first", "none", "twice")))
    yield Step.schedule()
    yield from _directed_ending(g)
    if g.gang_victims.random() < GANG_ENDING_SHARE:
        yield from _gang_ending(g)
    if g.refusals.random() < REFUSAL_ENDING_SHARE:
        yield from _refusal_ending(g)
    if g.capped.random() < MAX_FENCE_ENDING_SHARE:
        yield from _max_fence_ending(g)


GANG_ENDING_SHARE = 0.3
"""How many preemption stories end with a gang's placeholders as the victims (where the
configuration has a place for it: ``_gang_ending``)."""


def _gang_ending(g: Gen) -> Iterator[Step]:
    """A Soft gang of the victims' leaf fills a slot node of its own with placeholders,
    past the leaf's guarantee; an ask of another leaf inside the same fence preempts one
    of them; the shim confirms, and the gang's real pod of the task group comes and takes
    a placeholder's place (goal ``preemption.placeholder_victim``). Every choice comes
    from ``g.gang_victims``, so the case's other streams draw as they did."""
    homes = _ending_homes(g.scenario.shape.text)["second"]
    rv = g.rv
    if not homes or rv is None or rv.stopped or rv.paused:
        return
    partition, ask_leaf, victim, askers, hogs = homes[g.gang_victims.randrange(len(homes))]
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    yield from _clear(g, partition, chain)
    size = next((s for s in (20, 10, 5) if s <= _room_under(g, partition, chain)), 0)
    if not size:
        return
    pods = (_memory_guarantee(pm.chain(victim)) + 2 * size) // size + 2
    yield _slot_node(g, g.new_id("node-"), partition, pods * size, pods)
    gang, user = g.new_id("gang-"), hogs[g.gang_victims.randrange(len(hogs))]
    yield _submit_to(g, gang, victim, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])), gang_scheduling_style="Soft",
        placeholder_ask=si.Resource.model_validate({"resources": {
            "memory": {"value": pods * size}, SLOT: {"value": pods}}}))
    if not _placed(g, gang, victim):
        return
    g.gangs[gang] = [(pods, size)]
    yield _send(g, *(_slotted(_ask(g, gang, f"{gang}-tg0-ph-{g.new_id('')}", size,
                                   task_group_name="tg0", placeholder=True))
                     for _ in range(pods)))
    yield Step.schedule()
    yield from _preempting_ask(g, partition, ask_leaf,
                               askers[g.gang_victims.randrange(len(askers))], size)
    yield from confirmations(g, "all")
    yield Step.schedule()
    yield _send(g, _slotted(_ask(g, gang, f"{gang}-tg0-real-{g.new_id('')}", size,
                                 task_group_name="tg0")))
    yield Step.schedule()
    yield from confirmations(g, "all")
    yield Step.schedule()


REFUSAL_ENDING_SHARE = 0.2
"""How many preemption stories end with a preemption every victim's guarantee refuses
(where the configuration has a place for it: ``_refusal_ending``)."""


@functools.lru_cache(maxsize=64)
def _refusal_homes(text: str) -> list[tuple[str, str, str, int, int, list[User]]]:
    """Where a refusal can be played, by the configuration's reading alone: ``(partition,
    victims' leaf, asking leaf, the victims' smallest memory guarantee, the asking side's,
    users who may submit to both)``; the pairs ``_refusal_home`` takes (preemption on,
    the victims' side guaranteed and not disabled, the asking side guaranteed below root
    with no limits, nothing shared but root, no fence keeping the victims out)."""
    config = model.read(text)
    out = []
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        if not pm.preemption:
            continue
        for victim in pm.leaves():
            vchain = pm.chain(victim)
            if disabled(vchain) or not _memory_guarantee(vchain[:-1]):
                continue
            for ask in pm.leaves():
                achain = pm.chain(ask)
                shared = {q.path for q in vchain} & {q.path for q in achain}
                fence = next((q.path for q in achain if q.own.get(
                    "preemption.policy", "").lower() == "fence"), None)
                users = [u for u in USERS if model.may_submit(achain, *u)
                         and model.may_submit(vchain, *u)]
                if ask != victim and shared == {model.ROOT} and users \
                        and _memory_guarantee(achain[:-1]) \
                        and (fence is None or victim.startswith(fence + ".")) \
                        and not any(q.users or q.groups or q.max_applications for q in achain):
                    out.append((name, victim, ask, _memory_guarantee(vchain[:-1]),
                                _memory_guarantee(achain[:-1]), users))
    return out


def _refusal_ending(g: Gen) -> Iterator[Step]:
    """Every application of a partition removed and the directed endings' slot nodes
    decommissioned, the victims' leaf fills a slot node of its own just past its guarantee
    (by less than one pod); an ask of a leaf within its own guarantee waits past its delay
    with no room anywhere. Taking any pod would leave the victims' leaf below its
    guarantee: nothing may be preempted (YuniKorn's law 2; goal
    ``preemption.refused_guarantee``). Every choice comes from ``g.refusals``."""
    homes = _refusal_homes(g.scenario.shape.text)
    rv = g.rv
    if not homes or rv is None or rv.stopped or rv.paused:
        return
    partition, victim, ask_leaf, guarantee, room, users = \
        homes[g.refusals.randrange(len(homes))]
    size = next((s for s in (20, 15, 10, 5) if s <= room and guarantee % s), 0)
    if not size:
        return
    gone = sorted(a.id for a in rv.apps.values() if a.partition == partition and a.live)
    if gone:
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
            si.RemoveApplicationRequest(application_id=a, partition_name=partition)
            for a in gone]))
    slots = sorted(n.id for n in rv.nodes.values()
                   if n.partition == partition and n.capacity.get(SLOT))
    if slots:
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
            si.NodeInfo(node_id=n, action=NA.DECOMISSION) for n in slots]))
    pods = guarantee // size + 1
    user = users[g.refusals.randrange(len(users))]
    yield from _hog(g, partition, victim, user, size, pods)
    yield from _preempting_ask(g, partition, ask_leaf, user, size)


MAX_FENCE_ENDING_SHARE = 0.3
"""How many preemption stories end with an ask its queue's max fences (when the
configuration has a place for one)."""


CAPPED = """\
          - name: capped
            resources: {max: {memory: 40}}
            properties: {preemption.delay: 1s}
            queues:
              - name: c1
                resources: {guaranteed: {memory: 20}}
              - name: c2
                resources: {guaranteed: {memory: 10}}
"""
"""Queues a max-fence ending adds to the preemption configuration by a reload: ``capped``
has a max and no guarantee, its leaves a guarantee each."""


def _max_fence_ending(g: Gen) -> Iterator[Step]:
    """On the preemption configuration (as drawn, no reload since), a reload adds a capped
    parent (``CAPPED``), leaving what runs as it is (a stalled core's waiting ask stays to
    be judged at the case's end); ``root.a`` fills a slot node above its guarantee with pods of 20,
    ``capped.c2`` another with three pods of 10, and an ask of 20 in ``capped.c1`` would
    take ``capped`` to 50, past its max of 40: ``capped`` fences the victim search
    (YUNIKORN-3241) and only c2's pods may go, although one pod of ``root.a`` would make
    room on its node. Every choice comes from ``g.capped``."""
    text = g.scenario.shape.text
    rv = g.rv
    anchor = "          - name: open\n"
    if "name: fenced" not in text or anchor not in text or g.factor != 1.0 or g.removed \
            or rv is None or rv.stopped or rv.paused \
            or any(k.may_preempt and k.pending > 0 for k in rv.asks.values()):
        # Not while an ask waits to preempt: what the story left is judged at the case's
        # end (a core that never preempts for a node shortage leaves it waiting).
        return
    yield g.request("update_configuration", si.UpdateConfigurationRequest(
        rm_id=g.rm_id, policy_group="queues", config=text.replace(anchor, CAPPED + anchor, 1)))
    partition = "default"
    user = USERS[g.capped.randrange(len(USERS))]
    yield from _hog(g, partition, "root.a", user, 20, 3)
    yield from _hog(g, partition, "root.capped.c2", user, 10, 3)
    app_id = g.new_id("app-")
    yield _submit_to(g, app_id, "root.capped.c1", partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if not _placed(g, app_id, "root.capped.c1"):
        return
    yield _send(g, _slotted(_ask(g, app_id, g.new_id("ask-"), 20, priority=10,
                                 preemption_policy=si.PreemptionPolicy(
                                     allow_preempt_self=True, allow_preempt_other=True))))
    yield Step.schedule()
    yield Step.advance(16.0)
    yield from _reserve_then_preempt()


def _victims_unconfirmed(g: Gen) -> bool:
    """Whether the core preempted something the shim has not confirmed yet."""
    rv = g.rv
    return rv is not None and any(a.releasing == TT.PREEMPTED_BY_SCHEDULER
                                  for a in rv.allocs.values())


ENDING_SHARE = 0.4
"""How many preemption stories go on to one of the directed endings (when the
configuration has a place for one)."""


def _directed_ending(g: Gen) -> Iterator[Step]:
    """Sometimes, a preemption the story itself rarely sets up, played on a node of its own
    (``SLOT``) after the applications of the asking path are removed: an ask behind a
    preemption fence with the victims' leaf outside it (law 7: nothing is preempted); an
    ask its user's or group's limit holds back, its leaf under its guarantee (a limit is
    never a reason to preempt); an ask under its own leaf's guarantee whose parent, shared
    with the victims' leaf, stays over the parent's guarantee whatever victims that leaf's
    own guarantee lets go (law 4: nothing is preempted); or an ask that preempted, deleted
    by the shim before the victims are confirmed, and a second ask of its application
    (its victims must not be ones already being released). Every choice comes from
    ``g.ending``, so the case's other draws stay as they were."""
    if g.ending.random() >= ENDING_SHARE:
        return
    homes = _ending_homes(g.scenario.shape.text)
    kinds = [k for k in ("fence", "limit", "parent", "second") if homes[k]]
    if homes["second"]:
        # Played where "second" can be: two leaves inside one fence, nothing guaranteed above.
        kinds += ["room", "required"]
    rv = g.rv
    if not kinds or rv is None or rv.stopped or rv.paused:
        return
    kind = kinds[g.ending.randrange(len(kinds))]
    pool = homes["second" if kind in ("room", "required") else kind]
    home = pool[g.ending.randrange(len(pool))]
    if kind == "room":
        yield from _room_ending(g, *home)
    elif kind == "required":
        yield from _required_ending(g, *home)
    elif kind == "fence":
        yield from _fence_ending(g, *home)
    elif kind == "limit":
        yield from _limit_ending(g, *home)
    elif kind == "second":
        yield from _second_ending(g, *home)
    else:
        yield from _parent_ending(g, *home)


User = tuple[str, tuple[str, ...]]


@functools.lru_cache(maxsize=64)
def _ending_homes(text: str) -> dict[str, list[tuple[Any, ...]]]:
    """Where each directed ending can be played in a configuration, by its reading alone
    (a user may submit to both leaves, preemption is on in the partition, the victims'
    leaf has a memory guarantee on its path and is not ``disabled``)."""
    config = model.read(text)
    out: dict[str, list[tuple[Any, ...]]] = {"fence": [], "limit": [], "parent": [],
                                             "second": []}
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        if not pm.preemption:
            continue
        leaves = pm.leaves()
        users = {leaf: [u for u in USERS if model.may_submit(pm.chain(leaf), *u)]
                 for leaf in leaves}
        for ask_leaf in leaves:
            achain = pm.chain(ask_leaf)
            if not _memory_guarantee(achain) or not users[ask_leaf]:
                continue
            root = fence_root(achain)
            unlimited = [u for u in users[ask_leaf] if not _limits_of(achain, u)]
            for victim in leaves:
                vchain = pm.chain(victim)
                if victim == ask_leaf or disabled(vchain) or not _memory_guarantee(vchain) \
                        or not users[victim]:
                    continue
                above = {q.path for q in vchain}
                shared = [q for q in achain if q.path in above and q.path != model.ROOT]
                inside = (victim + ".").startswith(root + ".")
                if not inside and unlimited and not any(q.guaranteed for q in shared):
                    out["fence"].append((name, ask_leaf, victim, unlimited, users[victim]))
                if inside and unlimited and not any(q.guaranteed for q in shared):
                    out["second"].append((name, ask_leaf, victim, unlimited, users[victim]))
                if inside and not any(q.guaranteed for q in shared):
                    limited = [u for u in users[ask_leaf] if any(
                        m < _memory_guarantee(achain) for m in _limits_of(achain, u))]
                    if limited:
                        out["limit"].append((name, ask_leaf, victim, limited, users[victim]))
                parent = next((q for q in shared if (q.guaranteed or {}).get("memory")), None)
                if inside and unlimited and parent is not None:
                    out["parent"].append((name, ask_leaf, victim, unlimited, users[victim],
                                          parent.path))
    return out


def _memory_guarantee(chain: list[model.QueueModel]) -> int:
    """The smallest memory guarantee on the path (0: none)."""
    return min(((q.guaranteed or {}).get("memory") or 0 for q in chain
                if (q.guaranteed or {}).get("memory")), default=0)


def _limits_of(chain: list[model.QueueModel], user: User) -> list[int]:
    """The memory limits of ``user`` (its own or its tracked group's) on the path; a user
    under any other limit (maxapplications) counts as limited too, with no memory figure."""
    name, groups = user
    group = limits.group_for(chain, groups)
    out: list[int] = []
    for q in chain:
        for kind, who in ((limits.USER, name), (limits.GROUP, group)):
            lim = limits.limit_for(q, kind, who)
            if lim is not None:
                out.append(lim.max_resources.get("memory", 1 << 30)
                           if lim.max_resources else 1 << 30)
        if q.max_applications:
            out.append(1 << 30)
    return out


def _held(g: Gen, partition: str, path: str) -> int:
    """Memory the applications below ``path`` hold, not counting victims being released."""
    rv = g.rv
    if rv is None:
        return 0
    apps = {a.id for a in rv.apps_below(partition, path)}
    return sum(a.resource.get("memory", 0) for a in rv.allocs.values()
               if a.app in apps and a.releasing != TT.PREEMPTED_BY_SCHEDULER)


def _room_under(g: Gen, partition: str, chain: list[model.QueueModel]) -> int:
    """How much more memory the path may take and stay within every memory guarantee."""
    return min((q.guaranteed["memory"] - _held(g, partition, q.path) for q in chain
                if q.guaranteed and q.guaranteed.get("memory")), default=0)


def _placed(g: Gen, app_id: str, leaf: str) -> bool:
    rv = g.rv
    return rv is not None and app_id in rv.apps and rv.apps[app_id].path == leaf \
        and rv.apps[app_id].live


def _clear(g: Gen, partition: str, chain: list[model.QueueModel]) -> Iterator[Step]:
    """The applications below the highest queue of ``chain`` (root aside) with a memory
    guarantee are removed, pods and asks: the ask's path starts empty, within it."""
    rv = g.rv
    top = next((q.path for q in reversed(chain) if q.path != model.ROOT
                and (q.guaranteed or {}).get("memory")), None)
    if rv is None or top is None:
        return
    gone = sorted(a.id for a in rv.apps_below(partition, top) if a.live)
    if gone:
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
            si.RemoveApplicationRequest(application_id=a, partition_name=partition)
            for a in gone]))


SLOT = "example.com/slot"
"""An extended resource only the directed endings' node has (a device, as a shim reports
one), and no vcore: their victims' pods and their ask need one slot each and no vcore, so
those pods run there, the ask can run nowhere else however much room the rest of the
cluster has, and no other pod (every one asks for vcore) takes the node's room."""


def _slotted(ask: si.AllocationAsk) -> si.AllocationAsk:
    memory = ask.resource_ask.as_dict()["memory"]
    return ask.model_copy(update={"resource_ask": si.Resource.model_validate(
        {"resources": {"memory": {"value": memory}, SLOT: {"value": 1}}})})


def _slot_node(g: Gen, node_id: str, partition: str, memory: int, slots: int) -> Step:
    """A node of the directed endings: ``memory`` and ``slots`` slots, no vcore."""
    return joining(g, node_id, partition, si.Resource.of(memory=memory, **{SLOT: slots}))


def _hog(g: Gen, partition: str, leaf: str, user: User, size: int, pods: int,
         split: bool = False, spare: bool = False) -> Iterator[Step]:
    """A node with ``pods`` slots and room for ``pods`` pods of ``size`` joins, and an
    application of ``leaf`` fills it. ``split``: half the pods a second later than the
    others (twins of two ages). ``spare``: two slots more, and a pod holding one slot and
    nothing else (it frees nothing a pod of the endings lacks there)."""
    yield _slot_node(g, g.new_id("node-"), partition, pods * size, pods + 2 * spare)
    hog = g.new_id("app-")
    yield _submit_to(g, hog, leaf, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if _placed(g, hog, leaf):
        first = pods // 2 if split else pods
        yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, first)))
        yield Step.schedule()
        if split:
            yield Step.advance(1.0)
            yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, pods - first)))
            yield Step.schedule()
        if spare:
            yield _send(g, _slot_only(_ask(g, hog, g.new_id("ask-"), size)))
            yield Step.schedule()


def _slot_only(ask: si.AllocationAsk) -> si.AllocationAsk:
    """``ask`` holding one slot and nothing else."""
    return ask.model_copy(update={"resource_ask": si.Resource.model_validate(
        {"resources": {SLOT: {"value": 1}}})})


def _preempting_ask(g: Gen, partition: str, leaf: str, user: User, size: int,
                    app_id: str = "",
                    meanwhile: Callable[[], Iterator[Step]] | None = None) -> Iterator[Step]:
    """An application of ``leaf`` (``app_id``, submitted unless the shim knows it) asks
    ``size`` with allowPreemptOther, and waits past its leaf's preemption.delay (and the
    15 s between two attempts); ``meanwhile``'s steps come after the ask's first cycle,
    before the wait."""
    rv = g.rv
    app_id = app_id or g.new_id("app-")
    if rv is None or app_id not in rv.apps:
        yield _submit_to(g, app_id, leaf, partition, si.UserGroupInformation(
            user=user[0], groups=list(user[1])))
    if not _placed(g, app_id, leaf):
        return
    yield _send(g, _slotted(_ask(g, app_id, g.new_id("ask-"), size, priority=10,
                                 preemption_policy=si.PreemptionPolicy(
                                     allow_preempt_self=True, allow_preempt_other=True))))
    yield Step.schedule()
    if meanwhile is not None:
        yield from meanwhile()
    pm = model.read(g.scenario.shape.text).partitions[partition]
    yield Step.advance(max(preemption_delay(pm.chain(leaf)[0]), 15.0) + 1.0)
    yield from _reserve_then_preempt()


def _reserve_then_preempt() -> Iterator[Step]:
    """The cycles after an ask's preemption delay: the first reserves a node once the ask
    is past its reservation delay (YuniKorn's tryNodes returns that reservation, and
    preemption waits), the next preempts for it (tryAllocate, the ask holding its
    reservation)."""
    yield Step.schedule()
    yield Step.schedule()


def _fence_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                  hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf, outside the ask's preemption fence, fills the slot node; the ask
    is within its guarantee. Nothing outside the fence may be preempted (law 7)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    yield from _clear(g, partition, pm.chain(ask_leaf))
    room = _room_under(g, partition, pm.chain(ask_leaf))
    size = next((s for s in (20, 10, 5) if s <= room), 0)
    if not size:
        return
    guarantee = _memory_guarantee(pm.chain(victim))
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                    (guarantee + size) // size + 2)
    yield from _preempting_ask(g, partition, ask_leaf, askers[g.ending.randrange(len(askers))],
                               size)


def _limit_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                  hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node; then a user whose limit on the ask's path is
    below its leaf's guarantee asks more than the limit leaves it, within the guarantee.
    The ask waits for its limit: it never preempts."""
    rv = g.rv
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    user = askers[g.ending.randrange(len(askers))]
    yield from _clear(g, partition, chain)
    if rv is None:
        return
    name, groups = user
    left = min(_memory_rooms(rv, partition, chain, name, groups), default=1 << 30)
    size = max(5, left + 5)
    if size > min(_room_under(g, partition, chain), 60):
        return
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], 5,
                    (_memory_guarantee(pm.chain(victim)) + size) // 5 + 2)
    yield from _preempting_ask(g, partition, ask_leaf, user, size)


def _filled(g: Gen, partition: str, ask_leaf: str, victim: str,
            hogs: list[User]) -> Generator[Step, None, int]:
    """The asking path cleared and the victims' leaf filling a slot node past its guarantee
    with pods of the size the ask will take (the largest of 20, 10, 5 within the asking
    path's guarantees); returns that size (0: no room, nothing played after the clearing)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    yield from _clear(g, partition, chain)
    size = next((s for s in (20, 10, 5) if s <= _room_under(g, partition, chain)), 0)
    if size:
        guarantee = _memory_guarantee(pm.chain(victim))
        split, spare = g.victims.random() < 0.5, g.victims.random() < 0.5
        yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                        (guarantee + 2 * size) // size + 2, split, spare)
    return size


def _second_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                   hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node and an ask preempts; the shim deletes that ask
    (its reservation goes with it) before it confirms the victims, and another ask of the
    same application waits past the delay: its preemption must not choose a victim already
    being released (YUNIKORN-3003, YUNIKORN-2141)."""
    size = yield from _filled(g, partition, ask_leaf, victim, hogs)
    if not size:
        return
    user = askers[g.ending.randrange(len(askers))]
    app_id = g.new_id("app-")
    yield from _preempting_ask(g, partition, ask_leaf, user, size, app_id)
    rv = g.rv
    if rv is None or not _placed(g, app_id, ask_leaf):
        return
    first = [k for k in rv.pending_asks(app_id) if k.preempted]
    if not first:
        return
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
            si.AllocationAskRelease(partition_name=partition, application_id=app_id,
                                    allocation_key=k.key, termination_type=TT.STOPPED_BY_RM)
            for k in first])))
    yield from _preempting_ask(g, partition, ask_leaf, user, size, app_id)


def _room_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                 hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node, an ask that may preempt finds no room; then a
    second slot node with room for it joins before the cycle that passes its delay. The ask
    is placed there: preemption is only for an ask that found no node (YuniKorn
    ``Application.tryAllocate``)."""
    size = yield from _filled(g, partition, ask_leaf, victim, hogs)
    if not size:
        return
    user = askers[g.ending.randrange(len(askers))]

    def room() -> Iterator[Step]:
        yield _slot_node(g, g.new_id("node-"), partition, size, 1)

    yield from _preempting_ask(g, partition, ask_leaf, user, size, g.new_id("app-"), room)


def _required_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                     hogs: list[User]) -> Iterator[Step]:
    """A slot node holds two pods of the victims' leaf, the older of priority 0, the newer
    of priority 5; a DaemonSet pod of priority 10 that requires the node needs the room of
    one: the victim is the lower priority one, not the newer (yunikorn-behaviour 2.6 step 2,
    YUNIKORN-1184)."""
    size = g.ending.choice((5, 10))
    # Variants: both pods of priority 0, a second apart (the newer is the victim); a pod
    # holding only a slot, newest, and a DaemonSet pod asking memory alone (that pod is no
    # candidate: it shares no resource type with the ask).
    twins, unshared = g.victims.random() < 0.4, g.victims.random() < 0.4
    node_id = g.new_id("node-")
    yield _slot_node(g, node_id, partition, 2 * size, 3 if unshared else 2)
    hog, user = g.new_id("app-"), hogs[g.ending.randrange(len(hogs))]
    yield _submit_to(g, hog, victim, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if not _placed(g, hog, victim):
        return
    for priority in (0, 0) if twins else (0, 5):
        yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, priority=priority)))
        yield Step.schedule()
        if twins:
            yield Step.advance(1.0)
    if unshared:
        yield _send(g, _slot_only(_ask(g, hog, g.new_id("ask-"), size)))
        yield Step.schedule()
    asker = askers[g.ending.randrange(len(askers))]
    daemon = g.new_id("app-")
    yield _submit_to(g, daemon, ask_leaf, partition, si.UserGroupInformation(
        user=asker[0], groups=list(asker[1])))
    if not _placed(g, daemon, ask_leaf):
        return
    pod = _ask(g, daemon, g.new_id("ask-"), size, priority=10, tags={REQUIRED_NODE: node_id})
    yield _send(g, pod.model_copy(update={"resource_ask": si.Resource.of(memory=size)})
                if unshared else _slotted(pod))
    yield Step.schedule()


def _parent_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                   hogs: list[User], parent: str) -> Iterator[Step]:
    """Two leaves below a parent with a memory guarantee: the victims' leaf fills the
    slot node with pods as large as the ask, then the ask comes, within its own leaf's
    guarantee, but the parent stays over its guarantee whatever victims the victims' leaf
    may lose and stay at or above its own (law 2). Nothing may be preempted (law 4)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    achain, vchain = pm.chain(ask_leaf), pm.chain(victim)
    yield from _clear(g, partition, achain)
    pg = (pm.queues[parent].guaranteed or {})["memory"]
    other = _held(g, partition, parent) - _held(g, partition, victim)
    below = [q for q in achain if len(q.path) > len(parent)]
    room = min(pg - other, _room_under(g, partition, below)) if _memory_guarantee(below) \
        else pg - other
    size = next((s for s in (30, 20, 15, 10, 5) if s <= room), 0)
    guarantee = _memory_guarantee(vchain)
    if not size:
        return
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                    guarantee // size + 3)
    held = _held(g, partition, victim)
    losable = (held - guarantee) // size
    other = _held(g, partition, parent) - held
    if losable < 1 or held - losable * size + size + other <= pg or other + size > pg:
        return
    yield from _preempting_ask(g, partition, ask_leaf, askers[g.ending.randrange(len(askers))],
                               size)


def _second_preemption(g: Gen, app_id: str, leaf: str, partition: str, size: int,
                       others: tuple[str, ...] = ()) -> Iterator[Step]:
    """While the victims of a preemption are released and not yet confirmed, another ask
    of the same application arrives and waits past its leaf's delay: a second preemption
    must not pick a victim already being released (YUNIKORN-3003, YUNIKORN-2141). Drawn
    from ``g.side`` (the story's own draws stay as they were)."""
    rv = g.rv
    if rv is None or app_id not in rv.apps or not any(
            a.releasing == TT.PREEMPTED_BY_SCHEDULER for a in rv.running()):
        return
    pm = model.read(g.scenario.shape.text).partitions.get(partition)
    chain = pm.chain(leaf) if pm is not None else []
    wait = preemption_delay(chain[0]) if chain else 30.0
    # The first ask leaves the node it holds (a second preemption never looks at a node
    # reserved for another ask): the shim deletes its pod, or room comes elsewhere.
    # Every other pod that never ran is deleted too: their reservations go with them.
    first = [k for k in rv.pending_asks(app_id) if k.preempted] + [
        k for a in sorted(rv.apps) if a != app_id and rv.apps[a].partition == partition
        for k in rv.pending_asks(a)]
    if first and g.side.random() < 0.5:
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(partition_name=rv.apps[k.app].partition,
                                        application_id=k.app,
                                        allocation_key=k.key,
                                        termination_type=TT.STOPPED_BY_RM)
                for k in first])))
    elif first:
        yield new_node(g, partition, size, 4 * CORE)
        yield Step.schedule()
    yield _send(g, _ask(g, app_id, g.new_id("ask-"), g.side.choice((size, 5)),
                        priority=g.side.choice((0, 10)),
                        preemption_policy=si.PreemptionPolicy(allow_preempt_self=True,
                                                              allow_preempt_other=True)))
    yield Step.schedule()
    yield Step.advance(max(wait, 15.0) + 1.0)
    yield from _reserve_then_preempt()


def _preemption_home(g: Gen) -> tuple[str, str, tuple[str, ...], str, str] | None:
    """Two leaves one user may submit to, usually different: mostly both with a guarantee
    on their path (often the asking one behind a preemption fence the victim is outside
    of); sometimes the victim's side without one (it must never lose tasks), or the asking
    side (it must never preempt)."""
    config = model.read(g.scenario.shape.text)
    guarded: list[tuple[str, str, tuple[str, ...], str, str]] = []
    asking, other, fenced = [], [], []
    # A partition first (the small one with preemption off counts as much as the big one).
    for name in [g.pick(sorted(config.partitions))]:
        pm = config.partitions[name]
        for user, groups in USERS:
            open_ = [p for p in pm.leaves() if model.may_submit(pm.chain(p), user, groups)]
            for victim in open_:
                for ask in open_:
                    if victim == ask and g.rng.random() < 0.8:
                        continue
                    home = (name, user, groups, victim, ask)
                    if not any(q.guaranteed for q in pm.chain(ask)):
                        other.append(home)
                    elif any(q.guaranteed for q in pm.chain(victim)):
                        guarded.append(home)
                        fence = next((q.path for q in pm.chain(ask) if q.own.get(
                            "preemption.policy", "").lower() == "fence"), None)
                        if fence is not None and not victim.startswith(fence + "."):
                            fenced.append(home)
                    else:
                        asking.append(home)
    # An asking side without a guarantee is worth judging only against a victim that could
    # lose tasks (one with a guarantee on its path): that pair must still never preempt
    # (YUNIKORN-1951).
    other = [h for h in other if any(q.guaranteed for q in config.partitions[h[0]].chain(
        h[3]))] or other
    draw = g.rng.random()
    # A fence matters only when the room sits outside it: that pair gets a share of its own.
    homes = (fenced if draw < 0.25 else guarded if draw < 0.7 else asking if draw < 0.85
             else other) or guarded or asking or other
    return homes[g.rng.randrange(len(homes))] if homes else None


def _created_home(g: Gen, partition: str, user: str, groups: tuple[str, ...]
                  ) -> tuple[str, dict[str, str]] | None:
    """A queue name and tags for which the placement rules create a leaf (or place in the
    one they created) for ``user``, below a parent whose childtemplate gives a guarantee;
    or None."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    found: dict[str, tuple[str, dict[str, str]]] = {}
    # The namespace of the stories, or the tags the preemption configuration's rules read.
    for tags in ({"namespace": "ns1"}, {"made": "m1"}, {"spare": "s1"}):
        for name in [*pm.leaves(), *(f"{p}.made" for p in pm.parents())]:
            placed = _placement(pm, name, user, groups, tags)
            if placed is None or not placed.create or placed.path in found:
                continue
            template = model.handed_down(pm, {}, placed.path.rsplit(".", 1)[0])
            if template is not None and template.guaranteed:
                found[placed.path] = (name, tags)
    homes = list(found.values())
    return homes[g.side.randrange(len(homes))] if homes else None


def _refusal_home(g: Gen, partition: str, user: str, groups: tuple[str, ...],
                  story: str) -> tuple[str, str, int] | None:
    """For a third of the stories (by their id): two leaves where a refusal can happen at
    all, or None. The victim's side has a memory guarantee and may lose tasks; the asking
    side has a guarantee of its own below root and no user or application limits, shares
    nothing with the victim's but root (the hog's usage then counts on no queue of the
    asking path) and no fence keeps the victim out, in a partition with preemption on.
    So the ask is within its guarantee, its victims are candidates, and only the victim
    leaf's guarantee can refuse them (YuniKorn's law 2). The third item is the asking
    side's smallest memory guarantee below root."""
    if int(story.rsplit("-", 1)[-1]) % 3:
        return None
    pm = model.read(g.scenario.shape.text).partitions[partition]
    if not pm.preemption:
        return None
    leaves = [p for p in pm.leaves() if model.may_submit(pm.chain(p), user, groups)]

    def guarantee(chain: list[model.QueueModel]) -> int:
        return min(((q.guaranteed or {}).get("memory") or 0 for q in chain
                    if q.path != "root" and (q.guaranteed or {}).get("memory")), default=0)

    pairs = []
    for victim in leaves:
        vchain = pm.chain(victim)
        if disabled(vchain) or not guarantee(vchain):
            continue
        for ask in leaves:
            achain = pm.chain(ask)
            shared = {q.path for q in vchain} & {q.path for q in achain}
            fence = next((q.path for q in achain if q.own.get(
                "preemption.policy", "").lower() == "fence"), None)
            if ask != victim and shared == {"root"} and guarantee(achain) \
                    and (fence is None or victim.startswith(fence + ".")) \
                    and not any(q.users or q.groups or q.max_applications for q in achain):
                pairs.append((victim, ask, guarantee(achain)))
    return pairs[g.rng.randrange(len(pairs))] if pairs else None


def _refusal_filler(g: Gen, partition: str, user: str, groups: tuple[str, ...],
                    victim_leaf: str, story: str) -> tuple[str, int] | None:
    """Sometimes (a third of the stories, by their id, whose victim leaf has a memory
    guarantee and may lose tasks, when the user may submit to a leaf without any
    guarantee): that leaf, to fill the room the victim's leaf leaves, and the victim
    leaf's guarantee."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(victim_leaf)
    guarantee = min((q.guaranteed or {}).get("memory", 1 << 30) for q in chain)
    open_ = [p for p in pm.leaves() if not any(q.guaranteed for q in pm.chain(p))
             and model.may_submit(pm.chain(p), user, groups)]
    # Decided by the story's id, not by a draw: the other stories draw as before.
    if guarantee >= 1 << 30 or not open_ or disabled(chain) or int(story.rsplit("-", 1)[-1]) % 3:
        return None
    return open_[g.rng.randrange(len(open_))], guarantee


def _victim_policy(g: Gen) -> dict[str, Any]:
    if g.rng.random() < 0.3:
        return {"preemption_policy": si.PreemptionPolicy(
            allow_preempt_self=g.rng.random() < 0.5, allow_preempt_other=False)}
    return {}

