"""Rules of the work a shim submits: applications, gangs and their placeholders, asks.

Submissions are drawn from every queue name the configuration mentions (and
a few it does not) and every user, valid or not: the model shim's own reading
of the configuration decides what the core must answer, so the rules do not
need to know.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from invariants.actions.configs import CORE, NAMESPACES, USERS
from invariants.actions.draw import TT, Gen, rule
from invariants.properties import backoff, limits
from invariants.readings import acl_placement, model
from invariants.readings import arithmetic as qty
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
                if not _lands(pm, leaf, user, groups) \
                        or not acl_placement.may_submit(chain, user, groups):
                    continue
                probe = AppView("", name, Kept(si.AddApplicationRequest(
                    application_id="probe", queue_name=leaf,
                    ugi=si.UserGroupInformation(user=user, groups=list(groups)))), leaf,
                    group=group)
                if not limits.held_by_limits(rv, probe, need):
                    homes.append((name, leaf, user, groups))
    return homes[(pick or g.side).randrange(len(homes))] if homes else None


def _memory(r: Mapping[str, int]) -> int:
    return int(r.get("memory", 0))


def _memory_rooms(rv: RMView, partition: str, chain: list[model.QueueModel], user: str,
                  groups: tuple[str, ...]) -> list[int]:
    """The memory each user or group limit on the path still leaves ``user``."""
    return [lim.max_resources["memory"] - _memory(rv.usage_of({a.id for a in mine}))
            for _, _, _, lim, mine in limits.limited_on_path(
                rv, partition, chain, user, limits.group_for(chain, groups))
            if "memory" in lim.max_resources]


def _queue_slots(rv: RMView, partition: str, chain: list[model.QueueModel]) -> int:
    """How many more applications the queues' ``maxapplications`` on the path let start."""
    return min((q.max_applications - sum(
        rv.holds_slot(a) for a in rv.apps_below(partition, q.path))
        for q in chain if q.max_applications > 0), default=1 << 30)


def _placement(pm: model.PartitionModel, name: str, user: str, groups: tuple[str, ...],
               tags: Mapping[str, str]) -> acl_placement.Placed | None:
    """Where the placement rules put an application submitted to ``name`` with ``tags``,
    by the configuration alone (no queue created yet)."""

    def lookup(path: str) -> bool | None:
        q = pm.queues.get(path)
        return None if q is None else q.leaf

    def may(placed: acl_placement.Placed) -> bool:
        # A rule whose queue the user may not submit to passes the application on.
        return acl_placement.may_submit(pm.chain(placed.anchor), user, groups)

    return acl_placement.place(pm.rules, name, user, groups, tags, lookup, may)


def _lands(pm: model.PartitionModel, leaf: str, user: str, groups: tuple[str, ...]) -> bool:
    """Whether the placement rules keep an application submitted to ``leaf`` there, without
    creating a queue (a story's submissions name their leaf and the namespace ``ns1``)."""
    placed = _placement(pm, leaf, user, groups, {"namespace": "ns1"})
    return placed is not None and placed.path == leaf and not placed.create
