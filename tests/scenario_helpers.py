"""Shared set-up for the scenario tests: one scheduler, one recording shim, one clock.

Every scenario drives the core through its public API only (``Scheduler``
methods with SI messages) and asserts what the shim was told and what
``state_dump()`` shows. Resources are memory-only unless a test needs vcore,
so that fair shares and quotas are easy to compute by hand.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from scheduler import Scheduler, si
from scheduler.clock import ManualClock
from scheduler.testing import RecordingShim

RM = "rm-1"
TT = si.TerminationType
NA = si.NodeAction
SS = si.SchedulingState

# Two leaf queues under root; everybody may submit.
CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: b
"""


def config(queues_yaml: str, *, root_acl: str | None = '"*"', extra: str = "") -> str:
    """A one-partition config whose root holds ``queues_yaml`` (indented 8 spaces)."""
    acl = f"        submitacl: {root_acl}\n" if root_acl is not None else ""
    body = "\n".join("        " + line if line.strip() else line
                     for line in queues_yaml.strip("\n").splitlines())
    return (
        "partitions:\n"
        "  - name: default\n"
        f"{extra}"
        "    queues:\n"
        "      - name: root\n"
        f"{acl}"
        "        queues:\n"
        f"{body}\n"
    )


def res(**quantities: int) -> si.Resource:
    return si.Resource.of(**quantities)


def mem(n: int) -> dict[str, int]:
    """A memory-only resource as the dump shows it (zero is the empty dict)."""
    return {"memory": n} if n else {}


class Env:
    """A registered RM with a recording shim and a manual clock."""

    def __init__(
        self,
        config_text: str = CONFIG,
        *,
        rm_id: str = RM,
        predicates: Callable[[si.PredicatesArgs], bool] | None = None,
    ) -> None:
        self.clock = ManualClock(start=0.0)
        self.api = Scheduler(clock=self.clock)
        self.shim = RecordingShim(predicates)
        self.rm = rm_id
        self.register(config_text)

    # -- RM -------------------------------------------------------------------
    def register(self, config_text: str = CONFIG, shim: Any = None) -> None:
        self.api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id=self.rm, config=config_text),
            shim if shim is not None else self.shim,
        )

    def update_config(self, config_text: str) -> None:
        self.api.update_configuration(
            si.UpdateConfigurationRequest(rm_id=self.rm, config=config_text))

    def schedule(self) -> int:
        return self.api.schedule()

    def advance(self, seconds: float) -> int:
        """Move the clock and run one ``schedule()`` (timers fire only there)."""
        self.clock.advance(seconds)
        return self.api.schedule()

    def wait_to_reserve(self) -> int:
        """Let the reservation delay of every ask sent so far pass, and run one cycle."""
        return self.advance(self.api.reservation_delay)

    # -- applications ---------------------------------------------------------
    def add_app(
        self,
        app_id: str,
        queue: str = "root.a",
        *,
        user: str = "alice",
        groups: Iterable[str] = (),
        partition: str = "default",
        rm_id: str | None = None,
        placeholder_ask: si.Resource | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.api.update_application(si.ApplicationRequest(
            rm_id=rm_id or self.rm,
            new=[si.AddApplicationRequest(
                application_id=app_id, queue_name=queue, partition_name=partition,
                ugi=si.UserGroupInformation(user=user, groups=list(groups)),
                placeholder_ask=placeholder_ask, tags=tags or {})]))

    def remove_app(self, app_id: str) -> None:
        self.api.update_application(si.ApplicationRequest(
            rm_id=self.rm, remove=[si.RemoveApplicationRequest(application_id=app_id)]))

    # -- asks -----------------------------------------------------------------
    def ask(
        self,
        app_id: str,
        key: str,
        memory: int = 10,
        *,
        vcore: int = 0,
        repeats: int = 1,
        priority: int = 0,
        timeout_ms: int = 0,
        partition: str = "default",
        placeholder: bool = False,
        task_group: str = "",
        rm_id: str | None = None,
    ) -> None:
        quantities = {"memory": memory}
        if vcore:
            quantities["vcore"] = vcore
        self.api.update_allocation(si.AllocationRequest(rm_id=rm_id or self.rm, asks=[
            si.AllocationAsk(
                allocation_key=key, application_id=app_id, partition_name=partition,
                resource_ask=si.Resource.of(**quantities), max_allocations=repeats,
                priority=priority, execution_timeout_milli_seconds=timeout_ms,
                placeholder=placeholder, task_group_name=task_group)]))

    def release(
        self, app_id: str, uuid: str, ttype: si.TerminationType = TT.STOPPED_BY_RM,
        *, partition: str = "default",
    ) -> None:
        self.api.update_allocation(si.AllocationRequest(
            rm_id=self.rm,
            releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(application_id=app_id, uuid=uuid, termination_type=ttype,
                                     partition_name=partition)])))

    def release_ask(
        self, app_id: str, key: str, ttype: si.TerminationType = TT.STOPPED_BY_RM,
    ) -> None:
        self.api.update_allocation(si.AllocationRequest(
            rm_id=self.rm,
            releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(application_id=app_id, allocation_key=key,
                                        termination_type=ttype)])))

    # -- nodes ----------------------------------------------------------------
    def add_node(
        self,
        node_id: str,
        memory: int = 100,
        *,
        vcore: int = 0,
        occupied: si.Resource | None = None,
        existing: Iterable[si.Allocation] = (),
        rm_id: str | None = None,
    ) -> None:
        quantities = {"memory": memory}
        if vcore:
            quantities["vcore"] = vcore
        self.api.update_node(si.NodeRequest(rm_id=rm_id or self.rm, nodes=[si.NodeInfo(
            node_id=node_id, action=NA.CREATE,
            schedulable_resource=si.Resource.of(**quantities),
            occupied_resource=occupied, existing_allocations=list(existing))]))

    def node_action(self, node_id: str, action: si.NodeAction, **fields: Any) -> None:
        self.api.update_node(si.NodeRequest(rm_id=self.rm, nodes=[
            si.NodeInfo(node_id=node_id, action=action, **fields)]))

    # -- the dump -------------------------------------------------------------
    def dump(self) -> dict[str, Any]:
        return copy.deepcopy(self.api.state_dump())

    def partition(self, name: str = "default") -> dict[str, Any]:
        parts = [p for p in self.api.state_dump()["partitions"] if p["name"] == name]
        assert len(parts) == 1, f"partition {name} not in the dump"
        return parts[0]

    def queue(self, path: str) -> dict[str, Any] | None:
        return next((q for q in self.partition()["queues"] if q["path"] == path), None)

    def app(self, app_id: str) -> dict[str, Any] | None:
        return next((a for a in self.partition()["applications"]
                     if a["application_id"] == app_id), None)

    def node(self, node_id: str) -> dict[str, Any] | None:
        return next((n for n in self.partition()["nodes"] if n["node_id"] == node_id), None)

    def app_state(self, app_id: str) -> str | None:
        app = self.app(app_id)
        return None if app is None else app["state"]

    # -- what the shim was told ------------------------------------------------
    def uuids(self, app_id: str | None = None) -> list[str]:
        return [a.uuid for a in self.shim.allocations
                if app_id is None or a.application_id == app_id]

    def allocs_by(self, app_id: str) -> list[si.Allocation]:
        return [a for a in self.shim.allocations if a.application_id == app_id]

    def app_states(self, app_id: str) -> list[str]:
        return [u.state for u in self.shim.app_updates if u.application_id == app_id]

    def sched_states(self, app_id: str, key: str) -> list[si.SchedulingState]:
        return [s.state for s in self.shim.scheduling_states
                if s.application_id == app_id and s.allocation_key == key]


def run_to_completion(env: Env, app_id: str = "app-1", node_id: str = "node-1") -> None:
    """On a new node, an application runs one pod that ends; the completing timeout passes
    and it is Completed (kept until it expires)."""
    env.add_node(node_id, 100)
    env.add_app(app_id)
    env.ask(app_id, "k", 10)
    env.schedule()
    env.release(app_id, env.uuids(app_id)[0])
    env.advance(30)
    assert env.app_state(app_id) == "Completed"


def assert_node_rejected(env: Env, node_id: str, existing: list[si.Allocation],
                         fragment: str) -> None:
    """The node registering with ``existing`` is refused, its reason naming ``fragment``,
    and nothing changes."""
    before = env.dump()
    env.shim.clear()
    env.add_node(node_id, 100, existing=existing)
    [rej] = env.shim.rejected_nodes
    assert rej.node_id == node_id and fragment in rej.reason
    assert env.shim.accepted_nodes == []
    assert env.api.state_dump() == before


def alloc_msg(
    app_id: str, key: str, uuid: str, node_id: str, memory: int,
    *, task_group: str = "", placeholder: bool = False,
) -> si.Allocation:
    """An allocation as a shim reports it on node CREATE (recovery)."""
    return si.Allocation(
        allocation_key=key, uuid=uuid, node_id=node_id, application_id=app_id,
        resource_per_alloc=si.Resource.of(memory=memory), task_group_name=task_group,
        placeholder=placeholder)
