"""Scopes of the explorer: a configuration, a few objects of fixed shapes, a finite alphabet.

A scope says what a small world may contain (nodes of fixed sizes,
applications with fixed asks, maybe a gang) and which SI actions the
explorer may take in it. An action is named by a label (``ask app-1/k1``,
``drain node-2``) and turns into SI steps only when taken, reading what the
model shim knows at that moment (which allocation to release, which release
to confirm); an action with nothing to do in a state is not enabled there.
The explorer starts every search from the RM's registration.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from invariants.actions.configs import CORE
from invariants.actions.rm_events import resync
from invariants.explore.fingerprint import backoff_matters
from invariants.explore.texts import CONFIG, KINDS, RELOADED
from invariants.modelshim import answers, bridge, speaking
from invariants.modelshim.world import World
from invariants.properties import preemptions as preemption
from invariants.readings import model, view
from invariants.readings.shim import REQUIRED_NODE, AllocView, RMView
from scheduler import si
from scheduler.trace import Step

RM_ID = "explore-rm"
RESERVATION_DELAY = 2.0
"""The explored core's ``reservation_delay``: its default, YuniKorn's."""
TT = si.TerminationType
NA = si.NodeAction



@dataclass(frozen=True)
class AskShape:
    """An ask an application may send: its key, size and repeats, and how it takes part in
    preemption (its priority, its ``PreemptionPolicy``, the node it requires)."""

    key: str
    memory: int
    repeats: int = 1
    task_group: str = ""
    timeout_ms: int = 0
    priority: int = 0
    preempt: tuple[bool, bool] | None = None
    """``(allowPreemptSelf, allowPreemptOther)``; None sends no policy (a victim that
    never preempts)."""
    required_node: str = ""


@dataclass(frozen=True)
class GangShape:
    """One task group: ``members`` placeholders of ``memory`` each (``001``)."""

    style: str
    members: int
    memory: int
    timeout_ms: int = 60_000


@dataclass(frozen=True)
class AppShape:
    """An application of the scope: where it goes, what it asks, maybe a gang."""

    id: str
    queue: str
    """The queue it is submitted to (a full path)."""
    asks: tuple[AskShape, ...]
    gang: GangShape | None = None
    user: str = "alice"
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scope:
    """A small world and the actions the explorer may take in it."""

    name: str
    doc: str
    nodes: tuple[tuple[str, int], ...]
    """``(node id, memory)``; every node has 4 vcores."""
    apps: tuple[AppShape, ...]
    kinds: frozenset[str]
    """The action kinds enabled (see :data:`KINDS`)."""
    depth: int
    config: str = CONFIG
    hunt_depth: int = 9
    """How deep ``explore --self-test`` searches it (at most ``depth``)."""
    refused: tuple[tuple[str, str], ...] = ()
    """``(ask key, node id)`` pairs the RM's predicates refuse; none: the RM registers no
    predicates callback (every node passes)."""
    hunted: bool = True
    """Searched by ``explore --self-test`` (a scope meant for a cluster is not)."""
    dialect: str = "seed"
    """The SI the RM speaks: ``today`` registers it so, and every action's steps are said
    in today's words by the checker's own reading (``invariants.modelshim.speaking.speak``)."""

    def alphabet(self) -> list[Action]:
        """Every action of the scope, in a fixed order (the order children are explored)."""
        out: list[Action] = []
        for kind in KINDS:
            if kind not in self.kinds:
                continue
            for target in _targets(self, kind):
                out.append(Action(kind, target, self))
        return out

    def registration(self) -> Step:
        extra = {bridge.REGISTERS: self.dialect} if self.dialect != "seed" else {}
        return Step("register_resource_manager", request=si.RegisterResourceManagerRequest(
            rm_id=RM_ID, policy_group="queues", config=self.config), extra=extra)

    def with_config(self, text: str) -> Scope:
        """The scope on another configuration: its applications go to that configuration's
        leaves of the default partition, in order (a gang to the first leaf that is not
        fair, where ``001`` allows gangs)."""
        pm = model.read(text).partition("default")
        leaves = pm.leaves() if pm is not None else []
        if not leaves:
            raise ValueError("the configuration has no leaf queue in the default partition")
        assert pm is not None
        plain = iter(leaves * len(self.apps))
        gang_leaf = next((q for q in leaves if pm.queues[q].sort_policy != "fair"), leaves[0])
        apps = tuple(replace(a, queue=gang_leaf if a.gang else next(plain)) for a in self.apps)
        return replace(self, apps=apps, config=text,
                       kinds=self.kinds - {"reload"})

    def app(self, app_id: str) -> AppShape:
        return next(a for a in self.apps if a.id == app_id)

    def describe(self) -> str:
        nodes = ", ".join(f"{n} ({m} memory)" for n, m in self.nodes)
        apps = "; ".join(
            f"{a.id} in {a.queue}: "
            + ", ".join(f"{k.key} {k.memory}x{k.repeats}{_traits(k)}" for k in a.asks)
            + (f", a {a.gang.style} gang of {a.gang.members}x{a.gang.memory}" if a.gang else "")
            for a in self.apps)
        refused = "".join(f"\n  predicates refuse {k} on {n}" for k, n in self.refused)
        return (f"{self.name}: {self.doc}\n  nodes: {nodes}\n  applications: {apps}"
                f"{refused}\n"
                f"  actions: {', '.join(k for k in KINDS if k in self.kinds)}; "
                f"depth {self.depth}")


def _traits(ask: AskShape) -> str:
    traits = [f"priority {ask.priority}"] if ask.priority else []
    if ask.preempt is not None:
        traits += [w for w, on in zip(("may be a victim", "may preempt"), ask.preempt,
                                      strict=True) if on]
        traits += ["never a victim"] if not ask.preempt[0] else []
    traits += [f"requires {ask.required_node}"] if ask.required_node else []
    return f" ({', '.join(traits)})" if traits else ""


def _targets(scope: Scope, kind: str) -> list[str]:
    nodes = [n for n, _ in scope.nodes]
    if kind in ("node", "drain", "restore", "decommission", "occupy"):
        return nodes
    if kind in ("submit", "remove_app", "release", "release_placeholder"):
        return [a.id for a in scope.apps]
    if kind == "placeholders":
        return [a.id for a in scope.apps if a.gang is not None]
    if kind in ("ask", "remove_ask", "resend", "resize"):
        return [f"{a.id}/{k.key}" for a in scope.apps for k in a.asks]
    if kind == "misroute":
        return [f"{what} {a.id}" for a in scope.apps
                for what in ("ask", "ask_release", "release", "removal")]
    if kind == "misact":
        return [f"{what} {n}" for n in nodes for what in ("drain", "restore", "unknown")]
    if kind == "stray":
        return [f"{what} {a.id}" for a in scope.apps
                for what in ("unknown", "core_type", "orphan", "untyped")]
    return [""]


@dataclass(frozen=True)
class Action:
    """One letter of the alphabet: a kind and its target, turned into steps when taken."""

    kind: str
    target: str
    scope: Scope = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.target}".strip()

    def steps(self, world: World) -> Iterator[Step]:
        """The SI steps of this action in the world's current state (none: not enabled)."""
        rv = world.shim.rm(RM_ID)
        if rv is None or rv.stopped or rv.paused:
            return iter(())
        steps = _BUILDERS[self.kind](self, world, rv)
        if self.scope.dialect == "seed":
            return steps
        # Today's words for the action: the choices the reading draws (a node joining
        # drained, a pod's end a failed binding) are fixed per action, the same every time.
        words = random.Random(self.label)
        return (said for step in steps for said in speaking.speak(step, rv, words))

    def enabled(self, world: World) -> bool:
        return next(self.steps(world), None) is not None


Builder = Callable[[Action, World, RMView], Iterator[Step]]


def _request(call: str, request: object) -> Step:
    return Step(call, request=request)


def _node(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    if a.target not in rv.nodes:
        memory = dict(a.scope.nodes)[a.target]
        yield _request("update_node", si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
            node_id=a.target, action=NA.CREATE,
            schedulable_resource=si.Resource.of(memory=memory, vcore=4 * CORE))]))


def _occupy(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    node = rv.nodes.get(a.target)
    if node is not None:
        occupied = {} if node.occupied.get("memory") else {"memory": 10}
        yield _request("update_node", si.NodeRequest(rm_id=RM_ID, nodes=[si.NodeInfo(
            node_id=a.target, action=NA.UPDATE,
            occupied_resource=si.resource_from_dict(occupied))]))


def _node_action(action: si.NodeAction, state: str | None) -> Builder:
    def build(a: Action, w: World, rv: RMView) -> Iterator[Step]:
        node = rv.nodes.get(a.target)
        if node is not None and (state is None or node.state == state):
            yield _request("update_node", si.NodeRequest(rm_id=RM_ID, nodes=[
                si.NodeInfo(node_id=a.target, action=action)]))
    return build


def _misact(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    what, node_id = a.target.split(" ")
    node = rv.nodes.get(node_id)
    action, state = {"drain": (NA.DRAIN_NODE, "Draining"),
                     "restore": (NA.DRAIN_TO_SCHEDULABLE, "Schedulable"),
                     "unknown": (NA.UNKNOWN_ACTION_FROM_RM, node.state if node else "")}[what]
    if node is not None and node.state == state:
        yield _request("update_node", si.NodeRequest(rm_id=RM_ID, nodes=[
            si.NodeInfo(node_id=node_id, action=action)]))


def _submit(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    if a.target in rv.apps:
        return
    shape = a.scope.app(a.target)
    gang = shape.gang
    extra = {} if gang is None else {
        "placeholder_ask": si.Resource.of(memory=gang.members * gang.memory,
                                          vcore=gang.members * CORE),
        "gang_scheduling_style": gang.style,
        "execution_timeout_milli_seconds": gang.timeout_ms}
    yield _request("update_application", si.ApplicationRequest(rm_id=RM_ID, new=[
        si.AddApplicationRequest(
            application_id=shape.id, queue_name=shape.queue,
            partition_name="default",
            ugi=si.UserGroupInformation(user=shape.user, groups=list(shape.groups)),
            **extra)]))


def _ask_message(app_id: str, key: str, memory: int, repeats: int, task_group: str,
                 placeholder: bool, timeout_ms: int = 0) -> si.AllocationAsk:
    return si.AllocationAsk(
        allocation_key=key, application_id=app_id, partition_name="default",
        resource_ask=si.Resource.of(memory=memory, vcore=CORE), max_allocations=repeats,
        task_group_name=task_group, placeholder=placeholder,
        execution_timeout_milli_seconds=timeout_ms)


def _shaped(app_id: str, shape: AskShape) -> si.AllocationAsk:
    """The real pod of an ask shape, with its priority, preemption policy and node."""
    ask = _ask_message(app_id, shape.key, shape.memory, shape.repeats, shape.task_group,
                       placeholder=False, timeout_ms=shape.timeout_ms)
    if not (shape.priority or shape.preempt or shape.required_node):
        return ask
    policy = None if shape.preempt is None else si.PreemptionPolicy(
        allow_preempt_self=shape.preempt[0], allow_preempt_other=shape.preempt[1])
    tags = {REQUIRED_NODE: shape.required_node} if shape.required_node else {}
    return ask.model_copy(update={"priority": shape.priority, "preemption_policy": policy,
                                  "tags": tags})


def _live(rv: RMView, app_id: str) -> bool:
    app = rv.apps.get(app_id)
    return app is not None and app.live


def _placeholders(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    gang = a.scope.app(a.target).gang
    app = rv.apps.get(a.target)
    if gang is None or app is None or app.state not in ("New", "Accepted", "Running"):
        return
    if rv.pending_placeholders(a.target) or any(x.placeholder for x in rv.allocs_of(a.target)):
        return
    yield _request("update_allocation", si.AllocationRequest(rm_id=RM_ID, asks=[_ask_message(
        a.target, "ph", gang.memory, gang.members, "tg", placeholder=True)]))


def _ask(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    app_id, key = a.target.split("/")
    if not _live(rv, app_id) or (app_id, key) in rv.asks:
        return
    if any(x.key == key for x in rv.allocs_of(app_id)):
        return
    shape = next(k for k in a.scope.app(app_id).asks if k.key == key)
    yield _request("update_allocation", si.AllocationRequest(rm_id=RM_ID, asks=[
        _shaped(app_id, shape)]))


def _resend(grow: int) -> Builder:
    """An ask whose repeats all run, sent again: unchanged (an informer resync), or
    ``grow`` larger (a pod resized in place, which the core must refuse)."""

    def build(a: Action, w: World, rv: RMView) -> Iterator[Step]:
        app_id, key = a.target.split("/")
        ask = rv.asks.get((app_id, key))
        if ask is not None and ask.pending == 0 and not ask.recovered and _live(rv, app_id):
            shape = next(k for k in a.scope.app(app_id).asks if k.key == key)
            yield _request("update_allocation", si.AllocationRequest(rm_id=RM_ID, asks=[
                _shaped(app_id, replace(shape, memory=shape.memory + grow))]))

    return build


def _remove_ask(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    app_id, key = a.target.split("/")
    ask = rv.asks.get((app_id, key))
    if ask is not None and ask.pending > 0:
        yield _request("update_allocation", si.AllocationRequest(
            rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(partition_name="default", application_id=app_id,
                                        allocation_key=key,
                                        termination_type=TT.STOPPED_BY_RM)])))


def _running(rv: RMView, app_id: str) -> list[AllocView]:
    """The application's allocations not being released, first one first."""
    return sorted((x for x in rv.allocs_of(app_id) if x.releasing is None), key=_order)


def _pending_keys(rv: RMView, app_id: str) -> list[str]:
    """The keys of the application's asks with repeats pending, in order."""
    return sorted(k for (x, k), ask in rv.asks.items() if x == app_id and ask.pending)


def _stray(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    what, app_id = a.target.split(" ")
    if not _live(rv, app_id):
        return
    if what in ("orphan", "untyped"):
        running = _running(rv, app_id)
        if running:
            yield _request("update_allocation", si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    si.AllocationRelease(
                        partition_name=rv.apps[app_id].partition,
                        application_id="ghost" if what == "orphan" else app_id,
                        uuid=running[0].uuid, termination_type=TT.STOPPED_BY_RM
                        if what == "orphan" else TT.UNKNOWN_TERMINATION_TYPE)])))
        return
    pending = _pending_keys(rv, app_id)
    if pending:
        unknown = what == "unknown"
        yield _request("update_allocation", si.AllocationRequest(
            rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(
                    partition_name=rv.apps[app_id].partition, application_id=app_id,
                    allocation_key="ghost" if unknown else pending[0],
                    termination_type=TT.STOPPED_BY_RM if unknown else TT.TIMEOUT)])))


STRAY = "other"
"""The partition a ``misroute`` names: not the application's."""


def _misroute(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    what, app_id = a.target.split(" ")
    if not _live(rv, app_id):
        return
    if what == "ask":
        msg = _ask_message(app_id, "stray", 10, 1, "", placeholder=False)
        yield _request("update_allocation", si.AllocationRequest(rm_id=RM_ID, asks=[
            msg.model_copy(update={"partition_name": STRAY})]))
    elif what == "ask_release":
        pending = _pending_keys(rv, app_id)
        if pending:
            yield _request("update_allocation", si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                    si.AllocationAskRelease(partition_name=STRAY, application_id=app_id,
                                            allocation_key=pending[0],
                                            termination_type=TT.STOPPED_BY_RM)])))
    elif what == "release":
        running = _running(rv, app_id)
        if running:
            yield _request("update_allocation", si.AllocationRequest(
                rm_id=RM_ID, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    si.AllocationRelease(partition_name=STRAY, application_id=app_id,
                                         uuid=running[0].uuid,
                                         termination_type=TT.STOPPED_BY_RM)])))
    else:
        yield _request("update_application", si.ApplicationRequest(rm_id=RM_ID, remove=[
            si.RemoveApplicationRequest(application_id=app_id, partition_name=STRAY)]))


def _remove_app(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    if _live(rv, a.target):
        yield _request("update_application", si.ApplicationRequest(rm_id=RM_ID, remove=[
            si.RemoveApplicationRequest(application_id=a.target, partition_name="default")]))


def _order(alloc: AllocView) -> tuple[str, str, float, str]:
    """A stable order of allocations that does not depend on the core's uuid counter."""
    return alloc.app, alloc.key, alloc.created, alloc.uuid


def _release(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    running = sorted((x for x in rv.allocs_of(a.target)
                      if not x.placeholder and x.releasing is None), key=_order)
    if running:
        yield _request("update_allocation", rv.release_request(running[:1], TT.STOPPED_BY_RM))


def _release_placeholder(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    placeholders = sorted((x for x in rv.allocs_of(a.target) if x.placeholder), key=_order)
    if placeholders:
        yield _request("update_allocation",
                       rv.release_request(placeholders[:1], TT.STOPPED_BY_RM))


def _confirm_unasked(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    running = sorted((x for x in rv.allocs.values() if x.releasing is None), key=_order)
    if running:
        yield _request("update_allocation", rv.release_request(running[:1], TT.TIMEOUT))


def pending_confirmations(rv: RMView) -> list[AllocView]:
    """The releases the core started and the shim has not confirmed, in a stable order."""
    return sorted((x for x in rv.allocs.values() if x.releasing is not None), key=_order)


def _confirm(twice: bool) -> Builder:
    def build(a: Action, w: World, rv: RMView) -> Iterator[Step]:
        pending = pending_confirmations(rv)
        if pending:
            step = _request("update_allocation", rv.release_request(pending[:1]))
            yield step
            if twice:
                yield step
    return build


def _schedule(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    yield Step.schedule()


def next_live_timer(world: World) -> float | None:
    """When the next timer falls due, if one is still ahead: the core's own that will act,
    one the shim expects (``answers.expected_due``), so the clock never jumps past the
    time a core that set its timer late, or never, should have acted, or the end of a
    pending ask's reservation delay (the core keeps no timer for it; ``schedule()`` then
    may reserve)."""
    now = world.clock.now()
    timers = [t for t in view.timers(world.api) if t[3] and t[0] > now]
    # An application's backoff ends to something only when a walk of it would place an
    # ask; otherwise it would back off again, for ever (YuniKorn's rule).
    due = [t[0] for t in timers if t[1] != "backoff" or backoff_matters(world, t[2])]
    delay = world.api.reservation_delay
    for rv in world.shim.rms.values():
        due += [t for t in answers.expected_due(rv) if t > now]
        # The end of a pending ask's reservation delay: from then on it may reserve a node.
        due += [k.sent + delay for k in rv.asks.values()
                if k.pending > 0 and k.sent + delay > now]
    return min(due) if due else None


def _tick(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    due = next_live_timer(w)
    if due is not None:
        yield Step.advance(due - w.clock.now())
        yield Step.schedule()


def preemption_due(world: World, rv: RMView) -> float | None:
    """When the clock next lets a pending ask preempt, as the shim reads it: the first
    ``preemption.delay`` still ahead of an ask it sent with ``allowPreemptOther`` (its leaf's,
    from its configuration), else the next 15 s check; None when no such ask is pending.
    An ask that preempted already counts: YuniKorn never lets it preempt again, and the
    clock passing shows whether the core keeps to that."""
    now = world.clock.now()
    due: list[float] = []
    for (app_id, _), ask in sorted(rv.asks.items()):
        app = rv.apps.get(app_id)
        part = rv.config.partition(app.partition) if app is not None and app.live else None
        leaf = part.queues.get(app.path) if part is not None and app is not None else None
        if ask.pending <= 0 or not ask.may_preempt or ask.required_node or leaf is None:
            continue
        due.append(ask.sent + preemption.delay(leaf))
    if not due:
        return None
    ahead = [t for t in due if t > now]
    return min(ahead) if ahead else now + preemption.ATTEMPT_INTERVAL


def _wait(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    due = preemption_due(w, rv)
    if due is not None:
        yield Step.advance(due - w.clock.now())
        yield Step.schedule()


def _restart(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    yield Step("connection_lost", rm_id=RM_ID)
    yield from resync(w, RM_ID, Step("register_resource_manager",
                                     request=si.RegisterResourceManagerRequest(
                                         rm_id=RM_ID, policy_group="queues",
                                         config=rv.config.text)))


def _reload(a: Action, w: World, rv: RMView) -> Iterator[Step]:
    text = RELOADED if rv.config.text == a.scope.config else a.scope.config
    yield _request("update_configuration", si.UpdateConfigurationRequest(
        rm_id=RM_ID, policy_group="queues", config=text))


_BUILDERS: dict[str, Builder] = {
    "node": _node, "submit": _submit, "placeholders": _placeholders, "ask": _ask,
    "schedule": _schedule, "confirm": _confirm(False), "confirm_twice": _confirm(True),
    "release": _release, "release_placeholder": _release_placeholder,
    "confirm_unasked": _confirm_unasked, "occupy": _occupy,
    "remove_ask": _remove_ask, "remove_app": _remove_app,
    "resend": _resend(0), "resize": _resend(5), "tick": _tick, "wait": _wait,
    "drain": _node_action(NA.DRAIN_NODE, "Schedulable"),
    "restore": _node_action(NA.DRAIN_TO_SCHEDULABLE, "Draining"),
    "decommission": _node_action(NA.DECOMISSION, None), "restart": _restart,
    "reload": _reload, "misroute": _misroute, "stray": _stray, "misact": _misact,
}
