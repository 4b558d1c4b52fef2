"""The checker's own reading of today's SI (``scheduler.si.today``, ``2858f4d``).

The core translates today's messages in one place (``scheduler.dialect``). The
checker must catch a broken translation, so it never imports or calls that
module (an import-linter contract forbids it): this module reads today's SI
afresh, from the SI's own terms (``docs/shim-guide.md`` section 15 and
YuniKorn's ``partition.go`` / ``context.go`` rules it cites). The other
direction, the generator's seed steps said in today's words, is
``invariants/modelshim/speaking.py``.

**Reading** (:func:`read`, :func:`answer`): today's requests become the seed's
request the model shim already judges, plus what only today's SI has (pods
bound to a node, foreign pods, resizes, roll-backs, ``CREATE_DRAIN``), each
with the expectation today's SI states; today's answers become the seed's
answers (allocations by key are named by the core's uuid for the key, read from
the core's state for naming only: what the allocation is and whether it may
exist is judged from the traffic alone).

The expectations that differ from the seed's dialect, as today's SI states them:

- a pod with a node is recovered per pod, not all or nothing per node: it is
  answered in ``new`` (not judged against quotas or the node's room: it runs
  already), or refused in ``rejectedAllocations`` when its application is not
  one the RM runs in that partition or its node is not known there;
- a pod sent again for a key that runs (from before the request, or recovered
  by an earlier entry of the same request: entries are read in order) is not an
  ask update: a node that is not known refuses it, a known one is no move; the
  same size changes nothing, another size resizes the allocation in place
  (refused while the core releases it, and for a placeholder);
- a release by key ends the key's allocations and, for every type but
  ``TIMEOUT``, withdraws its pending ask (confirmed in ``released``); an empty
  key means every allocation and (but for ``TIMEOUT``) every ask of the
  application; ``SCHEDULING_FAILED_ON_RM`` takes the allocation off every
  account and makes its pod pending again, answering nothing;
- a ``foreign`` pod is its node's occupied resource, nothing else, never
  answered; a release with no application ends one;
- ``CREATE_DRAIN`` registers the node Draining (one answer);
- ask releases arrive in ``released`` beside allocation releases, by key;
  refusals in ``rejectedAllocations``; every event carries the change detail of
  the transition it reports.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from invariants.properties import goals  # noqa: F401 (registers the goals first)
from invariants.properties import protocol as P
from invariants.properties.coverage import StepRecord, goal
from invariants.readings import arithmetic as qty
from invariants.readings.calls import Bound, Call, Monitor, Reading
from invariants.readings.shim import REQUIRED_NODE, AllocView, AskView, Kept, RMView
from scheduler import si
from scheduler.si import today
from scheduler.trace import Step

TT = si.TerminationType
NA = si.NodeAction
TODAY = "today"
REGISTERS = "rm_dialect"
"""The step key of a registration that fixes the RM's dialect
(``register_resource_manager(..., dialect=...)``); a registration without it is
decided by the RM's first request only one dialect can say."""
SPEAKS = "rm_speaks"
"""The step key of a registration whose RM speaks today's SI but lets its first request
say so (no ``REGISTERS``): nothing in process reads it; over the wire
(``invariants/modelshim/loopback.py``) it chooses the client that reads the RM's answers,
as a real shim knows which SI it was built for."""
OCCUPIED = "occupied-"
"""Key prefix of the foreign pod that stands for a node's occupied resource."""



def is_today(step: Step) -> bool:
    """Whether the step's request is one of today's own messages."""
    return step.request is not None and type(step.request).__module__ == today.__name__


# ---------------------------------------------------------------- reading requests


def read(m: Monitor, rv: RMView | None, step: Step, now: float) -> tuple[Step, Reading]:
    """Today's request as the seed's request the model shim judges, and what only today's
    SI has. ``rv`` is None for an RM the shim does not know."""
    reading = Reading()
    if step.call == "update_node":
        req: today.NodeRequest = step.request
        infos = []
        for n in req.nodes:
            drain = n.action == today.NodeAction.CREATE_DRAIN
            if drain:
                reading.drained.append(n.node_id)
            infos.append(si.NodeInfo.model_construct(
                node_id=n.node_id, action=NA.CREATE if drain else NA(n.action.value),
                attributes=dict(n.attributes), schedulable_resource=n.schedulable_resource,
                occupied_resource=None, existing_allocations=[]))
        if reading.drained:
            reading.did.add("create_drain")
        return Step(step.call, request=si.NodeRequest.model_construct(
            rm_id=req.rm_id, nodes=infos), extra=step.extra), reading
    areq: today.AllocationRequest = step.request
    asks: list[si.AllocationAsk] = []
    ask_rels: list[si.AllocationAskRelease] = []
    rels: list[si.AllocationRelease] = []
    if rv is not None:
        for pod in areq.allocations:
            _read_pod(m, rv, reading, asks, pod)
        if areq.releases is not None:
            for rel in areq.releases.allocations_to_release:
                _read_release(m, rv, reading, ask_rels, rels, rel, now)
    releases = si.AllocationReleasesRequest.model_construct(
        allocations_to_release=rels, allocation_asks_to_release=ask_rels) \
        if rels or ask_rels else None
    return Step(step.call, request=si.AllocationRequest.model_construct(
        rm_id=areq.rm_id, asks=asks, releases=releases), extra=step.extra), reading


def running(rv: RMView, app_id: str, key: str) -> list[AllocView]:
    return [a for _, a in sorted(rv.allocs.items()) if a.app == app_id and a.key == key]


def _read_pod(m: Monitor, rv: RMView, reading: Reading, asks: list[si.AllocationAsk],
              pod: today.Allocation) -> None:
    partition = pod.partition_name or "default"
    key = (pod.application_id, pod.allocation_key)
    if m.core_partition(rv.rm_id, partition) is None:
        reading.refused.append(key)
        return
    if pod.foreign:
        node = rv.nodes.get(pod.node_id)
        if not pod.node_id or node is None or node.partition != partition:
            reading.refused.append(key)
            return
        before = rv.foreign.get((partition, pod.allocation_key))
        rv.foreign[(partition, pod.allocation_key)] = (pod.node_id,
                                                       pod.resource_per_alloc.as_dict())
        reading.touched |= {pod.node_id} | ({before[0]} if before is not None else set())
        reading.effects = True
        reading.did.add("foreign")
        return
    placed = running(rv, *key)
    held = reading.bound.get(key)
    runs: AllocView | Bound | None = placed[0] if placed else held if held is not None \
        and held.good else None
    if runs is not None:
        # The key runs: from before this request, or recovered by an earlier entry of it
        # (entries are read in order, each against what the ones before it left).
        _read_resent(rv, reading, pod, partition, runs)
        return
    if pod.node_id:
        app = rv.apps.get(pod.application_id)
        node = rv.nodes.get(pod.node_id)
        why = ("no application" if not pod.application_id
               else "application not running" if app is None or app.state not in (
                   "New", "Accepted", "Running", "Completing")
               else "another partition" if app.partition != partition
               else "node unknown" if node is None or node.partition != partition else "")
        if held is None:
            held = reading.bound[key] = Bound(pod)
        if why:
            held.refusals.append(why)
        else:
            held.pod, held.good, held.size = pod, True, pod.resource_per_alloc.as_dict()
        reading.effects = True
        return
    # YuniKorn forgets a key with its pod: a key whose pods ended comes again as a new pod,
    # in the seed's words one repeat more than the key has had allocated.
    known = rv.asks.get(key)
    asks.append(si.AllocationAsk.model_construct(
        allocation_key=pod.allocation_key, application_id=pod.application_id,
        partition_name=pod.partition_name, resource_ask=pod.resource_per_alloc,
        max_allocations=(known.allocated if known is not None else 0) + 1,
        priority=pod.priority, execution_timeout_milli_seconds=0,
        tags=dict(pod.allocation_tags), task_group_name=pod.task_group_name,
        placeholder=pod.placeholder, originator=pod.originator,
        preemption_policy=pod.preemption_policy))


def _read_resent(rv: RMView, reading: Reading, pod: today.Allocation, partition: str,
                 alloc: AllocView | Bound) -> None:
    """A running pod sent again: an update of its allocation, of which only the size counts.

    As YuniKorn's UpdateAllocation reads an entry (apache/yunikorn-core be3bb48
    ``pkg/scheduler/partition.go`` UpdateAllocation): a node that is not known refuses
    it before the key is looked at; a known node, even another one, is no move. Then the
    size: the same changes nothing; another resizes in place, refused while the core
    releases the pod, for no resources, and for a placeholder (its gang's placeholders
    stay within the ``placeholderAsk``, ``001`` "Total placeholder size"). ``alloc`` is
    the allocation running before this request, or the :class:`Bound` pod an earlier
    entry of it recovered.
    """
    key = (pod.application_id, pod.allocation_key)
    app = rv.apps.get(pod.application_id)
    node = rv.nodes.get(pod.node_id) if pod.node_id else None
    if (app is not None and app.partition != partition) or (
            pod.node_id and (node is None or node.partition != partition)):
        reading.refused.append(key)
        return
    size = pod.resource_per_alloc.as_dict()
    if isinstance(alloc, Bound):
        before, releasing = alloc.size, False
        placeholder = alloc.pod.placeholder and bool(alloc.pod.task_group_name)
    else:
        before, releasing, placeholder = alloc.resource, alloc.releasing is not None, \
            alloc.placeholder
    if qty.same(size, before):
        return
    if releasing or placeholder or not qty.positive(size):
        reading.refused.append(key)
        return
    if isinstance(alloc, Bound):
        alloc.size = size
    else:
        alloc.resource = size
        ask = rv.asks.get(key)
        if ask is not None and ask.pending == 0:
            ask.resource = dict(size)
    reading.resized.append(key)
    reading.effects = True
    reading.did.add("resize")


def _read_release(m: Monitor, rv: RMView, reading: Reading,
                  ask_rels: list[si.AllocationAskRelease], rels: list[si.AllocationRelease],
                  rel: today.AllocationRelease, now: float) -> None:
    partition = rel.partition_name or "default"
    if m.core_partition(rv.rm_id, partition) is None:
        return
    if not rel.application_id:
        gone = rv.foreign.pop((partition, rel.allocation_key), None)
        if gone is not None:
            reading.touched.add(gone[0])
            reading.effects = True
        return
    key = (rel.application_id, rel.allocation_key)
    if rel.termination_type is today.TerminationType.SCHEDULING_FAILED_ON_RM:
        _read_roll_back(rv, reading, key, partition, now)
        return
    ttype = TT(rel.termination_type.value)
    if not rel.allocation_key:
        rels.append(si.AllocationRelease.model_construct(
            partition_name=partition, application_id=rel.application_id, uuid="",
            termination_type=ttype, message=rel.message, allocation_key=""))
        if ttype != TT.TIMEOUT:
            ask_rels.append(si.AllocationAskRelease.model_construct(
                partition_name=partition, application_id=rel.application_id,
                allocation_key="", termination_type=TT.STOPPED_BY_RM, message=rel.message))
        return
    for a in running(rv, *key):
        rels.append(si.AllocationRelease.model_construct(
            partition_name=partition, application_id=rel.application_id, uuid=a.uuid,
            termination_type=ttype, message=rel.message, allocation_key=rel.allocation_key))
        if ttype == TT.STOPPED_BY_RM:
            reading.did.add("release_by_key")
        elif ttype == TT.PLACEHOLDER_REPLACED and a.releasing == ttype:
            reading.did.add("swap_by_key")
    ask = rv.asks.get(key)
    if ttype != TT.TIMEOUT and ask is not None and ask.pending > 0:
        ask_rels.append(si.AllocationAskRelease.model_construct(
            partition_name=partition, application_id=rel.application_id,
            allocation_key=rel.allocation_key, termination_type=TT.STOPPED_BY_RM,
            message=rel.message))
        reading.did.add("release_by_key")


def _read_roll_back(rv: RMView, reading: Reading, key: tuple[str, str], partition: str,
                    now: float) -> None:
    """``SCHEDULING_FAILED_ON_RM``: the RM could not bind the pod; it is pending again."""
    app = rv.apps.get(key[0])
    ask = rv.asks.get(key)
    live = [a for a in running(rv, *key) if a.releasing is None]
    if not live or ask is None or ask.pending > 0 or app is None \
            or app.partition != partition or app.state not in ("Accepted", "Running"):
        return
    alloc = max(live, key=lambda a: a.created)
    del rv.allocs[alloc.uuid]
    ask.allocated -= 1
    ask.sent = now
    ask.preempted = False
    # The core takes it as a fresh ask: searched and told again if it waits for room.
    ask.searched = ask.told_waiting = False
    reading.effects = True
    reading.did.add("rollback")


# ---------------------------------------------------------------- judging the call


def bound_answered(m: Monitor, rv: RMView, call: Call, msg: si.Allocation) -> None:
    """A pod bound to a node, heard back in ``new``: recovered as the RM reported it."""
    reading = call.today
    assert reading is not None
    key = (msg.application_id, msg.allocation_key)
    held = reading.bound[key]
    pod = held.pod
    reading.answered[key] += 1
    subject = f"allocation {msg.application_id}/{msg.allocation_key}"
    call.new.append(msg)
    if not held.good:
        m.report(P.RECOVERY, subject, f"a pod bound to node {pod.node_id} was recovered "
                 f"although it can not be ({held.refusals[-1]})")
    if reading.answered[key] > 1:
        return
    if msg.node_id != pod.node_id or not qty.same(msg.resource_per_alloc.as_dict(),
                                                  held.size) \
            or msg.placeholder != (pod.placeholder and bool(pod.task_group_name)) \
            or msg.task_group_name != pod.task_group_name:
        m.report(P.RECOVERY, subject, f"answered on {msg.node_id} "
                 f"{qty.show(msg.resource_per_alloc.as_dict())}, the RM bound it to "
                 f"{pod.node_id} {qty.show(held.size)} (or placeholder "
                 "or task group differ)")
    placeholder = pod.placeholder and bool(pod.task_group_name)
    resource = dict(held.size)
    rv.allocs[msg.uuid] = AllocView(
        msg.uuid, pod.application_id, pod.allocation_key, pod.node_id, resource,
        placeholder, pod.task_group_name, call.now, recovered=True, sent=Kept(msg),
        priority=pod.priority, required_node=pod.allocation_tags.get(REQUIRED_NODE, ""))
    m.name(msg.uuid, pod.application_id, pod.allocation_key)
    ask = rv.asks.get(key)
    if ask is None:
        ask = rv.asks[key] = AskView(pod.application_id, pod.allocation_key, resource, 0,
                                     placeholder, pod.task_group_name, 0,
                                     priority=pod.priority, recovered=True)
    if ask.allocated >= ask.max_allocations:
        ask.max_allocations += 1
    ask.allocated += 1
    app = rv.apps.get(pod.application_id)
    if app is not None:
        app.created(pod.allocation_tags)
    if app is not None and placeholder and app.placeholder_start is None:
        app.placeholder_start = call.now
    reading.did.add("bound")


def end(m: Monitor, rv: RMView, call: Call) -> None:
    """What today's request owes once the call returns."""
    reading = call.today
    assert reading is not None

    def owed(key: tuple[str, str]) -> int:
        """How many refusals the entries of ``key`` are owed, in every reading of them."""
        bound = reading.bound.get(key)
        return reading.refused.count(key) + (len(bound.refusals) if bound is not None else 0)

    for key, held in reading.bound.items():
        subject = f"allocation {key[0]}/{key[1]}"
        pod = held.pod
        rejected = call.rejected_asks.count(key)
        if rejected < len(held.refusals):
            m.report(P.EXPECTED_REJECTION, subject,
                     f"a pod bound to node {pod.node_id} that can not be recovered "
                     f"({held.refusals[-1]}) was not refused")
        elif held.good and (rejected > owed(key) or reading.answered[key] != 1):
            m.report(P.RECOVERY, subject,
                     f"a pod bound to node {pod.node_id} was answered "
                     f"{reading.answered[key]} times in new and refused {rejected} times: "
                     "it is recovered and heard back once")
        if not held.good and rejected:
            core = m.core_partition(rv.rm_id, pod.partition_name)
            app = core.apps.get(key[0]) if core is not None else None
            kept = [] if app is None else [
                a for a in app.allocations.values() if a.ask_key == key[1]
                and a.uuid not in rv.allocs]
            if kept:
                m.report(P.RECOVERY, subject, "refused, but the core holds it")
    for key in dict.fromkeys(reading.refused):
        if call.rejected_asks.count(key) < owed(key):
            m.report(P.EXPECTED_REJECTION, f"allocation {key[0]}/{key[1]}",
                     "a pod today's SI does not allow here was not refused")
    for key in dict.fromkeys(reading.resized):
        if call.rejected_asks.count(key) > owed(key):
            m.report(P.EXPECTED_REJECTION, f"allocation {key[0]}/{key[1]}",
                     "a running pod resized in place was refused (YuniKorn resizes at any "
                     "cost)")
    for node_id in reading.touched:
        node = rv.nodes.get(node_id)
        if node is not None:
            node.occupied = qty.total(r for (part, _), (n, r) in rv.foreign.items()
                                      if n == node_id and part == node.partition)
    for node_id in reading.drained:
        node = rv.nodes.get(node_id)
        if node is not None and node_id in call.accepted_nodes:
            node.state = "Draining"
    if call.step.call == "update_node":
        for info in call.step.request.nodes:
            if info.action == NA.DECOMISSION and info.node_id not in rv.nodes:
                for k in [k for k, (n, _) in rv.foreign.items() if n == info.node_id]:
                    del rv.foreign[k]


# ---------------------------------------------------------------- reading answers


def answer(m: Monitor, rv: RMView | None, call: Call | None,
           response: today.AllocationResponse) -> si.AllocationResponse:
    """Today's answer as the seed's: each pod named by the core's uuid for its key (naming
    only), each release by key as an allocation release or an ask release."""
    taken: set[str] = set()
    new = [si.Allocation.model_construct(
        allocation_key=a.allocation_key, allocation_tags=dict(a.allocation_tags),
        uuid=_uuid_of(m, rv, a, taken), resource_per_alloc=a.resource_per_alloc,
        priority=a.priority, node_id=a.node_id, application_id=a.application_id,
        partition_name=a.partition_name, task_group_name=a.task_group_name,
        placeholder=a.placeholder) for a in response.new]
    released: list[si.AllocationRelease] = []
    released_asks: list[si.AllocationAskRelease] = []
    confirmed: Counter[str] = Counter()
    asked: Counter[tuple[str, str]] = Counter()
    for r in response.released:
        key = (r.application_id, r.allocation_key)
        try:
            ttype = TT(r.termination_type.value)
        except ValueError:
            if rv is not None and call is not None:
                m.report(P.RELEASES, f"allocation {key[0]}/{key[1]}",
                         f"released {r.termination_type.name}, which only the RM sends")
            continue
        uuid = ""
        as_ask = False
        if ttype == TT.STOPPED_BY_RM and call is not None:
            owed = [u for u, a in sorted(call.gone.items()) if (a.app, a.key) == key
                    and call.confirmed[u] + confirmed[u] < call.confirm_expected[u]]
            if owed:
                uuid = owed[0]
            elif call.ask_confirmed[key] + asked[key] < call.ask_confirm_expected[key] \
                    or not any((a.app, a.key) == key for a in call.gone.values()):
                as_ask = True
            else:
                uuid = next(u for u, a in sorted(call.gone.items()) if (a.app, a.key) == key)
        elif rv is not None:
            # The allocations of the key the shim runs, and one this same answer announces
            # (placed and released in one response: its new entry is read first).
            mine = [a.uuid for a in running(rv, *key)]
            fresh = [a.uuid for a in running(rv, *key) if a.releasing is None]
            fresh += [a.uuid for a in new if (a.application_id, a.allocation_key) == key]
            fresh = [u for u in fresh if not confirmed[u]]
            if fresh or mine:
                uuid = (fresh or mine)[0]
            elif ttype == TT.TIMEOUT and key in rv.asks:
                as_ask = True
        if as_ask:
            asked[key] += 1
            released_asks.append(si.AllocationAskRelease.model_construct(
                partition_name=r.partition_name, application_id=r.application_id,
                allocation_key=r.allocation_key, termination_type=ttype, message=r.message))
            continue
        uuid = uuid or f"{key[0]}/{key[1]}"
        confirmed[uuid] += 1
        released.append(si.AllocationRelease.model_construct(
            partition_name=r.partition_name, application_id=r.application_id, uuid=uuid,
            termination_type=ttype, message=r.message, allocation_key=r.allocation_key))
    return si.AllocationResponse.model_construct(
        new=new, released=released, released_asks=released_asks,
        rejected=[si.RejectedAllocationAsk.model_construct(
            allocation_key=r.allocation_key, application_id=r.application_id,
            reason=r.reason) for r in response.rejected_allocations])


def _uuid_of(m: Monitor, rv: RMView | None, a: today.Allocation, taken: set[str]) -> str:
    """The core's uuid of the allocation of ``a``'s key on its node (naming only)."""
    if rv is not None:
        core = m.core_partition(rv.rm_id, a.partition_name)
        app = core.apps.get(a.application_id) if core is not None else None
        if app is not None:
            for held in reversed(list(app.allocations.values())):
                if held.ask_key == a.allocation_key and held.node.id == a.node_id \
                        and held.uuid not in rv.allocs and held.uuid not in taken:
                    taken.add(held.uuid)
                    return str(held.uuid)
    return f"{a.application_id}/{a.allocation_key}@{a.node_id}"


QUOTA_SUMMARY = "Quota Preemption results summary: "
_TRANSITION = re.compile(r"^(application|ask|allocation|node) .*\((\w+) -> (\w+)\)$")
_APP_DETAIL = {"Rejected": "APP_REJECT"}
_OTHER_DETAIL = {
    ("ask", "Allocated"): "REQUEST_ALLOC", ("ask", "Rejected"): "REQUEST_CANCEL",
    ("allocation", "Completed"): "ALLOC_CANCEL", ("allocation", "Preempted"): "ALLOC_PREEMPT",
    ("allocation", "Expired"): "ALLOC_TIMEOUT", ("allocation", "Replaced"): "ALLOC_REPLACED",
    ("node", "Draining"): "NODE_SCHEDULABLE", ("node", "Schedulable"): "NODE_SCHEDULABLE",
    ("node", "Removed"): "NODE_DECOMISSION"}


def expected_detail(message: str, kind: str = "") -> str:
    """The change detail today's SI gives an event reporting a transition
    (``<noun> <name> ... (<source> -> <dest>)``): what the object entered decides
    (``EventRecord.ChangeDetail``); a queue's quota preemption summary is
    ``QUEUE_PREEMPTION`` (YuniKorn ``SendQuotaPreemptionEvent``); ``DETAILS_NONE`` for
    anything else."""
    if kind == "QUEUE" and message.startswith(QUOTA_SUMMARY):
        return "QUEUE_PREEMPTION"
    found = _TRANSITION.match(message)
    if found is None:
        return "DETAILS_NONE"
    noun, dest = found.group(1), found.group(3)
    if noun == "application":
        name = _APP_DETAIL.get(dest, f"APP_{dest.upper()}")
        return name if name in today.EventChangeDetail.__members__ else "DETAILS_NONE"
    return _OTHER_DETAIL.get((noun, dest), "DETAILS_NONE")


def judge_events(report: Callable[[str, str, str], None], events: list[Any]) -> None:
    """Every event of today's SI carries the change detail of what it reports."""
    for e in events:
        detail = getattr(e, "event_change_detail", None)
        if detail is None:
            continue
        wanted = expected_detail(e.message, e.type.name)
        if detail.name != wanted:
            report(P.MESSAGES, f"event {e.object_id!r}",
                   f"change detail {detail.name} for {e.message!r}: today's SI says {wanted}")


# ---------------------------------------------------------------- coverage


def _did(name: str) -> Callable[[StepRecord], bool]:
    return lambda rec: name in rec.state.get("today", ())


for _name, _statement in (
        ("bound", "a pod bound to a node by an RM of today's SI recovered and heard back"),
        ("foreign", "a foreign pod (today's SI) counted as its node's occupied resource"),
        ("create_drain", "a node registered with CREATE_DRAIN (today's SI)"),
        ("release_by_key", "a pod or a pending ask released by its key (today's SI)"),
        ("swap_by_key", "a placeholder's replacement confirmed by its key (today's SI)"),
        ("resize", "a running pod sent again with another size, resized in place "
                   "(today's SI)"),
        ("rollback", "a pod the RM could not bind rolled back to a pending ask "
                     "(SCHEDULING_FAILED_ON_RM, today's SI)")):
    goal(f"today.{_name}", _statement)(_did(_name))


__all__ = ["OCCUPIED", "REGISTERS", "SPEAKS", "TODAY", "Reading", "answer", "bound_answered", "end",
           "is_today", "read", "running"]
