"""Regression tests for the sixteen defects a review found (r01..r16).

Each test drives the core through its public API only (``Scheduler`` with SI
messages, a ``RecordingShim``, a ``ManualClock``) and asserts the corrected
behaviour, plus the invariants (``check_all`` with a ``LifecycleRecorder``
attached right after the ``Scheduler`` is created).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from invariants import CheckContext, LifecycleRecorder, check_all
from scheduler import ConfigError, ManualClock, Scheduler, si
from scheduler.testing import RecordingShim

TT = si.TerminationType
NA = si.NodeAction
SS = si.SchedulingState
RM = "rm-1"

BASIC = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: b
"""


class Env:
    """A registered RM with a recording shim, a manual clock and a lifecycle recorder."""

    def __init__(self, config: str = BASIC) -> None:
        self.clock = ManualClock(start=0.0)
        self.api = Scheduler(clock=self.clock)
        self.rec = LifecycleRecorder(self.api)
        self.shim = RecordingShim()
        self._confirmed: set[str] = set()
        self.api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id=RM, config=config), self.shim)

    # -- invariants -------------------------------------------------------------
    def violations(self, after_schedule: bool = False) -> list[Any]:
        return check_all(CheckContext(self.api, recorder=self.rec,
                                      extra={"after_schedule": after_schedule}))

    def assert_invariants(self, after_schedule: bool = False) -> None:
        violations = self.violations(after_schedule)
        assert violations == [], "\n".join(str(v) for v in violations)

    # -- requests ---------------------------------------------------------------
    def node(self, nid: str, memory: int, vcore: int | None = None,
             existing: tuple[si.Allocation, ...] = (),
             attributes: dict[str, str] | None = None) -> None:
        kw = {"memory": memory} if vcore is None else {"memory": memory, "vcore": vcore}
        self.api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
            node_id=nid, action=NA.CREATE, schedulable_resource=si.Resource.of(**kw),
            attributes=attributes or {}, existing_allocations=list(existing))]))

    def app(self, aid: str, queue: str = "root.a", user: str = "alice", ph: int | None = None,
            style: str = "", timeout_ms: int = 0, partition: str = "default",
            tags: dict[str, str] | None = None) -> None:
        self.api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
            application_id=aid, queue_name=queue, partition_name=partition,
            ugi=si.UserGroupInformation(user=user), tags=tags or {},
            placeholder_ask=si.Resource.of(memory=ph) if ph else None,
            gang_scheduling_style=style, execution_timeout_milli_seconds=timeout_ms)]))

    def remove_app(self, aid: str) -> None:
        self.api.update_application(si.ApplicationRequest(rm_id=RM, remove=[
            si.RemoveApplicationRequest(application_id=aid)]))

    def ask(self, aid: str, key: str, memory: int, repeats: int = 1, tg: str = "",
            ph: bool = False, partition: str = "default", vcore: int | None = None) -> None:
        kw = {"memory": memory} if vcore is None else {"memory": memory, "vcore": vcore}
        self.api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
            allocation_key=key, application_id=aid, resource_ask=si.Resource.of(**kw),
            max_allocations=repeats, task_group_name=tg, placeholder=ph,
            partition_name=partition)]))

    def release(self, aid: str, uuid: str) -> None:
        self.api.update_allocation(si.AllocationRequest(
            rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(application_id=aid, uuid=uuid,
                                     termination_type=TT.STOPPED_BY_RM)])))

    def update_config(self, config: str) -> None:
        self.api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=config))

    def confirm_all(self) -> None:
        """Confirm every outstanding core-initiated release the shim was told about."""
        for r in self.shim.released:
            if r.termination_type == TT.STOPPED_BY_RM or r.uuid in self._confirmed:
                continue
            self._confirmed.add(r.uuid)
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[r])))

    # -- views ------------------------------------------------------------------
    def dump(self) -> dict[str, Any]:
        return self.api.state_dump()

    def apps(self) -> dict[str, Any]:
        return {a["application_id"]: a for p in self.dump()["partitions"]
                for a in p["applications"]}

    def nodes(self) -> dict[str, Any]:
        return {n["node_id"]: n for p in self.dump()["partitions"] for n in p["nodes"]}

    def queues(self) -> dict[str, Any]:
        return {q["path"]: q for p in self.dump()["partitions"] for q in p["queues"]}

    def allocs(self, aid: str) -> list[dict[str, Any]]:
        return self.apps()[aid]["allocations"]

    def real_allocs(self, aid: str) -> list[dict[str, Any]]:
        return [a for a in self.allocs(aid) if not a["placeholder"]]

    def reservations(self) -> list[tuple[str, str, str]]:
        """(node, application, allocation key) for every reservation in the dump."""
        return [(nid, r["application_id"], r["allocation_key"])
                for nid, n in self.nodes().items() for r in n["reserved"]]

    def shim_allocs(self, aid: str) -> list[si.Allocation]:
        return [a for a in self.shim.allocations if a.application_id == aid]


def _occupy_n1(e: Env) -> str:
    """n1 (30) with 20 taken by root.b's ``other``; returns that allocation's uuid."""
    e.node("n1", 30)
    e.app("other", queue="root.b")
    e.ask("other", "o", 20)
    e.api.schedule()
    [alloc] = e.allocs("other")
    assert alloc["node_id"] == "n1"
    return str(alloc["uuid"])


# -- r01 ------------------------------------------------------------------------------
def test_r01_parked_ask_is_not_allocated_through_its_reservation() -> None:
    e = Env()
    other_uuid = _occupy_n1(e)
    e.app("g", ph=15)
    e.ask("g", "r", 15, tg="tg")                 # real ask first: reserves n1
    e.clock.advance(e.api.reservation_delay)       # past its reservation delay
    e.api.schedule()
    assert ("n1", "g", "r") in e.reservations()
    e.node("n2", 15)
    e.ask("g", "ph1", 15, tg="tg", ph=True)
    e.api.schedule()                             # ph1 on n2
    e.api.schedule()                             # r parks on ph1 (PLACEHOLDER_REPLACED)
    [ph] = [a for a in e.allocs("g") if a["placeholder"]]
    assert ph["node_id"] == "n2"
    assert ph["state"] == "Releasing"
    assert any(r.uuid == ph["uuid"] and r.termination_type == TT.PLACEHOLDER_REPLACED
               for r in e.shim.released)

    e.release("other", other_uuid)               # n1 frees up
    e.api.schedule()
    assert e.real_allocs("g") == []
    assert [a.allocation_key for a in e.shim_allocs("g")] == ["ph1"]
    e.assert_invariants()

    e.confirm_all()                              # the shim confirms the replacement
    e.api.schedule()
    real = e.real_allocs("g")
    assert [(a["allocation_key"], a["node_id"], a["state"]) for a in real] == [
        ("r", "n2", "Allocated")]
    assert [a for a in e.allocs("g") if a["placeholder"]] == []
    e.assert_invariants()


# -- r02 ------------------------------------------------------------------------------
@pytest.mark.parametrize(("style", "timed_out_state"), [("Hard", "Failing"),
                                                        ("Soft", "Resuming")])
def test_r02_reservation_of_failing_or_resuming_app_is_cancelled(
        style: str, timed_out_state: str) -> None:
    e = Env()
    other_uuid = _occupy_n1(e)
    e.app("g", ph=10, style=style, timeout_ms=60_000)
    e.ask("g", "r", 25)                          # plain real ask: reserves n1
    e.clock.advance(e.api.reservation_delay)       # past its reservation delay
    e.api.schedule()
    e.node("n2", 10)
    e.ask("g", "ph1", 10, tg="tg", ph=True)
    e.api.schedule()                             # ph1 on n2, placeholder timer starts
    assert ("n1", "g", "r") in e.reservations()
    allocs_before = len(e.shim_allocs("g"))

    e.clock.advance(61)
    e.api.schedule()                             # placeholder timeout fires
    assert e.apps()["g"]["state"] == timed_out_state
    assert [x for x in e.reservations() if x[1] == "g"] == []

    e.release("other", other_uuid)               # n1 frees up
    e.api.schedule()
    assert e.apps()["g"]["state"] == timed_out_state
    assert e.real_allocs("g") == []
    assert len(e.shim_allocs("g")) == allocs_before
    assert [x for x in e.reservations() if x[1] == "g"] == []
    e.assert_invariants()

    e.confirm_all()                              # the shim confirms the TIMEOUT release
    if style == "Hard":
        assert e.apps()["g"]["state"] == "Failed"
        assert e.allocs("g") == []
    assert len(e.shim_allocs("g")) == allocs_before
    e.assert_invariants()


# -- r03 ------------------------------------------------------------------------------
def test_r03_gang_real_ask_waits_for_every_placeholder() -> None:
    e = Env()
    other_uuid = _occupy_n1(e)
    e.app("g", ph=40)
    e.ask("g", "r", 25, tg="tg")                 # real ask before any placeholder
    e.api.schedule()
    e.ask("g", "ph", 20, repeats=2, tg="tg", ph=True)

    def placeholders_pending() -> bool:
        return any(k["placeholder"] and k["pending_repeats"] > 0
                   for k in e.apps()["g"]["asks"])

    def check_step() -> None:
        if placeholders_pending():
            assert ("g", "r") not in [(a, k) for _, a, k in e.reservations()]
            assert e.real_allocs("g") == []
        e.assert_invariants(after_schedule=True)

    e.api.schedule()
    assert placeholders_pending()
    check_step()
    e.release("other", other_uuid)
    e.api.schedule()
    assert placeholders_pending()                # only one placeholder fits n1
    check_step()
    assert not any(a.allocation_key == "r" for a in e.shim_allocs("g"))

    e.node("n2", 100)                            # room for the rest of the gang
    for _ in range(4):
        e.api.schedule()
        check_step()
        e.confirm_all()
        e.assert_invariants()
    assert not placeholders_pending()
    keys = [a.allocation_key for a in e.shim_allocs("g")]
    if "r" in keys:
        assert keys.index("r") > max(i for i, k in enumerate(keys) if k == "ph")


# -- r04 ------------------------------------------------------------------------------
MAXAPPS = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            maxapplications: 1
"""


def _assert_at_most_one_running(e: Env) -> None:
    in_a = [a for a in e.apps().values() if a["queue"] == "root.a"]
    assert sum(1 for a in in_a if a["state"] == "Running") <= 1
    assert sum(1 for a in in_a if a["allocations"]) <= 1


def test_r04_completing_app_keeps_its_maxapplications_slot() -> None:
    e = Env(MAXAPPS)
    e.node("n1", 100)
    e.app("A")
    e.ask("A", "a1", 10)
    e.api.schedule()
    e.release("A", e.allocs("A")[0]["uuid"])
    assert e.apps()["A"]["state"] == "Completing"
    _assert_at_most_one_running(e)

    e.app("B")
    e.ask("B", "b1", 10)
    e.api.schedule()
    assert e.allocs("B") == []                   # A still holds the only slot
    assert e.apps()["B"]["state"] != "Running"
    _assert_at_most_one_running(e)
    e.assert_invariants(after_schedule=True)

    e.ask("A", "a2", 10)                         # A runs again
    e.api.schedule()
    apps = e.apps()
    assert apps["A"]["state"] == "Running"
    assert [a["allocation_key"] for a in apps["A"]["allocations"]] == ["a2"]
    assert apps["B"]["allocations"] == []
    _assert_at_most_one_running(e)
    e.assert_invariants(after_schedule=True)


# -- r05 ------------------------------------------------------------------------------
def _template_config(properties: str, max_memory: int | None) -> str:
    resources = (f"              resources:\n                max: {{memory: {max_memory}}}\n"
                 if max_memory is not None else "")
    return f"""
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
        parent:
          name: fixed
          value: root.tenants
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: tenants
            parent: true
            childtemplate:
{properties}{resources}"""


FAIR_PROPS = "              properties:\n                application.sort.policy: fair\n"
FIFO_PROPS = "              properties:\n                application.sort.policy: fifo\n"


@pytest.mark.parametrize(("properties", "max_memory", "ph"), [
    (FAIR_PROPS, 50, 100),                       # fair and too small
    (FAIR_PROPS, None, 10),                      # fair only
    (FIFO_PROPS, 50, 100),                       # max smaller than placeholderAsk only
], ids=["fair-and-small", "fair", "small"])
def test_r05_gang_into_childtemplate_queue_is_rejected(
        properties: str, max_memory: int | None, ph: int) -> None:
    e = Env(_template_config(properties, max_memory))
    queues_before = set(e.queues())
    e.app("g1", tags={"namespace": "ns1"}, ph=ph)
    assert "g1" not in e.shim.accepted_apps
    rejected = [r for r in e.shim.rejected_apps if r.application_id == "g1"]
    assert len(rejected) == 1 and rejected[0].reason
    assert "root.tenants.ns1" not in e.queues()
    assert set(e.queues()) == queues_before
    assert e.apps()["g1"]["state"] == "Rejected"       # a rejected app stays in the dump
    e.assert_invariants()


def test_r05_plain_app_into_childtemplate_queue_is_accepted() -> None:
    e = Env(_template_config(FAIR_PROPS, 50))
    e.app("p1", tags={"namespace": "ns1"})
    assert "p1" in e.shim.accepted_apps
    q = e.queues()["root.tenants.ns1"]
    assert q["sort_policy"] == "fair"
    e.assert_invariants()


# -- r06 ------------------------------------------------------------------------------
def test_r06_terminated_app_of_removed_unmanaged_queue_is_no_violation() -> None:
    e = Env("""
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: "*"
""")
    e.node("n1", 100)
    e.app("A", queue="root.dyn")
    e.ask("A", "k", 10)
    e.api.schedule()
    e.release("A", e.allocs("A")[0]["uuid"])
    e.clock.advance(31)
    e.api.schedule()
    assert e.apps()["A"]["state"] == "Completed"
    assert "root.dyn" not in e.queues()
    e.assert_invariants()


def test_r06_terminated_app_of_removed_draining_queue_is_no_violation() -> None:
    e = Env()
    e.node("n1", 100)
    e.app("A", queue="root.b")
    e.ask("A", "k", 10)
    e.api.schedule()
    e.update_config("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
""")
    e.release("A", e.allocs("A")[0]["uuid"])
    e.clock.advance(31)
    e.api.schedule()
    assert e.apps()["A"]["state"] == "Completed"
    assert e.queues()["root.b"]["state"] == "Draining"   # empty: the cleanup takes it
    e.assert_invariants()
    e.clock.advance(10)
    e.api.schedule()
    assert "root.b" not in e.queues()
    e.assert_invariants()


# -- r07 ------------------------------------------------------------------------------
def test_r07_leaf_with_applications_can_not_become_parent() -> None:
    e = Env()
    e.node("n1", 100)
    e.app("A", queue="root.a")
    e.ask("A", "k", 10, repeats=2)
    e.api.schedule()
    before = e.dump()
    with pytest.raises(ConfigError):
        e.update_config("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            queues:
              - name: a1
          - name: b
""")
    assert e.dump() == before
    assert e.queues()["root.a"]["parent"] is False
    e.assert_invariants()


# -- r08 ------------------------------------------------------------------------------
def test_r08_empty_partition_name_means_default() -> None:
    e = Env()
    e.node("n1", 100)
    e.app("A", partition="")
    assert "A" in e.shim.accepted_apps
    assert e.shim.rejected_apps == []
    e.app("B")
    e.ask("B", "k", 10, partition="")
    assert e.shim.rejected_asks == []
    assert e.api.schedule() == 1
    assert [a["allocation_key"] for a in e.allocs("B")] == ["k"]
    [p] = e.dump()["partitions"]
    assert p["name"] == "default"
    assert {a["application_id"] for a in p["applications"]} == {"A", "B"}
    e.assert_invariants(after_schedule=True)


# -- r09 ------------------------------------------------------------------------------
def test_r09_reservation_released_mid_cycle_reopens_the_cycle() -> None:
    e = Env("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: b
          - name: c
""")
    e.node("n1", 40, vcore=10)
    e.app("filler", queue="root.c")
    e.ask("filler", "f", 20, vcore=1)
    e.api.schedule()                             # n1 room {memory 20, vcore 9}
    e.app("X", queue="root.b")
    e.ask("X", "R", 25, vcore=1)
    e.clock.advance(e.api.reservation_delay)       # past its reservation delay
    e.api.schedule()                             # R reserves n1
    assert ("n1", "X", "R") in e.reservations()
    e.node("n3", 100, vcore=1)                   # room for R, not for S
    e.app("Y", queue="root.a")
    e.ask("Y", "S", 10, vcore=5)
    made = e.api.schedule()
    assert made == 2
    assert [a["node_id"] for a in e.allocs("X")] == ["n3"]
    assert [a["node_id"] for a in e.allocs("Y")] == ["n1"]
    assert e.reservations() == []
    e.assert_invariants(after_schedule=True)
    assert e.api.schedule() == 0


# -- r10 ------------------------------------------------------------------------------
def test_r10_parent_without_children_becomes_leaf() -> None:
    e = Env("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: p
            queues:
              - name: c
""")
    assert e.queues()["root.p"]["parent"] is True
    e.update_config("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: p
""")
    # The removed child drains until the periodic cleanup takes it (partition_manager.go
    # cleanQueues); then its parent is the leaf the configuration says.
    assert e.queues()["root.p.c"]["state"] == "Draining"
    e.clock.advance(10)
    e.api.schedule()
    qs = e.queues()
    assert "root.p.c" not in qs
    assert qs["root.p"]["parent"] is False
    assert qs["root.p"]["state"] == "Active"
    e.node("n1", 100)
    e.app("A", queue="root.p")
    assert "A" in e.shim.accepted_apps
    assert e.shim.rejected_apps == []
    e.ask("A", "k", 10)
    assert e.api.schedule() == 1
    assert e.apps()["A"]["queue"] == "root.p"
    e.assert_invariants(after_schedule=True)


# -- r11 ------------------------------------------------------------------------------
def test_r11_parent_rule_creates_several_levels_top_down() -> None:
    e = Env("""
partitions:
  - name: default
    placementrules:
      - name: user
        create: true
        parent:
          name: fixed
          value: root.t.team
          create: true
    queues:
      - name: root
        submitacl: "*"
""")
    e.app("A", user="alice")                     # no exception may escape
    assert "A" in e.shim.accepted_apps
    assert e.shim.rejected_apps == []
    qs = e.queues()
    assert qs["root.t"]["parent"] is True
    assert qs["root.t.team"]["parent"] is True
    assert qs["root.t.team.alice"]["parent"] is False
    assert e.apps()["A"]["queue"] == "root.t.team.alice"
    created = [ev.object_id for ev in e.shim.events
               if ev.type == si.EventRecordType.QUEUE
               and ev.event_change_type == si.EventChangeType.ADD]
    assert created == ["root.t", "root.t.team", "root.t.team.alice"]
    e.assert_invariants()
    e.node("n1", 100)
    e.ask("A", "k", 10)
    assert e.api.schedule() == 1
    e.assert_invariants(after_schedule=True)


# -- r12 ------------------------------------------------------------------------------
def test_r12_allocation_uuids_unique_across_partitions() -> None:
    e = Env("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
  - name: gpu
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
""")
    e.app("A", partition="gpu")
    recovered = si.Allocation(
        allocation_key="k", uuid="A-k-1", application_id="A", partition_name="gpu",
        resource_per_alloc=si.Resource.of(memory=10), node_id="g1")
    e.node("g1", 100, existing=(recovered,), attributes={"si/node-partition": "gpu"})
    assert "g1" in e.shim.accepted_nodes
    e.node("d1", 100)
    e.app("A", partition="default")
    e.ask("A", "k", 10)
    assert e.api.schedule() == 1
    new = [a for a in e.shim.allocations if a.partition_name == "default"]
    assert len(new) == 1 and new[0].uuid != "A-k-1"
    uuids = [x["uuid"] for p in e.dump()["partitions"]
             for a in p["applications"] for x in a["allocations"]]
    assert len(uuids) == 2
    assert not [u for u, n in Counter(uuids).items() if n > 1]
    e.assert_invariants(after_schedule=True)


# -- r13 ------------------------------------------------------------------------------
def test_r13_unmanaged_queue_below_draining_queue_refuses_submissions() -> None:
    e = Env("""
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: p
            parent: true
""")
    e.app("A", queue="root.p.x")                 # creates unmanaged root.p.x
    assert "A" in e.shim.accepted_apps
    e.update_config("""
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: "*"
""")
    assert e.queues()["root.p"]["state"] == "Draining"
    e.app("B", queue="root.p.x")
    assert "B" not in e.shim.accepted_apps
    rejected = [r for r in e.shim.rejected_apps if r.application_id == "B"]
    assert len(rejected) == 1 and rejected[0].reason
    assert e.apps()["B"]["state"] == "Rejected"
    e.assert_invariants()
    e.remove_app("A")
    assert set(e.queues()) == {"root", "root.p"}          # draining, empty: the cleanup
    e.clock.advance(10)
    e.api.schedule()
    assert set(e.queues()) == {"root"}
    e.assert_invariants()


# -- r14 ------------------------------------------------------------------------------
def test_r14_failing_gang_does_not_block_stateaware_queue() -> None:
    e = Env("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: s
            properties:
              application.sort.policy: stateaware
""")
    e.node("n1", 100)
    e.app("G", queue="root.s", ph=20, style="Hard", timeout_ms=10_000)
    e.ask("G", "ph", 10, repeats=2, tg="tg", ph=True)
    e.api.schedule()
    e.ask("G", "extra", 30, tg="tg2")            # a real ask with no matching placeholder
    e.clock.advance(11)
    e.api.schedule()                             # Hard timeout: G -> Failing
    assert e.apps()["G"]["state"] == "Failing"
    e.app("Y", queue="root.s")
    e.ask("Y", "y", 10)
    assert e.api.schedule() == 1
    assert e.apps()["Y"]["state"] == "Running"
    assert [a["node_id"] for a in e.allocs("Y")] == ["n1"]
    assert e.real_allocs("G") == []
    e.assert_invariants(after_schedule=True)


# -- r15 ------------------------------------------------------------------------------
CORE = 1000          # the SI carries vcore in milli-cores; the config's "vcore: 20" is 20 cores


def test_r15_config_vcore_quota_binds_on_whole_core_asks() -> None:
    e = Env("""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources:
              max: {memory: 120, vcore: 20}
""")
    assert e.queues()["root.a"]["max"] == {"memory": 120, "vcore": 20 * CORE}
    for i in range(30):
        e.node(f"n{i}", 100, vcore=8 * CORE)
    e.app("A", queue="root.a")
    e.ask("A", "k", 1, repeats=100, vcore=1 * CORE)
    assert e.api.schedule() == 20
    assert len(e.allocs("A")) == 20
    assert e.queues()["root.a"]["allocated"] == {"memory": 20, "vcore": 20 * CORE}
    e.assert_invariants(after_schedule=True)


# -- r16 ------------------------------------------------------------------------------
@pytest.mark.parametrize(("style", "timed_out_state"), [("Soft", "Resuming"),
                                                        ("Hard", "Failing")])
def test_r16_recovery_into_resuming_or_failing_app_is_rejected(
        style: str, timed_out_state: str) -> None:
    e = Env()
    e.node("n1", 10)
    e.app("g", ph=20, style=style, timeout_ms=10_000)
    e.ask("g", "ph", 10, repeats=2, tg="tg", ph=True)
    e.api.schedule()                             # one placeholder on n1, one pending
    e.clock.advance(11)
    e.api.schedule()
    assert e.apps()["g"]["state"] == timed_out_state
    before = e.dump()
    recovered = si.Allocation(
        allocation_key="ph-x", uuid="g-recovered-1", application_id="g",
        resource_per_alloc=si.Resource.of(memory=10), node_id="n2",
        task_group_name="tg", placeholder=True)
    e.node("n2", 10, existing=(recovered,))
    assert "n2" not in e.shim.accepted_nodes
    rejected = [n for n in e.shim.rejected_nodes if n.node_id == "n2"]
    assert len(rejected) == 1 and rejected[0].reason
    assert e.dump() == before
    e.assert_invariants()

    e.confirm_all()
    e.clock.advance(7 * 24 * 3600)
    e.api.schedule()
    g = e.apps().get("g")                        # a Failed app may have been cleaned up
    if g is not None:
        assert all(a["uuid"] != "g-recovered-1" for a in g["allocations"])
        assert g["state"] not in ("Resuming", "Failing")
    e.assert_invariants()
