"""Scenarios: adding, rejecting, removing applications and their lifecycle."""

from __future__ import annotations

import pytest
from scenario_helpers import TT, Env, config

DAY = 24 * 3600.0


def running_env() -> Env:
    """app-1 Running with two allocations (node-1) and one pending ask too big to fit."""
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k1", 20, repeats=2)
    assert env.schedule() == 2
    return env


# ------------------------------------------------------------------------ add


def test_add_to_leaf_is_accepted_in_state_new() -> None:
    env = Env()
    env.add_app("app-1", "root.a", user="alice")
    assert env.shim.accepted_apps == ["app-1"]
    assert env.shim.rejected_apps == []
    app = env.app("app-1")
    assert app is not None
    assert (app["state"], app["queue"], app["user"]) == ("New", "root.a", "alice")
    assert app["asks"] == [] and app["allocations"] == []


@pytest.mark.parametrize(
    ("queue", "partition", "needle", "tracked"),
    [
        ("root.nope", "default", "root.nope", "Rejected"),
        ("root", "default", "root.root does not exist", "Rejected"),
        ("root.a", "nopart", "nopart", None),
    ],
    ids=["unknown-queue", "root-itself", "unknown-partition"],
)
def test_add_rejected_with_reason(
    queue: str, partition: str, needle: str, tracked: str | None,
) -> None:
    """A rejected application is tracked as Rejected (until expiry) in its partition;
    with an unknown partition there is nowhere to track it."""
    env = Env()
    env.add_app("app-1", queue, partition=partition)
    assert env.shim.accepted_apps == []
    [rejected] = env.shim.rejected_apps
    assert rejected.application_id == "app-1"
    assert needle in rejected.reason
    assert env.app_state("app-1") == tracked
    for q in env.partition()["queues"]:
        assert q["allocated"] == {} and q["pending"] == {}


def test_add_to_parent_queue_rejected() -> None:
    env = Env(config("""
- name: p
  queues:
    - name: leaf
"""))
    env.add_app("app-1", "root.p")
    [rejected] = env.shim.rejected_apps
    assert "parent" in rejected.reason
    assert env.app_state("app-1") == "Rejected"


def test_duplicate_live_id_rejected_and_original_untouched() -> None:
    env = running_env()
    before = env.dump()
    env.shim.clear()
    env.add_app("app-1", "root.b", user="bob")
    [rejected] = env.shim.rejected_apps
    assert rejected.application_id == "app-1"
    assert "app-1" in rejected.reason
    assert env.shim.accepted_apps == []
    assert env.api.state_dump() == before


# ----------------------------------------------------------------------- ACLs


def acl_env(queues: str, root_acl: str | None = None) -> Env:
    return Env(config(queues, root_acl=root_acl))


def outcome(env: Env, app_id: str, user: str, groups: tuple[str, ...] = (),
            queue: str = "root.a") -> bool:
    env.shim.clear()
    env.add_app(app_id, queue, user=user, groups=groups)
    accepted = env.shim.accepted_apps == [app_id]
    rejected = [r.application_id for r in env.shim.rejected_apps] == [app_id]
    assert accepted != rejected
    if rejected:
        assert env.shim.rejected_apps[0].reason
    return accepted


def test_acl_on_leaf() -> None:
    env = acl_env('- name: a\n  submitacl: "bob"')
    assert outcome(env, "app-1", "bob") is True
    assert outcome(env, "app-2", "alice") is False


def test_acl_on_ancestor() -> None:
    env = acl_env("""
- name: p
  submitacl: "alice"
  queues:
    - name: a
""")
    assert outcome(env, "app-1", "alice", queue="root.p.a") is True
    assert outcome(env, "app-2", "bob", queue="root.p.a") is False


def test_adminacl_on_ancestor_allows_submit() -> None:
    env = Env(config("- name: a", root_acl=None).replace(
        "      - name: root\n", '      - name: root\n        adminacl: "carol"\n'))
    assert outcome(env, "app-1", "carol") is True
    assert outcome(env, "app-2", "alice") is False


def test_adminacl_on_leaf_allows_submit() -> None:
    env = acl_env('- name: a\n  adminacl: "carol"')
    assert outcome(env, "app-1", "carol") is True
    assert outcome(env, "app-2", "dave") is False


def test_no_acl_anywhere_denies() -> None:
    env = acl_env("- name: a")
    assert outcome(env, "app-1", "alice") is False
    assert outcome(env, "app-2", "root") is False
    assert env.app_state("app-1") == "Rejected"


def test_group_acl_with_leading_space() -> None:
    env = acl_env('- name: a\n  submitacl: " devs"')
    assert outcome(env, "app-1", "carol", ("devs",)) is True
    assert outcome(env, "app-2", "dave", ("ops",)) is False
    # a user called like the group is not a member of it
    assert outcome(env, "app-3", "devs") is False


def test_user_and_group_acl() -> None:
    env = acl_env('- name: a\n  submitacl: "alice devs"')
    assert outcome(env, "app-1", "alice") is True
    assert outcome(env, "app-2", "erin", ("devs", "x")) is True
    assert outcome(env, "app-3", "frank", ("x",)) is False


def test_wildcard_acl_allows_everyone() -> None:
    env = acl_env('- name: a\n  submitacl: "*"')
    assert outcome(env, "app-1", "anyone") is True
    assert outcome(env, "app-2", "someone", ("nobody",)) is True
    # ... but not an application without a user, whatever the ACL (YuniKorn: "empty user").
    assert outcome(env, "app-3", "", ("nobody",)) is False


def test_acl_on_sibling_does_not_help() -> None:
    env = acl_env('- name: a\n- name: b\n  submitacl: "*"')
    assert outcome(env, "app-1", "alice", queue="root.a") is False
    assert outcome(env, "app-2", "alice", queue="root.b") is True


# --------------------------------------------------------------------- remove


def test_remove_releases_allocations_and_asks() -> None:
    env = running_env()
    env.ask("app-1", "pending", 500)
    uuids = env.uuids("app-1")
    env.shim.clear()
    env.remove_app("app-1")
    released = env.shim.released
    assert sorted(r.uuid for r in released) == sorted(uuids)
    assert all(r.termination_type == TT.STOPPED_BY_RM for r in released)
    assert all(r.application_id == "app-1" for r in released)
    assert env.app("app-1") is None
    assert env.queue("root.a")["allocated"] == {}
    assert env.queue("root.a")["pending"] == {}
    assert env.queue("root")["allocated"] == {}
    assert env.queue("root")["pending"] == {}
    node = env.node("node-1")
    assert node["allocated"] == {} and node["available"] == {"memory": 100}


def test_remove_unknown_app_changes_nothing() -> None:
    env = running_env()
    before = env.dump()
    env.shim.clear()
    env.remove_app("nope")
    assert env.api.state_dump() == before
    assert env.shim.released == []
    assert any(e.object_id == "nope" for e in env.shim.events)


def test_removed_app_frees_room_for_others() -> None:
    env = running_env()
    env.add_app("app-2")
    env.ask("app-2", "k", 100)
    assert env.schedule() == 0
    env.remove_app("app-1")
    assert env.schedule() == 1
    assert env.node("node-1")["allocated"] == {"memory": 100}


# -------------------------------------------------------------------- states


def test_lifecycle_new_accepted_running_completing_completed() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    assert env.app_state("app-1") == "New"
    env.ask("app-1", "k", 10)
    assert env.app_state("app-1") == "Accepted"
    env.schedule()
    assert env.app_state("app-1") == "Running"
    env.release("app-1", env.uuids()[0])
    assert env.app_state("app-1") == "Completing"
    assert env.app_states("app-1") == ["Accepted", "Running", "Completing"]
    env.advance(29.9)
    assert env.app_state("app-1") == "Completing"
    env.advance(0.1)
    assert env.app_state("app-1") == "Completed"
    assert env.app_states("app-1") == ["Accepted", "Running", "Completing", "Completed"]


def test_updated_application_messages_carry_state_and_timestamp() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.clock.advance(5)
    env.ask("app-1", "k", 10)
    [update] = env.shim.app_updates
    assert (update.application_id, update.state) == ("app-1", "Accepted")
    assert update.state_transition_timestamp == 5 * 10**9


def test_completed_needs_schedule_after_clock_advance() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    env.clock.advance(60)
    assert env.app_state("app-1") == "Completing"
    env.schedule()
    assert env.app_state("app-1") == "Completed"


def test_completing_back_to_running_on_new_ask() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    env.advance(20)
    assert env.app_state("app-1") == "Completing"
    env.ask("app-1", "k2", 10)
    assert env.app_state("app-1") == "Running"
    assert env.app_states("app-1")[-1] == "Running"
    # the old completing timer must not complete it
    env.advance(20)
    assert env.app_state("app-1") == "Running"
    assert env.uuids("app-1")[-1].startswith("app-1-k2")


def test_completing_timer_restarts_after_second_completing() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    env.advance(20)
    env.ask("app-1", "k2", 10)
    env.schedule()
    env.release("app-1", env.uuids()[-1])
    assert env.app_state("app-1") == "Completing"
    env.advance(20)  # 40 s after the first Completing, 20 s after the second
    assert env.app_state("app-1") == "Completing"
    env.advance(10)
    assert env.app_state("app-1") == "Completed"


def test_accepted_app_whose_asks_are_removed_completes() -> None:
    env = Env()
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.release_ask("app-1", "k")
    assert env.app_state("app-1") == "Completing"
    env.advance(30)
    assert env.app_state("app-1") == "Completed"


def completed_env() -> Env:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    env.advance(30)
    assert env.app_state("app-1") == "Completed"
    return env


def test_completed_app_expires_after_three_days() -> None:
    env = completed_env()
    env.advance(3 * DAY - 1)
    assert env.app_state("app-1") == "Completed"
    env.advance(1)
    assert env.app("app-1") is None
    assert env.partition()["applications"] == []


def test_rejected_app_expires_after_three_days() -> None:
    env = Env()
    env.add_app("app-1", "root.nope")
    assert env.app_state("app-1") == "Rejected"
    env.advance(3 * DAY - 1)
    assert env.app_state("app-1") == "Rejected"
    env.advance(1)
    assert env.app("app-1") is None


def test_completed_id_can_be_submitted_again() -> None:
    env = completed_env()
    env.shim.clear()
    env.add_app("app-1", "root.b")
    assert env.shim.accepted_apps == ["app-1"]
    app = env.app("app-1")
    assert (app["state"], app["queue"]) == ("New", "root.b")
    env.ask("app-1", "k", 10)
    assert env.schedule() == 1
    # the old application's expiry must not remove the new one
    env.advance(3 * DAY)
    assert env.app_state("app-1") == "Running"


def test_rejected_id_can_be_submitted_again() -> None:
    env = Env()
    env.add_app("app-1", "root.nope")
    env.shim.clear()
    env.add_app("app-1", "root.a")
    assert env.shim.accepted_apps == ["app-1"]
    assert env.app_state("app-1") == "New"


def test_running_app_keeps_running_while_allocations_remain() -> None:
    env = running_env()
    env.release("app-1", env.uuids()[0])
    assert env.app_state("app-1") == "Running"
    env.advance(60)
    assert env.app_state("app-1") == "Running"


def test_duplicate_of_completing_app_rejected() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids()[0])
    assert env.app_state("app-1") == "Completing"
    env.shim.clear()
    env.add_app("app-1")
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-1"]
    assert env.app_state("app-1") == "Completing"
