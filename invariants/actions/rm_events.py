"""Rules of the RM's lifecycle and of the configuration: restarts, pauses, reloads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from invariants.actions import configs
from invariants.actions.cluster_nodes import new_node
from invariants.actions.configs import USERS
from invariants.actions.draw import NA, Gen, configured_queues, register, removal_prefix, rule
from invariants.modelshim.world import World
from invariants.readings import model
from scheduler import si
from scheduler.trace import Step


@rule(0.5, undo=True)
def reregister(g: Gen) -> Iterator[Step]:
    """The RM registers again after it stopped (or re-registers while running)."""
    rv = g.rv
    if rv is None or rv.stopped or g.rng.random() < 0.2:
        yield from register(g)


@rule(1, undo=True)
def rm_restart(g: Gen) -> Iterator[Step]:
    """The RM restarts (maybe after losing its connection, maybe with lowered quotas) and
    resyncs what it runs."""
    rv = g.rv
    if rv is None or rv.stopped:
        return
    if g.rng.random() < 0.5:
        yield Step("connection_lost", rm_id=g.rm_id)
    before = g.factor
    if g.rng.random() < 0.3:
        # It comes back with tighter quotas: what it runs is recovered over them.
        g.factor = g.rng.choice((0.25, 0.5))
    registration = next(register(g))
    # Two resyncs in five send the asks first; read off the id counter, so the rule's random
    # stream stays what it was.
    yield from resync(g.world, g.rm_id, registration, asks_first=g.next_id % 5 < 2,
                      duplicate=g.next_id % 7 == 3,
                      forced=FORCED[g.next_id % len(FORCED)])
    if not _took(g, registration):
        g.factor = before


FORCED = (("yunikorn.apache.org/force-create", "true"),
          ("yunikorn.apache.org/force-create", "True"),
          ("YuniKorn.apache.org/Force-Create", "1"))
"""How a resync tags an application with running pods (a Kubernetes shim's
``yunikorn.apache.org/force-create=true``; YuniKorn reads the name in any case and the
value as Go's ``ParseBool``)."""


def resync(world: World, rm_id: str, registration: Step,
           asks_first: bool = False, duplicate: bool = False,
           forced: tuple[str, str] = FORCED[0]) -> Iterator[Step]:
    """An RM's recovery (``002`` "Scheduler restart/recovery"): register again, then send
    the applications it runs, its nodes with their allocations and its pending asks.

    Read between the steps: only the applications the core accepted again get
    their allocations and asks back. With ``asks_first`` the pending asks come
    before the nodes (the SI sets no order), so a recovered allocation meets the
    pending ask it came from (an ask of several repeats, some running). With
    ``duplicate`` a buggy RM reports its first recovered allocation a second
    time, on the next node (or the same one when it has a single node): the
    core must reject the node that repeats the uuid. An application with running pods
    comes back tagged ``forced`` (force-create): the core takes it even where a changed
    configuration would refuse it as a new gang.
    """
    rv = world.shim.rm(rm_id)
    if rv is None:
        return
    allocs = [a for a in rv.allocs.values() if a.sent is not None]
    running = {a.app for a in allocs}
    apps = {a: _tagged(v.submitted.get(), forced) if a in running else v.submitted.get()
            for a, v in rv.apps.items() if v.live}
    asks = [k for k in rv.asks.values() if k.pending > 0]
    nodes = dict(rv.nodes)
    yield registration
    if apps:
        yield Step("update_application", request=si.ApplicationRequest(
            rm_id=rm_id, new=list(apps.values())))
    again = world.shim.rm(rm_id)
    accepted = {a for a, v in again.apps.items() if v.live} if again is not None else set()
    infos = []
    for node_id in sorted(nodes):
        node = nodes[node_id]
        existing = [a.sent.get() for a in allocs if a.node == node_id and a.app in accepted
                    and a.sent is not None]
        infos.append(si.NodeInfo(
            node_id=node_id, action=NA.CREATE, existing_allocations=existing,
            attributes={"si/node-partition": node.partition} if node.partition != "default"
            else {},
            schedulable_resource=si.resource_from_dict(node.capacity),
            occupied_resource=si.resource_from_dict(node.occupied) if node.occupied else None))
    if duplicate:
        _report_twice(infos)
    resend = [si.AllocationAsk(
        allocation_key=k.key, application_id=k.app, resource_ask=si.resource_from_dict(
            k.resource), max_allocations=k.max_allocations, task_group_name=k.task_group,
        placeholder=k.placeholder, execution_timeout_milli_seconds=k.timeout_ms,
        partition_name=again.apps[k.app].partition if again is not None and k.app in
        again.apps else "default") for k in asks if k.app in accepted]
    if resend and asks_first:
        yield Step("update_allocation", request=si.AllocationRequest(rm_id=rm_id, asks=resend))
    if infos:
        yield Step("update_node", request=si.NodeRequest(rm_id=rm_id, nodes=infos))
    if resend and not asks_first:
        yield Step("update_allocation", request=si.AllocationRequest(rm_id=rm_id, asks=resend))


def _tagged(add: si.AddApplicationRequest, forced: tuple[str, str]) -> si.AddApplicationRequest:
    name, value = forced
    tags = {k: v for k, v in add.tags.items() if k.casefold() != name.casefold()}
    return add.model_copy(update={"tags": {**tags, name: value}})


def _report_twice(infos: list[si.NodeInfo]) -> None:
    first = next((i for i, n in enumerate(infos) if n.existing_allocations), None)
    if first is None:
        return
    again = infos[first].existing_allocations[0]
    at = first + 1 if first + 1 < len(infos) else first
    twice = again if at == first else again.model_copy(update={"node_id": infos[at].node_id})
    infos[at] = infos[at].model_copy(update={
        "existing_allocations": [*infos[at].existing_allocations, twice]})


@rule(0.5, undo=True)
def lose_connection(g: Gen) -> Iterator[Step]:
    """The RM loses its connection (its requests are refused until it registers again)."""
    rv = g.rv
    if rv is not None and not rv.paused and not rv.stopped:
        yield Step("connection_lost", rm_id=g.rm_id)


@rule(0.2, undo=True)
def unregister(g: Gen) -> Iterator[Step]:
    """The RM shuts down voluntarily."""
    if g.rv is not None:
        yield Step("unregister_resource_manager", rm_id=g.rm_id)


# ---------------------------------------------------------------- configuration


def _reload(g: Gen, **extra: Any) -> Step:
    return g.request("update_configuration", si.UpdateConfigurationRequest(
        rm_id=g.rm_id, policy_group="queues", config=g.config_text()), **extra)


@rule(1)
def update_config(g: Gen) -> Iterator[Step]:
    """A reload that lowers or raises every memory quota; sometimes (on a stream of its own)
    it also turns quota preemption on or off, so a lowered max is enforced after a delay;
    sometimes (on another) it gives one or two configured queues new priority settings, so
    the order of what waits changes with the configuration (YuniKorn applies a queue's
    properties again on every reload)."""
    before, quota_before = g.factor, (g.quota_delay, g.quota_switch)
    priorities_before = dict(g.priorities)
    g.factor = g.rng.choice((0.25, 0.5, 1.0, 2.0))
    if g.quota.random() < QUOTA_SHARE:
        g.quota_delay = g.quota.choice(QUOTA_DELAYS)
        g.quota_switch = g.quota.random() < QUOTA_SWITCH_ON
    if g.retune.random() < RETUNE_SHARE:
        queues = [key for key, _ in configured_queues(g.config_data())]
        for key in g.retune.sample(queues, min(len(queues), g.retune.randint(1, 2))):
            g.priorities[key] = configs.priority_properties(g.retune)
    step = _reload(g)
    yield step
    if not _took(g, step):
        g.factor, (g.quota_delay, g.quota_switch) = before, quota_before
        g.priorities = priorities_before


QUOTA_SHARE = 0.3
"""How often a quota-scaling reload draws the quota-preemption settings anew."""
RETUNE_SHARE = 0.4
"""How often a quota-scaling reload also redraws some queues' priority settings."""
QUOTA_DELAYS = ("", "1s", "5s", "20s")
"""``quota.preemption.delay`` values a reload sets on root ("": none, off)."""
QUOTA_SWITCH_ON = 0.75
"""How often those reloads turn the partition switch on (else off: a clock may run while
the switch is off, and be enforced once a later reload turns it on)."""


PARENT_REMOVED = 0.2
"""How often a reshaping reload removes (or brings back) a parent queue rather than a leaf."""
ABOVE_CREATED_REMOVED = 0.6
"""How often it removes a parent above a queue a placement rule created, when there is one
(then submits again what placed an application there)."""


@rule(1)
def reshape_config(g: Gen) -> Iterator[Step]:
    """A reload that removes a leaf, a parent with everything below it, or a partition (they
    drain) or configures it again.

    A parent is drawn from a stream of its own (the case's draws stay as they were): below
    it may be leaves a placement rule created, which stay active under a draining parent
    and must still refuse new applications, and limits the reload clears."""
    config = model.read(g.scenario.shape.text)
    candidates, parents = [], []
    for name, pm in config.partitions.items():
        # A queue may go when it has a sibling: its parent keeps a child.
        children = Counter(p.rsplit(".", 1)[0] for p in pm.queues if "." in p)
        candidates += [removal_prefix(name) + p for p in pm.leaves()
                       if children[p.rsplit(".", 1)[0]] > 1]
        parents += [removal_prefix(name) + p for p in pm.parents()
                    if "." in p and children[p.rsplit(".", 1)[0]] > 1]
        if name != "default":
            candidates.append(name)
    target = g.pick(sorted(candidates))
    made = [removal_prefix(name) + path
            for name, queues in (g.rv.created.items() if g.rv is not None else ())
            for path in queues]
    above = [p for p in parents if any(m.startswith(p + ".") for m in made)]
    if above and g.reshape.random() < ABOVE_CREATED_REMOVED:
        target = g.reshape.choice(sorted(above))
    elif parents and g.reshape.random() < PARENT_REMOVED:
        target = g.reshape.choice(sorted(parents))
    if target is None:
        return
    g.removed ^= {target}
    step = _reload(g)
    yield step
    if not _took(g, step):
        g.removed ^= {target}
    elif target in g.removed and target in parents and g.rv is not None:
        # The submission that placed an application in a created queue below it, again:
        # the created queue is still active, its parent drains.
        partition, _, path = target.rpartition(":")
        below = [v for _, v in sorted(g.rv.apps.items())
                 if v.live and v.path.startswith(path + ".")
                 and v.partition == (partition or "default")]
        if below:
            original = g.reshape.choice(below).submitted.get()
            again = [original.model_copy(update={"application_id": g.new_id("app-")})]
            # And with another namespace or user: its rule would create a new queue below
            # the draining parent, which takes no new child either (its id is not drawn
            # from the counter, so the ids after it stay as they were).
            update: dict[str, Any] = {"application_id": f"{again[0].application_id}-x"}
            if original.tags.get("namespace"):
                update["tags"] = {**original.tags, "namespace": "fresh-ns"}
            else:
                user, groups = g.reshape.choice([u for u in USERS if u[0] != original.ugi.user])
                update["ugi"] = si.UserGroupInformation(user=user, groups=list(groups))
            again.append(original.model_copy(update=update))
            yield g.request("update_application", si.ApplicationRequest(
                rm_id=g.rm_id, new=again))
    elif target in g.removed and target in config.partitions and g.next_id % 2 == 0:
        # A node that still names the removed partition (it drains, or is gone); drawn off
        # the id counter, so the rule's random stream stays what it was.
        memory, vcore = g.scenario.node_sizes[0]
        yield new_node(g, target, memory, vcore)


def _took(g: Gen, step: Step) -> bool:
    """Whether the core took the reload (a refused one leaves the old configuration)."""
    rv = g.rv
    return rv is not None and rv.config.text == step.request.config
