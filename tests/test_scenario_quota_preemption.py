"""Quota preemption through the public API: a reload lowers a max below usage.

Each scenario names the Go test it mirrors (apache/yunikorn-core be3bb48, files
under ``pkg/scheduler/``), ported as what a shim sees: releases with
``PREEMPTED_BY_SCHEDULER`` and the quota message, the queue event, the
preempting account in ``state_dump()``. Every test ends by running every
registered invariant with a lifecycle recorder attached from the start.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_helpers import TT, config
from test_scenario_preemption import PEnv

from scheduler import si
from scheduler.cli import main
from scheduler.config import parse_config
from scheduler.dialect import change_detail
from scheduler.si import today

MSG = "preempting allocations to enforce new max quota for queue : "
SWITCH = "    preemption: {quotapreemptionenabled: true}\n"


def leaf_yaml(max_mem: int, delay: str = "10s", guaranteed: str = "") -> str:
    props = f"\n  properties: {{quota.preemption.delay: {delay}}}" if delay else ""
    g = f", guaranteed: {{memory: {guaranteed}}}" if guaranteed else ""
    return f"- name: leaf\n  resources: {{max: {{memory: {max_mem}}}{g}}}{props}\n"


def running_leaf(sizes: list[int], *, switch: str = SWITCH, delay: str = "10s",
                 guaranteed: str = "") -> PEnv:
    """``leaf`` (max 100) running one allocation per size, each its own ask."""
    env = PEnv(config(leaf_yaml(100, delay, guaranteed), extra=switch))
    env.vnode("node-1", 1000)
    env.add_app("app-1", "root.leaf")
    for i, size in enumerate(sizes):
        env.pask("app-1", f"ask{i + 1}", size, priority=len(sizes) - i, other=None)
        env.clock.advance(1.0)
    assert env.schedule() == len(sizes)
    return env


def lower(env: PEnv, max_mem: int, *, switch: str = SWITCH, delay: str = "10s",
          guaranteed: str = "") -> None:
    env.update_config(config(leaf_yaml(max_mem, delay, guaranteed), extra=switch))


def keys(env: PEnv) -> list[str]:
    return [r.allocation_key for r in env.preempted()]


def test_lowered_max_preempts_after_the_delay() -> None:
    """``TestQuotaChangeTryPreemption`` "suitable victims available" (objects/
    quota_preemptor_test.go) with ``TestTriggerQuotaPreemption`` (scheduler_test.go): the
    lower priority of two fitting victims goes once the delay passed, with the quota
    message, counted as preempting until the RM confirms; a queue event says so."""
    env = running_leaf([10, 8])
    lower(env, 10)
    env.advance(9.0)
    assert keys(env) == []
    env.advance(1.0)
    assert keys(env) == ["ask2"]
    assert env.preempted()[0].message == MSG + "root.leaf"
    assert env.preempting("root.leaf") == {"memory": 8}
    events = [e for e in env.shim.events if e.type == si.EventRecordType.QUEUE
              and e.message.startswith("Quota Preemption results summary")]
    assert [e.message for e in events] == [
        "Quota Preemption results summary: preemptable resources: map[memory:8], claimed "
        "resources: map[memory:8], selected victims: 2, preempted victims: 1"]
    assert change_detail(events[0]) == today.EventChangeDetail.QUEUE_PREEMPTION
    env.confirm_all()
    assert env.preempting("root.leaf") == {}
    env.advance(60.0)
    assert keys(env) == ["ask2"]                  # ran once: the start time is cleared
    assert env.violations() == []


def test_oversized_victims_are_skipped() -> None:
    """``TestQuotaChangeTryPreemption`` "skip over sized victims": a victim larger than what
    is left is passed over for a smaller one."""
    env = running_leaf([11, 9])
    lower(env, 10)
    env.advance(10.0)
    assert keys(env) == ["ask2"]
    assert env.violations() == []


def test_guarantee_caps_the_amount() -> None:
    """``TestQuotaChangeGetPreemptableResource`` (quota_preemptor_test.go): the amount is
    capped by how far an ancestor sits above its guarantee (queue.go
    ``GetPreemptableResource``), so the parent is not taken below it."""
    def text(max_mem: int) -> str:
        return config(
            "- name: parent\n  resources: {guaranteed: {memory: 25}}\n  queues:\n"
            f"    - name: leaf\n      resources: {{max: {{memory: {max_mem}}}}}\n"
            "      properties: {quota.preemption.delay: 10s}\n    - name: other\n",
            extra=SWITCH)
    env = PEnv(text(100))
    env.vnode("node-1", 1000)
    env.add_app("app-1", "root.parent.leaf")
    for i in range(4):
        env.pask("app-1", f"ask{i + 1}", 5, priority=4 - i, other=None)
    env.add_app("app-2", "root.parent.other")
    env.pask("app-2", "big", 10, other=None)
    env.schedule()
    env.update_config(text(10))                   # 10 over the max, 5 over the guarantee
    env.advance(10.0)
    assert keys(env) == ["ask4"]
    assert env.violations() == []


def test_partition_switch_off_keeps_everything() -> None:
    """``TestTriggerQuotaPreemption``: with ``quotapreemptionenabled`` off nothing is
    preempted; turning it on later enforces the clock already running."""
    env = running_leaf([10, 8], switch="")
    lower(env, 10, switch="")
    env.advance(30.0)
    assert keys(env) == []
    lower(env, 10)
    env.schedule()
    assert keys(env) == ["ask2"]
    assert env.violations() == []


def test_delay_zero_or_invalid_is_off() -> None:
    """``TestQuotaPreemptionSettings`` (objects/queue_test.go): no delay, an invalid one or
    one not positive never starts the clock."""
    for delay in ("", "bad", "0s", "-5s"):
        env = running_leaf([10, 8], delay=delay)
        lower(env, 10, delay=delay)
        env.advance(3600.0)
        assert keys(env) == [], delay
        assert env.violations() == []


def test_changed_delay_shifts_the_clock() -> None:
    """``TestQuotaPreemptionSettings``: a changed delay moves a running clock by the
    difference; setting it to 0 clears it."""
    env = running_leaf([10, 8])
    lower(env, 10)                                       # due at +10 s
    lower(env, 10, delay="30s")                          # due at +30 s
    env.advance(29.0)
    assert keys(env) == []
    env.advance(1.0)
    assert keys(env) == ["ask2"]
    env = running_leaf([10, 8])
    lower(env, 10)
    lower(env, 10, delay="")
    env.advance(60.0)
    assert keys(env) == []
    assert env.violations() == []


def test_usage_back_within_max_clears_the_clock() -> None:
    """``TestTriggerQuotaPreemption``: usage that drops within the new max before the delay
    ends preempts nothing."""
    env = running_leaf([10, 8])
    lower(env, 10)
    env.release("app-1", env.uuid_of("app-1", "ask1"), TT.STOPPED_BY_RM)
    env.advance(10.0)
    assert keys(env) == []
    assert env.violations() == []


def test_parent_spreads_over_children() -> None:
    """``TestQuotaChangeTryPreemptionForParentQueue`` (quota_preemptor_test.go): a parent's
    amount is shared by its children by their usage, each leaf choosing its own victims."""
    def text(max_mem: int) -> str:
        return config(
            f"- name: parent\n  resources: {{max: {{memory: {max_mem}}}}}\n"
            "  properties: {quota.preemption.delay: 5s}\n  queues:\n"
            "    - name: a\n    - name: b\n", extra=SWITCH)
    env = PEnv(text(100))
    env.vnode("node-1", 1000)
    for leaf in ("a", "b"):
        env.add_app(f"app-{leaf}", f"root.parent.{leaf}")
        for i in range(3):
            env.pask(f"app-{leaf}", f"{leaf}{i}", 10, other=None)
    env.schedule()
    env.update_config(text(40))                         # 60 used, 20 over: 10 from each
    env.advance(5.0)
    assert sorted(r.message for r in env.preempted()) == [MSG + "root.parent"] * 2
    assert env.preempting("root.parent.a") == {"memory": 10}
    assert env.preempting("root.parent.b") == {"memory": 10}
    assert env.violations() == []


def test_required_node_allocations_are_not_victims() -> None:
    """``TestQuotaChangeFilterVictims`` (quota_preemptor_test.go): an allocation with a
    required node is never a quota-preemption victim."""
    env = PEnv(config(leaf_yaml(100), extra=SWITCH))
    env.vnode("node-1", 1000)
    env.add_app("app-1", "root.leaf")
    env.pask("app-1", "ds", 10, other=None, node="node-1")
    env.pask("app-1", "plain", 10, other=None)
    env.schedule()
    lower(env, 5)
    env.advance(10.0)
    assert keys(env) == ["plain"]
    assert env.violations() == []


def test_validate_config_accepts_the_switches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``TestQuotaPreemptionSettings`` and configvalidator.go: YuniKorn's names, the
    partition switch and the queue property, are a valid configuration."""
    path = tmp_path / "queues.yaml"
    path.write_text(config(leaf_yaml(10, "30s"), extra=SWITCH), encoding="utf-8")
    assert main(["validate-config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "valid" in out and "invalid" not in out + err
    assert parse_config(path.read_text()).partitions[0].preemption.quotapreemptionenabled
