"""Today's SI means what the seed's SI means, where both can say it: a differential property.

Random runs of what both dialects can say (nodes, applications, pods of one
repeat, releases of pods and of pending asks, scheduling) go to two cores: one
RM speaks the seed's SI, the other today's. The two cores must end every step
in the same state (allocation uuids aside: today's SI has none) and tell their
RMs the same things, each in its own words. The seed's side is written from
the seed's spec alone, so a translation that drifts from it shows here.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from scenario_helpers import CONFIG

from scheduler import ManualClock, Scheduler, si
from scheduler.si import today as t
from scheduler.testing import RecordingShim

TT = si.TerminationType
NODES = ("n1", "n2")
APPS = ("a1", "a2")
KEYS = ("k1", "k2", "k3", "k4")

op = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODES), st.integers(20, 80)),
    st.tuples(st.just("drain"), st.sampled_from(NODES), st.booleans()),
    st.tuples(st.just("app"), st.sampled_from(APPS), st.sampled_from(("root.a", "root.b")),
              st.sampled_from((0, 30, 60))),
    st.tuples(st.just("pod"), st.sampled_from(APPS), st.sampled_from(KEYS),
              st.integers(5, 50), st.sampled_from(("", "tg")), st.booleans()),
    st.tuples(st.just("confirm")),
    st.tuples(st.just("advance"), st.sampled_from((1.0, 60.0, 900.0))),
    st.tuples(st.just("stop"), st.sampled_from(APPS), st.sampled_from(KEYS)),
    st.tuples(st.just("remove"), st.sampled_from(APPS)),
    st.tuples(st.just("schedule")),
)


class Pair:
    """The same story told to a core in the seed's SI and to one in today's."""

    def __init__(self) -> None:
        self.seed_clock, self.today_clock = ManualClock(0.0), ManualClock(0.0)
        self.seed_api = Scheduler(clock=self.seed_clock)
        self.today_api = Scheduler(clock=self.today_clock)
        self.seed_shim, self.today_shim = RecordingShim(), RecordingShim()
        self.seed_api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id="rm", config=CONFIG), self.seed_shim,
            "seed")
        self.today_api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id="rm", config=CONFIG), self.today_shim,
            "today")
        self.confirmed: set[str] = set()
        self.today_told = 0

    def run(self, step: tuple[Any, ...]) -> None:
        kind = step[0]
        seed, today = self.seed_api, self.today_api
        if kind == "node":
            _, node, memory = step
            size = si.Resource.of(memory=memory, vcore=4)
            seed.update_node(si.NodeRequest(rm_id="rm", nodes=[si.NodeInfo(
                node_id=node, action=si.NodeAction.CREATE, schedulable_resource=size)]))
            today.update_node(t.NodeRequest(rm_id="rm", nodes=[t.NodeInfo(
                node_id=node, action=t.NodeAction.CREATE, schedulable_resource=size)]))
        elif kind == "drain":
            _, node, drain = step
            action = "DRAIN_NODE" if drain else "DRAIN_TO_SCHEDULABLE"
            seed.update_node(si.NodeRequest(rm_id="rm", nodes=[
                si.NodeInfo(node_id=node, action=action)]))
            today.update_node(t.NodeRequest(rm_id="rm", nodes=[
                t.NodeInfo(node_id=node, action=action)]))
        elif kind == "app":
            _, app, queue, gang = step
            request = si.ApplicationRequest(rm_id="rm", new=[si.AddApplicationRequest(
                application_id=app, queue_name=queue, ugi=si.UserGroupInformation(user="u"),
                placeholder_ask=si.Resource.of(memory=gang, vcore=4) if gang else None)])
            seed.update_application(request)
            today.update_application(request)
        elif kind == "remove":
            request = si.ApplicationRequest(rm_id="rm", remove=[
                si.RemoveApplicationRequest(application_id=step[1])])
            seed.update_application(request)
            today.update_application(request)
        elif kind == "pod":
            _, app, key, memory, group, placeholder = step
            if self._running(app, key):
                return                   # a new size for a running pod: today's SI alone says it
            size = si.Resource.of(memory=memory, vcore=1)
            # the seed's words for a new pod of a key: one repeat more than it had
            seed.update_allocation(si.AllocationRequest(rm_id="rm", asks=[si.AllocationAsk(
                allocation_key=key, application_id=app, resource_ask=size,
                max_allocations=self._done(app, key) + 1, task_group_name=group,
                placeholder=placeholder)]))
            today.update_allocation(t.AllocationRequest(rm_id="rm", allocations=[
                t.Allocation(allocation_key=key, application_id=app, resource_per_alloc=size,
                             task_group_name=group, placeholder=placeholder)]))
        elif kind == "stop":
            _, app, key = step
            self._stop_seed(app, key)
            today.update_allocation(t.AllocationRequest(
                rm_id="rm", releases=t.AllocationReleasesRequest(allocations_to_release=[
                    t.AllocationRelease(application_id=app, allocation_key=key,
                                        termination_type="STOPPED_BY_RM")])))
        elif kind == "confirm":
            self._confirm()
        elif kind == "advance":
            self.seed_clock.advance(step[1])
            self.today_clock.advance(step[1])
        else:
            seed.schedule()
            today.schedule()

    def _confirm(self) -> None:
        """Each RM sends back every core-initiated release it heard and did not confirm yet."""
        owed = [r for r in self.seed_shim.released
                if r.termination_type != TT.STOPPED_BY_RM and r.uuid not in self.confirmed]
        self.confirmed.update(r.uuid for r in owed)
        self.seed_api.update_allocation(si.AllocationRequest(
            rm_id="rm", releases=si.AllocationReleasesRequest(allocations_to_release=owed)))
        told = [r for r in self.today_shim.released
                if r.termination_type.name != "STOPPED_BY_RM"]
        fresh, self.today_told = told[self.today_told:], len(told)
        self.today_api.update_allocation(t.AllocationRequest(
            rm_id="rm", releases=t.AllocationReleasesRequest(allocations_to_release=fresh)))

    def _app(self, app: str) -> dict[str, Any] | None:
        apps = self.seed_api.state_dump()["partitions"][0]["applications"]
        return next((a for a in apps if a["application_id"] == app), None)

    def _running(self, app: str, key: str) -> bool:
        found = self._app(app)
        return found is not None and any(a["allocation_key"] == key
                                         for a in found["allocations"])

    def _done(self, app: str, key: str) -> int:
        """How many pods of ``key`` the seed's core holds as allocated repeats of its ask."""
        found = self._app(app)
        if found is None:
            return 0
        live = [a for a in found["allocations"] if a["allocation_key"] == key]
        asks = [a for a in found["asks"] if a["allocation_key"] == key]
        if live or not asks or asks[0]["state"] != "Allocated":
            return 0
        return 1

    def _stop_seed(self, app: str, key: str) -> None:
        """The pod of ``key`` gone: its allocation released by uuid, or its pending ask."""
        found = self._app(app)
        live = [] if found is None else [a for a in found["allocations"]
                                         if a["allocation_key"] == key]
        pending = found is not None and any(
            a["allocation_key"] == key and a["state"] == "Pending" for a in found["asks"])
        releases = si.AllocationReleasesRequest(
            allocations_to_release=[si.AllocationRelease(
                application_id=app, uuid=a["uuid"], allocation_key=key,
                termination_type=TT.STOPPED_BY_RM) for a in live],
            allocation_asks_to_release=[si.AllocationAskRelease(
                application_id=app, allocation_key=key, termination_type=TT.STOPPED_BY_RM)]
            if pending else [])
        if live or pending:
            self.seed_api.update_allocation(si.AllocationRequest(rm_id="rm", releases=releases))


def _without_uuids(dump: dict[str, Any]) -> dict[str, Any]:
    for p in dump["partitions"]:
        for app in p["applications"]:
            for a in app["allocations"]:
                a.pop("uuid")
    dump["partitions"][0].pop("rm_id", None)
    return dump


def _heard(shim: RecordingShim) -> list[tuple[str, ...]]:
    """What an RM heard about pods, in both dialects' words reduced to the same facts."""
    out: list[tuple[str, ...]] = []
    for response in shim.of("update_allocation"):
        out += [("new", a.application_id, a.allocation_key, a.node_id) for a in response.new]
        gone = [*response.released, *getattr(response, "released_asks", ())]
        out += [("released", r.application_id, r.allocation_key, r.termination_type.name)
                for r in gone]
        refused = getattr(response, "rejected", None) or getattr(
            response, "rejected_allocations", ())
        out += [("rejected", r.application_id, r.allocation_key) for r in refused]
    return sorted(out)


@given(st.lists(op, min_size=1, max_size=25))
def test_both_dialects_tell_the_same_story(steps: list[tuple[Any, ...]]) -> None:
    pair = Pair()
    for step in steps:
        pair.run(step)
        assert _without_uuids(pair.today_api.state_dump()) == \
            _without_uuids(pair.seed_api.state_dump()), step
    assert _heard(pair.today_shim) == _heard(pair.seed_shim)
    assert [m for m in pair.today_shim.of("update_application")] == \
        [m for m in pair.seed_shim.of("update_application")]
