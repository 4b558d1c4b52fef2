"""Scenarios: queue quotas, maxapplications, hot reload and draining queues."""

from __future__ import annotations

import pytest
from scenario_helpers import SS, Env, config

from scheduler.errors import ConfigError

PARENT_MAX = config("""
- name: parent
  resources:
    max: {memory: 100}
  queues:
    - name: child
    - name: sibling
- name: free
""")


def quota_config(max_memory: int) -> str:
    return config(f"""
- name: a
  resources:
    max: {{memory: {max_memory}}}
- name: b
""")


MAXAPPS = config("""
- name: a
  maxapplications: 1
- name: b
""")


# ------------------------------------------------------------------------ max


def test_parent_max_limits_child_without_max() -> None:
    env = Env(PARENT_MAX)
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.parent.child")
    env.ask("app-1", "k", 30, repeats=5)
    assert env.schedule() == 3
    assert env.queue("root.parent.child")["allocated"] == {"memory": 90}
    assert env.queue("root.parent")["allocated"] == {"memory": 90}
    assert env.queue("root.parent")["max"] == {"memory": 100}
    assert env.queue("root.parent.child")["max"] is None
    assert env.app("app-1")["pending"] == {"memory": 60}


def test_parent_max_is_shared_by_siblings() -> None:
    env = Env(PARENT_MAX)
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.parent.child")
    env.add_app("app-2", "root.parent.sibling")
    env.add_app("app-3", "root.free")
    env.ask("app-1", "k", 40, repeats=2)
    env.ask("app-2", "k", 40, repeats=2)
    env.ask("app-3", "k", 40, repeats=2)
    assert env.schedule() == 4
    allocated = env.queue("root.parent")["allocated"]
    assert allocated == {"memory": 80}
    assert env.queue("root.free")["allocated"] == {"memory": 80}


def test_allocation_never_takes_queue_over_max() -> None:
    env = Env(quota_config(100))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 60, repeats=2)
    assert env.schedule() == 1
    assert env.queue("root.a")["allocated"] == {"memory": 60}
    assert env.schedule() == 0
    assert env.queue("root.a")["allocated"] == {"memory": 60}


def test_quota_skip_reports_skipped_state() -> None:
    env = Env(quota_config(50))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "big", 60)
    assert env.schedule() == 0
    assert env.sched_states("app-1", "big") == [SS.SKIPPED]
    assert env.shim.scheduling_states[0].reason


# ------------------------------------------------------------ maxapplications


def test_maxapplications_extra_app_waits_in_accepted() -> None:
    env = Env(MAXAPPS)
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    assert env.schedule() == 1
    assert env.app_state("app-1") == "Running"
    assert env.app_state("app-2") == "Accepted"
    assert env.app("app-2")["allocations"] == []
    assert env.schedule() == 0
    assert env.app_state("app-2") == "Accepted"


def test_maxapplications_waiting_app_starts_when_running_one_finishes() -> None:
    env = Env(MAXAPPS)
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids("app-1")[0])
    # app-1 waits in Completing and keeps its slot (it may run again) ...
    assert env.app_state("app-1") == "Completing"
    assert env.schedule() == 0
    assert env.uuids("app-2") == []
    # ... until the completing timeout completes it: then app-2 starts.
    assert env.advance(30) == 1
    assert env.app_state("app-1") == "Completed"
    assert env.uuids("app-2") != []
    assert env.app_state("app-2") == "Running"


def test_maxapplications_holds_when_a_completing_app_runs_again() -> None:
    """A completing application that gets a new ask comes back without exceeding the limit."""
    env = Env(MAXAPPS)
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    env.schedule()
    env.release("app-1", env.uuids("app-1")[0])
    env.schedule()
    env.ask("app-1", "k2", 10)
    assert env.app_state("app-1") == "Running"
    assert env.schedule() == 1
    assert env.uuids("app-2") == [], "app-2 must still wait: app-1 holds the only slot"


def test_maxapplications_waiting_app_starts_when_running_one_is_removed() -> None:
    env = Env(MAXAPPS)
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    env.schedule()
    env.remove_app("app-1")
    assert env.schedule() == 1
    assert env.app_state("app-2") == "Running"


def test_maxapplications_does_not_limit_other_queue() -> None:
    env = Env(MAXAPPS)
    env.add_node("node-1", 1000)
    for app_id, queue in (("app-1", "root.a"), ("app-2", "root.b"), ("app-3", "root.b")):
        env.add_app(app_id, queue)
        env.ask(app_id, "k", 10)
    assert env.schedule() == 3


# ----------------------------------------------------------------- hot reload


def test_raising_max_takes_effect_at_next_schedule() -> None:
    env = Env(quota_config(100))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 40, repeats=5)
    assert env.schedule() == 2
    env.update_config(quota_config(200))
    assert env.queue("root.a")["max"] == {"memory": 200}
    assert env.queue("root.a")["allocated"] == {"memory": 80}  # nothing until schedule()
    assert env.schedule() == 3
    assert env.queue("root.a")["allocated"] == {"memory": 200}


def test_lowering_max_stops_allocation_and_keeps_existing() -> None:
    env = Env(quota_config(100))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 40, repeats=2)
    assert env.schedule() == 2
    env.ask("app-1", "more", 10)
    env.update_config(quota_config(50))
    assert env.schedule() == 0
    queue = env.queue("root.a")
    assert queue["max"] == {"memory": 50}
    assert queue["allocated"] == {"memory": 80}
    assert len(env.app("app-1")["allocations"]) == 2
    # one release: 40 used, 40 + 10 fits under 50
    env.release("app-1", env.uuids("app-1")[0])
    assert env.schedule() == 1
    assert env.queue("root.a")["allocated"] == {"memory": 50}


def test_removing_max_lifts_the_limit() -> None:
    env = Env(quota_config(50))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 40, repeats=3)
    assert env.schedule() == 1
    env.update_config(config("- name: a\n- name: b"))
    assert env.queue("root.a")["max"] is None
    assert env.schedule() == 2


def test_removed_queue_goes_draining_while_it_has_apps() -> None:
    env = Env()
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.b")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.update_config(config("- name: a"))
    assert env.queue("root.b")["state"] == "Draining"
    assert env.queue("root.a")["state"] == "Active"


def test_draining_queue_rejects_new_apps_with_reason() -> None:
    env = Env()
    env.add_app("app-1", "root.b")
    env.update_config(config("- name: a"))
    env.shim.clear()
    env.add_app("app-2", "root.b")
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-2"]
    assert "draining" in env.shim.rejected_apps[0].reason.lower()
    assert env.shim.accepted_apps == []
    assert env.app_state("app-2") == "Rejected"


def test_draining_queue_removed_when_its_last_app_goes() -> None:
    env = Env()
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.b")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.update_config(config("- name: a"))
    assert env.queue("root.b") is not None
    env.remove_app("app-1")
    assert env.queue("root.b")["state"] == "Draining"     # empty: the cleanup takes it
    env.advance(10)
    assert env.queue("root.b") is None
    assert [q["path"] for q in env.partition()["queues"]] == ["root", "root.a"]


def test_draining_queue_removed_when_its_last_app_completes() -> None:
    env = Env()
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.b")
    env.ask("app-1", "k", 10)
    env.schedule()
    env.update_config(config("- name: a"))
    env.release("app-1", env.uuids()[0])
    assert env.app_state("app-1") == "Completing"
    assert env.queue("root.b")["state"] == "Draining"
    env.advance(30)
    assert env.app_state("app-1") == "Completed"
    assert env.queue("root.b")["state"] == "Draining"
    env.advance(10)
    assert env.queue("root.b") is None


def test_empty_queue_removed_from_config_drains_until_the_periodic_cleanup() -> None:
    """YuniKorn ``TestUpdateQueues`` (the removed ``root.default`` is still there, draining)
    and ``TestCleanQueues`` (the partition manager's ``cleanQueues`` removes it): an empty
    queue a reload removes is ``Draining`` until the cleanup, every 10 s, takes it, and
    takes no application meanwhile."""
    env = Env()
    env.update_config(config("- name: a"))
    assert env.queue("root.b")["state"] == "Draining"
    env.add_app("app-1", "root.b")
    assert env.shim.accepted_apps == []
    assert env.advance(9.5) == 0
    assert env.queue("root.b")["state"] == "Draining"
    env.advance(0.5)
    assert env.queue("root.b") is None
    env.advance(60)                                    # nothing waits: nothing changes
    assert [q["path"] for q in env.partition()["queues"]] == ["root", "root.a"]


def test_removed_queue_configured_again_before_the_cleanup_stays() -> None:
    """YuniKorn ``objectState`` Start: a draining queue configured again is active again,
    and the cleanup that was due leaves it alone."""
    env = Env()
    env.update_config(config("- name: a"))
    env.update_config(config("- name: a\n- name: b"))
    env.advance(10)
    assert env.queue("root.b")["state"] == "Active"


def test_readding_draining_queue_makes_it_active() -> None:
    env = Env()
    env.add_app("app-1", "root.b")
    env.update_config(config("- name: a"))
    assert env.queue("root.b")["state"] == "Draining"
    env.update_config(config("- name: a\n- name: b"))
    assert env.queue("root.b")["state"] == "Active"
    env.shim.clear()
    env.add_app("app-2", "root.b")
    assert env.shim.accepted_apps == ["app-2"]


def test_invalid_config_update_raises_and_changes_nothing() -> None:
    env = Env(quota_config(100))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 40, repeats=2)
    env.schedule()
    before = env.dump()
    env.shim.clear()
    with pytest.raises(ConfigError):
        env.update_config(config("""
- name: a
  resources:
    guaranteed: {memory: 200}
    max: {memory: 100}
"""))
    with pytest.raises(ConfigError):
        env.update_config("partitions:\n  - name: default\n    queues: {oops")
    assert env.api.state_dump() == before
    assert env.shim.messages == []


def test_invalid_config_update_keeps_old_quota() -> None:
    env = Env(quota_config(100))
    env.add_node("node-1", 1000)
    env.add_app("app-1")
    env.ask("app-1", "k", 40, repeats=5)
    with pytest.raises(ConfigError):
        env.update_config(quota_config(100).replace("max: {memory: 100}", "max: {memory: -1}"))
    assert env.schedule() == 2
    assert env.queue("root.a")["allocated"] == {"memory": 80}


def test_parent_maxapplications_counts_apps_of_all_children() -> None:
    env = Env(config("""
- name: p
  maxapplications: 1
  queues:
    - name: x
      maxapplications: 1
    - name: y
      maxapplications: 1
"""))
    env.add_node("node-1", 1000)
    env.add_app("app-1", "root.p.x")
    env.add_app("app-2", "root.p.y")
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    assert env.schedule() == 1
    assert env.app_state("app-1") == "Running"
    assert env.app_state("app-2") == "Accepted"


def test_removed_parent_queue_drains_with_its_children() -> None:
    env = Env(config("""
- name: a
- name: p
  queues:
    - name: x
"""))
    env.add_app("app-1", "root.p.x")
    env.update_config(config("- name: a"))
    assert env.queue("root.p")["state"] == "Draining"
    assert env.queue("root.p.x")["state"] == "Draining"
    env.remove_app("app-1")
    assert env.queue("root.p.x")["state"] == "Draining"
    env.advance(10)                   # children first: the parent goes in the same run
    assert env.queue("root.p") is None and env.queue("root.p.x") is None


def test_reload_changes_node_sort_policy_at_next_schedule() -> None:
    env = Env()
    env.add_node("node-1", 100)
    env.add_node("node-2", 100)
    env.add_app("app-1")
    env.ask("app-1", "k", 10, repeats=2)
    assert env.schedule() == 2
    assert [a.node_id for a in env.shim.allocations] == ["node-1", "node-2"]
    env.update_config(config("- name: a\n- name: b",
                             extra="    nodesortpolicy:\n      type: binpacking\n"))
    env.release("app-1", env.uuids()[1])  # node-1: 10 used, node-2 empty
    env.ask("app-1", "j", 10, repeats=2)
    assert env.schedule() == 2
    assert [a.node_id for a in env.shim.allocations[2:]] == ["node-1", "node-1"]


def test_reload_changes_application_sort_policy() -> None:
    env = Env()
    env.add_node("node-1", 20)
    env.add_app("app-1")
    env.add_app("app-2")
    env.ask("app-1", "first", 10)
    env.schedule()
    env.update_config(config(
        "- name: a\n  properties:\n    application.sort.policy: fair\n- name: b"))
    assert env.queue("root.a")["sort_policy"] == "fair"
    env.ask("app-1", "second", 10)
    env.ask("app-2", "first", 10)
    assert env.schedule() == 1
    assert env.shim.allocations[-1].application_id == "app-2"
