"""Every registered invariant can fail, and none fails on a healthy state.

A small but varied scheduler state is built through the public API (queues
with quotas, real allocations on two nodes, a gang application mid
replacement, an Accepted gang with a pending placeholder ask, a reservation
and a drained node). Each test then corrupts ONE internal field directly and
runs only the invariant under test, which must report a violation naming the
corrupted object. The checks are read-only, so this is the only way to prove
an invariant is not vacuous.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import invariants
from invariants import REGISTRY, CheckContext, LifecycleRecorder, Violation, check_all
from invariants.properties.catalog import Invariant, invariant, results
from invariants.readings.shim import REQUIRED_NODE
from scheduler import ManualClock, Scheduler, si
from scheduler.partition import Partition

TT = si.TerminationType
RM = "rm-1"

CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources:
              max: {memory: 100, vcore: 100}
          - name: b
          - name: g
            resources:
              max: {memory: 400}
"""


class ViewShim:
    """What a shim believes it runs (uuid -> (application, node)), and what to confirm."""

    def __init__(self) -> None:
        self.view: dict[str, tuple[str, str]] = {}
        self.to_confirm: list[si.AllocationRelease] = []
        self.rejections: list[str] = []

    def update_allocation(self, response: si.AllocationResponse) -> None:
        for a in response.new:
            self.view[a.uuid] = (a.application_id, a.node_id)
        for rel in response.released:
            if rel.termination_type == TT.STOPPED_BY_RM:
                self.view.pop(rel.uuid, None)
            else:
                self.to_confirm.append(rel)
        self.rejections += [r.reason for r in response.rejected]

    def update_application(self, response: si.ApplicationResponse) -> None:
        self.rejections += [r.reason for r in response.rejected]

    def update_node(self, response: si.NodeResponse) -> None:
        self.rejections += [r.reason for r in response.rejected]

    def send_event(self, events: list[si.EventRecord]) -> None:
        pass

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        pass


@dataclass
class World:
    api: Scheduler
    recorder: LifecycleRecorder
    shim: ViewShim
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def partition(self) -> Partition:
        return self.api.partitions()[0]

    def ctx(self) -> CheckContext:
        """Everything a check may use; the world was built ending with ``schedule()``."""
        from invariants.readings import model

        return CheckContext(self.api, recorder=self.recorder, shim_view=self.shim.view,
                            extra={"after_schedule": True,
                                   "configs": {RM: model.read(CONFIG)},
                                   "allocated": self.notes.get("allocated", [])})

    def alloc(self, app_id: str, pred: Callable[[Any], bool] = lambda a: True) -> Any:
        found = [a for a in self.partition.apps[app_id].allocations.values() if pred(a)]
        assert found, f"set-up lost an allocation of {app_id}"
        return found[0]


def _nodes(api: Scheduler, *ids: str) -> None:
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[
        si.NodeInfo(node_id=i, action=si.NodeAction.CREATE,
                    schedulable_resource=si.Resource.of(memory=100, vcore=10)) for i in ids]))


def _app(api: Scheduler, app_id: str, queue: str, placeholder_memory: int = 0) -> None:
    ph = si.Resource.of(memory=placeholder_memory, vcore=10) if placeholder_memory else None
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id=app_id, queue_name=queue, ugi=si.UserGroupInformation(user="u"),
        placeholder_ask=ph)]))


def _ask(api: Scheduler, app_id: str, key: str, memory: int, repeats: int = 1,
         task_group: str = "", placeholder: bool = False) -> None:
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app_id,
        resource_ask=si.Resource.of(memory=memory, vcore=1), max_allocations=repeats,
        task_group_name=task_group, placeholder=placeholder)]))


def build_world() -> World:
    clock = ManualClock(start=100.0)
    api = Scheduler(clock=clock)
    recorder = LifecycleRecorder(api)  # attached before anything happens
    shim = ViewShim()
    api.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=RM, config=CONFIG), shim)
    _nodes(api, "n1", "n2")
    # app-1: two real allocations, one per node, in a queue with a max.
    _app(api, "app-1", "root.a")
    _ask(api, "app-1", "small", 40, repeats=2)
    api.schedule()
    # app-g: a gang; two placeholders, one replaced (confirmed), one being replaced.
    _app(api, "app-g", "root.g", placeholder_memory=20)
    _ask(api, "app-g", "ph", 10, repeats=2, task_group="tg", placeholder=True)
    api.schedule()
    _ask(api, "app-g", "real", 10, task_group="tg")
    api.schedule()
    for rel in shim.to_confirm:
        api.update_allocation(si.AllocationRequest(
            rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[rel])))
        shim.view.pop(rel.uuid, None)
    shim.to_confirm.clear()
    _ask(api, "app-g", "real2", 10, task_group="tg")
    api.schedule()
    # app-h: a gang still Accepted, one placeholder placed, one too big for any node.
    _app(api, "app-h", "root.g", placeholder_memory=160)
    _ask(api, "app-h", "hph-small", 10, task_group="th", placeholder=True)
    _ask(api, "app-h", "hph-big", 150, task_group="th", placeholder=True)
    api.schedule()
    # app-2: an ask no node has room for right now: past its delay it reserves a node.
    _app(api, "app-2", "root.b")
    _ask(api, "app-2", "big", 70)
    clock.advance(api.reservation_delay)
    api.schedule()
    # n3: a drained node.
    _nodes(api, "n3")
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[
        si.NodeInfo(node_id="n3", action=si.NodeAction.DRAIN_NODE)]))
    api.schedule()
    world = World(api, recorder, shim)
    _assert_world_shape(world)
    return world


def _assert_world_shape(w: World) -> None:
    """The set-up reached the state the corruptions rely on (else the tests prove nothing)."""
    p = w.partition
    assert not w.shim.rejections, w.shim.rejections
    assert set(p.apps) == {"app-1", "app-g", "app-h", "app-2"}
    assert len(p.apps["app-1"].allocations) == 2
    assert p.apps["app-h"].state == "Accepted"
    assert any(k.placeholder for k in p.apps["app-h"].pending_asks.values())
    assert any(a.placeholder for a in p.apps["app-h"].allocations.values())
    assert p.reservations, "no reservation was made"
    assert p.nodes["n3"].state == "Draining"
    gang = p.apps["app-g"].allocations.values()
    assert any(a.placeholder and a.state == "Releasing" for a in gang), "no replacement pending"
    assert any(not a.placeholder and a.replaces for a in gang), "no completed replacement"
    assert w.shim.to_confirm, "the pending replacement was not sent to the shim"


@pytest.fixture
def world() -> World:
    return build_world()


# ---------------------------------------------------------------------------
# the corruptions: one field each, and the subject the violation must name
# ---------------------------------------------------------------------------

Corruption = Callable[[World], str]


def _app_allocated(w: World) -> str:
    app = w.partition.apps["app-1"]
    app.allocated = {**app.allocated, "memory": app.allocated["memory"] + 7}
    return "application default/app-1"


def _app_pending(w: World) -> str:
    app = w.partition.apps["app-2"]
    app.pending = {}
    return "application default/app-2"


def _queue_allocated(w: World) -> str:
    q = w.partition.queues["root.a"]
    q.allocated = {**q.allocated, "memory": q.allocated.get("memory", 0) + 7}
    return "queue default/root.a"


def _queue_running_apps(w: World) -> str:
    w.partition.queues["root.b"].running_apps += 3
    return "queue default/root.b"


def _user_usage(w: World) -> str:
    app = w.partition.apps["app-1"]
    w.partition.users.used[("user", app.user)]["root.a"]["memory"] += 7
    return f"user default/{app.user} on root.a"


def _user_running(w: World) -> str:
    app = w.partition.apps["app-1"]
    w.partition.users.running[("user", app.user)]["root"] += 1
    return f"user default/{app.user} on root"


def _queue_preempting(w: World) -> str:
    queue = w.partition.queues["root.a"]
    queue.preempting["memory"] = queue.preempting.get("memory", 0) + 7
    return "queue default/root.a"


def _app_priority_stale(w: World) -> str:
    w.partition.apps["app-1"].priority = 7
    return "application default/app-1"


def _queue_priority_stale(w: World) -> str:
    w.partition.queues["root.b"].priority = 99
    return "queue default/root.b"


def _priority_passed_over(w: World) -> str:
    """app-2's pending ask (reserving a node) gets the top priority, and app-1's allocation
    on that node is read as made in the last cycle: root.b was passed over for root.a."""
    p = w.partition
    node = p.reservations[("app-2", "big")]
    p.apps["app-2"].asks["big"].priority = 1000
    alloc = next(a for a in p.apps["app-1"].allocations.values() if a.node is node)
    w.notes["allocated"] = [alloc.uuid]
    return f"allocation default/{alloc.uuid}"


def _order_passed_over(w: World) -> str:
    """app-1's allocation on the node app-2 reserves is read as made in the last cycle:
    root.b (nothing used) sorts before root.a, and app-2's ask fitted that node then."""
    p = w.partition
    node = p.reservations[("app-2", "big")]
    alloc = next(a for a in p.apps["app-1"].allocations.values() if a.node is node)
    w.notes["allocated"] = [alloc.uuid]
    return f"allocation default/{alloc.uuid}"


def _node_order_passed_over(w: World) -> str:
    """app-h's placeholder on n1 is read as just made, while n2, grown tenfold and no longer
    reserved, was far less used: fair node sorting puts n2 first."""
    p = w.partition
    n2 = p.nodes["n2"]
    n2.capacity = {"memory": 1000, "vcore": 100}
    n2.reservations.clear()
    del p.reservations[("app-2", "big")]
    alloc = w.alloc("app-h", lambda a: a.node.id == "n1")
    w.notes["allocated"] = [alloc.uuid]
    return f"allocation default/{alloc.uuid}"


def _node_lost_allocation(w: World) -> str:
    node = w.partition.nodes["n1"]
    uuid = sorted(node.allocations)[0]
    del node.allocations[uuid]
    return "node default/n1"


def _node_available(w: World) -> str:
    node = w.partition.nodes["n2"]
    node.available = {**node.available, "memory": node.available["memory"] + 5}
    return "node default/n2"


def _partition_capacity(w: World) -> str:
    del w.partition.nodes["n3"]  # a node gone without the partition's total following
    return "partition default"


def _queue_max_lowered(w: World) -> str:
    w.partition.queues["root.a"].max = {"memory": 10}
    return "queue default/root.a"


def _node_capacity_shrunk(w: World) -> str:
    w.partition.nodes["n1"].capacity = {"memory": 10, "vcore": 10}
    return "node default/n1"


def _reference_node_forgets(w: World) -> str:
    alloc = w.alloc("app-1")
    del alloc.node.allocations[alloc.uuid]
    return f"allocation default/{alloc.uuid}"


def _reference_partition_index(w: World) -> str:
    uuid = w.alloc("app-1").uuid
    del w.partition.allocations[uuid]
    return "partition default"


def _reservation_on_drained_node(w: World) -> str:
    p = w.partition
    (app_id, key) = next(iter(p.reservations))
    p.reservations[(app_id, key)] = p.nodes["n3"]
    return f"reservation default/{app_id}/{key}"


def _reservation_shared(w: World) -> str:
    """An ordinary ask's reserved node records a second reservation beside it."""
    p = w.partition
    node = next(n for n in p.nodes.values() if n.reservations)
    node.reservations[("app-1", "other")] = w.api._core.next_seq()
    return f"node default/{node.id}"


def _required_reservation_lost(w: World) -> str:
    """The reserved ask requires another schedulable node (which could hold it), and holds
    no reservation of that one."""
    p = w.partition
    (app_id, key), held = next(iter(p.reservations.items()))
    other = next(n for n in ("n1", "n2") if p.nodes[n] is not held)
    p.apps[app_id].asks[key].tags[REQUIRED_NODE] = other
    return f"ask default/{app_id}/{key}"


def _reservation_too_young(w: World) -> str:
    """The reserved ask arrived just now: its reservation came before its delay ended."""
    p = w.partition
    (app_id, key) = next(iter(p.reservations))
    p.apps[app_id].asks[key].created = w.api.clock.now()
    return f"reservation default/{app_id}/{key}"


def _scheduling_room_appears(w: World) -> str:
    """Room appears on the reserved node without a cycle: the reserved ask now fits."""
    p = w.partition
    (app_id, key) = next(iter(p.reservations))
    for node in p.node_order:
        if (app_id, key) in node.reservations:
            node.capacity["memory"] = node.capacity.get("memory", 0) + 10_000
            node.capacity["vcore"] = node.capacity.get("vcore", 0) + 10_000
    return f"ask default/{app_id}/{key}"


def _backoff_without_cause(w: World) -> str:
    """An application backing off in a leaf whose application.unschedasks.backoff is off."""
    w.partition.apps["app-1"].backoff_until = w.api.clock.now() + 30.0
    return "application default/app-1"


def _app_state_completed(w: World) -> str:
    w.partition.apps["app-1"].state = "Completed"
    return "application default/app-1"


def _app_running_on_placeholders(w: World) -> str:
    for alloc in w.partition.apps["app-1"].allocations.values():
        alloc.placeholder = True  # Running, nothing pending, nothing real: it should wait
    return "application default/app-1"


def _app_resuming_without_placeholders(w: World) -> str:
    w.partition.apps["app-1"].state = "Resuming"  # holds real allocations only: not resuming
    return "application default/app-1"


def _app_finished_keeping_asks(w: World) -> str:
    app = w.partition.apps["app-1"]
    for alloc in list(app.allocations.values()):
        del app.allocations[alloc.uuid]
    for ask in list(app.pending_asks.values()):
        del app.pending_asks[ask.sort_key]
    app.state = "Completed"  # no allocation, nothing pending, yet its ask records stay
    return "application default/app-1"


def _shim_view_node_moved(w: World) -> str:
    alloc = w.alloc("app-1", lambda a: a.node.id == "n1")
    alloc.node = w.partition.nodes["n2"]
    return f"allocation {alloc.uuid}"


def _gang_real_while_waiting(w: World) -> str:
    alloc = w.alloc("app-h", lambda a: a.placeholder)
    alloc.placeholder = False
    return "application default/app-h"


def _gang_placeholder_ask_shrunk(w: World) -> str:
    w.partition.apps["app-h"].placeholder_ask = {"memory": 5}
    return "application default/app-h"


def _gang_placeholder_not_on_node(w: World) -> str:
    alloc = w.alloc("app-g", lambda a: a.placeholder)
    del alloc.node.allocations[alloc.uuid]
    return f"placeholder default/{alloc.uuid}"


def _gang_released_twice(w: World) -> str:
    alloc = w.alloc("app-g", lambda a: a.placeholder and a.state == "Releasing")
    alloc.release_count = 2
    return f"allocation default/{alloc.uuid}"


def _gang_fallback_unrecorded(w: World) -> str:
    alloc = w.alloc("app-g", lambda a: bool(a.replaces))
    alloc.fallback = not alloc.fallback
    return f"allocation default/{alloc.uuid}"


def _gang_admitted_fair(w: World) -> str:
    app = w.partition.apps["app-h"]
    app.admission = ("fair", app.admission[1])
    return "application default/app-h"


def _gang_unclean_exit(w: World) -> str:
    # A lifecycle edge the core would never fire here: Running -> Completing ->
    # Completed while the application still holds its allocations.
    app = w.partition.apps["app-1"]
    core = w.api._core
    core.fire(app, "wait", RM)
    core.fire(app, "complete", RM)
    return "transition"


def _lifecycle_state_assigned(w: World) -> str:
    w.partition.nodes["n1"].state = "Draining"
    return "node default/n1"


def _lifecycle_ask_state_assigned(w: World) -> str:
    w.partition.apps["app-2"].asks["big"].state = "Allocated"
    return "ask default/app-2/big"


def _lifecycle_undeclared_state(w: World) -> str:
    w.partition.apps["app-1"].state = "Sleeping"
    return "application default/app-1"


CORRUPTIONS: dict[str, list[Corruption]] = {
    "accounting.application": [_app_allocated, _app_pending],
    "accounting.queue": [_queue_allocated, _queue_running_apps],
    "accounting.node": [_node_lost_allocation, _node_available, _partition_capacity],
    "quota.queue_max": [_queue_max_lowered],
    "capacity.node": [_node_capacity_shrunk],
    "references.allocation": [_reference_node_forgets, _reference_partition_index],
    "reservations.valid": [_reservation_on_drained_node],
    "reservations.delay": [_reservation_too_young],
    "reservations.shared": [_reservation_shared],
    "reservations.required_held": [_required_reservation_lost],
    "application.state_agrees": [_app_state_completed, _app_running_on_placeholders,
                                 _app_resuming_without_placeholders,
                                 _app_finished_keeping_asks],
    "shim.view_agrees": [_shim_view_node_moved],
    "gang.accepted_waits_for_placeholders": [_gang_real_while_waiting],
    "gang.placeholders_within_ask": [_gang_placeholder_ask_shrunk],
    "gang.placeholders_counted": [_gang_placeholder_not_on_node],
    "gang.release_once": [_gang_released_twice],
    "gang.replacement_after_confirmation": [_gang_fallback_unrecorded],
    "gang.admission": [_gang_admitted_fair],
    "gang.clean_exit": [_gang_unclean_exit],
    "lifecycle.legal": [_lifecycle_state_assigned, _lifecycle_ask_state_assigned,
                        _lifecycle_undeclared_state],
    "scheduling.maximal": [_scheduling_room_appears],
    "scheduling.backoff": [_backoff_without_cause],
    "limits.accounting": [_user_usage, _user_running],
    "priority.cached": [_app_priority_stale, _queue_priority_stale],
    "priority.order": [_priority_passed_over],
    "scheduling.order": [_order_passed_over],
    "nodes.order": [_node_order_passed_over],
    "preemption.accounting": [_queue_preempting],
}

CASES = [(name, fn) for name, fns in CORRUPTIONS.items() for fn in fns]


def test_every_registered_invariant_has_a_corruption_test() -> None:
    missing = sorted(set(REGISTRY) - set(CORRUPTIONS))
    stale = sorted(set(CORRUPTIONS) - set(REGISTRY))
    assert not missing, f"invariants nobody has shown can fail: {missing}"
    assert not stale, f"corruptions for invariants that are no longer registered: {stale}"


def test_healthy_state_violates_nothing(world: World) -> None:
    ctx = world.ctx()
    per_invariant = results(ctx)
    assert set(per_invariant) == set(REGISTRY)
    assert per_invariant == {name: [] for name in REGISTRY}
    assert check_all(ctx) == []
    assert world.recorder.illegal == []
    assert world.recorder.count > 0


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_invariant_holds_on_the_healthy_state(world: World, name: str) -> None:
    assert REGISTRY[name].run(world.ctx()) == []


@pytest.mark.parametrize(("name", "corrupt"), CASES,
                         ids=[f"{n}:{fn.__name__.lstrip('_')}" for n, fn in CASES])
def test_invariant_reports_the_corruption(world: World, name: str, corrupt: Corruption) -> None:
    inv = REGISTRY.get(name)
    assert inv is not None, f"invariant {name} is not registered"
    assert inv.run(world.ctx()) == [], "the set-up already violates it"
    subject = corrupt(world)
    found = inv.run(world.ctx())
    assert found, f"{name} did not notice {corrupt.__name__}"
    assert all(isinstance(v, Violation) and v.invariant == name for v in found)
    assert all(v.explanation for v in found), "a violation must explain itself"
    subjects = [v.subject for v in found]
    assert subject in subjects, f"expected a violation on {subject!r}, got {subjects}"
    assert str(found[0]).startswith(f"[{name}] ")
    # check_all sees it too, under the invariant's own name.
    assert any(v.invariant == name and v.subject == subject for v in check_all(world.ctx()))


def test_check_all_reports_every_invariant_at_once(world: World) -> None:
    """One corruption per invariant on the same state: check_all names every invariant."""
    chosen = {
        "accounting.application": _app_pending,
        "accounting.queue": _queue_running_apps,
        "accounting.node": _node_available,
        "quota.queue_max": _queue_max_lowered,
        "capacity.node": _node_capacity_shrunk,
        "references.allocation": _reference_partition_index,
        "reservations.valid": _reservation_on_drained_node,
        "reservations.delay": _reservation_too_young,
        "reservations.shared": _reservation_shared,
        "application.state_agrees": _gang_unclean_exit,
        "shim.view_agrees": _shim_view_node_moved,
        "gang.accepted_waits_for_placeholders": _gang_real_while_waiting,
        "gang.placeholders_within_ask": _gang_placeholder_ask_shrunk,
        "gang.placeholders_counted": _gang_placeholder_not_on_node,
        "gang.release_once": _gang_released_twice,
        "gang.replacement_after_confirmation": _gang_fallback_unrecorded,
        "gang.admission": _gang_admitted_fair,
        "lifecycle.legal": _lifecycle_ask_state_assigned,
        "scheduling.maximal": _scheduling_room_appears,
        "scheduling.backoff": _backoff_without_cause,
        "preemption.accounting": _queue_preempting,
    }
    for corrupt in chosen.values():
        corrupt(world)
    found = check_all(world.ctx())
    names = {v.invariant for v in found}
    # The order checks judge a cycle rebuilt from the state: the other corruptions (a node
    # grown, a reservation moved) make that rebuild uncertain, and they then judge nothing;
    # their own corruption tests show them firing.
    # reservations.required_held needs the one reserved ask to require a node, which takes
    # it out of reservations.delay and scheduling.maximal: its own test shows it firing.
    wanted = set(REGISTRY) - {"priority.order", "scheduling.order", "nodes.order",
                              "reservations.required_held"}
    assert names == wanted, f"missing: {sorted(wanted - names)}"
    # Registry order: every violation of an earlier invariant comes first.
    order = list(REGISTRY)
    positions = [order.index(v.invariant) for v in found]
    assert positions == sorted(positions)
    # A chosen subset runs only those.
    subset = check_all(world.ctx(), ["capacity.node", "gang.admission"])
    assert {v.invariant for v in subset} == {"capacity.node", "gang.admission"}


def test_invariants_needing_an_observer_are_silent_without_it(world: World) -> None:
    _lifecycle_state_assigned(world)
    _shim_view_node_moved(world)
    bare = CheckContext(world.api)
    for inv in REGISTRY.values():
        if inv.needs:
            assert inv.run(bare) == [], inv.name
    assert REGISTRY["lifecycle.legal"].run(world.ctx())
    assert REGISTRY["shim.view_agrees"].run(world.ctx())


def test_shim_view_disagreements_in_both_directions(world: World) -> None:
    view = dict(world.shim.view)
    gone = sorted(view)[0]
    del view[gone]
    view["ghost-uuid"] = ("app-1", "n1")
    found = REGISTRY["shim.view_agrees"].run(CheckContext(world.api, shim_view=view))
    assert {v.subject for v in found} == {f"allocation {gone}", "allocation ghost-uuid"}


def test_checks_do_not_change_the_scheduler(world: World) -> None:
    import json

    before = json.dumps(world.api.state_dump(), sort_keys=True)
    _queue_allocated(world)
    corrupted = json.dumps(world.api.state_dump(), sort_keys=True)
    assert corrupted != before
    check_all(world.ctx())
    assert json.dumps(world.api.state_dump(), sort_keys=True) == corrupted


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------


def test_registry_entries_are_complete_and_uniquely_named() -> None:
    assert len(REGISTRY) >= 10
    assert invariants.REGISTRY is REGISTRY
    names = [inv.name for inv in REGISTRY.values()]
    assert len(names) == len(set(names))
    for key, inv in REGISTRY.items():
        assert isinstance(inv, Invariant)
        assert inv.name == key
        assert inv.statement.strip(), f"{key}: empty statement"
        assert inv.seed.strip(), f"{key}: empty seed"
        assert inv.meaning.strip(), f"{key}: empty meaning"
        assert callable(inv.check)
        assert set(inv.needs) <= {"recorder", "shim_view", "after_schedule"}, \
            f"{key}: unknown needs"
        assert "." in key and key == key.strip(), f"{key}: names are 'area.what'"


def test_registering_a_name_twice_is_refused() -> None:
    name = next(iter(REGISTRY))
    original = REGISTRY[name]
    with pytest.raises(ValueError, match="twice"):
        invariant(name, "s", "seed", "m")(lambda ctx: iter(()))
    assert REGISTRY[name] is original


def test_check_all_uses_registered_checks(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "test.always"

    def check(ctx: CheckContext) -> list[Violation]:
        return [Violation(name, "everything", "always broken")]

    monkeypatch.setitem(REGISTRY, name, Invariant(name, "s", "seed", "m", check))
    found = check_all(world.ctx())
    assert found == [Violation(name, "everything", "always broken")]
    assert results(world.ctx())[name] == found


def test_a_parked_ask_is_excused_only_by_a_replacement_the_shim_was_sent(world: World) -> None:
    """``scheduling.maximal`` takes the core's word that an ask is parked (``001`` step 3)
    only while the model shim holds that placeholder's PLACEHOLDER_REPLACED release: a
    core parking an ask on a placeholder the RM was never told of is judged like any ask
    that fits a node."""
    real = world.partition.apps["app-g"].asks["real2"]
    assert real.parked_on and real.state == "Pending"
    ctx = world.ctx()

    def flagged() -> bool:
        return any(v.subject.endswith("/app-g/real2")
                   for v in REGISTRY["scheduling.maximal"].run(ctx))

    assert not flagged()  # no shim record given: the core's word (a scenario test)
    ctx.extra["replacing"] = {real.parked_on}
    assert not flagged()
    ctx.extra["replacing"] = set()
    assert flagged()
