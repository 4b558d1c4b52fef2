"""Judging the configuration an RM registers or reloads against what the core then holds.

The monitor (``invariants/modelshim/monitor.py``) calls these when a registration or a
reload ends. The checker reads the ``queues.yaml`` text on its own
(``invariants/readings/model.py``) and compares each configured partition and queue
with the core's (``invariants/readings/view.py``): a configuration the core took but
applied differently is a ``CONFIG_APPLIED`` violation. The queue lookup the
admission reading uses is here too: it reads the queues a configuration made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from invariants.properties import protocol as P
from invariants.properties import quota_preemptions
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import RMView
from scheduler import si
from scheduler.errors import ConfigError, UnknownResourceManager


def end_register(m: Monitor, call: Call, req: si.RegisterResourceManagerRequest,
                 error: BaseException | None) -> None:
    """A registration: a valid configuration taken and applied, an invalid one refused, the RM
    starting empty (a registration again clears what it held)."""
    try:
        config = model.read_registered(req.config)
    except ConfigError:
        if error is None:
            m.report(P.CONFIG_APPLIED, f"rm {req.rm_id}",
                     "an invalid configuration was accepted at registration")
        return
    if error is not None:
        if not isinstance(error, ConfigError):
            raise error
        m.report(P.CONFIG_APPLIED, f"rm {req.rm_id}",
                 f"a valid configuration was refused: {error}")
        return
    m.rms[req.rm_id] = RMView(req.rm_id, config)
    for p in view.partitions(m.api):
        if p.rm_id == req.rm_id and (p.apps or p.nodes or p.allocations):
            m.report(P.RECOVERY, f"rm {req.rm_id}",
                     f"registering again left partition {p.name} holding "
                     f"{len(p.apps)} applications and {len(p.nodes)} nodes")
    _check_config(m, req.rm_id, config)


def end_reload(m: Monitor, call: Call, rv: RMView | None, req: si.UpdateConfigurationRequest,
               error: BaseException | None) -> None:
    """A reload the core took: only from a running RM, only a valid configuration, applied."""
    if error is not None:
        if not isinstance(error, ConfigError | UnknownResourceManager):
            raise error
        return
    if rv is None or rv.stopped or rv.paused:
        m.report(P.CONFIG_APPLIED, f"rm {req.rm_id}",
                 "a reload from an RM that is not running was accepted")
        return
    old = rv.config
    try:
        rv.config = model.read_registered(req.config)
    except ConfigError:
        m.report(P.CONFIG_APPLIED, f"rm {req.rm_id}",
                 "an invalid configuration was accepted by a reload")
        return
    quota_preemptions.quota_reloaded(rv, old, call.now)
    _created_after_reload(rv)
    _check_config(m, req.rm_id, rv.config)


def _created_after_reload(rv: RMView) -> None:
    """A queue a placement rule created that the configuration now names is a configured
    queue from here on (a later reload that drops it drains it): its creation record no
    longer applies. The others never drain themselves (YuniKorn marks managed queues
    only); they drain for admission only through a draining queue above them."""
    for name, made in rv.created.items():
        part = rv.config.partition(name)
        for path in [path for path in made if part is not None and path in part.queues]:
            del made[path]


def _check_config(m: Monitor, rm_id: str, config: model.ConfigModel) -> None:
    """Every configured partition and queue is active in the core with its configured settings."""
    for name, pm in config.partitions.items():
        p = m.core_partition(rm_id, name)
        if p is None or p.state != "Active":
            m.report(P.CONFIG_APPLIED, f"partition {name}",
                     "a configured partition is missing or not active")
            continue
        for path, qm in pm.queues.items():
            q = p.queues.get(path)
            subject = f"queue {name}/{path}"
            if q is None or q.state != "Active":
                m.report(P.CONFIG_APPLIED, subject, "configured but missing or not "
                         f"active ({None if q is None else q.state})")
                continue
            if not q.apps and not q.children and q.is_leaf != qm.leaf:
                m.report(P.CONFIG_APPLIED, subject,
                         f"configured as {'leaf' if qm.leaf else 'parent'}, is "
                         f"{'leaf' if q.is_leaf else 'parent'}")
            for problem in _differences(q, qm.max, qm.guaranteed, qm.max_applications,
                                        qm.sort_policy, "configured"):
                m.report(P.CONFIG_APPLIED, subject, problem)


def _differences(q: view.Queue, max_: Mapping[str, int] | None,
                 guaranteed: Mapping[str, int] | None, max_applications: int, policy: str,
                 source: str) -> list[str]:
    """How the core's queue differs from the settings ``source`` gives it (the sort policy
    of a leaf only)."""
    problems = [f"{what} is {qty.show(have or {})}, {source} {qty.show(want or {})}"
                for what, have, want in (("max", q.max, max_),
                                         ("guaranteed", q.guaranteed, guaranteed))
                if not qty.same(have or {}, want or {})]
    if q.max_applications != max_applications:
        problems.append(f"maxapplications is {q.max_applications}, {source} {max_applications}")
    if q.is_leaf and q.sort_policy != policy:
        problems.append(f"sort policy is {q.sort_policy}, {source} {policy}")
    return problems


def created_settings(m: Monitor, core: view.PartitionState,
                     made: Mapping[str, model.Created], paths: tuple[str, ...]) -> None:
    """The queues a placement rule created have what the shim's record of them says: a
    leaf its parent's childtemplate (max, guaranteed, maxapplications, properties) and
    nothing else, but for what the namespace tags of the applications that entered it set
    (the last to give each), a parent nothing of its own."""
    for path in paths:
        q, record = core.queues.get(path), made.get(path)
        if q is None or record is None:
            continue
        want = model.created_queue(path, record)
        policy = model.policy_of(record.properties)
        source = "its template gives" if record.tagged is None and not record.tagged_apps \
            else "its template and its applications' namespace tags give"
        for problem in _differences(q, want.max, want.guaranteed, want.max_applications,
                                    policy, source):
            m.report(P.CONFIG_APPLIED, f"queue {core.name}/{path} (created)", problem)


CLEAN_INTERVAL = 10.0
"""YuniKorn's queue cleanup period (apache/yunikorn-core be3bb48
pkg/scheduler/partition_manager.go ``DefaultCleanRootInterval``), the checker's own copy."""


def unconfigured_gone(m: Monitor, rv: RMView, call: Call) -> None:
    """A queue the configuration does not have exists only while it is kept for something.

    One a placement rule created goes as soon as no application the shim runs is in it or
    below it (004 'Configurations & Semantics'; YuniKorn removes empty dynamic queues). One
    a reload removed is ``Draining`` until it goes; it goes only in a scheduling call (the
    partition's periodic cleanup runs on the clock: a reload or a request never removes
    it), and by the first scheduling call :data:`CLEAN_INTERVAL` seconds after the shim
    last held an application in or below it (YuniKorn ``MarkQueueForRemoval``,
    ``cleanQueues`` every 10 s). A partition the configuration removed is not judged: it
    goes as a whole once empty."""
    if rv.paused or rv.stopped:
        return
    held: dict[str, set[str]] = {}
    for app in rv.apps.values():
        if app.live and app.path:
            held.setdefault(app.partition, set()).add(app.path)
    scheduling = call.step.call == "schedule"
    for p in view.partitions(m.api):
        if p.rm_id != rv.rm_id:
            continue
        part = rv.config.partition(p.name)
        if part is None:
            rv.removed_queues.pop(p.name, None)
            continue  # a removed partition's queues go with it, once it is empty
        configured = part.queues
        made = rv.created.get(p.name, {})
        paths = held.get(p.name, set())
        before_p, before = rv.removed_queues.get(p.name, (None, {}))
        if before_p is not p:
            before = {}
        now: dict[str, float] = {}
        for path, queue in p.queues.items():
            if queue.parent is None or path in configured:
                continue
            holds = any(a == path or a.startswith(path + ".") for a in paths)
            if path in made:
                if not holds:
                    m.report(P.CONFIG_APPLIED, f"queue {p.name}/{path}",
                             f"created by a placement rule ({queue.state}) and holding no "
                             "application the shim runs, yet not removed")
                continue
            if queue.state != "Draining":
                m.report(P.CONFIG_APPLIED, f"queue {p.name}/{path}",
                         f"removed by a reload, yet {queue.state}, not Draining")
            since = -1.0 if holds else before.get(path, -1.0)
            if since < 0 and not holds:
                since = call.now
            now[path] = since
            if scheduling and since >= 0 and call.now >= since + CLEAN_INTERVAL:
                m.report(P.CONFIG_APPLIED, f"queue {p.name}/{path}",
                         f"removed by a reload and empty since {since:g}, yet still there "
                         f"at {call.now:g}: the cleanup every {CLEAN_INTERVAL:g} s should "
                         "have removed it")
        if not scheduling:
            for path in before:
                if path not in p.queues and path not in configured and path not in made:
                    m.report(P.CONFIG_APPLIED, f"queue {p.name}/{path}",
                             f"removed by a reload, and gone in a {call.step.call} call: "
                             "only the periodic cleanup, in a scheduling call, removes it")
        rv.removed_queues[p.name] = (p, now)


def queue_lookup(m: Monitor, rm_id: str, partition: str,
                 overlay: dict[str, bool]) -> Callable[[str], bool | None]:
    """Whether a queue path is a leaf in the core (``None``: no such queue), read through
    ``overlay``: the queues this request's earlier applications create, as the placement
    reading of the next one must see them."""
    p = m.core_partition(rm_id, partition)

    def lookup(path: str) -> bool | None:
        if path in overlay:
            return overlay[path]
        q = p.queues.get(path) if p is not None else None
        return None if q is None else bool(q.is_leaf)

    return lookup
