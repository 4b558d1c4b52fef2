"""Rules of bad input: requests the core must refuse or ignore without changing anything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

from invariants.actions.cluster_nodes import joining
from invariants.actions.configs import CORE
from invariants.actions.draw import NA, TT, Gen, rule
from scheduler import si
from scheduler.trace import Step

BAD_CONFIGS = (
    "partitions: [",
    "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    "        queues:\n          - name: x\n          - name: x\n",
    "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    "        queues:\n          - name: x\n            resources:\n"
    "              guaranteed: {memory: 10}\n              max: {memory: 5}\n",
)


@rule(1.5)
def bad_request(g: Gen) -> Iterator[Step]:
    """A request the core must refuse or ignore as a whole, leaving its state unchanged."""
    rv = g.rv
    kind = g.rng.choice(("duplicate_node", "unknown_node", "unknown_release",
                         "ghost_ask", "zero_ask",
                         "unknown_partition_ask", "unknown_partition_app", "bad_config",
                         "leaf_to_parent", "empty_user", "negative_timeout_app",
                         "negative_timeout_ask", "int64_node", "bad_gang_style"))
    note = {"bad": kind}
    if kind == "duplicate_node" and rv is not None and rv.nodes:
        node = g.pick(sorted(rv.nodes))
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[si.NodeInfo(
            node_id=node, action=NA.CREATE, schedulable_resource=si.Resource.of(memory=10),
            attributes={"si/node-partition": rv.nodes[node].partition})]), **note)
    elif kind == "unknown_node":
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[si.NodeInfo(
            node_id="ghost-node", action=NA.UPDATE,
            schedulable_resource=si.Resource.of(memory=10))]), **note)
    elif kind == "unknown_release":
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(application_id="ghost-app", uuid="ghost-uuid",
                                     termination_type=TT.STOPPED_BY_RM)])), **note)
    elif kind in ("ghost_ask", "zero_ask", "unknown_partition_ask"):
        live = rv.live_apps() if rv is not None else []
        app_id = g.pick(live) if live and kind != "ghost_ask" else "ghost-app"
        memory = 0 if kind == "zero_ask" else 5
        partition = "nowhere" if kind == "unknown_partition_ask" else (
            rv.apps[app_id].partition if rv is not None and app_id in rv.apps else "default")
        yield g.request("update_allocation", si.AllocationRequest(rm_id=g.rm_id, asks=[
            si.AllocationAsk(allocation_key=g.new_id("bad-ask-"), application_id=app_id,
                             partition_name=partition,
                             resource_ask=si.Resource.of(memory=memory, vcore=0 if memory
                                                         == 0 else CORE))]), **note)
    elif kind == "unknown_partition_app":
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, new=[
            si.AddApplicationRequest(application_id=g.new_id("app-"), queue_name="root.a",
                                     partition_name="nowhere",
                                     ugi=si.UserGroupInformation(user="alice"))]), **note)
    elif kind in ("empty_user", "negative_timeout_app"):
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, new=[
            si.AddApplicationRequest(
                application_id=g.new_id("app-"), queue_name="root.a",
                ugi=si.UserGroupInformation(user=" " if kind == "empty_user" else "alice"),
                execution_timeout_milli_seconds=-1 if kind != "empty_user" else 0)]), **note)
    elif kind == "negative_timeout_ask" and rv is not None and rv.live_apps():
        app_id = g.pick(rv.live_apps())
        yield g.request("update_allocation", si.AllocationRequest(rm_id=g.rm_id, asks=[
            si.AllocationAsk(allocation_key=g.new_id("bad-ask-"), application_id=app_id,
                             partition_name=rv.apps[app_id].partition,
                             resource_ask=si.Resource.of(memory=5, vcore=CORE),
                             execution_timeout_milli_seconds=-5)]), **note)
    elif kind == "bad_gang_style" and rv is not None and rv.live_apps():
        # A running application's submission again under a new id, with a style that is
        # neither Hard nor Soft: refused (docs/design-notes.md, "Gang scheduling").
        submitted = rv.apps[g.pick(rv.live_apps())].submitted.get()
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, new=[
            submitted.model_copy(update={
                "application_id": g.new_id("app-"),
                "gang_scheduling_style": g.rng.choice(("hard", "HARD", "strict"))})]), **note)
    elif kind == "int64_node":
        # Two nodes whose memory together passes int64: the second must be refused.
        huge = si.Resource.of(memory=2**62 + 2**61)
        ids = [g.new_id("huge-"), g.new_id("huge-")]
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
            si.NodeInfo(node_id=n, action=NA.CREATE, schedulable_resource=huge) for n in ids]),
            **note)
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
            si.NodeInfo(node_id=n, action=NA.DECOMISSION) for n in ids]))
    elif kind == "bad_config":
        yield g.request("update_configuration", si.UpdateConfigurationRequest(
            rm_id=g.rm_id, config=g.pick(list(BAD_CONFIGS))), **note)
    elif kind == "leaf_to_parent" and rv is not None:
        leaves = sorted({a.path for a in rv.apps.values() if a.live and a.partition == "default"
                         and a.path.count(".") == 1})
        leaf = g.pick(leaves)
        if leaf is None:
            return
        data = g.config_data()
        for part in data["partitions"]:
            if part.get("name", "default") != "default":
                continue
            for q in part["queues"][0].get("queues", []):
                if f"root.{q['name']}" == leaf and not q.get("queues"):
                    q["queues"] = [{"name": "grown"}]
        if data == g.config_data():
            return
        text = json.dumps(data)
        yield g.request("update_configuration", si.UpdateConfigurationRequest(
            rm_id=g.rm_id, config=text), **note)


@rule(0.6)
def stray_release(g: Gen) -> Iterator[Step]:
    """A release or an ask release the core must ignore, whose objects exist: the uuid or
    the key alone does not decide what it ends (``002`` AllocationRelease and
    AllocationAskRelease; a confirmation without its uuid is ``_confirm``'s)."""
    rv = g.rv
    if rv is None:
        return
    kind = g.rng.choice(("unknown_ask_release", "core_type_ask_release", "foreign_release",
                         "orphan_release"))
    note = {"bad": kind}
    if kind in ("unknown_ask_release", "core_type_ask_release"):
        # An ask release naming a key the application does not have, or one of its asks with
        # a type only the core starts: ignored, nothing confirmed (the other asks stay).
        picked = g.pick(sorted(k for k in rv.asks if k[0] in rv.apps))
        if picked is None:
            return
        app_id, key = picked
        unknown = kind == "unknown_ask_release"
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(
                    partition_name=rv.apps[app_id].partition, application_id=app_id,
                    allocation_key=g.new_id("ghost-ask-") if unknown else key,
                    termination_type=TT.STOPPED_BY_RM if unknown else g.rng.choice(
                        (TT.TIMEOUT, TT.PREEMPTED_BY_SCHEDULER, TT.PLACEHOLDER_REPLACED)))])),
            **note)
    elif kind in ("foreign_release", "orphan_release"):
        # A running allocation's uuid under another application's id, or an unknown one:
        # ignored (the uuid alone does not name the allocation).
        alloc = g.pick([a for a in rv.running() if a.releasing is None and a.app in rv.apps])
        if alloc is None:
            return
        partition = rv.apps[alloc.app].partition
        named: str | None = "ghost-app"
        if kind == "foreign_release":
            named = g.pick(sorted(a for a, v in rv.apps.items()
                                  if a != alloc.app and v.partition == partition))
            if named is None:
                return
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(partition_name=partition, application_id=named,
                                     uuid=alloc.uuid,
                                     termination_type=TT.STOPPED_BY_RM)])), **note)


STRAY_NODE_ACTIONS: dict[str, tuple[si.NodeAction, tuple[str, ...]]] = {
    "drain_not_schedulable": (NA.DRAIN_NODE, ("Draining",)),
    "restore_not_draining": (NA.DRAIN_TO_SCHEDULABLE, ("Schedulable",)),
    "unknown_action": (NA.UNKNOWN_ACTION_FROM_RM, ("Schedulable", "Draining")),
}
"""``stray_node_action``'s kinds: the action, and the node states it is sent in."""


@rule(0.4)
def stray_node_action(g: Gen) -> Iterator[Step]:
    """A node action its node's state does not allow, or one the SI does not define:
    refused with a reason, the node unchanged (``002`` NodeInfo.ActionFromRM)."""
    rv = g.rv
    if rv is None:
        return
    kind = g.rng.choice(tuple(STRAY_NODE_ACTIONS))
    action, states = STRAY_NODE_ACTIONS[kind]
    node = g.pick(sorted(n for n, v in rv.nodes.items() if v.state in states))
    if node is None:
        return
    yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[si.NodeInfo(
        node_id=node, action=action, schedulable_resource=si.Resource.of(memory=10)
        if kind == "unknown_action" else None)]), bad=kind)


@rule(0.3)
def stray_recovery(g: Gen) -> Iterator[Step]:
    """A node joining with an existing allocation the core can not attach: one the RM says
    is on another node (sometimes a pod it runs, on a node that does not exist), or of an
    application it does not run (never sent, or ended). The node is refused and nothing is
    recovered (``001`` "Application recovery": applications first, then each node with its
    own allocations)."""
    rv = g.rv
    if rv is None:
        return
    # An ended application is a Completed or Failed one the core still holds (its
    # retention; a Rejected submission never had a queue, so it says less): rare, so it is
    # chosen more often while there is one.
    ended = sorted(a for a, v in rv.apps.items() if v.state in ("Completed", "Failed"))
    kind = g.rng.choices(("other_node", "unknown_app", "ended_app"),
                         (1, 1, 4 if ended else 1))[0]
    if kind == "unknown_app":
        app_id: str | None = "ghost-app"
        partition = "default"
    else:
        pool = rv.live_apps() if kind == "other_node" else ended or sorted(
            a for a, v in rv.apps.items() if not v.live)
        app_id = g.pick(pool)
        partition = rv.apps[app_id].partition if app_id is not None else "default"
    others = sorted(n for n, v in rv.nodes.items() if v.partition == partition)
    if app_id is None or (kind == "other_node" and not others):
        return
    node_id = g.new_id("node-")
    key = g.new_id("stray-key-")
    elsewhere = g.pick(others) if kind == "other_node" else node_id
    running = sorted(a.key for a in rv.allocs.values() if a.app == app_id)
    if kind == "other_node" and running and g.next_id % 2 == 0:
        # A pod the RM runs reported again on a node that does not exist (read off the
        # id counter, so the rule's random stream stays what it was): in today's SI an
        # update of a running key the core must refuse (YuniKorn looks the node up first).
        key, elsewhere = running[g.next_id % len(running)], f"gone-{node_id}"
    alloc = si.Allocation(
        allocation_key=key, application_id=app_id,
        uuid=g.new_id("stray-uuid-"), partition_name=partition,
        node_id=elsewhere, resource_per_alloc=si.Resource.of(memory=5, vcore=CORE))
    joined = joining(g, node_id, partition, si.Resource.of(memory=20, vcore=2 * CORE),
                     existing_allocations=[alloc])
    yield replace(joined, extra={"bad": kind})


@rule(0.8)
def wrong_partition(g: Gen) -> Iterator[Step]:
    """An ask, an ask release, a release, a confirmation or an application's removal naming
    a partition that does not hold the application: another of the RM's partitions when
    it has one. The core looks in the partition named only, so the ask is rejected and
    the rest ignored, none of them confirmed (``docs/design-notes.md``, "Releases")."""
    rv = g.rv
    app_id = g.pick(rv.live_apps()) if rv is not None else None
    if rv is None or app_id is None:
        return
    note = {"bad": "wrong_partition"}
    own = rv.apps[app_id].partition
    others = sorted(p for p in rv.config.partitions if p != own)
    partition = others[0] if others else "nowhere"
    what = g.rng.choice(("ask", "ask_release", "release", "confirmation", "removal"))
    if what == "ask":
        yield g.request("update_allocation", si.AllocationRequest(rm_id=g.rm_id, asks=[
            si.AllocationAsk(allocation_key=g.new_id("bad-ask-"), application_id=app_id,
                             partition_name=partition,
                             resource_ask=si.Resource.of(memory=5, vcore=CORE))]), **note)
        return
    if what == "removal":
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
            si.RemoveApplicationRequest(application_id=app_id, partition_name=partition)]),
            **note)
        return
    if what == "ask_release":
        keys = sorted(k for a, k in rv.asks if a == app_id)
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(partition_name=partition, application_id=app_id,
                                        allocation_key=g.pick(keys) or "",
                                        termination_type=TT.STOPPED_BY_RM)])), **note)
        return
    mine = [a for a in rv.allocs_of(app_id)
            if (a.releasing is None) == (what == "release")]
    alloc = g.pick(sorted(mine, key=lambda a: a.uuid))
    if alloc is None:
        return
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocations_to_release=[
            si.AllocationRelease(partition_name=partition, application_id=app_id,
                                 uuid=alloc.uuid,
                                 termination_type=alloc.releasing or TT.STOPPED_BY_RM)])),
        **note)
