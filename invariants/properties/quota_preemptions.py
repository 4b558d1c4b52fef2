"""Quota preemption after a reload lowered a queue's max: when it is due, and its victims
judged against the checker's own reading (YuniKorn 1.8 ``quota_preemptor.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from invariants.properties.preemptions import QUOTA, QUOTA_MESSAGE, _preempting
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import AllocView, RMView


def quota_delay(q: model.QueueModel) -> float:
    """``quota.preemption.delay`` (inherited), a positive Go duration; anything else 0, off."""
    return model.positive_duration(q.properties.get("quota.preemption.delay"), 0.0)


def _strictly_greater(larger: Mapping[str, int] | None,
                      smaller: Mapping[str, int] | None) -> bool:
    a, b = dict(larger or {}), dict(smaller or {})
    keys = set(a) | set(b)
    return all(a.get(k, 0) >= b.get(k, 0) for k in keys) \
        and any(a.get(k, 0) != b.get(k, 0) for k in keys)


def _same(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> bool:
    x, y = dict(a or {}), dict(b or {})
    return all(x.get(k, 0) == y.get(k, 0) for k in set(x) | set(y))


def _over(usage: Mapping[str, int], mx: Mapping[str, int]) -> bool:
    return any(usage.get(k, 0) > v for k, v in mx.items())


def quota_reloaded(rv: RMView, old: model.ConfigModel | None, now: float) -> None:
    """The shim's own reading of each configured queue's quota-preemption start time after a
    reload the core took (YuniKorn queue.go ``setPreemptionTime``). A queue the previous
    configuration did not name (created by a placement rule, or back after a removal) has
    an old max the shim can not read: when it is over its max its start is unknown and
    read as already passed."""
    for name, part in rv.config.partitions.items():
        before = old.partition(name) if old is not None else None
        for path, q in part.queues.items():
            if path == "root":
                continue
            key = (name, path)
            delay, mx = quota_delay(q), q.max
            usage = rv.usage_below(name, path)
            if delay == 0 or not mx or not any(mx.values()) or not _over(usage, mx):
                rv.quota_start.pop(key, None)
                continue
            oq = before.queues.get(path) if before is not None else None
            if oq is None:
                rv.quota_start[key] = float("-inf")
                continue
            old_max, old_delay = oq.max, quota_delay(oq)
            start = rv.quota_start.get(key)
            shift = delay - old_delay
            if _same(old_max, mx):
                if start is None and old_delay == 0:
                    rv.quota_start[key] = now + delay
                elif start is not None:
                    rv.quota_start[key] = start + shift
            elif _strictly_greater(old_max, mx):
                rv.quota_start[key] = now + delay if start is None else start + shift
            elif _strictly_greater(mx, old_max) and start is not None:
                rv.quota_start[key] = start + shift


def _quota_amount(rv: RMView, partition: str, chain: Sequence[model.QueueModel],
                  mx: Mapping[str, int]) -> dict[str, int]:
    """What the queue (``chain[0]``) may lose per type of its max: usage less what is being
    preempted, above the max, capped by the largest excess over a guarantee from the queue
    up to root."""
    path = chain[0].path
    usage = rv.usage_below(partition, path)
    used = qty.minus(usage, _preempting(rv, partition, path))
    over = {k: used.get(k, 0) - v for k, v in mx.items() if used.get(k, 0) > v}
    cap: dict[str, int] = {}
    for q in chain:
        g = q.guaranteed
        if not g or not any(v > 0 for v in g.values()) or any(v < 0 for v in g.values()):
            continue
        held = rv.usage_below(partition, q.path)
        for k, v in g.items():
            excess = held.get(k, 0) - v
            if excess > 0:
                cap[k] = max(cap.get(k, 0), excess)
    return {k: min(v, cap[k]) if k in cap else v for k, v in over.items()}


def judge_quota(m: Monitor, rv: RMView, call: Call, victims: list[AllocView],
                message: str) -> None:
    """One quota preemption: its victims as released in one response, in the state the
    decision was taken in."""
    path = message[len(QUOTA_MESSAGE):]
    subject = f"quota preemption of queue {path}"
    partitions = sorted({app.partition for v in victims if (app := rv.apps.get(v.app))})
    if len(partitions) != 1:
        return
    partition = partitions[0]
    key = (partition, path)
    part = rv.config.partition(partition)
    start = rv.quota_start.pop(key, None)
    if part is None:
        return
    if not part.quota_preemption:
        m.report(QUOTA, subject, f"partition {partition} has quotapreemptionenabled off")
    q = part.queues.get(path)
    if q is None and start is None:
        m.report(QUOTA, subject, "the queue is not one the configuration names")
        return
    if q is not None and quota_delay(q) == 0:
        m.report(QUOTA, subject, "the queue has no positive quota.preemption.delay")
    if start is None:
        m.report(QUOTA, subject, "no reload started the queue's clock (or it already ran)")
    elif call.now < start:
        m.report(QUOTA, subject, f"at {call.now:g} s, before the start time {start:g} s")
    for v in victims:
        app = rv.apps.get(v.app)
        if app is None or not (app.path == path or app.path.startswith(path + ".")):
            m.report(QUOTA, subject, f"victim {v.uuid} ({v.app}/{v.key}) runs outside "
                     "the queue's subtree")
        if v.required_node:
            m.report(QUOTA, subject, f"victim {v.uuid} has a required node")
        if v.uuid in call.released_again:
            m.report(QUOTA, subject, f"victim {v.uuid} was already being released")
    chain = part.chain(path)
    if q is None or not q.max or not chain:
        return
    amount = _quota_amount(rv, partition, chain, q.max)
    taken = qty.total(v.resource for v in victims)
    beyond = {k: taken[k] for k in amount if taken.get(k, 0) > amount[k]}
    if beyond:
        m.report(QUOTA, subject, f"victims hold {beyond}, more than the preemptable "
                 f"{ {k: amount.get(k, 0) for k in beyond} }")
