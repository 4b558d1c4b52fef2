"""Scenarios: gang scheduling (``001``) through the public API.

Submission checks, placeholder asks, placeholder replacement, the placeholder
and completing timeouts, recovery of placeholders, and the release /
confirmation protocol with a shim that misbehaves. Every scenario ends by
running every registered invariant with a lifecycle recorder that was attached
before the resource manager registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from scenario_helpers import CONFIG, RM, SS, TT, Env, alloc_msg, config, mem

import invariants
from scheduler import Scheduler, si
from scheduler.clock import ManualClock
from scheduler.testing import RecordingShim

MINUTE = 60.0
PLACEHOLDER_TIMEOUT = 15 * MINUTE
COMPLETING_TIMEOUT = 30.0
DAY = 24 * 3600.0


class GangEnv(Env):
    """``Env`` with a lifecycle recorder attached before anything happens."""

    def __init__(self, config_text: str = CONFIG,
                 predicates: Callable[[si.PredicatesArgs], bool] | None = None) -> None:
        self.clock = ManualClock(start=0.0)
        self.api = Scheduler(clock=self.clock)
        self.rec = invariants.LifecycleRecorder(self.api)
        self.shim = RecordingShim(predicates)
        self.rm = RM
        self.register(config_text)

    # -- requests -------------------------------------------------------------
    def add_gang(
        self,
        app_id: str,
        queue: str = "root.a",
        *,
        ph_ask: int = 60,
        style: str = "",
        timeout_ms: int = 0,
    ) -> None:
        self.api.update_application(si.ApplicationRequest(
            rm_id=self.rm,
            new=[si.AddApplicationRequest(
                application_id=app_id, queue_name=queue, partition_name="default",
                ugi=si.UserGroupInformation(user="alice"),
                placeholder_ask=si.Resource.of(memory=ph_ask) if ph_ask else None,
                gang_scheduling_style=style,
                execution_timeout_milli_seconds=timeout_ms)]))

    def placeholders(self, app_id: str, count: int, memory: int = 20, *,
                     task_group: str = "tg", prefix: str = "ph") -> None:
        """One placeholder ask per task group member (``001`` option A)."""
        for i in range(1, count + 1):
            self.ask(app_id, f"{prefix}-{i}", memory, placeholder=True, task_group=task_group)

    def real(self, app_id: str, key: str, memory: int = 20, *, task_group: str = "tg") -> None:
        self.ask(app_id, key, memory, task_group=task_group)

    def confirm(self, app_id: str, uuid: str, ttype: si.TerminationType) -> None:
        """The shim sends a core-initiated release back (its confirmation)."""
        self.release(app_id, uuid, ttype)

    def confirm_ask(self, app_id: str, key: str, ttype: si.TerminationType) -> None:
        self.release_ask(app_id, key, ttype)

    # -- views ----------------------------------------------------------------
    def uuid_of(self, app_id: str, key: str) -> str:
        """The uuid the shim was told for the (latest) allocation of ``key``."""
        found = [a.uuid for a in self.shim.allocations
                 if a.application_id == app_id and a.allocation_key == key]
        assert found, f"no allocation of {app_id}/{key} was sent to the shim"
        return found[-1]

    def dump_alloc(self, app_id: str, uuid: str) -> dict[str, Any] | None:
        app = self.app(app_id)
        assert app is not None
        return next((a for a in app["allocations"] if a["uuid"] == uuid), None)

    def dump_ask(self, app_id: str, key: str) -> dict[str, Any] | None:
        app = self.app(app_id)
        assert app is not None
        return next((k for k in app["asks"] if k["allocation_key"] == key), None)

    def alloc_responses(self) -> list[si.AllocationResponse]:
        return self.shim.of("update_allocation")

    def releases(self) -> list[tuple[str, si.TerminationType]]:
        return [(r.uuid, r.termination_type) for r in self.shim.released]

    def violations(self) -> list[str]:
        ctx = invariants.CheckContext(self.api, recorder=self.rec)
        return [str(v) for v in invariants.check_all(ctx)]


def assert_clean(env: GangEnv) -> None:
    assert env.violations() == []


def assert_event_about(env: GangEnv, uuid: str) -> None:
    """An event since the last ``shim.clear()`` names the allocation."""
    assert any(uuid in (e.object_id, e.reference_id) for e in env.shim.events), [
        (e.object_id, e.message) for e in env.shim.events]


def placed_gang(nodes: tuple[tuple[str, int], ...] = (("node-1", 100),), *, count: int = 2,
                memory: int = 20, style: str = "", timeout_ms: int = 0,
                config_text: str = CONFIG) -> GangEnv:
    """A gang application ``g`` in root.a whose ``count`` placeholders are all placed."""
    env = GangEnv(config_text)
    for node_id, size in nodes:
        env.add_node(node_id, size)
    env.add_gang("g", ph_ask=count * memory, style=style, timeout_ms=timeout_ms)
    env.placeholders("g", count, memory)
    assert env.schedule() == count
    assert env.app_state("g") == "Accepted"
    return env


def partial_gang(style: str = "", timeout_ms: int = 0) -> GangEnv:
    """``g`` wants three placeholders of 20 but node-1 (50) only holds two."""
    env = GangEnv()
    env.add_node("node-1", 50)
    env.add_gang("g", ph_ask=60, style=style, timeout_ms=timeout_ms)
    env.placeholders("g", 3)
    assert env.schedule() == 2
    assert env.app_state("g") == "Accepted"
    assert [k["allocation_key"] for k in env.app("g")["asks"] if k["state"] == "Pending"] == [
        "ph-3"]
    return env


def quota_config(leaf_max: int | None = None, parent_max: int | None = None,
                 leaf_props: str = "", parent_props: str = "") -> str:
    leaf = "    - name: c\n"
    if leaf_max is not None:
        leaf += f"      resources:\n        max: {{memory: {leaf_max}}}\n"
    if leaf_props:
        leaf += f"      properties:\n        application.sort.policy: {leaf_props}\n"
    parent = "- name: p\n"
    if parent_max is not None:
        parent += f"  resources:\n    max: {{memory: {parent_max}}}\n"
    if parent_props:
        parent += f"  properties:\n    application.sort.policy: {parent_props}\n"
    parent += "  queues:\n" + leaf
    return config(parent + "- name: b")


# ================================================================ submission


def test_placeholder_ask_is_stored_on_the_application() -> None:
    env = GangEnv()
    env.add_gang("g", ph_ask=60)
    env.add_app("plain")
    assert env.shim.accepted_apps == ["g", "plain"]
    assert env.shim.rejected_apps == []
    assert env.app("g")["placeholder_ask"] == mem(60)
    assert env.app("g")["state"] == "New"
    assert env.app("plain")["placeholder_ask"] == {}
    assert_clean(env)


@pytest.mark.parametrize("where", ["leaf", "parent"])
def test_placeholder_ask_above_a_queue_max_is_rejected(where: str) -> None:
    """The max may sit on the leaf or on any ancestor (``001`` "Total placeholder size")."""
    cfg = quota_config(leaf_max=50) if where == "leaf" else quota_config(parent_max=50)
    env = GangEnv(cfg)
    env.add_gang("too-big", "root.p.c", ph_ask=60)
    env.add_gang("fits", "root.p.c", ph_ask=50)
    env.add_app("plain", "root.p.c")
    [rej] = env.shim.rejected_apps
    assert rej.application_id == "too-big"
    assert rej.reason.strip()
    assert env.shim.accepted_apps == ["fits", "plain"]
    assert env.app_state("too-big") == "Rejected"
    # A rejected application never reaches the queue: asks for it are refused.
    env.placeholders("too-big", 1)
    [ask_rej] = env.shim.rejected_asks
    assert ask_rej.application_id == "too-big" and ask_rej.reason.strip()
    assert env.queue("root.p.c")["pending"] == {}
    assert_clean(env)


def test_fair_queue_rejects_gang_applications_only() -> None:
    env = GangEnv(config(
        "- name: a\n  properties:\n    application.sort.policy: fair\n"
        "- name: b\n  properties:\n    application.sort.policy: stateaware\n"
        "- name: c"))
    assert env.queue("root.a")["sort_policy"] == "fair"
    env.add_gang("gang-fair", "root.a")
    env.add_app("plain-fair", "root.a")
    env.add_gang("gang-stateaware", "root.b")
    env.add_gang("gang-fifo", "root.c")
    [rej] = env.shim.rejected_apps
    assert rej.application_id == "gang-fair"
    assert rej.reason.strip()
    assert env.shim.accepted_apps == ["plain-fair", "gang-stateaware", "gang-fifo"]
    assert env.app_state("gang-fair") == "Rejected"
    assert_clean(env)


def test_fair_policy_inherited_from_parent_rejects_gang() -> None:
    env = GangEnv(config(
        "- name: p\n  properties:\n    application.sort.policy: fair\n  queues:\n"
        "    - name: inherits\n"
        "    - name: overrides\n      properties:\n        application.sort.policy: fifo\n"))
    assert env.queue("root.p.inherits")["sort_policy"] == "fair"
    assert env.queue("root.p.overrides")["sort_policy"] == "fifo"
    env.add_gang("g1", "root.p.inherits")
    env.add_gang("g2", "root.p.overrides")
    env.add_app("plain", "root.p.inherits")
    assert [r.application_id for r in env.shim.rejected_apps] == ["g1"]
    assert env.shim.rejected_apps[0].reason.strip()
    assert env.shim.accepted_apps == ["g2", "plain"]
    assert_clean(env)


@pytest.mark.parametrize("style", ["Hard", "Soft", ""])
def test_gang_scheduling_style_accepted(style: str) -> None:
    env = GangEnv()
    env.add_gang("g", style=style)
    assert env.shim.accepted_apps == ["g"]
    assert env.shim.rejected_apps == []
    assert_clean(env)


@pytest.mark.parametrize("style", ["hard", "SOFT", "Medium", " Hard"])
def test_unknown_gang_scheduling_style_rejected(style: str) -> None:
    env = GangEnv()
    env.add_gang("g", style=style)
    [rej] = env.shim.rejected_apps
    assert rej.application_id == "g" and rej.reason.strip()
    assert env.shim.accepted_apps == []
    assert env.app_state("g") == "Rejected"
    assert_clean(env)


# ========================================================== placeholder asks


def test_placeholders_are_allocated_like_asks_but_counted_apart() -> None:
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_gang("g", ph_ask=60)
    env.placeholders("g", 3)
    assert env.app_state("g") == "Accepted"
    assert env.app("g")["pending"] == mem(60)
    assert env.schedule() == 3
    new = env.shim.allocations
    assert [(a.allocation_key, a.placeholder, a.task_group_name, a.node_id) for a in new] == [
        (f"ph-{i}", True, "tg", "node-1") for i in (1, 2, 3)]
    app = env.app("g")
    assert app["state"] == "Accepted"
    assert app["placeholder_allocated"] == mem(60)
    assert app["allocated"] == {}
    assert app["pending"] == {}
    assert all(a["placeholder"] and a["task_group"] == "tg" and not a["released"]
               and a["state"] == "Allocated" for a in app["allocations"])
    assert env.queue("root.a")["allocated"] == mem(60)
    assert env.queue("root")["allocated"] == mem(60)
    assert env.node("node-1")["allocated"] == mem(60)
    assert env.node("node-1")["available"] == mem(40)
    # Placeholders never move the application on: only Accepted was reported.
    assert env.app_states("g") == ["Accepted"]
    assert_clean(env)


def test_placeholder_flag_without_task_group_is_a_normal_ask() -> None:
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_gang("g", ph_ask=60)
    env.ask("g", "lonely", 10, placeholder=True, task_group="")
    assert env.dump_ask("g", "lonely")["placeholder"] is False
    assert env.schedule() == 1
    [msg] = env.shim.allocations
    assert msg.placeholder is False
    app = env.app("g")
    assert app["state"] == "Running"
    assert app["allocated"] == mem(10)
    assert app["placeholder_allocated"] == {}
    assert app["allocations"][0]["placeholder"] is False
    assert_clean(env)


def test_placeholder_asks_beyond_placeholder_ask_are_rejected() -> None:
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_gang("g", ph_ask=50)
    env.placeholders("g", 2)  # 40 of 50
    assert env.shim.rejected_asks == []
    env.ask("g", "ph-3", 20, placeholder=True, task_group="tg")  # 60 > 50
    env.ask("g", "many", 5, repeats=3, placeholder=True, task_group="other")  # 55 > 50
    rejected = env.shim.rejected_asks
    assert [r.allocation_key for r in rejected] == ["ph-3", "many"]
    assert all(r.reason.strip() for r in rejected)
    assert env.schedule() == 2
    # Allocated placeholders still count against the placeholderAsk.
    env.ask("g", "ph-4", 20, placeholder=True, task_group="tg")
    assert env.shim.rejected_asks[-1].allocation_key == "ph-4"
    env.ask("g", "ph-5", 10, placeholder=True, task_group="tg")  # exactly 50
    assert env.shim.rejected_asks[-1].allocation_key == "ph-4"
    assert env.app("g")["pending"] == mem(10)
    # A real ask is not limited by the placeholderAsk.
    env.ask("g", "real-big", 70, task_group="other")
    assert env.shim.rejected_asks[-1].allocation_key == "ph-4"
    assert_clean(env)


def test_placeholder_ask_on_application_without_placeholder_ask_is_rejected() -> None:
    """Core's choice (list silent): no placeholderAsk means no room for placeholders."""
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_app("plain")
    env.ask("plain", "ph-1", 10, placeholder=True, task_group="tg")
    [rej] = env.shim.rejected_asks
    assert rej.allocation_key == "ph-1" and rej.reason.strip()
    assert env.app("plain")["asks"] == []
    assert_clean(env)


def test_real_ask_waits_while_placeholder_asks_are_pending() -> None:
    """``001`` "Scheduler logic changes": while the application is Accepted and its
    placeholder asks are still being processed, "AllocationAsks that do not have a
    placeholder flag set should be ignored as a safety precaution" ("The application
    cannot request real allocations until all placeholder asks are allocated").

    A real ask of the gang arriving early must neither replace a placeholder nor be
    allocated while a placeholder ask of its application is pending.
    """
    env = partial_gang()
    env.shim.clear()
    env.real("g", "early", 20)
    assert env.schedule() == 0
    assert env.shim.released == []
    assert env.shim.allocations == []
    assert env.app_state("g") == "Accepted"
    assert all(not a["released"] for a in env.app("g")["allocations"])
    assert_clean(env)


# =============================================================== replacement


def test_replacement_full_flow() -> None:
    env = placed_gang(count=2)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.shim.clear()
    env.real("g", "real-1", 20)
    assert env.schedule() == 0
    # Step 2: one placeholder marked released, the shim told; nothing allocated yet.
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    assert env.shim.released[0].application_id == "g"
    assert env.shim.allocations == []
    assert env.dump_alloc("g", ph1)["released"] is True
    assert env.dump_alloc("g", ph1)["state"] == "Releasing"
    assert env.dump_alloc("g", ph2)["released"] is False
    assert env.queue("root.a")["allocated"] == mem(40)
    assert env.node("node-1")["allocated"] == mem(40)
    assert env.app("g")["placeholder_allocated"] == mem(40)
    assert env.app("g")["allocated"] == {}
    assert env.app_state("g") == "Accepted"
    # Nothing else happens until the shim confirms.
    assert env.schedule() == 0
    assert len(env.shim.released) == 1
    assert_clean(env)

    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    # Steps 4-6 in that same call: placeholder gone, real ask on the same node.
    [resp] = env.alloc_responses()
    [new] = resp.new
    assert (new.allocation_key, new.node_id, new.placeholder, new.task_group_name) == (
        "real-1", "node-1", False, "tg")
    assert resp.released == []  # a confirmation is never confirmed
    assert env.app_states("g") == ["Running"]
    assert env.dump_alloc("g", ph1) is None
    app = env.app("g")
    assert app["state"] == "Running"
    assert app["allocated"] == mem(20)
    assert app["placeholder_allocated"] == mem(20)
    assert env.queue("root.a")["allocated"] == mem(40)
    assert env.node("node-1")["allocated"] == mem(40)
    assert env.dump_ask("g", "real-1")["state"] == "Allocated"
    assert_clean(env)


def test_the_real_ask_of_a_started_swap_is_not_pending() -> None:
    """The swap allocates the real ask at the match: from then on it counts as pending
    nowhere (YuniKorn's ``partition_test.go`` TestTryPlaceholderAllocate, with
    ``application.go`` allocateAsk taking the ask off the application's and queue's
    pending)."""
    env = placed_gang(count=2)
    env.real("g", "real-1", 20)
    assert env.app("g")["pending"] == mem(20)
    assert env.queue("root.a")["pending"] == mem(20)
    assert env.queue("root")["pending"] == mem(20)
    assert env.schedule() == 0
    ph1 = env.uuid_of("g", "ph-1")
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    assert env.app("g")["pending"] == {}
    assert env.queue("root.a")["pending"] == {}
    assert env.queue("root")["pending"] == {}
    assert env.dump_ask("g", "real-1")["state"] == "Pending"
    assert_clean(env)
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.app("g")["pending"] == {}
    assert env.queue("root")["pending"] == {}
    assert env.dump_ask("g", "real-1")["state"] == "Allocated"
    assert_clean(env)


def test_a_swap_that_ends_without_its_placeholder_makes_the_ask_pending_again() -> None:
    """The RM ends the placeholder being replaced with its own release: the swap is off
    and the real ask counts as pending again until it is placed (YuniKorn's
    ``partition_test.go`` TestPlaceholderDataWithRemoval: a removed placeholder's real
    ask is deallocated, ``application.go`` deallocateAsk)."""
    env = placed_gang(count=1)
    ph1 = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    assert env.app("g")["pending"] == {}
    env.release("g", ph1, TT.STOPPED_BY_RM)
    assert env.app("g")["pending"] == mem(20)
    assert env.queue("root.a")["pending"] == mem(20)
    assert_clean(env)
    assert env.schedule() == 1
    assert env.app("g")["pending"] == {}
    assert_clean(env)


def test_releasing_the_real_ask_of_a_started_swap_leaves_nothing_pending() -> None:
    """The RM withdraws the real ask while its swap waits for the placeholder's
    confirmation: pending stays empty, never negative."""
    env = placed_gang(count=1)
    env.ask("g", "real-1", 20, task_group="tg", repeats=2)
    env.schedule()
    assert env.app("g")["pending"] == mem(20)
    env.release_ask("g", "real-1", TT.STOPPED_BY_RM)
    assert env.app("g")["pending"] == {}
    assert env.queue("root.a")["pending"] == {}
    assert env.queue("root")["pending"] == {}
    assert_clean(env)


def test_replacement_moves_to_another_node_when_the_placeholder_node_filled_up() -> None:
    env = placed_gang((("node-1", 20),), count=1)
    env.add_node("node-2", 50)
    ph = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    assert env.releases() == [(ph, TT.PLACEHOLDER_REPLACED)]
    # The shim reports more occupied on node-1 before confirming.
    env.node_action("node-1", si.NodeAction.UPDATE, occupied_resource=si.Resource.of(memory=10))
    env.shim.clear()
    env.confirm("g", ph, TT.PLACEHOLDER_REPLACED)
    [new] = env.shim.allocations
    assert (new.allocation_key, new.node_id) == ("real-1", "node-2")
    assert env.app_state("g") == "Running"
    assert env.node("node-1")["allocated"] == {}
    assert env.node("node-2")["allocated"] == mem(20)
    assert env.queue("root.a")["allocated"] == mem(20)
    assert_clean(env)


@pytest.mark.parametrize("order", ["ph-1 first", "ph-2 first"])
def test_two_confirmations_in_one_request_each_place_their_own_real_ask(order: str) -> None:
    """Two swaps start in one cycle (ph-1 for ``driver``, ph-2 for ``real-2``) and one
    request confirms both, in either order. Each confirmation places the real ask its
    placeholder was released for: the RM's predicates refuse ``driver`` on ph-1's node, so
    it falls back to node-2, beside ``real-2``, which takes its own placeholder's room
    there; node-1, though empty, is not handed to ``real-2``. YuniKorn's
    ``partition_test.go`` TestFailReplacePlaceholder (a placeholder's node refused by the
    predicates: the real allocation goes to another node) with two placeholders: each
    placeholder is linked to its real ask at the match and confirmed on its own
    (``partition.go`` removeAllocation)."""
    env = GangEnv(predicates=lambda a: (a.allocation_key, a.node_id) != ("driver", "node-1"))
    env.add_node("node-1", 50)
    env.add_node("node-2", 50)
    env.add_gang("g", ph_ask=40)
    env.placeholders("g", 2)
    assert env.schedule() == 2
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    assert {a.allocation_key: a.node_id for a in env.shim.allocations} == {
        "ph-1": "node-1", "ph-2": "node-2"}
    env.real("g", "driver")
    env.real("g", "real-2")
    env.shim.clear()
    assert env.schedule() == 0
    assert [(r.uuid, r.termination_type, r.message) for r in env.shim.released] == [
        (ph1, TT.PLACEHOLDER_REPLACED, "replaced by ask driver"),
        (ph2, TT.PLACEHOLDER_REPLACED, "replaced by ask real-2")]
    env.shim.clear()
    first, second = (ph1, ph2) if order == "ph-1 first" else (ph2, ph1)
    env.api.update_allocation(si.AllocationRequest(
        rm_id=env.rm, releases=si.AllocationReleasesRequest(allocations_to_release=[
            si.AllocationRelease(application_id="g", uuid=uuid, partition_name="default",
                                 termination_type=TT.PLACEHOLDER_REPLACED)
            for uuid in (first, second)])))
    assert sorted((a.allocation_key, a.node_id) for a in env.shim.allocations) == [
        ("driver", "node-2"), ("real-2", "node-2")]
    assert env.shim.released == []
    assert env.dump_alloc("g", ph1) is None and env.dump_alloc("g", ph2) is None
    assert env.node("node-1")["allocated"] == {}
    assert env.node("node-2")["allocated"] == mem(40)
    assert env.app("g")["allocated"] == mem(40)
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.app_state("g") == "Running"
    assert_clean(env)


def test_replacement_without_room_anywhere_stays_pending_and_reports_failed() -> None:
    env = placed_gang((("node-1", 20),), count=1)
    ph = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    env.node_action("node-1", si.NodeAction.UPDATE, occupied_resource=si.Resource.of(memory=10))
    env.shim.clear()
    env.confirm("g", ph, TT.PLACEHOLDER_REPLACED)
    assert env.shim.allocations == []
    [state] = env.shim.scheduling_states
    assert (state.application_id, state.allocation_key, state.state) == ("g", "real-1", SS.FAILED)
    assert state.reason.strip()
    assert env.dump_alloc("g", ph) is None
    assert env.dump_ask("g", "real-1")["state"] == "Pending"
    assert env.app("g")["pending"] == mem(20)
    assert env.queue("root.a")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {}
    # Room comes back: the ask is scheduled as a normal ask.
    env.node_action("node-1", si.NodeAction.UPDATE, occupied_resource=si.Resource.of(memory=0))
    assert env.schedule() == 1
    assert env.shim.allocations[-1].node_id == "node-1"
    assert env.app_state("g") == "Running"
    assert_clean(env)


def test_a_released_placeholder_is_never_chosen_again() -> None:
    """Two real asks, one placeholder. Core's choice (the list allows both): the second
    ask finds no unreleased placeholder and is scheduled normally at once, while the
    first stays parked on the placeholder; there is never a second release."""
    env = placed_gang(count=1)
    ph = env.uuid_of("g", "ph-1")
    env.shim.clear()
    env.real("g", "real-1", 20)
    env.real("g", "real-2", 20)
    assert env.schedule() == 1
    assert env.releases() == [(ph, TT.PLACEHOLDER_REPLACED)]
    [normal] = env.shim.allocations
    assert normal.allocation_key == "real-2"
    assert env.queue("root.a")["allocated"] == mem(40)  # placeholder + real-2
    assert env.schedule() == 0
    assert env.releases() == [(ph, TT.PLACEHOLDER_REPLACED)]
    env.confirm("g", ph, TT.PLACEHOLDER_REPLACED)
    assert [a.allocation_key for a in env.shim.allocations] == ["real-2", "real-1"]
    assert env.shim.allocations[-1].node_id == "node-1"
    assert env.app("g")["allocated"] == mem(40)
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.queue("root.a")["allocated"] == mem(40)
    assert env.releases() == [(ph, TT.PLACEHOLDER_REPLACED)]
    assert_clean(env)


@pytest.mark.parametrize("task_group", ["other", ""])
def test_real_ask_without_placeholder_of_its_group_is_scheduled_normally(task_group: str) -> None:
    env = placed_gang(count=2)
    env.shim.clear()
    env.real("g", "real-1", 20, task_group=task_group)
    assert env.schedule() == 1
    assert env.shim.released == []
    [new] = env.shim.allocations
    assert new.allocation_key == "real-1" and new.placeholder is False
    assert env.app_state("g") == "Running"
    app = env.app("g")
    assert app["allocated"] == mem(20)
    assert app["placeholder_allocated"] == mem(40)
    assert all(not a["released"] for a in app["allocations"])
    assert env.queue("root.a")["allocated"] == mem(60)
    assert_clean(env)


def test_real_ask_larger_than_placeholder_cancels_it_and_tries_the_next() -> None:
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_gang("g", ph_ask=40)
    env.ask("g", "small", 10, placeholder=True, task_group="tg")
    env.ask("g", "big", 30, placeholder=True, task_group="tg")
    assert env.schedule() == 2
    small, big = env.uuid_of("g", "small"), env.uuid_of("g", "big")
    env.shim.clear()
    env.real("g", "real-1", 20)
    assert env.schedule() == 0
    assert env.releases() == [(small, TT.TIMEOUT), (big, TT.PLACEHOLDER_REPLACED)]
    assert env.shim.released[0].message.strip()
    assert env.shim.allocations == []
    env.confirm("g", small, TT.TIMEOUT)
    assert env.shim.allocations == []
    assert env.dump_alloc("g", small) is None
    assert env.app_state("g") == "Accepted"
    env.confirm("g", big, TT.PLACEHOLDER_REPLACED)
    [new] = env.shim.allocations
    assert (new.allocation_key, new.node_id) == ("real-1", "node-1")
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.app("g")["allocated"] == mem(20)
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.app_state("g") == "Running"
    assert_clean(env)


def test_real_ask_larger_than_every_placeholder_is_scheduled_normally() -> None:
    """Core's choice (list silent): every too-small placeholder of the group is released
    with TIMEOUT and the real ask is then scheduled as a normal ask in the same cycle."""
    env = placed_gang(count=2, memory=10)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.shim.clear()
    env.real("g", "real-1", 20)
    assert env.schedule() == 1
    assert env.releases() == [(ph1, TT.TIMEOUT), (ph2, TT.TIMEOUT)]
    [new] = env.shim.allocations
    assert new.allocation_key == "real-1"
    assert env.queue("root.a")["allocated"] == mem(40)
    env.confirm("g", ph1, TT.TIMEOUT)
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.app_state("g") == "Running"
    assert len(env.shim.allocations) == 1
    assert_clean(env)


def test_smaller_real_ask_replaces_the_placeholder() -> None:
    env = placed_gang(count=1, memory=30)
    ph = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 10)
    env.schedule()
    assert env.releases() == [(ph, TT.PLACEHOLDER_REPLACED)]
    env.confirm("g", ph, TT.PLACEHOLDER_REPLACED)
    assert env.shim.allocations[-1].allocation_key == "real-1"
    assert env.shim.allocations[-1].node_id == "node-1"
    assert env.queue("root.a")["allocated"] == mem(10)
    assert env.node("node-1")["allocated"] == mem(10)
    assert env.app("g")["allocated"] == mem(10)
    assert env.app("g")["placeholder_allocated"] == {}
    assert_clean(env)


# ======================================================= placeholder timeout


def test_placeholder_timeout_starts_at_first_placeholder_allocation() -> None:
    env = GangEnv()
    env.add_gang("g", ph_ask=40)
    env.placeholders("g", 2)
    assert env.advance(20 * MINUTE) == 0  # no node: nothing allocated, no timer
    env.add_node("node-1", 30)  # room for one placeholder only
    assert env.schedule() == 1
    env.shim.clear()
    assert env.advance(PLACEHOLDER_TIMEOUT - 1) == 0
    assert env.shim.released == [] and env.shim.released_asks == []
    assert env.app_state("g") == "Accepted"
    env.advance(1)
    assert len(env.shim.released) == 1
    assert len(env.shim.released_asks) == 1
    assert_clean(env)


def test_hard_placeholder_timeout_fails_the_application() -> None:
    env = partial_gang("Hard")
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.shim.clear()
    env.advance(PLACEHOLDER_TIMEOUT)
    [resp] = env.alloc_responses()  # everything in ONE AllocationResponse
    assert sorted((r.uuid, r.termination_type) for r in resp.released) == sorted(
        [(ph1, TT.TIMEOUT), (ph2, TT.TIMEOUT)])
    assert [(r.application_id, r.allocation_key, r.termination_type)
            for r in resp.released_asks] == [("g", "ph-3", TT.TIMEOUT)]
    assert resp.new == []
    assert env.app_states("g") == ["Failing"]
    assert env.app("g")["pending"] == {}
    assert env.queue("root.a")["pending"] == {}
    # Nothing is freed before the shim confirms.
    assert env.queue("root.a")["allocated"] == mem(40)
    assert all(a["released"] for a in env.app("g")["allocations"])
    assert_clean(env)

    # The shim confirms the ask release: nothing to do, nothing answered.
    env.shim.clear()
    env.confirm_ask("g", "ph-3", TT.TIMEOUT)
    assert env.alloc_responses() == []
    assert env.app_state("g") == "Failing"

    env.confirm("g", ph1, TT.TIMEOUT)
    assert env.app_state("g") == "Failing"
    assert env.app_states("g") == []
    assert env.queue("root.a")["allocated"] == mem(20)
    assert_clean(env)
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app_state("g") == "Failed"
    assert env.app_states("g") == ["Failed"]
    assert env.app("g")["allocations"] == []
    assert env.queue("root.a")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {}
    assert env.alloc_responses() == []  # confirmations are not confirmed
    assert_clean(env)


@pytest.mark.parametrize("style", ["Soft", ""])
def test_soft_placeholder_timeout_resumes_then_schedules_normally(style: str) -> None:
    env = partial_gang(style)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.shim.clear()
    env.advance(PLACEHOLDER_TIMEOUT)
    [resp] = env.alloc_responses()
    assert sorted((r.uuid, r.termination_type) for r in resp.released) == sorted(
        [(ph1, TT.TIMEOUT), (ph2, TT.TIMEOUT)])
    assert [(r.allocation_key, r.termination_type) for r in resp.released_asks] == [
        ("ph-3", TT.TIMEOUT)]
    assert env.app_states("g") == ["Resuming"]
    # The real pod arrives while the placeholders are still going away.
    env.real("g", "driver", 20)
    assert env.schedule() == 0
    assert env.shim.allocations == []
    env.confirm("g", ph1, TT.TIMEOUT)
    assert env.app_state("g") == "Resuming"
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app_state("g") == "Accepted"
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.queue("root.a")["allocated"] == {}
    assert env.schedule() == 1
    [new] = env.shim.allocations
    assert (new.allocation_key, new.placeholder) == ("driver", False)
    assert env.app_state("g") == "Running"
    assert env.app_states("g") == ["Resuming", "Accepted", "Running"]
    assert env.shim.released == resp.released  # nothing replaced, nothing else released
    assert_clean(env)


def test_soft_timeout_without_real_asks_ends_completed() -> None:
    """Core's choice (list silent): once its placeholders are gone a Soft application
    with nothing pending is Accepted and immediately Completing, and Completed after
    the completing timeout."""
    env = partial_gang("Soft")
    uuids = [env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")]
    env.advance(PLACEHOLDER_TIMEOUT)
    for uuid in uuids:
        env.confirm("g", uuid, TT.TIMEOUT)
    assert env.app_states("g")[-3:] == ["Resuming", "Accepted", "Completing"]
    env.advance(COMPLETING_TIMEOUT)
    assert env.app_state("g") == "Completed"
    assert_clean(env)


def test_custom_placeholder_timeout_from_execution_timeout() -> None:
    env = partial_gang("Hard", timeout_ms=60_000)
    env.shim.clear()
    env.advance(59)
    assert env.shim.released == [] and env.app_state("g") == "Accepted"
    env.advance(1)
    assert len(env.shim.released) == 2
    assert len(env.shim.released_asks) == 1
    assert env.app_state("g") == "Failing"
    assert_clean(env)


def test_timeout_of_a_running_gang_only_releases_leftover_placeholders() -> None:
    env = placed_gang(count=3)
    ph1, ph2, ph3 = (env.uuid_of("g", f"ph-{i}") for i in (1, 2, 3))
    env.real("g", "real-1", 20)
    env.schedule()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.app_state("g") == "Running"
    env.real("g", "real-2", 20)
    env.schedule()  # real-2 parked on ph-2, unconfirmed when the timeout fires
    assert env.releases()[-1] == (ph2, TT.PLACEHOLDER_REPLACED)
    env.shim.clear()
    env.advance(PLACEHOLDER_TIMEOUT)
    assert env.releases() == [(ph3, TT.TIMEOUT)]
    assert env.shim.released_asks == []
    assert env.app_states("g") == []
    assert env.app_state("g") == "Running"
    env.confirm("g", ph3, TT.TIMEOUT)
    env.confirm("g", ph2, TT.PLACEHOLDER_REPLACED)
    assert env.shim.allocations[-1].allocation_key == "real-2"
    app = env.app("g")
    assert app["state"] == "Running"
    assert app["placeholder_allocated"] == {}
    assert app["allocated"] == mem(40)
    assert env.queue("root.a")["allocated"] == mem(40)
    assert_clean(env)


def test_timeout_of_a_completing_gang_releases_its_leftover_placeholders() -> None:
    """Found by the checker (``liveness.placeholders_time_out`` at a case end): a gang
    whose asks were all withdrawn went Completing with its placeholders allocated; the
    placeholder timer fell due while it was Completing and did nothing, a real ask then
    brought it back to Running, and the other placeholder was held forever. YuniKorn's
    ``timeoutPlaceholderProcessing`` (apache/yunikorn-core be3bb48,
    ``objects/application.go``) releases the leftovers of a Running or Completing
    application; ``TestTimeoutPlaceholderCompleting`` is its test."""
    env = placed_gang(count=2, timeout_ms=10_000)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.release_ask("g", "")  # the RM withdraws every ask: nothing pending, no real pod
    assert env.app_state("g") == "Completing"
    env.shim.clear()
    env.advance(10)
    assert env.releases() == [(ph1, TT.TIMEOUT), (ph2, TT.TIMEOUT)]
    assert env.app_state("g") == "Completing"
    env.real("g", "real-1", 20)
    assert env.app_state("g") == "Running"
    env.confirm("g", ph1, TT.TIMEOUT)
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.schedule() == 1  # the real pod runs as a normal ask
    assert env.app("g")["allocated"] == mem(20)
    assert_clean(env)


# ================================================================ completion


def completing_gang() -> tuple[GangEnv, str]:
    """``g`` used one of two placeholders, then its real pod finished: Completing."""
    env = placed_gang(count=2)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.real("g", "real-1", 20)
    env.schedule()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    env.release("g", env.uuid_of("g", "real-1"))  # the pod finished
    assert env.app_state("g") == "Completing"
    assert env.app("g")["placeholder_allocated"] == mem(20)
    return env, ph2


def test_running_gang_whose_last_ask_is_a_placeholder_waits() -> None:
    """Found by the checker (application.state_agrees): a Running gang whose real pod ended
    while a placeholder ask was pending stayed Running once that placeholder was placed,
    holding only a placeholder. Placeholders are not active allocations (``001``
    "Definition"): it waits, and its leftover placeholder goes at the completing timeout."""
    env = GangEnv()
    env.add_node("node-1", 100)
    env.add_gang("g", ph_ask=20)
    env.real("g", "driver", 20)
    assert env.schedule() == 1
    assert env.app_state("g") == "Running"
    env.placeholders("g", 1)
    env.release("g", env.uuid_of("g", "driver"))  # the driver ended, a placeholder pending
    assert env.app_state("g") == "Running"
    assert env.schedule() == 1
    assert env.app("g")["placeholder_allocated"] == mem(20)
    assert env.app_state("g") == "Completing"
    assert_clean(env)
    ph = env.uuid_of("g", "ph-1")
    env.shim.clear()
    env.advance(COMPLETING_TIMEOUT)
    assert env.releases() == [(ph, TT.TIMEOUT)]
    env.confirm("g", ph, TT.TIMEOUT)
    assert env.app_state("g") == "Completed"
    assert_clean(env)


def test_completing_releases_leftover_placeholders_after_timeout() -> None:
    env, ph2 = completing_gang()
    env.shim.clear()
    env.advance(COMPLETING_TIMEOUT - 1)
    assert env.shim.released == []
    env.advance(1)
    assert env.releases() == [(ph2, TT.TIMEOUT)]
    assert env.app_state("g") == "Completing"  # not before the shim confirmed
    assert env.queue("root.a")["allocated"] == mem(20)
    assert_clean(env)
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app_state("g") == "Completed"
    assert env.app_states("g")[-1] == "Completed"
    assert env.app("g")["allocations"] == []
    assert env.queue("root.a")["allocated"] == {}
    assert env.node("node-1")["allocated"] == {}
    assert_clean(env)


def test_completed_gang_id_can_be_submitted_again() -> None:
    env, ph2 = completing_gang()
    env.advance(COMPLETING_TIMEOUT)
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app_state("g") == "Completed"
    env.shim.clear()
    env.add_gang("g", ph_ask=40)
    assert env.shim.accepted_apps == ["g"]
    assert [a["state"] for a in env.partition()["applications"]
            if a["application_id"] == "g"] == ["New"]
    env.placeholders("g", 2)
    assert env.schedule() == 2
    assert env.app("g")["placeholder_allocated"] == mem(40)
    # The old application's expiry does not touch the new one.
    env.advance(3 * DAY)
    assert env.app("g") is not None
    assert_clean(env)


def test_failed_gang_id_can_be_submitted_again_and_old_one_expires() -> None:
    env = partial_gang("Hard")
    uuids = [env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")]
    env.advance(PLACEHOLDER_TIMEOUT)
    for uuid in uuids:
        env.confirm("g", uuid, TT.TIMEOUT)
    assert env.app_state("g") == "Failed"
    env.add_gang("h", ph_ask=40, style="Hard")
    env.advance(3 * DAY - 1)
    assert env.app_state("g") == "Failed"
    env.advance(1)
    assert env.app("g") is None
    env.shim.clear()
    env.add_gang("g", ph_ask=40)
    assert env.shim.accepted_apps == ["g"]
    assert env.app_state("g") == "New"
    assert_clean(env)


def test_failed_gang_id_can_be_submitted_again_before_expiry() -> None:
    env = partial_gang("Hard")
    uuids = [env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")]
    env.advance(PLACEHOLDER_TIMEOUT)
    for uuid in uuids:
        env.confirm("g", uuid, TT.TIMEOUT)
    env.shim.clear()
    env.add_gang("g", ph_ask=40)
    assert env.shim.accepted_apps == ["g"]
    assert env.shim.rejected_apps == []
    assert env.app_state("g") == "New"
    env.placeholders("g", 2)
    assert env.schedule() == 2
    env.advance(3 * DAY)  # the old Failed application's expiry
    assert env.app("g") is not None
    assert_clean(env)


# ================================================================== recovery


def test_recovered_placeholders_can_be_replaced_after_restart() -> None:
    env = placed_gang(count=2)
    before = [(a.allocation_key, a.uuid, a.node_id) for a in env.shim.allocations]
    # The core restarts: the RM registers again and resyncs.
    env.register()
    assert env.partition()["applications"] == []
    env.add_gang("g", ph_ask=40)
    env.add_node("node-1", 100, existing=[
        alloc_msg("g", key, uuid, node_id, 20, task_group="tg", placeholder=True)
        for key, uuid, node_id in before])
    assert env.shim.rejected_nodes == []
    app = env.app("g")
    assert app["state"] == "Accepted"
    assert app["placeholder_allocated"] == mem(40)
    assert app["allocated"] == {}
    assert app["placeholder_ask"] == mem(40)
    assert sorted((a["uuid"], a["placeholder"], a["task_group"]) for a in app["allocations"]) == (
        sorted((uuid, True, "tg") for _, uuid, _ in before))
    assert env.queue("root.a")["allocated"] == mem(40)
    assert env.node("node-1")["allocated"] == mem(40)
    assert_clean(env)

    env.shim.clear()
    env.real("g", "real-1", 20)
    assert env.schedule() == 0
    [(uuid, ttype)] = env.releases()
    assert ttype == TT.PLACEHOLDER_REPLACED
    assert uuid in {u for _, u, _ in before}
    env.confirm("g", uuid, TT.PLACEHOLDER_REPLACED)
    [new] = env.shim.allocations
    assert (new.allocation_key, new.node_id) == ("real-1", "node-1")
    assert env.app_state("g") == "Running"
    assert env.app("g")["placeholder_allocated"] == mem(20)
    assert env.queue("root.a")["allocated"] == mem(40)
    assert_clean(env)


# ======================================================= protocol robustness


def test_duplicate_confirmation_changes_nothing() -> None:
    env = placed_gang(count=2)
    ph1 = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    dump = env.dump()
    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.dump() == dump
    assert env.alloc_responses() == []
    assert_event_about(env, ph1)
    assert env.schedule() == 0
    assert env.dump() == dump
    assert_clean(env)


def test_duplicate_timeout_confirmation_on_failing_app_changes_nothing() -> None:
    env = partial_gang("Hard")
    ph1 = env.uuid_of("g", "ph-1")
    env.advance(PLACEHOLDER_TIMEOUT)
    env.confirm("g", ph1, TT.TIMEOUT)
    dump = env.dump()
    env.shim.clear()
    env.confirm("g", ph1, TT.TIMEOUT)
    assert env.dump() == dump
    assert env.app_state("g") == "Failing"
    assert env.alloc_responses() == [] and env.shim.app_updates == []
    assert_event_about(env, ph1)
    assert_clean(env)


def test_rm_stops_placeholder_being_replaced_ask_takes_another() -> None:
    env = placed_gang(count=2)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.real("g", "real-1", 20)
    env.schedule()
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    env.shim.clear()
    env.release("g", ph1, TT.STOPPED_BY_RM)
    assert env.releases() == [(ph1, TT.STOPPED_BY_RM)]  # the RM's release is confirmed
    assert env.shim.allocations == []
    assert env.dump_alloc("g", ph1) is None
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.dump_ask("g", "real-1")["state"] == "Pending"
    assert_clean(env)
    assert env.schedule() == 0
    assert env.releases()[-1] == (ph2, TT.PLACEHOLDER_REPLACED)
    env.confirm("g", ph2, TT.PLACEHOLDER_REPLACED)
    assert [a.allocation_key for a in env.shim.allocations] == ["real-1"]
    assert env.app_state("g") == "Running"
    assert env.queue("root.a")["allocated"] == mem(20)
    assert_clean(env)


def test_rm_stops_placeholder_being_replaced_ask_scheduled_normally() -> None:
    env = placed_gang(count=1)
    ph1 = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    env.release("g", ph1, TT.STOPPED_BY_RM)
    env.shim.clear()
    assert env.schedule() == 1
    [new] = env.shim.allocations
    assert new.allocation_key == "real-1"
    assert env.shim.released == []
    assert env.app_state("g") == "Running"
    # The shim's late PLACEHOLDER_REPLACED confirmation refers to nothing any more.
    dump = env.dump()
    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.dump() == dump
    assert env.alloc_responses() == []
    assert_event_about(env, ph1)
    assert_clean(env)


@pytest.mark.parametrize("ttype", [TT.PLACEHOLDER_REPLACED, TT.TIMEOUT,
                                   TT.PREEMPTED_BY_SCHEDULER])
def test_rm_release_of_a_placeholder_the_core_never_released(ttype: si.TerminationType) -> None:
    """The RM ends a placeholder with a type only the core starts, though the core never
    released it: the placeholder goes, nothing is sent back, and with no replacement
    nothing is swapped in (YuniKorn's ``partition.go`` removeAllocation)."""
    env = placed_gang(count=2)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.shim.clear()
    env.confirm("g", ph1, ttype)
    assert env.shim.released == []
    assert env.shim.allocations == []
    assert env.dump_alloc("g", ph1) is None
    assert [a["uuid"] for a in env.app("g")["allocations"]] == [ph2]
    assert env.app("g")["placeholder_allocated"] == mem(20)
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.node("node-1")["allocated"] == mem(20)
    # As after the RM's own release: nothing pending, nothing real, it waits.
    assert env.app_state("g") == "Completing"
    assert_clean(env)


def test_rm_release_of_a_placeholder_being_replaced_with_another_type() -> None:
    """The core released the placeholder for its replacement; the RM ends it with
    ``TIMEOUT``: it goes unanswered, the real ask it held is scheduled normally, and the
    shim's late ``PLACEHOLDER_REPLACED`` names nothing any more."""
    env = placed_gang(count=1)
    ph1 = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    env.shim.clear()
    env.confirm("g", ph1, TT.TIMEOUT)
    assert env.shim.released == []
    assert env.dump_alloc("g", ph1) is None
    assert env.dump_ask("g", "real-1")["state"] == "Pending"
    assert env.schedule() == 1
    [new] = env.shim.allocations
    assert new.allocation_key == "real-1"
    assert env.app_state("g") == "Running"
    dump = env.dump()
    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.dump() == dump
    assert env.alloc_responses() == []
    assert_event_about(env, ph1)
    assert_clean(env)


def test_placeholder_tracking_through_rm_releases_of_every_type() -> None:
    """After YuniKorn's ``partition_test.go`` TestPlaceholderAllocationTracking: three
    placeholders; the replacement of the first is confirmed (the real allocation takes
    its place), the RM stops the second (confirmed ``STOPPED_BY_RM``) and ends the third,
    which the core never released, with ``TIMEOUT`` (it goes, unanswered)."""
    env = placed_gang(count=3)
    ph1, ph2, ph3 = (env.uuid_of("g", f"ph-{i}") for i in (1, 2, 3))
    env.real("g", "real-1", 20)
    assert env.schedule() == 0
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    assert len(env.app("g")["allocations"]) == 3
    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    [real] = env.shim.allocations
    assert real.allocation_key == "real-1"
    assert len(env.app("g")["allocations"]) == 3
    assert env.app("g")["placeholder_allocated"] == mem(40)
    env.shim.clear()
    env.release("g", ph2, TT.STOPPED_BY_RM)
    assert env.releases() == [(ph2, TT.STOPPED_BY_RM)]
    assert len(env.app("g")["allocations"]) == 2
    assert env.app("g")["placeholder_allocated"] == mem(20)
    env.shim.clear()
    env.release("g", ph3, TT.TIMEOUT)
    assert env.releases() == []
    assert [a["allocation_key"] for a in env.app("g")["allocations"]] == ["real-1"]
    assert env.app("g")["placeholder_allocated"] == {}
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.node("node-1")["allocated"] == mem(20)
    assert env.app_state("g") == "Running"
    assert_clean(env)


def test_shim_never_confirms_hard_timeout_app_stays_failing() -> None:
    env = partial_gang("Hard")
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.advance(PLACEHOLDER_TIMEOUT)
    for _ in range(5):
        env.advance(DAY)
    assert env.app_state("g") == "Failing"
    assert env.app_states("g") == ["Accepted", "Failing"]
    assert env.queue("root.a")["allocated"] == mem(40)
    assert env.queue("root")["allocated"] == mem(40)
    assert env.node("node-1")["allocated"] == mem(40)
    assert env.app("g")["placeholder_allocated"] == mem(40)
    assert sorted(env.releases()) == sorted([(ph1, TT.TIMEOUT), (ph2, TT.TIMEOUT)])
    assert len(env.shim.released_asks) == 1
    # The held room is really held: another application can not use it.
    env.add_app("other", "root.b")
    env.ask("other", "k", 20)
    assert env.schedule() == 0
    assert_clean(env)


def test_shim_never_confirms_completing_app_stays_completing() -> None:
    env, ph2 = completing_gang()
    env.advance(COMPLETING_TIMEOUT)
    for _ in range(5):
        env.advance(DAY)
    assert env.app_state("g") == "Completing"
    assert env.queue("root.a")["allocated"] == mem(20)
    assert env.node("node-1")["allocated"] == mem(20)
    assert env.app("g")["placeholder_allocated"] == mem(20)
    assert env.releases().count((ph2, TT.TIMEOUT)) == 1
    assert [r for r in env.releases() if r[0] == ph2] == [(ph2, TT.TIMEOUT)]
    env.confirm("g", ph2, TT.TIMEOUT)
    assert env.app_state("g") == "Completed"
    assert env.queue("root.a")["allocated"] == {}
    assert_clean(env)


def test_decommissioned_node_releases_placeholders_and_unparks_ask() -> None:
    env = placed_gang((("node-1", 40),), count=2)
    env.add_node("node-2", 100)
    ph1, ph2 = env.uuid_of("g", "ph-1"), env.uuid_of("g", "ph-2")
    env.real("g", "real-1", 20)
    env.schedule()
    assert env.releases() == [(ph1, TT.PLACEHOLDER_REPLACED)]
    env.shim.clear()
    env.node_action("node-1", si.NodeAction.DECOMISSION)
    assert sorted(env.releases()) == sorted([(ph1, TT.STOPPED_BY_RM), (ph2, TT.STOPPED_BY_RM)])
    assert env.node("node-1") is None
    app = env.app("g")
    assert app["allocations"] == []
    assert app["placeholder_allocated"] == {}
    assert env.queue("root.a")["allocated"] == {}
    assert env.dump_ask("g", "real-1")["state"] == "Pending"
    assert_clean(env)
    assert env.schedule() == 1
    [new] = env.shim.allocations
    assert (new.allocation_key, new.node_id) == ("real-1", "node-2")
    assert env.app_state("g") == "Running"
    # The shim's late confirmation for the vanished placeholder is ignored.
    env.shim.clear()
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    assert env.alloc_responses() == []
    assert_event_about(env, ph1)
    assert [a["allocation_key"] for a in env.app("g")["allocations"]] == ["real-1"]
    assert env.queue("root.a")["allocated"] == mem(20)
    assert_clean(env)


def test_update_of_a_parked_ask_is_rejected() -> None:
    env = placed_gang(count=1)
    ph1 = env.uuid_of("g", "ph-1")
    env.real("g", "real-1", 20)
    env.schedule()
    env.shim.clear()
    env.real("g", "real-1", 10)
    [rej] = env.shim.rejected_asks
    assert (rej.application_id, rej.allocation_key) == ("g", "real-1")
    assert rej.reason.strip()
    ask = env.dump_ask("g", "real-1")
    assert ask["resource"] == mem(20) and ask["state"] == "Pending"
    env.confirm("g", ph1, TT.PLACEHOLDER_REPLACED)
    [new] = env.shim.allocations
    assert new.allocation_key == "real-1"
    assert new.resource_per_alloc.as_dict() == mem(20)
    assert_clean(env)


def test_hard_timeout_of_a_running_gang_with_placeholder_asks_pending_fails_it() -> None:
    """A Running gang that still waits for placeholders is timed out like an Accepted one:
    Hard fails it (``001`` "Cleanup"), releasing placeholders, placeholder asks and its
    real allocations, and it is Failed once the shim confirmed every release."""
    env = GangEnv()
    env.add_node("node-1", 60)
    env.add_gang("g", ph_ask=60, style="Hard")
    env.placeholders("g", 2)
    assert env.schedule() == 2
    env.ask("g", "driver", 20)                   # a real pod outside the gang's task groups
    assert env.schedule() == 1
    assert env.app_state("g") == "Running"
    env.placeholders("g", 1, prefix="late")     # within placeholderAsk, but node-1 is full
    assert env.schedule() == 0
    env.shim.clear()

    env.advance(PLACEHOLDER_TIMEOUT)
    assert env.app_states("g") == ["Failing"]
    assert sorted(r.allocation_key for r in env.shim.released) == ["driver", "ph-1", "ph-2"]
    assert {r.termination_type for r in env.shim.released} == {TT.TIMEOUT}
    assert [(r.allocation_key, r.termination_type) for r in env.shim.released_asks] == [
        ("late-1", TT.TIMEOUT)]
    assert_clean(env)

    for r in env.shim.released:
        env.confirm("g", r.uuid, TT.TIMEOUT)
    assert env.app_states("g") == ["Failing", "Failed"]
    assert env.app("g")["allocations"] == []
    assert env.node("node-1")["allocated"] == {}
    assert_clean(env)
