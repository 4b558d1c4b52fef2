"""The gang design's three flows, run on the real core and written down as traces.

``001`` draws three flows between shim and core: the
generic flow ("Generic flow", "Scheduler logic changes"), the placeholder
timeout ("Placeholder asks pending", gang_timeout) and the cleanup of an
application ("Allocated placeholders", gang_clean_up). Each function here
plays one of them through the public API with a manual clock, checks every
invariant after every step, and returns the trace: every message the shim
sent and every answer the core gave. ``render()`` turns the traces into
``docs/gang.md`` (Mermaid sequence diagrams plus the application's states),
so the page shows what the code does, not what someone remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import statemachines
from invariants.properties.catalog import CheckContext, check_all
from invariants.properties.recorder import LifecycleRecorder
from scheduler import ManualClock, Scheduler, si
from scheduler.testing import RecordingShim
from statemachines.diagrams import mermaid_block

RM = "rm-1"
TT = si.TerminationType
CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: spark
            resources:
              max: {memory: 100}
"""


@dataclass
class Trace:
    """One flow: a title, the seed section, and the messages in order."""

    title: str
    seed: str
    steps: list[tuple[str, str, str]] = field(default_factory=list)
    states: list[str] = field(default_factory=list)


class _Player:
    """Drives one scheduler, records messages both ways, checks invariants each step."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.clock = ManualClock(start=0.0)
        self.api = Scheduler(clock=self.clock)
        self.recorder = LifecycleRecorder(self.api)
        self.shim = RecordingShim()
        self.api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id=RM, config=CONFIG), self.shim)
        self.shim.clear()

    def call(self, note: str, fn: Callable[[], Any]) -> None:
        self.trace.steps.append(("Shim", "Core", note))
        fn()
        self._answers()
        problems = check_all(CheckContext(self.api, recorder=self.recorder))
        if problems:
            raise AssertionError("\n".join(str(p) for p in problems))

    def schedule(self) -> None:
        self.call("schedule()", self.api.schedule)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.trace.steps.append(("Core", "Core", f"clock +{seconds:g}s"))
        self.schedule()

    def _answers(self) -> None:
        for kind, msg in self.shim.messages:
            for line in _describe(kind, msg):
                self.trace.steps.append(("Core", "Shim", line))
            if kind == "update_application":
                for u in msg.updated:
                    self.trace.states.append(u.state)
        self.shim.clear()

    # -- shim actions ---------------------------------------------------------
    def add_app(self, style: str, placeholder_memory: int, timeout_ms: int = 0) -> None:
        self.call(
            f"AddApplication app-1 (placeholderAsk memory {placeholder_memory}, {style})",
            lambda: self.api.update_application(si.ApplicationRequest(rm_id=RM, new=[
                si.AddApplicationRequest(
                    application_id="app-1", queue_name="root.spark",
                    ugi=si.UserGroupInformation(user="alice"),
                    placeholder_ask=si.Resource.of(memory=placeholder_memory),
                    gang_scheduling_style=style,
                    execution_timeout_milli_seconds=timeout_ms)])))

    def add_nodes(self, *memories: int) -> None:
        self.call(
            f"NodeInfo CREATE x{len(memories)}",
            lambda: self.api.update_node(si.NodeRequest(rm_id=RM, nodes=[
                si.NodeInfo(node_id=f"node-{i}", action=si.NodeAction.CREATE,
                            schedulable_resource=si.Resource.of(memory=m))
                for i, m in enumerate(memories, 1)])))

    def asks(self, keys: list[str], memory: int, placeholder: bool) -> None:
        kind = "placeholder" if placeholder else "real"
        self.call(
            f"AllocationAsk {', '.join(keys)} ({kind}, task group tg, memory {memory})",
            lambda: self.api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[
                si.AllocationAsk(allocation_key=k, application_id="app-1",
                                 resource_ask=si.Resource.of(memory=memory),
                                 task_group_name="tg", placeholder=placeholder)
                for k in keys])))

    def confirm(self, release: si.AllocationRelease) -> None:
        self.call(
            f"AllocationRelease {release.allocation_key} {release.termination_type.name} "
            "(confirmation)",
            lambda: self.api.update_allocation(si.AllocationRequest(
                rm_id=RM, releases=si.AllocationReleasesRequest(
                    allocations_to_release=[release]))))

    def stop(self, uuid: str, key: str) -> None:
        self.call(
            f"AllocationRelease {key} STOPPED_BY_RM (pod finished)",
            lambda: self.api.update_allocation(si.AllocationRequest(
                rm_id=RM, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    si.AllocationRelease(application_id="app-1", uuid=uuid,
                                         termination_type=TT.STOPPED_BY_RM)]))))


def _describe(kind: str, msg: Any) -> list[str]:
    out: list[str] = []
    if kind == "update_allocation":
        out += [f"Allocation {a.allocation_key} on {a.node_id}"
                f"{' (placeholder)' if a.placeholder else ''}" for a in msg.new]
        out += [f"AllocationRelease {r.allocation_key} {r.termination_type.name}"
                for r in msg.released]
        out += [f"AllocationAskRelease {r.allocation_key} {r.termination_type.name}"
                for r in msg.released_asks]
        out += [f"RejectedAllocationAsk {r.allocation_key}: {r.reason}" for r in msg.rejected]
    elif kind == "update_application":
        out += [f"AcceptedApplication {a.application_id}" for a in msg.accepted]
        out += [f"RejectedApplication {a.application_id}: {a.reason}" for a in msg.rejected]
        out += [f"UpdatedApplication {u.application_id}: {u.state}" for u in msg.updated]
    elif kind == "update_node":
        if msg.accepted:
            out.append(f"AcceptedNode x{len(msg.accepted)}")
    elif kind == "update_container_scheduling_state":
        out.append(f"SchedulingState {msg.allocation_key}: {msg.state.name}")
    return out


def _with_releases(p: _Player, action: Callable[[], None]) -> list[si.AllocationRelease]:
    """Run an action and return the core-initiated releases it produced."""
    found: list[si.AllocationRelease] = []
    original = p.shim.update_allocation

    def spy(response: si.AllocationResponse) -> None:
        found.extend(r for r in response.released if r.termination_type != TT.STOPPED_BY_RM)
        original(response)

    p.shim.update_allocation = spy  # type: ignore[method-assign]
    try:
        action()
    finally:
        p.shim.update_allocation = original  # type: ignore[method-assign]
    return found


def generic_flow() -> Trace:
    """``001`` "Generic flow": placeholders first, then each real pod replaces one."""
    p = _Player(Trace("Generic flow: placeholders, then replacement",
                      "001 'Generic flow', 'Scheduler logic changes' steps 1-6"))
    p.add_nodes(40, 40)
    p.add_app("Soft", 30)
    p.asks(["ph-1", "ph-2", "ph-3"], 10, placeholder=True)
    p.schedule()
    for key in ("driver", "executor-1"):
        p.asks([key], 10, placeholder=False)
        releases = _with_releases(p, p.schedule)
        for rel in releases:
            p.confirm(rel)
    return p.trace


def timeout_flow(style: str) -> Trace:
    """``001`` "Placeholder asks pending": the gang does not fit before the timeout."""
    p = _Player(Trace(f"Placeholder timeout ({style})",
                      "001 'Cleanup', 'Placeholder asks pending' (gang_timeout)"))
    p.add_nodes(25)
    p.add_app(style, 30, timeout_ms=60_000)
    p.asks(["ph-1", "ph-2", "ph-3"], 10, placeholder=True)
    p.schedule()
    releases = _with_releases(p, lambda: p.advance(60))
    for rel in releases:
        p.confirm(rel)
    if style == "Soft":
        p.asks(["driver"], 10, placeholder=False)
        p.schedule()
    return p.trace


def cleanup_flow() -> Trace:
    """``001`` "Allocated placeholders": leftover placeholders released on completion."""
    p = _Player(Trace("Cleanup: leftover placeholders at completion",
                      "001 'Cleanup', 'Allocated placeholders' (gang_clean_up)"))
    p.add_nodes(40)
    p.add_app("Soft", 20)
    p.asks(["ph-1", "ph-2"], 10, placeholder=True)
    p.schedule()
    p.asks(["driver"], 10, placeholder=False)
    for rel in _with_releases(p, p.schedule):
        p.confirm(rel)
    driver = next(a for a in p.api.state_dump()["partitions"][0]["applications"][0]
                  ["allocations"] if a["allocation_key"] == "driver")
    p.stop(driver["uuid"], "driver")
    releases = _with_releases(p, lambda: p.advance(30))
    for rel in releases:
        p.confirm(rel)
    return p.trace


def all_flows() -> list[Trace]:
    return [generic_flow(), timeout_flow("Hard"), timeout_flow("Soft"), cleanup_flow()]


INTRO = """\
# Gang scheduling

<!-- Generated by `yunikorn-fsm flows --markdown` (invariants/commands/flows.py); do not edit -->

How the core implements the gang scheduling design (`001`).
Each trace below was produced by running the flow on the real core
(`invariants/commands/flows.py`) with a manual clock, checking every invariant after
every step; a test regenerates this page and fails when it differs.

- **Submission.** `AddApplicationRequest.placeholderAsk` is the gang's total.
  It is rejected when larger than the max of its queue or of any ancestor, or
  when the queue sorts applications `fair`; `gangSchedulingStyle` is `Hard` or
  `Soft` (default `Soft`).
- **Placeholders** (`placeholder: true` with a `taskGroupName`) are scheduled
  like any ask and counted on queue and node, but on the application as
  `placeholder_allocated`; they do not make the application Running. Asking
  for more placeholders than the `placeholderAsk` is rejected.
- **Replacement.** A real ask of a task group takes the first unreleased
  placeholder of that group: the placeholder is released with
  `PLACEHOLDER_REPLACED` and the real ask is parked. When the shim confirms,
  the placeholder goes and the real ask is allocated on its node, in the same
  call; if it no longer fits there, on another node; if none, it stays
  pending and is reported `FAILED`. A placeholder smaller than the real ask is
  released with `TIMEOUT` instead (YuniKorn's rule), and the next one tried.
- **Placeholder timeout** (`executionTimeoutMilliSeconds` of the application,
  else 15 minutes, from the first placeholder allocated): placeholders and
  pending placeholder asks are released with `TIMEOUT` in one response. `Hard`
  fails the application (`Failing`, then `Failed` when everything is
  confirmed); `Soft` resumes it (`Resuming`, then `Accepted`, scheduled as a
  normal application).
- **Completion.** Placeholders are not active allocations: with no pending ask
  and no real allocation the application waits in `Completing`; when the
  completing timeout fires, leftover placeholders are released with `TIMEOUT`
  and the application is `Completed` once the shim confirmed them.

The lifecycle diagrams are in `docs/lifecycles.md`; the choices where the seed
is silent are in `docs/design-notes.md`.
"""


def render(traces: list[Trace] | None = None) -> str:
    traces = all_flows() if traces is None else traces
    out = [INTRO]
    for t in traces:
        out += ["", f"## {t.title}", "", f"Seed: {t.seed}.", "", "```mermaid",
                "sequenceDiagram", "  participant Shim", "  participant Core"]
        for src, dst, text in t.steps:
            arrow = "->>" if src == "Shim" else ("-->>" if dst == "Shim" else "->>")
            out.append(f"  {src}{arrow}{dst}: {text.replace(';', ',')}")
        out += ["```", "", "Application states reported: "
                + (" -> ".join(t.states) if t.states else "(none)") + "."]
    out += ["", "## The lifecycles these flows move through", "",
            "Generated from `statemachines/` (full tables in `docs/diagrams/`).", ""]
    for lc in (statemachines.APPLICATION, statemachines.ALLOCATION, statemachines.ASK):
        out += [f"### `{lc.name}`", "", lc.description, "", mermaid_block(lc).rstrip(), ""]
    return "\n".join(out).rstrip() + "\n"
