"""What one step of a world reached, for the coverage goals.

Each step's ``StepRecord`` (the step, its transitions, the callbacks it drew, and the
facts the goals of ``properties/goals.py`` read), built from the model shim's records and
the state before and after the step, with what coverage remembers across steps (asks seen
waiting or held back, preemptors waiting for room).
"""

from __future__ import annotations

import re
from typing import Protocol

from invariants.modelshim.monitor import ModelShim
from invariants.properties import limits
from invariants.properties import preemptions as preemption
from invariants.properties import priorities as priority
from invariants.properties.coverage import Coverage, StepRecord
from invariants.properties.scheduling import PREEMPTED
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.shim import AllocView, AskView, RMView
from scheduler import ManualClock, Scheduler, si
from scheduler.trace import Step
from statemachines import TransitionRecord

_LIMIT_HELD = re.compile(r"^(user|group) (\S+) (?:would exceed its limit|already runs \d+ "
                         r"application\(s\)) on (\S+)")
"""A scheduling state's reason naming the user or group limit that held an ask back
(``scheduler/ugm.py`` ``over_limit``, ``no_slot``)."""
RESERVED = si.SchedulingState.RESERVED
SKIPPED = si.SchedulingState.SKIPPED


class Observed(Protocol):
    """What of a world the coverage of its steps reads (``modelshim/world.py``)."""

    shim: ModelShim
    api: Scheduler
    clock: ManualClock
    coverage: Coverage | None
    _transitions: list[TransitionRecord]
    _reserved_before: dict[tuple[str, str], dict[tuple[str, str], str]]
    _backoff_before: dict[tuple[str, str, str], float]

    def _backoffs(self) -> dict[tuple[str, str, str], float]: ...


class StepCoverage:
    """The coverage of one world's steps (``World.run`` calls :meth:`observe`)."""

    def __init__(self, world: Observed) -> None:
        self.world = world
        self._reserved: dict[tuple[str, str], str] = {}
        self._held_apps: set[str] = set()
        self._preemptors: set[str] = set()
        """Keys of asks that preempted and wait for the room."""
        self._ph_victims: set[str] = set()
        """Gangs that lost a placeholder to preemption."""
        self._held_asks: set[tuple[str, str]] = set()
        self._waited: set[tuple[str, str]] = set()
        """Asks reported waiting for their reservation delay."""

    def _limit_held(self, state: si.UpdateContainerSchedulingStateRequest) -> set[str]:
        """Which limit held a skipped ask back (coverage): ``user``, ``group``, by name or
        by the wildcard ``*``, and on root, a parent or the leaf; empty for other reasons."""
        found = _LIMIT_HELD.match(state.reason)
        if found is None:
            return set()
        kind, name, path = found.groups()
        rv = next((rv for rv in self.world.shim.rms.values() if not rv.stopped
                   and state.application_id in rv.apps), None)
        if rv is None:
            return set()
        app = rv.apps[state.application_id]
        part = rv.config.partition(app.partition)
        queue = model.queue_at(part, rv.created.get(app.partition, {}), path) \
            if part is not None else None
        named = name != "*" and (kind == "group" or (queue is not None and name in queue.users))
        level = "root" if path == "root" else "leaf" if path == app.path else "parent"
        return {f"{'named' if named else 'wildcard'}_{kind}", f"on_{level}"}

    def _handed_over(self, new: list[si.Allocation]) -> bool:
        """An ask that held a reservation when the call began was placed on another node,
        and a later allocation of the same call on the node it had held."""
        held = {key: node for kept in self.world._reserved_before.values()
                for key, node in kept.items()}
        return any(
            (node := held.get((a.application_id, a.allocation_key))) not in (None, a.node_id)
            and any(b.node_id == node for b in new[i + 1:]) for i, a in enumerate(new))

    def _backoffs_seen(self, new: list[si.Allocation]) -> list[str]:
        """Coverage of application backoff in this cycle: an application backed off
        (``backed_off``); one whose backoff had ended got an allocation (``backoff_ended``)."""
        now = self.world.clock.now()
        out = []
        after = self.world._backoffs()
        if any(v > now and v != self.world._backoff_before.get(k, 0.0) for k, v in after.items()):
            out.append("backed_off")
        ended = {k[2] for k, v in self.world._backoff_before.items() if 0.0 < v <= now}
        if any(a.application_id in ended for a in new):
            out.append("backoff_ended")
        return out

    def _spared(self, record: StepRecord, uuid: str, key: str) -> None:
        """What a victim's node kept running: a pod holding none of the ask's resource
        types, or an older pod of the victim's application and size (newer go first)."""
        for rv in self.world.shim.rms.values():
            victim = rv.allocs.get(uuid)
            ask = next((k for k in rv.asks.values() if k.key == key), None)
            if victim is None or ask is None:
                continue
            wanted = [t for t, x in ask.resource.items() if x > 0]
            for a in rv.allocs.values():
                if a.node != victim.node or a.releasing is not None:
                    continue
                if not any(a.resource.get(t, 0) > 0 for t in wanted):
                    record.state["spared_unshared"] = True
                if a.app == victim.app and a.created < victim.created \
                        and qty.same(a.resource, victim.resource):
                    record.state["spared_older_twin"] = True
            record.state.update(dict.fromkeys(_spared_by_settings(rv, victim, ask), True))

    def observe(self, step: Step, error: BaseException | None) -> None:
        """Record what ``step`` reached (its edges and goals) in the world's coverage."""
        assert self.world.coverage is not None
        record = StepRecord(self.world.shim.read_as or step, self.world._transitions,
                            list(self.world.shim.observed))
        if self.world.shim.today_did:
            record.state["today"] = frozenset(self.world.shim.today_did)
        if error is not None:
            record.state["error"] = str(error)
        for state in record.states(RESERVED):
            node = state.reason.rsplit(" ", 1)[-1]
            self._reserved[(state.application_id, state.allocation_key)] = node
            if (state.application_id, state.allocation_key) in self._waited:
                record.state["waited"] = True
        for state in record.states(SKIPPED):
            if "reservation delay" in state.reason:
                self._waited.add((state.application_id, state.allocation_key))
                record.state["waiting"] = True
            if "maxapplications" in state.reason or state.reason.endswith("its limit"):
                self._held_apps.add(state.application_id)
            if "would exceed its limit" in state.reason:
                self._held_asks.add((state.application_id, state.allocation_key))
            held = self._limit_held(state)
            if held:
                record.state.setdefault("limit_held", set()).update(held)
        preempted_now = {r.uuid for r in record.released() if r.termination_type == PREEMPTED}
        if preempted_now and any(
                a.releasing == PREEMPTED and a.uuid not in preempted_now
                for rv in self.world.shim.rms.values() for a in rv.allocs.values()):
            record.state["preempted_while_releasing"] = True
        if step.call == "schedule" and self._slot_held_reservation():
            record.state["reserved_slot_held"] = True
        if step.call == "schedule" and self._shared_reservation():
            record.state["reservations_shared"] = True
        for rel in record.released():
            if rel.termination_type != PREEMPTED:
                continue
            key = rel.message.rsplit(":", 1)[-1].strip()
            self._preemptors.add(key)
            self._spared(record, rel.uuid, key)
            alloc = next((rv.allocs.get(rel.uuid) for rv in self.world.shim.rms.values()
                          if rel.uuid in rv.allocs), None)
            if alloc is not None and alloc.placeholder:
                self._ph_victims.add(alloc.app)
            if alloc is not None and any(
                    (app := rv.apps.get(alloc.app)) is not None
                    and app.path in rv.created.get(app.partition, {})
                    for rv in self.world.shim.rms.values()):
                record.state["created_victim"] = True
        new = record.new()
        for a in new:
            if a.allocation_key in self._preemptors:
                self._preemptors.discard(a.allocation_key)
                required = any(ask.required_node for rv in self.world.shim.rms.values()
                               if (ask := rv.asks.get((a.application_id, a.allocation_key))))
                record.state["preempted_required" if required else "preempted_for"] = True
            if not a.placeholder and a.application_id in self._ph_victims:
                self._ph_victims.discard(a.application_id)
                record.state["placeholder_preempted_gang_ran"] = True
            if self._reserved.pop((a.application_id, a.allocation_key), None) == a.node_id:
                record.state["honoured"] = True
            if a.application_id in self._held_apps:
                self._held_apps.discard(a.application_id)
                record.state["held_app_started"] = True
            if (a.application_id, a.allocation_key) in self._held_asks:
                self._held_asks.discard((a.application_id, a.allocation_key))
                record.state["held_ask_allocated"] = True
        if step.call == "schedule" and self.world._reserved_before and self._handed_over(new):
            record.state["handed_over"] = True
        if step.call == "schedule" and len(new) > 1:
            record.state.update(dict.fromkeys(self._fence_decided(new), True))
        if step.call == "schedule":
            record.state.update(dict.fromkeys(self._order_decided(new), True))
            record.state.update(dict.fromkeys(self._backoffs_seen(new), True))
        if step.call == "schedule" and not any(
                r.termination_type == PREEMPTED for r in record.released()) \
                and not record.states(RESERVED) and self._refused_for_guarantee():
            record.state["refused_guarantee"] = True
        if step.call == "update_application" and self._template_inherited(record):
            record.state["template_inherited"] = True
        if step.call == "update_application":
            record.state.update(dict.fromkeys(self._namespace_quota(record), True))
        if step.call == "update_application":
            placed = [app.placed for r in record.of("update_application") for a in r.accepted
                      for rv in self.world.shim.rms.values()
                      if (app := rv.apps.get(a.application_id)) is not None and app.placed]
            if any(p.rule > 0 and not p.fallback for p in placed):
                record.state["later_rule"] = True
            if any(p.refused > 0 for p in placed):
                record.state["refused_then_placed"] = True
            if any(p.fallback for p in placed):
                record.state["default_queue"] = True
        for t in self.world._transitions:
            self.world.coverage.transition(t)
        self.world.coverage.observe(record)
        self.world._transitions = []

    def _namespace_quota(self, record: StepRecord) -> list[str]:
        """``namespace_quota`` when an application accepted in this step set its readable
        namespace tags on the unmanaged leaf it entered (by the shim's records), and
        ``namespace_quota_unread`` when one entered such a leaf with tags that read as
        unset."""
        out = []
        for r in record.of("update_application"):
            for a in r.accepted:
                for rv in self.world.shim.rms.values():
                    app = rv.apps.get(a.application_id)
                    made = rv.created.get(app.partition, {}) if app is not None else {}
                    if app is None or app.path not in made:
                        continue
                    tags = app.submitted.get().tags
                    quota = model.namespace_quota(tags)
                    if quota.max is not None or quota.guaranteed is not None \
                            or quota.max_applications:
                        out.append("namespace_quota")
                    elif any(k.lower() in model.NS_TAGS for k in tags):
                        out.append("namespace_quota_unread")
        return out

    def _template_inherited(self, record: StepRecord) -> bool:
        """A leaf a placement rule created in this step below a parent it also created (now
        or before) took a childtemplate, by the shim's records of their creation."""
        created = [e.message.split(" ")[1] for batch in record.of("send_event") for e in batch
                   if e.message.endswith("created by a placement rule")]
        for path in created:
            parent = path.rsplit(".", 1)[0]
            for rv in self.world.shim.rms.values():
                for made in rv.created.values():
                    leaf, above = made.get(path), made.get(parent)
                    if leaf is not None and leaf.template is not None and above is not None \
                            and above.hands_down is not None:
                        return True
        return False

    def _shared_reservation(self) -> bool:
        """After a cycle, one node is reserved for two or more required-node asks."""
        with self.world.api.lock:
            return any(len(n.reservations) > 1 for p in view.partitions(self.world.api)
                       for n in p.nodes.values())

    def _slot_held_reservation(self) -> bool:
        """After a cycle, an ask of an application that has not started still waits on the
        node it reserved, which now has room for it, because its user's or group's
        ``maxapplications`` is taken by another application (YuniKorn's ugm rule 7)."""
        for (app_id, key), node in self._reserved.items():
            for rv in self.world.shim.rms.values():
                ask, app = rv.asks.get((app_id, key)), rv.apps.get(app_id)
                if ask is None or app is None or ask.pending <= 0 or node not in rv.nodes \
                        or not qty.fits(ask.resource, rv.free(node)):
                    continue
                if "has not started" in limits.held_by_limits(rv, app, ask.resource):
                    return True
        return False

    def _refused_for_guarantee(self) -> bool:
        """After a cycle that preempted nothing (and reserved nothing: a cycle that reserves
        does not try preemption, YuniKorn's tryNodes), an ask waits that met every trigger
        condition (it may preempt, past its delay, its leaf within its guarantee with it,
        no node with room for it), and it has victim candidates, but taking any one of them
        would leave that candidate's leaf below its guarantee (YuniKorn's law 2)."""
        now = self.world.clock.now()
        for _, rv in sorted(self.world.shim.rms.items()):
            if rv.paused or rv.stopped:
                continue
            for _, ask in sorted(rv.asks.items()):
                found = preemption.ready(rv, ask, now)
                if found is None:
                    continue
                partition, part, chain = found
                nodes = [n for _, n in sorted(rv.nodes.items()) if n.partition == partition]
                cluster = qty.total(n.capacity for n in nodes if n.state == "Schedulable")
                if any(n.state == "Schedulable" and qty.fits(ask.resource, rv.free(n.id))
                       for n in nodes) or not preemption.within_below_root(
                           rv, partition, chain, ask, cluster):
                    continue
                verdicts = [preemption.victim_verdict(rv, part, chain, ask, v, cluster)
                            for _, v in sorted(rv.allocs.items())
                            if rv.apps.get(v.app) is not None
                            and rv.apps[v.app].partition == partition]
                known = [v for v in verdicts if v is not None]
                if known and not any(known):
                    return True
        return False

    def _fence_decided(self, new: list[si.Allocation]) -> set[str]:
        """Two allocations of one cycle went against their asks' priorities across sibling
        queues one of which is priority-fenced (``fence_decided``), or has a
        ``priority.offset`` (``offset_decided``), under a parent sorting by priority: the
        queue's settings, not the applications' priorities, decided which came first."""
        out: set[str] = set()
        placed: list[tuple[int, str, model.PartitionModel]] = []
        for a in new:
            if a.placeholder:
                continue
            for rv in self.world.shim.rms.values():
                app = rv.apps.get(a.application_id)
                part = rv.config.partition(app.partition) if app is not None else None
                if app is not None and part is not None:
                    placed.append((a.priority, app.path, part))
                    break
        for i, (first, path_a, part) in enumerate(placed):
            for later, path_b, _ in placed[i + 1:]:
                if later <= first:
                    continue
                a_parts, b_parts = path_a.split("."), path_b.split(".")
                pairs = enumerate(zip(a_parts, b_parts, strict=False))
                split = next((d for d, (x, y) in pairs if x != y), None)
                if split is None:
                    continue  # one leaf: no sibling queues decided
                parent = part.queues.get(".".join(a_parts[:split]))
                if parent is None or not priority.of(parent).sort:
                    continue
                sides = (".".join(a_parts[:split + 1]), ".".join(b_parts[:split + 1]))
                settings = [priority.of(cfg) for side in sides
                            if (cfg := part.queues.get(side)) is not None]
                if any(x.fence for x in settings):
                    out.add("fence_decided")
                elif any(x.offset for x in settings):
                    out.add("offset_decided")
        return out

    def _order_decided(self, new: list[si.Allocation]) -> list[str]:
        """Which sort policies chose between contenders in this cycle (read from the shim's
        view after it): a fair leaf served one application while another of the same
        leaf and priority waited with an ask no larger (``fair_decided``); a stateaware
        leaf kept an Accepted application waiting with a pending ask while another one was
        starting (``stateaware_held``); a fifo leaf served an application a
        ``creationTime`` tag moved before another submitted earlier that waited with an ask
        no larger (``fifo_by_creation``); a binpacking partition placed a pod on one node while
        another schedulable node had room for it (``binpacking_decided``); a pod went
        elsewhere while a draining node had room for it (``draining_passed_over``)."""
        out: list[str] = []
        for rv in self.world.shim.rms.values():
            if rv.paused or rv.stopped:
                continue
            pending = [k for k in rv.asks.values() if k.allocated < k.max_allocations]
            for a in new:
                app = rv.apps.get(a.application_id)
                part = rv.config.partition(app.partition) if app is not None else None
                leaf = part.queues.get(app.path) if app is not None and part is not None else None
                if app is None or part is None:
                    continue
                size = a.resource_per_alloc.as_dict()
                if leaf is not None and leaf.sort_policy == "fair" and any(
                        k.app != app.id and k.priority == a.priority and qty.fits(k.resource, size)
                        and (other := rv.apps.get(k.app)) is not None and other.path == app.path
                        for k in pending):
                    out.append("fair_decided")
                if leaf is not None and leaf.sort_policy in ("fifo", "stateaware") and any(
                        k.app != app.id and k.priority == a.priority and qty.fits(k.resource, size)
                        and (other := rv.apps.get(k.app)) is not None and other.path == app.path
                        and other.accepted_at < app.accepted_at
                        and other.fifo_since > app.fifo_since for k in pending):
                    out.append("fifo_by_creation")
                if part.node_policy == "binpacking" and any(
                        n.id != a.node_id and n.partition == app.partition
                        and n.state == "Schedulable" and qty.fits(size, rv.free(n.id))
                        for n in rv.nodes.values()):
                    out.append("binpacking_decided")
                if any(n.state == "Draining" and n.partition == app.partition
                       and qty.fits(size, rv.free(n.id)) for n in rv.nodes.values()):
                    out.append("draining_passed_over")
            holds = {x.app for x in rv.allocs.values()}
            for app in rv.apps.values():
                part = rv.config.partition(app.partition)
                leaf = part.queues.get(app.path) if part is not None else None
                if leaf is None or leaf.sort_policy != "stateaware" or app.state != "Accepted":
                    continue
                if app.id not in holds and any(k.app == app.id for k in pending) and any(
                        o.id != app.id and o.path == app.path and o.state == "Accepted"
                        and o.id in holds for o in rv.apps.values()):
                    out.append("stateaware_held")
                    break
        return out


def _spared_by_settings(rv: RMView, victim: AllocView, ask: AskView) -> set[str]:
    """What a preemption left running although its leaf was over its guarantee, and why
    (coverage): outside the ask's preemption fence (``spared_fenced``; ``spared_max_fenced``
    when a queue's max made it, YUNIKORN-3241), in a leaf whose
    preemption is ``disabled`` (``spared_disabled``), or of a priority above what the
    ask may preempt (``spared_priority``)."""
    app = rv.apps.get(ask.app)
    part = rv.config.partition(app.partition) if app is not None else None
    chain = preemption.queue_chain(rv, part, app.path) \
        if app is not None and part is not None else None
    if app is None or part is None or chain is None:
        return set()
    root = preemption.fence_root(chain, rv, app.partition, ask.resource)
    cluster = qty.total(n.capacity for n in rv.nodes.values() if n.partition == app.partition)
    out: set[str] = set()
    for a in rv.allocs.values():
        vapp = rv.apps.get(a.app)
        if a.releasing is not None or a.uuid == victim.uuid or a.required_node \
                or vapp is None or vapp.partition != app.partition or vapp.path == app.path:
            continue
        vchain = preemption.queue_chain(rv, part, vapp.path)
        if vchain is None or not preemption.above_cap(
                rv.usage_below(vapp.partition, vapp.path), preemption.cap(vchain, cluster)):
            continue
        if not (vapp.path + ".").startswith(root + "."):
            out.add("spared_fenced")
            if (vapp.path + ".").startswith(preemption.fence_root(chain) + "."):
                out.add("spared_max_fenced")
        elif preemption.disabled(vchain):
            out.add("spared_disabled")
        else:
            bound = preemption.victim_priority_bound(part, chain[0].path, ask.priority, root,
                                                     vapp.path, rv.created.get(part.name))
            if bound is None or a.priority > bound:
                out.add("spared_priority")
    return out
