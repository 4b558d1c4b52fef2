"""The same calls with the same clock give byte-identical callback traffic and dumps.

A rich scenario (several queues, applications and nodes, repeats, priorities,
predicates, a reservation, an execution timeout, a gang replacement, RM and
whole-application releases, a node decommission, a configuration reload, a
lost connection and a recovery after re-registering, completion and expiry)
is run and every callback message is serialised with
``model_dump(mode="json", by_alias=True)`` and ``json.dumps(sort_keys=True)``,
together with ``state_dump()`` after every step.

Run twice in-process, and in two subprocesses with different
``PYTHONHASHSEED`` values (which changes the iteration order of sets of
strings), the outputs must be identical byte for byte.

Run as a script (``python tests/test_determinism.py``) it prints the scenario's
output, which is what the subprocess test does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scheduler import ManualClock, Scheduler, si

TT = si.TerminationType
RM = "rm-det"

CONFIG = """
partitions:
  - name: default
    nodesortpolicy:
      type: binpacking
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources:
              guaranteed: {memory: 200, vcore: 20}
              max: {memory: 600, vcore: 60}
          - name: b
            properties:
              application.sort.policy: fair
            queues:
              - name: b1
                resources:
                  max: {memory: 300}
              - name: b2
          - name: c
            properties:
              application.sort.policy: stateaware
          - name: g
            resources:
              max: {memory: 500}
"""

RELOADED = CONFIG.replace("max: {memory: 300}", "max: {memory: 250}")


def _dump(message: Any) -> Any:
    if isinstance(message, list):
        return [_dump(m) for m in message]
    return message.model_dump(mode="json", by_alias=True)


class TrafficShim:
    """Serialises every callback (predicates included) in the order it arrives."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.allocations: dict[str, si.Allocation] = {}
        self.to_confirm: list[si.AllocationRelease] = []

    def _record(self, method: str, message: Any) -> None:
        self.lines.append(json.dumps({"callback": method, "message": _dump(message)},
                                     sort_keys=True))

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self._record("update_allocation", response)
        for a in response.new:
            self.allocations[a.uuid] = a
        for rel in response.released:
            if rel.termination_type == TT.STOPPED_BY_RM:
                self.allocations.pop(rel.uuid, None)
            else:
                self.to_confirm.append(rel)

    def update_application(self, response: si.ApplicationResponse) -> None:
        self._record("update_application", response)

    def update_node(self, response: si.NodeResponse) -> None:
        self._record("update_node", response)

    def send_event(self, events: list[si.EventRecord]) -> None:
        self._record("send_event", events)

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self._record("update_container_scheduling_state", request)

    def predicates(self, args: si.PredicatesArgs) -> bool:
        self._record("predicates", args)
        # "picky" asks refuse node n-2.
        return not (args.allocation_key.startswith("picky") and args.node_id == "n-2")


class Scenario:
    def __init__(self) -> None:
        self.clock = ManualClock(start=1_700_000_000.0)
        self.api = Scheduler(clock=self.clock)
        self.shim = TrafficShim()
        self.out: list[str] = []
        self.priorities = True

    # -- recording -----------------------------------------------------------
    def step(self, label: str) -> None:
        self.out.append(f"## {label} @ {self.clock.now()!r}")
        self.out.extend(self.shim.lines)
        self.shim.lines.clear()
        self.out.append("dump " + json.dumps(self.api.state_dump(), sort_keys=True))

    # -- requests --------------------------------------------------------------
    def register(self, config: str = CONFIG) -> None:
        self.api.register_resource_manager(si.RegisterResourceManagerRequest(
            rm_id=RM, policy_group="queues", config=config), self.shim)

    def nodes(self, *specs: tuple[str, int, int, int], existing: bool = False) -> None:
        infos = []
        for node_id, memory, vcore, occupied in specs:
            held = [a for a in self.shim.allocations.values() if a.node_id == node_id] \
                if existing else []
            infos.append(si.NodeInfo(
                node_id=node_id, action=si.NodeAction.CREATE,
                schedulable_resource=si.Resource.of(memory=memory, vcore=vcore),
                occupied_resource=si.Resource.of(memory=occupied) if occupied else None,
                attributes={"zone": f"z{len(node_id) % 2}"},
                existing_allocations=sorted(held, key=lambda a: a.uuid)))
        self.api.update_node(si.NodeRequest(rm_id=RM, nodes=infos))

    def node_action(self, node_id: str, action: si.NodeAction) -> None:
        self.api.update_node(si.NodeRequest(rm_id=RM, nodes=[
            si.NodeInfo(node_id=node_id, action=action)]))

    def apps(self, *specs: tuple[str, str, str], placeholder: dict[str, int] | None = None,
             timeout_ms: int = 0) -> None:
        self.api.update_application(si.ApplicationRequest(rm_id=RM, new=[
            si.AddApplicationRequest(
                application_id=app_id, queue_name=queue,
                ugi=si.UserGroupInformation(user=user, groups=["dev", "ops"]),
                tags={"namespace": queue.rsplit(".", 1)[-1], "owner": user},
                placeholder_ask=si.Resource.of(**placeholder) if placeholder else None,
                execution_timeout_milli_seconds=timeout_ms)
            for app_id, queue, user in specs]))

    def ask(self, app_id: str, key: str, memory: int, vcore: int = 1, repeats: int = 1,
            priority: int = 0, timeout_ms: int = 0, task_group: str = "",
            placeholder: bool = False) -> None:
        self.api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
            allocation_key=key, application_id=app_id,
            resource_ask=si.Resource.of(memory=memory, vcore=vcore), max_allocations=repeats,
            priority=priority if self.priorities else 0, execution_timeout_milli_seconds=timeout_ms,
            tags={"k": key}, task_group_name=task_group, placeholder=placeholder)]))

    def release(self, app_id: str, uuid: str = "") -> None:
        self.api.update_allocation(si.AllocationRequest(
            rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[
                si.AllocationRelease(application_id=app_id, uuid=uuid,
                                     termination_type=TT.STOPPED_BY_RM, message="done")])))

    def confirm_all(self) -> int:
        pending, self.shim.to_confirm = self.shim.to_confirm, []
        for rel in pending:
            self.api.update_allocation(si.AllocationRequest(
                rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[rel])))
            self.shim.allocations.pop(rel.uuid, None)
        return len(pending)

    def schedule(self) -> int:
        made = self.api.schedule()
        self.out.append(f"schedule -> {made}")
        return made

    def uuids(self, app_id: str) -> list[str]:
        return sorted(u for u, a in self.shim.allocations.items() if a.application_id == app_id)


def run_scenario(priorities: bool = True) -> str:
    """The scenario's traffic and dumps; ``priorities=False`` sends every ask at priority 0."""
    s = Scenario()
    s.priorities = priorities
    s.register()
    s.step("register")

    s.nodes(("n-1", 200, 20, 0), ("n-2", 200, 20, 20), ("n-3", 100, 10, 0),
            ("n-4", 400, 40, 0), ("n-5", 100, 10, 0))
    s.nodes(("n-1", 50, 5, 0))  # duplicate: rejected
    s.step("nodes")

    users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    s.apps(("app-a1", "root.a", users[0]), ("app-a2", "root.a", users[1]),
           ("app-b1", "root.b.b1", users[2]), ("app-b2", "root.b.b2", users[3]),
           ("app-b3", "root.b.b2", users[4]), ("app-c1", "root.c", users[5]),
           ("app-c2", "root.c", users[0]), ("app-bad", "root.b", users[1]),
           ("app-bad2", "root.nosuch", users[2]))
    s.apps(("app-g1", "root.g", users[3]), placeholder={"memory": 60, "vcore": 6},
           timeout_ms=600_000)
    s.step("apps")

    s.ask("app-a1", "web", 10, repeats=5)
    s.ask("app-a1", "urgent", 20, repeats=2, priority=100)
    s.ask("app-a2", "batch", 30, repeats=4, priority=-5)
    s.ask("app-b1", "etl", 25, repeats=6, timeout_ms=45_000)
    s.ask("app-b2", "picky-1", 15, repeats=3)
    s.ask("app-b3", "svc", 5, vcore=2, repeats=7)
    s.ask("app-c1", "first", 40, repeats=2)
    s.ask("app-c2", "second", 40, repeats=2)
    s.ask("app-g1", "ph", 20, vcore=2, repeats=3, task_group="tg", placeholder=True)
    s.ask("ghost-app", "x", 10)
    s.ask("app-a1", "zero", 0, vcore=0)
    s.step("asks")
    s.schedule()
    s.step("schedule 1")

    # A big ask no node has room for: a reservation.
    s.ask("app-b2", "huge", 300, vcore=2, priority=50)
    s.schedule()
    s.step("reservation")

    # Gang: real asks replace placeholders; the shim confirms the replacements.
    s.ask("app-g1", "real", 20, vcore=2, repeats=2, task_group="tg")
    s.schedule()
    s.step("replacement started")
    s.confirm_all()
    s.schedule()
    s.step("replacement confirmed")

    # Execution timeout of app-b1's allocations: TIMEOUT releases, then confirmed.
    s.clock.advance(46.0)
    s.schedule()
    s.step("execution timeout")
    s.confirm_all()
    s.step("timeouts confirmed")

    # RM releases: one allocation, then a whole application.
    s.release("app-a1", s.uuids("app-a1")[0])
    s.release("app-c1")
    s.release("app-a2", "no-such-uuid")
    s.schedule()
    s.step("releases")

    # Hot reload: a lower max on root.b.b1.
    s.api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=RELOADED))
    s.schedule()
    s.step("reload")

    # Node lifecycle: drain, restore, decommission.
    s.node_action("n-5", si.NodeAction.DRAIN_NODE)
    s.node_action("n-5", si.NodeAction.DRAIN_TO_SCHEDULABLE)
    s.node_action("n-4", si.NodeAction.DECOMISSION)
    s.node_action("n-9", si.NodeAction.DRAIN_NODE)
    s.schedule()
    s.step("decommission")

    # Lose the connection; a request while paused is refused.
    s.api.connection_lost(RM)
    s.ask("app-a1", "while-paused", 10)
    s.step("paused")

    # Re-register and resync: apps, nodes with their existing allocations, asks.
    held = sorted({a.application_id for a in s.shim.allocations.values()})
    s.register(RELOADED)
    s.step("re-register")
    queues = {"app-a1": "root.a", "app-a2": "root.a", "app-b1": "root.b.b1",
              "app-b2": "root.b.b2", "app-b3": "root.b.b2", "app-c1": "root.c",
              "app-c2": "root.c", "app-g1": "root.g"}
    s.apps(*[(a, queues[a], "resync") for a in held])
    s.nodes(("n-1", 200, 20, 0), ("n-2", 200, 20, 20), ("n-3", 100, 10, 0),
            ("n-5", 100, 10, 0), existing=True)
    s.step("recovered")
    s.ask("app-a1", "web-2", 10, repeats=3, priority=1)
    s.ask("app-b3", "svc-2", 5, repeats=2)
    s.schedule()
    s.step("after recovery")

    # Everything finishes: release all, then completing, completed and expiry.
    for app_id in sorted({a.application_id for a in s.shim.allocations.values()}):
        s.release(app_id)
    s.step("all released")
    s.clock.advance(31.0)
    s.schedule()
    s.step("completing timeout")
    s.confirm_all()
    s.clock.advance(31.0)
    s.schedule()
    s.step("completed")
    s.clock.advance(3 * 24 * 3600.0 + 1)
    s.schedule()
    s.step("expired")
    return "\n".join(s.out) + "\n"


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


def _run_in_subprocess(hash_seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve())], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _lines(text: str, callback: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record["callback"] == callback:
                out.append(record["message"])
    return out


def test_scenario_exercises_what_it_claims() -> None:
    """The scenario really reaches the features it is meant to keep deterministic."""
    text = run_scenario()
    allocs = _lines(text, "update_allocation")
    released = [r for m in allocs for r in m.get("released") or []]
    types = {r["terminationType"] for r in released}
    assert {"TIMEOUT", "STOPPED_BY_RM", "PLACEHOLDER_REPLACED"} <= {
        t if isinstance(t, str) else TT(t).name for t in types}, types
    new = [a for m in allocs for a in m.get("new") or []]
    assert len(new) >= 20
    assert any(a["placeholder"] for a in new)
    assert any(a["allocationKey"] == "real" for a in new)
    assert [r for m in allocs for r in m.get("rejected") or []], "no ask was rejected"
    states = [s["state"] for s in _lines(text, "update_container_scheduling_state")]
    assert any("RESERVED" in str(s) or s == 2 for s in states), states
    assert _lines(text, "predicates")
    app_states = {u["state"] for m in _lines(text, "update_application")
                  for u in m.get("updated") or []}
    assert {"Accepted", "Running", "Completing", "Completed", "Expired"} <= app_states
    assert any(r["nodeID"] == "n-1" for m in _lines(text, "update_node")
               for r in m.get("rejected") or [])
    events = [e["message"] for batch in _lines(text, "send_event") for e in batch]
    assert any("recovered" in e for e in events), "no allocation was recovered"
    dumps = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("dump ")]
    assert any(rm["state"] == "Paused" for d in dumps for rm in d["rms"])
    assert any(n["node_id"] == "n-4" for n in dumps[1]["partitions"][0]["nodes"])
    assert not any(n["node_id"] == "n-4" for n in dumps[-1]["partitions"][0]["nodes"])
    assert any(n["reserved"] for d in dumps for p in d["partitions"] for n in p["nodes"])


def test_same_calls_same_clock_give_identical_traffic_in_process() -> None:
    first = run_scenario()
    second = run_scenario()
    assert first.encode() == second.encode()
    assert len(first.splitlines()) > 50


def test_identical_across_hash_seeds_in_subprocesses() -> None:
    """Different PYTHONHASHSEED: any decision taken from a set of strings would show."""
    zero = _run_in_subprocess("0")
    other = _run_in_subprocess("12345")
    assert zero, "the subprocess printed nothing"
    if zero != other:
        a, b = zero.splitlines(), other.splitlines()
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                     min(len(a), len(b)))
        context = a[max(0, first - 3):first]
        raise AssertionError(
            f"output differs at line {first + 1} (context {context}):\n"
            f"  seed 0:     {a[first] if first < len(a) else '<end>'}\n"
            f"  seed 12345: {b[first] if first < len(b) else '<end>'}")
    assert zero.encode() == other.encode()
    assert zero.encode() == run_scenario().encode()


def test_allocation_uuids_are_not_random() -> None:
    """uuids depend only on the calls: two fresh schedulers hand out the same ones."""
    def uuids() -> list[str]:
        text = run_scenario()
        return [a["UUID"] for m in _lines(text, "update_allocation") for a in m.get("new") or []]

    first = uuids()
    assert first == uuids()
    assert len(first) == len(set(first)), "a uuid was handed out twice"


if __name__ == "__main__":
    sys.stdout.write(run_scenario())


ZERO_PRIORITY_SHA256 = "f5306f5065d6c50c6762501519f6c6e1a7453877bfb5bea0a948f99f8dda99d6"
"""The scenario with every ask at priority 0: priority then decides nothing, so the
output is what the core answers without priority scheduling. What in it is not about
priority: every queue's dump has ``preempting`` and every allocation ``preempted``; queues
tied on usage go by more pending first (YuniKorn's ``sortQueues...``,
``objects/sorters.go``), so root.b, pending more than root.a while neither uses anything,
takes the first node before it; app-b2's ``huge`` ask reserves n-4 only at the first cycle
2 s after its arrival (YuniKorn's reservation delay; reported SKIPPED, waiting, before),
and is told one FAILED 'waiting for cluster resources' then (a search found no room for
it); the real ask of a started placeholder swap is off the pending totals (``app-g1`` and
its queue path, in the three dumps taken during a swap)."""


def test_zero_priorities_schedule_exactly_as_before_priority_scheduling() -> None:
    """Behaviour 3.4 R5: with every priority 0, no offsets and the default properties,
    every callback and every dump is byte for byte what the core produced before it
    sorted by priority (but for queues tied on usage going by more pending first, see
    ``ZERO_PRIORITY_SHA256``). Change the hash only for a change meant to alter this output,
    and say why in its commit."""
    import hashlib

    text = run_scenario(priorities=False)
    assert hashlib.sha256(text.encode()).hexdigest() == ZERO_PRIORITY_SHA256
