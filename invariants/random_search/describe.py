"""SI traffic in words: one short line per request and per answer, for traces and diagrams."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

import yaml

from scheduler import si
from scheduler.trace import Step


def _res(r: si.Resource | None) -> str:
    if r is None:
        return "{}"
    d = r.as_dict()
    return "{" + " ".join(f"{k}:{d[k]}" for k in sorted(d)) + "}"


_PREFIX = "yunikorn.apache.org/"


def _short(key: str) -> str:
    return key[len(_PREFIX):] if key.lower().startswith(_PREFIX) else key


def _tags(tags: dict[str, str]) -> str:
    """Tags that may decide a rule (a required node, force-create, a namespace), sorted,
    YuniKorn's prefix left out; empty without tags."""
    if not tags:
        return ""
    items = " ".join(f"{_short(k)}={v}" for k, v in sorted(tags.items()))
    return f" tags[{items}]"


def _deciding(priority: int, originator: bool, policy: si.PreemptionPolicy | None,
              tags: dict[str, str]) -> str:
    """An ask's fields that order it or decide its preemption, where they are set."""
    out = f" priority={priority}" if priority else ""
    out += " originator" if originator else ""
    if policy is not None:
        out += (f" preempt(self={'yes' if policy.allow_preempt_self else 'no'}"
                f" other={'yes' if policy.allow_preempt_other else 'no'})")
    return out + _tags(tags)


def _application(a: si.AddApplicationRequest) -> str:
    timeout = a.execution_timeout_milli_seconds
    return (f"AddApplication {a.application_id} queue={a.queue_name!r} user={a.ugi.user}"
            f"{' groups=' + ','.join(a.ugi.groups) if a.ugi.groups else ''}"
            f"{' placeholderAsk=' + _res(a.placeholder_ask) if a.placeholder_ask else ''}"
            f"{' ' + a.gang_scheduling_style if a.gang_scheduling_style else ''}"
            f"{f' placeholderTimeout={timeout}ms' if timeout else ''}"
            f"{' partition=' + a.partition_name if a.partition_name != 'default' else ''}"
            f"{_tags(a.tags)}")


def step(s: Step) -> str:
    """The step as one line, in the SI's terms."""
    req = s.request
    if s.call == "advance":
        return f"clock +{s.seconds:g}s"
    if s.call == "schedule":
        return "schedule()"
    if s.call in ("connection_lost", "unregister_resource_manager"):
        return f"{s.call}({s.rm_id})"
    if s.call == "register_resource_manager":
        lines = len(req.config.splitlines())
        return f"RegisterResourceManager {req.rm_id} (config: {lines} lines)"
    if s.call == "update_configuration":
        return f"UpdateConfiguration {req.rm_id} ({len(req.config)} chars)"
    parts: list[str] = []
    if type(req).__module__ == "scheduler.si.today":
        return _today(s) or s.call
    if s.call == "update_application":
        parts += [_application(a) for a in req.new]
        parts += [f"RemoveApplication {r.application_id}" for r in req.remove]
    elif s.call == "update_node":
        for n in req.nodes:
            extra = f" {_res(n.schedulable_resource)}" if n.schedulable_resource else ""
            if n.attributes:
                extra += " attributes[" + " ".join(
                    f"{_short(k)}={v}" for k, v in sorted(n.attributes.items())) + "]"
            if n.occupied_resource:
                extra += f" occupied {_res(n.occupied_resource)}"
            if n.existing_allocations:
                extra += " recovering " + ", ".join(
                    f"{a.application_id}/{a.allocation_key}"
                    f"{' (placeholder)' if a.placeholder else ''}" for a in n.existing_allocations)
            parts.append(f"NodeInfo {n.node_id} {n.action.name}{extra}")
    elif s.call == "update_allocation":
        for a in req.asks:
            flags = f" taskGroup={a.task_group_name}" if a.task_group_name else ""
            flags += " placeholder" if a.placeholder else ""
            flags += f" timeout={a.execution_timeout_milli_seconds}ms" \
                if a.execution_timeout_milli_seconds else ""
            flags += _deciding(a.priority, a.originator, a.preemption_policy, a.tags)
            parts.append(f"AllocationAsk {a.application_id}/{a.allocation_key} "
                         f"x{a.max_allocations} {_res(a.resource_ask)}{flags}")
        if req.releases is not None:
            parts += [f"AllocationRelease {r.termination_type.name} "
                      f"{r.uuid or '(all of ' + r.application_id + ')'}"
                      for r in req.releases.allocations_to_release]
            parts += [f"AllocationAskRelease {r.termination_type.name} "
                      f"{r.application_id}/{r.allocation_key or '*'}"
                      for r in req.releases.allocation_asks_to_release]
    return "; ".join(parts) or s.call


def _today(s: Step) -> str:
    """A step of today's SI (``scheduler.si.today``): pods and releases by key."""
    req = s.request
    parts: list[str] = []
    if s.call == "update_node":
        parts += [f"NodeInfo {n.node_id} {n.action.name}"
                  f"{' ' + _res(n.schedulable_resource) if n.schedulable_resource else ''}"
                  for n in req.nodes]
    else:
        for a in req.allocations:
            what = ("foreign pod" if "foreign" in a.allocation_tags
                    else "bound pod" if a.node_id else "pod")
            flags = f" taskGroup={a.task_group_name}" if a.task_group_name else ""
            flags += " placeholder" if a.placeholder else ""
            flags += f" on {a.node_id}" if a.node_id else ""
            flags += _deciding(a.priority, a.originator, a.preemption_policy,
                               {k: v for k, v in a.allocation_tags.items() if k != "foreign"})
            parts.append(f"Allocation ({what}) {a.application_id}/{a.allocation_key} "
                         f"{_res(a.resource_per_alloc)}{flags}")
        if req.releases is not None:
            parts += [f"AllocationRelease {r.termination_type.name} "
                      f"{r.application_id}/{r.allocation_key or '*'}"
                      for r in req.releases.allocations_to_release]
    return "[today] " + "; ".join(parts) if parts else ""


def configuration(text: str) -> list[str]:
    """A configuration as readable YAML lines (the checker writes it as one line of JSON,
    which is YAML too); the text as it is when it does not parse."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return text.splitlines()
    if not isinstance(data, dict):
        return text.splitlines()
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).splitlines()


def reload(before: str, after: str) -> list[str]:
    """What a reload changed: the unified diff of the two configurations' YAML lines
    (a line for an unchanged configuration)."""
    diff = list(difflib.unified_diff(configuration(before), configuration(after), lineterm="",
                                     n=1))[2:]
    return diff or ["(configuration unchanged)"]


def answers(kind: str, msg: Any) -> Iterator[str]:
    """What one callback told the shim, a line per item (events are left out)."""
    if kind == "update_allocation":
        for a in msg.new:
            yield (f"Allocation {a.application_id}/{a.allocation_key} on {a.node_id} "
                   f"{_res(a.resource_per_alloc)} uuid={a.uuid}"
                   f"{' (placeholder)' if a.placeholder else ''}")
        for r in msg.released:
            yield f"AllocationRelease {r.termination_type.name} {r.uuid}: {r.message}"
        for r in msg.released_asks:
            yield (f"AllocationAskRelease {r.termination_type.name} "
                   f"{r.application_id}/{r.allocation_key}")
        for r in msg.rejected:
            yield f"RejectedAllocationAsk {r.application_id}/{r.allocation_key}: {r.reason}"
    elif kind == "update_application":
        for a in msg.accepted:
            yield f"AcceptedApplication {a.application_id}"
        for r in msg.rejected:
            yield f"RejectedApplication {r.application_id}: {r.reason}"
        for u in msg.updated:
            yield f"UpdatedApplication {u.application_id}: {u.state}"
    elif kind == "update_node":
        for n in msg.accepted:
            yield f"AcceptedNode {n.node_id}"
        for r in msg.rejected:
            yield f"RejectedNode {r.node_id}: {r.reason}"
    elif kind == "update_container_scheduling_state":
        yield f"SchedulingState {msg.application_id}/{msg.allocation_key}: {msg.state.name}" \
              f" ({msg.reason})"
