"""The core as Apache YuniKorn's where it differed (issue 11, items 20 and 21).

Each test drives ``Scheduler`` through its public API and reads the state dump
or what the shim was told.
"""

from __future__ import annotations

from scenario_helpers import NA, Env, res

# ---------------------------------------------------------------------------
# 20: root's max is the partition's total schedulable resource
# ---------------------------------------------------------------------------


def test_roots_max_in_the_dump_follows_every_node_change() -> None:
    env = Env()
    assert env.queue("root")["max"] is None                    # no nodes: no total yet
    env.add_node("node-1", 100, vcore=4)
    assert env.queue("root")["max"] == {"memory": 100, "vcore": 4}
    env.add_node("node-2", 50)
    assert env.queue("root")["max"] == {"memory": 150, "vcore": 4}
    env.node_action("node-1", NA.UPDATE, schedulable_resource=res(memory=70, vcore=2))
    assert env.queue("root")["max"] == {"memory": 120, "vcore": 2}
    env.node_action("node-2", NA.DRAIN_NODE)                   # draining nodes still count
    assert env.queue("root")["max"] == {"memory": 120, "vcore": 2}
    env.node_action("node-1", NA.DECOMISSION)
    assert env.queue("root")["max"] == {"memory": 50}
    env.node_action("node-2", NA.DECOMISSION)
    assert env.queue("root")["max"] is None
    assert env.queue("root.a")["max"] is None                  # other queues keep their own


def test_roots_max_is_no_quota_beyond_what_the_nodes_hold() -> None:
    """The total bounds the root's usage anyway: everything that fits a node is placed."""
    env = Env()
    env.add_node("node-1", 30)
    env.add_node("node-2", 30)
    env.add_app("app-1")
    env.ask("app-1", "k", 20, repeats=3)
    assert env.schedule() == 2                                 # 20 + 20 of 60: one per node
    assert env.queue("root")["max"] == {"memory": 60}
    assert env.queue("root")["allocated"] == {"memory": 40}
