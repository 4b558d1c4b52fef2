"""User and group limits, through the public API.

The scenarios are Apache YuniKorn's own tests (``pkg/scheduler/partition_test.go``
and ``pkg/scheduler/ugm/manager_test.go``), named on each test; the rules they
exercise are restated in ``docs/design-notes.md`` ("User and group limits").
Config ``vcore`` counts cores and the SI's counts milli-cores, so a 3-core ask
is ``vcore=3000`` here.
"""

from __future__ import annotations

from typing import Any

import pytest
from scenario_helpers import SS, Env

from scheduler import si

USER, GROUP = "testuser", "testgroup"


def limits_config(root: str = "", leaf: str = "", *, queues: str = "") -> str:
    """One partition; ``root`` and ``root.default`` limits in flow style."""
    return ("partitions:\n  - name: default\n    queues:\n      - name: root\n"
            "        submitacl: '*'\n"
            + (f"        limits: {root}\n" if root else "")
            + "        queues:\n"
            + (queues or ("          - name: default\n"
                          + (f"            limits: {leaf}\n" if leaf else ""))))


def ask(env: Env, app_id: str, key: str, memory: int, vcore: int = 0, repeats: int = 1) -> None:
    env.ask(app_id, key, memory, vcore=vcore * 1000, repeats=repeats)


def allocated(env: Env, app_id: str) -> dict[str, int]:
    app = env.app(app_id)
    assert app is not None
    return dict(app["allocated"])


def tracked(env: Env, path: str, kind: str) -> dict[str, Any]:
    queue = env.queue(path)
    assert queue is not None
    return {t["name"]: (t["allocated"], t["running_applications"]) for t in queue[kind]}


HEADROOM = """\
          - name: leaf
            limits: [{users: [testuser], maxresources: {memory: 5, vcore: 5}, maxapplications: 1}]
          - name: parent
            limits: [{users: [testuser], maxresources: {memory: 5, vcore: 5}, maxapplications: 8}]
            queues:
              - name: sub-leaf
                limits: [{users: [testuser], maxresources: {memory: 3, vcore: 3},
                          maxapplications: 2}]
"""


def test_user_headroom_is_the_least_room_on_the_path() -> None:
    """``TestUserHeadroom``: the tightest limit of the path decides, and a user's app slots
    on a leaf run out as its room does."""
    env = Env(limits_config(
        "[{users: [testuser], maxresources: {memory: 10, vcore: 10}, maxapplications: 10}]",
        queues=HEADROOM))
    env.add_node("node-1", 10, vcore=10_000)
    env.add_node("node-2", 10, vcore=10_000)
    for app_id in ("app-1", "app-2"):
        env.add_app(app_id, "root.parent.sub-leaf", user=USER, groups=[GROUP])
        ask(env, app_id, f"{app_id}-ask", 3, 3)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 3, "vcore": 3000}
    assert allocated(env, "app-2") == {}
    assert env.sched_states("app-2", "app-2-ask")[-1] == SS.SKIPPED
    reason = env.shim.scheduling_states[-1].reason
    assert "user testuser would exceed its limit on root.parent.sub-leaf" in reason

    env.add_app("app-3", "root.leaf", user=USER, groups=[GROUP])
    ask(env, "app-3", "app-3-ask", 5, 5)
    env.schedule()
    assert allocated(env, "app-3") == {"memory": 5, "vcore": 5000}   # root has 7 left

    env.add_app("app-4", "root.leaf", user=USER, groups=[GROUP])
    ask(env, "app-4", "app-4-ask", 5, 5)
    env.schedule()
    assert allocated(env, "app-4") == {}
    assert env.app_state("app-4") == "Accepted"
    assert tracked(env, "root", "users") == {USER: ({"memory": 8, "vcore": 8000}, 2)}
    assert tracked(env, "root.leaf", "users") == {USER: ({"memory": 5, "vcore": 5000}, 1)}
    assert env.shim.rejected_asks == []


MAX_APPS = {
    "specific user": "[{users: [testuser], maxapplications: 1}]",
    "specific group": "[{groups: [testgroup], maxapplications: 1}]",
    "wildcard user": "[{users: ['*'], maxapplications: 1}]",
    "wildcard group": ("[{groups: [nonexistent-group], maxapplications: 100}, "
                       "{groups: ['*'], maxapplications: 1}]"),
    "specific user lower than specific group limit": (
        "[{users: [testuser], maxapplications: 1}, {groups: [testgroup], maxapplications: 100}]"),
    "specific group lower than specific user limit": (
        "[{users: [testuser], maxapplications: 100}, {groups: [testgroup], maxapplications: 1}]"),
}


@pytest.mark.parametrize("limits", MAX_APPS.values(), ids=MAX_APPS.keys())
def test_maxapplications_holds_a_second_application_back(limits: str) -> None:
    """``TestLimitMaxApplications``: the second application stays Accepted, nothing placed,
    and is never rejected; it starts once the first one ends."""
    env = Env(limits_config(leaf=limits))
    env.add_node("node-1", 10, vcore=10_000)
    env.add_app("app-1", "root.default", user=USER, groups=[GROUP])
    ask(env, "app-1", "alloc-1", 2, 2)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 2, "vcore": 2000}
    env.add_app("app-2", "root.default", user=USER, groups=[GROUP])
    ask(env, "app-2", "alloc-2", 2, 2)
    assert env.schedule() == 0
    assert env.app_state("app-2") == "Accepted"
    assert allocated(env, "app-2") == {}
    assert env.sched_states("app-2", "alloc-2")[-1] == SS.SKIPPED
    assert env.shim.scheduling_states[-1].reason.endswith("application(s) on root.default, "
                                                          "its limit")
    assert env.shim.rejected_asks == [] and env.shim.rejected_apps == []

    env.remove_app("app-1")
    for release in env.shim.released:
        env.release("app-1", release.uuid, release.termination_type)
    env.schedule()
    assert allocated(env, "app-2") == {"memory": 2, "vcore": 2000}


def test_maxapplications_holds_a_reserved_ask_back_too() -> None:
    """``TestLimitMaxApplicationsForReservedAllocation``: the reserved path checks the
    user's application slots as the normal one does."""
    env = Env(limits_config(leaf="[{users: [testuser], maxapplications: 1}]"))
    env.add_node("node-1", 10)
    env.add_app("other", "root.default", user="bob")
    env.ask("other", "hog", 2)
    env.schedule()
    env.add_app("app-2", "root.default", user=USER)
    env.ask("app-2", "big", 9)
    env.wait_to_reserve()
    assert env.node("node-1")["reserved"] == [{"application_id": "app-2",
                                                "allocation_key": "big"}]
    env.add_node("node-2", 5)
    env.add_app("app-1", "root.default", user=USER)
    env.ask("app-1", "small", 1)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 1}
    env.release("other", env.uuids("other")[0])
    env.schedule()
    assert allocated(env, "app-2") == {}
    assert env.app_state("app-2") == "Accepted"


@pytest.mark.parametrize(("user_max", "group_max"), [(10, 5), (5, 10)])
def test_the_smaller_of_user_and_group_room_applies(user_max: int, group_max: int) -> None:
    """``TestSeparateUserGroupHeadroom``: both limits apply, in either order."""
    user = f"{{users: [testuser], maxresources: {{memory: {user_max}}}}}"
    group = f"{{groups: [testgroup], maxresources: {{memory: {group_max}}}}}"
    env = Env(limits_config(leaf=f"[{user}, {group}]"))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.default", user=USER, groups=[GROUP])
    env.ask("app-1", "a", 3, repeats=3)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 3}
    assert tracked(env, "root.default", "groups") == {GROUP: ({"memory": 3}, 1)}


def test_a_named_user_limit_overrides_the_wildcard_on_its_queue() -> None:
    """``TestUserGroupLimit``: ``user1`` gets its own large limit, everyone else the
    wildcard's medium one, each separately."""
    env = Env(limits_config(leaf="[{users: [user1], maxresources: {memory: 8}}, "
                                 "{users: ['*'], maxresources: {memory: 4}}]"))
    env.add_node("node-1", 100)
    for user in ("user1", "user2", "user3"):
        env.add_app(f"app-{user}", "root.default", user=user)
        env.ask(f"app-{user}", "a", 2, repeats=5)
    env.schedule()
    assert [allocated(env, f"app-{u}") for u in ("user1", "user2", "user3")] == [
        {"memory": 8}, {"memory": 4}, {"memory": 4}]


def test_users_resolved_to_the_wildcard_group_share_one_limit() -> None:
    """``TestUserGroupLimit``: a user outside the named group is tracked against ``*``,
    one tracker for every such user."""
    env = Env(limits_config(leaf="[{groups: [group1], maxresources: {memory: 8}}, "
                                 "{groups: ['*'], maxresources: {memory: 4}}]"))
    env.add_node("node-1", 100)
    env.add_app("app-a", "root.default", user="ann", groups=["group1"])
    env.add_app("app-b", "root.default", user="ben", groups=["other"])
    env.add_app("app-c", "root.default", user="cat", groups=["else"])
    for app_id in ("app-a", "app-b", "app-c"):
        env.ask(app_id, "a", 2, repeats=5)
    env.schedule()
    assert allocated(env, "app-a") == {"memory": 8}
    assert allocated(env, "app-b") == {"memory": 4}
    assert allocated(env, "app-c") == {}
    assert tracked(env, "root.default", "groups") == {
        "*": ({"memory": 4}, 1), "group1": ({"memory": 8}, 1)}


def test_the_tracked_group_is_resolved_from_the_leaf_up_and_kept() -> None:
    """The leaf's limits name no group of the user, its parent's do: the parent's group is
    tracked, and stays so after a reload that names another of the user's groups."""
    parent = ("          - name: p\n"
              "            limits: [{groups: [devs], maxresources: {memory: 4}}]\n"
              "            queues:\n              - name: leaf\n")
    env = Env(limits_config(queues=parent))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.p.leaf", user="ann", groups=["ops", "devs"])
    env.ask("app-1", "a", 2, repeats=5)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 4}
    env.update_config(limits_config(queues=parent + (
        "                limits: [{groups: [ops], maxresources: {memory: 100}}]\n")))
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 4}
    assert tracked(env, "root.p.leaf", "groups") == {"devs": ({"memory": 4}, 1)}


def test_a_reload_lowers_and_clears_limits_for_new_allocations_only() -> None:
    """``TestUserGroupMaxResourcesChange``, ``TestUpdateConfigClearEarlierSetLimits``."""
    env = Env(limits_config(leaf="[{users: [testuser], maxresources: {memory: 6}}]"))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.default", user=USER)
    env.ask("app-1", "a", 2, repeats=5)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 6}
    env.update_config(limits_config(leaf="[{users: [testuser], maxresources: {memory: 2}}]"))
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 6}      # nothing released
    assert env.shim.released == []
    env.update_config(limits_config())
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 10}


def test_recovered_allocations_are_tracked_without_a_check() -> None:
    """Recovery: usage may start above a limit; nothing new is placed until it is below."""
    env = Env(limits_config(leaf="[{users: [testuser], maxresources: {memory: 4}}]"))
    env.add_app("app-1", "root.default", user=USER)
    existing = [si.Allocation(allocation_key=f"r{i}", uuid=f"u{i}", application_id="app-1",
                              node_id="node-1", partition_name="default",
                              resource_per_alloc=si.Resource.of(memory=3)) for i in range(2)]
    env.add_node("node-1", 100, existing=existing)
    env.ask("app-1", "more", 1)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 6}
    assert tracked(env, "root.default", "users") == {USER: ({"memory": 6}, 1)}
    env.release("app-1", "u0")
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 4}


def test_placeholders_count_and_their_replacement_is_not_checked() -> None:
    """Placeholders count on the user; a replacement swaps their usage without a check."""
    env = Env(limits_config(leaf="[{users: [testuser], maxresources: {memory: 4}}]"))
    env.add_node("node-1", 100)
    env.add_app("gang", "root.default", user=USER, placeholder_ask=si.Resource.of(memory=4))
    env.ask("gang", "ph-1", 4, placeholder=True, task_group="tg")
    env.schedule()
    assert tracked(env, "root.default", "users") == {USER: ({"memory": 4}, 1)}
    env.ask("gang", "real", 4, task_group="tg")
    env.schedule()
    release = env.shim.released[-1]
    assert release.termination_type == si.TerminationType.PLACEHOLDER_REPLACED
    env.release("gang", release.uuid, release.termination_type)
    assert allocated(env, "gang") == {"memory": 4}
    assert tracked(env, "root.default", "users") == {USER: ({"memory": 4}, 1)}


def test_usage_leaves_the_dump_when_it_is_gone() -> None:
    env = Env(limits_config(leaf="[{users: [testuser], maxresources: {memory: 4}}]"))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.default", user=USER, groups=[GROUP])
    env.ask("app-1", "a", 2)
    env.schedule()
    assert tracked(env, "root", "users") == {USER: ({"memory": 2}, 1)}
    env.remove_app("app-1")
    for release in env.shim.released:
        env.release("app-1", release.uuid, release.termination_type)
    assert tracked(env, "root", "users") == {} and tracked(env, "root", "groups") == {}


def test_a_reload_that_removes_a_queue_clears_its_limits() -> None:
    """A draining queue keeps its applications but not the limits the configuration no
    longer sets (YuniKorn replaces every limit on a reload)."""
    with_b = ("          - name: default\n          - name: b\n"
              "            limits: [{users: ['*'], maxresources: {memory: 2}}]\n")
    env = Env(limits_config(queues=with_b))
    env.add_node("node-1", 100)
    env.add_app("app-1", "root.b", user=USER)
    env.ask("app-1", "a", 2, repeats=3)
    env.schedule()
    assert allocated(env, "app-1") == {"memory": 2}
    env.update_config(limits_config())
    env.schedule()
    assert env.queue("root.b")["state"] == "Draining"
    assert allocated(env, "app-1") == {"memory": 6}


def test_a_reload_that_removes_a_partition_clears_its_limits() -> None:
    """Found by the checker: a draining partition kept the limits no configuration set."""
    second = ("  - name: second\n    queues:\n      - name: root\n        submitacl: '*'\n"
              "        limits: [{users: ['*'], maxresources: {memory: 2}}]\n"
              "        queues: [{name: leaf}]\n")
    env = Env(limits_config() + second)
    env.add_node("node-1", 100)
    env.api.update_node(si.NodeRequest(rm_id=env.rm, nodes=[si.NodeInfo(
        node_id="node-2", action=si.NodeAction.CREATE,
        attributes={"si/node-partition": "second"},
        schedulable_resource=si.Resource.of(memory=100))]))
    env.add_app("app-1", "root.leaf", user=USER, partition="second")
    env.ask("app-1", "a", 2, repeats=3, partition="second")
    env.schedule()
    assert env.partition("second")["applications"][0]["allocated"] == {"memory": 2}
    env.update_config(limits_config())
    env.schedule()
    assert env.partition("second")["state"] == "Draining"
    assert env.partition("second")["applications"][0]["allocated"] == {"memory": 6}


def test_an_application_that_never_ran_takes_no_slot_by_going_completing() -> None:
    """Found by the checker: with ``maxapplications: 1``, an application held back whose ask
    was withdrawn went Completing and counted as running; a new ask then made it Running
    and it was placed beside the one application the queue may run."""
    env = Env(limits_config(queues="          - name: q\n            maxapplications: 1\n"))
    env.add_node("node-1", 100)
    env.add_app("app-a", "root.q", user="ann")
    env.ask("app-a", "a", 10)
    env.schedule()
    env.add_app("app-b", "root.q", user="ben")
    env.ask("app-b", "b1", 10)
    env.schedule()
    assert allocated(env, "app-b") == {}
    env.release_ask("app-b", "b1")
    assert env.app_state("app-b") == "Completing"
    env.ask("app-b", "b2", 10)
    env.schedule()
    assert env.app_state("app-b") == "Running"
    assert allocated(env, "app-b") == {}
    env.remove_app("app-a")
    env.schedule()
    assert allocated(env, "app-b") == {"memory": 10}
