"""Gang scheduling flows (``001_77e2b1ca48512e76.txt``), mixed into the partition.

Placeholder replacement (park the real ask, release the placeholder, place
the real ask when the shim confirms), the placeholder timeout (Hard and Soft)
and the placeholder-size rule live here so that ``partition.py`` keeps the
generic flows. The partition supplies the accounting and scheduling
primitives this mixin calls (declared below for type checking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import resources as res
from . import si
from .objects import Allocation, Application, Ask, Node
from .resources import Resource

if TYPE_CHECKING:
    from .context import CoreContext

TT = si.TerminationType
SS = si.SchedulingState
PLACEHOLDER_TIMEOUT = 15 * 60.0


class GangFlows:
    """The gang design's flows; every state change still goes through a lifecycle."""

    if TYPE_CHECKING:
        core: CoreContext
        rm_id: str
        name: str
        nodes: dict[str, Node]
        _failed_shapes: res.ShapeMemo

        def core_release(self, alloc: Allocation, ttype: si.TerminationType,
                         msg: str) -> None: ...
        def _set_scheduling_state(self, ask: Ask, state: si.SchedulingState,
                                  reason: str) -> None: ...
        def _fire_app(self, app: Application, trigger: str, message: str = "") -> None: ...
        def _predicates(self, ask: Ask, node: Node, allocate: bool) -> bool: ...
        def _headroom(self, app: Application, ask: Ask) -> bool: ...
        def _find_node(self, app: Application, ask: Ask) -> Node | None: ...
        def _drop_ask(self, ask: Ask, why: str) -> None: ...
        def _allocate(self, app: Application, ask: Ask, node: Node) -> Allocation: ...
        def _after_release(self, app: Application) -> None: ...
        def _gang_waiting(self, app: Application) -> bool: ...

    @staticmethod
    def _check_placeholder_room(
        app: Application, msg: si.AllocationAsk, resource: Resource, allocated_before: int
    ) -> str:
        """Placeholders may not ask for more than the application's ``placeholderAsk``.

        ``001`` "Total placeholder size": the placeholderAsk is the total all
        task group members will request; keeping every placeholder within it
        keeps the submission-time quota check meaningful.
        """
        if not res.any_positive(app.placeholder_ask):
            return "a placeholder ask needs a placeholderAsk on its application"
        wanted = dict(app.placeholder_allocated)
        for k in app.pending_asks.values():
            if k.placeholder and k.key != msg.allocation_key:
                res.add_into(wanted, res.multiply(k.resource, k.pending_repeats))
        res.add_into(wanted, res.multiply(resource, msg.max_allocations - allocated_before))
        if not res.fits(wanted, app.placeholder_ask):
            return (f"placeholders would request {res.to_str(wanted)}, more than the "
                    f"application's placeholderAsk {res.to_str(app.placeholder_ask)}")
        return ""

    def _complete_replacement(self, placeholder: Allocation) -> None:
        """The shim confirmed a PLACEHOLDER_REPLACED release: place the parked ask.

        ``001`` "Scheduler logic changes" steps 4-6: as one update, the
        placeholder is gone (already unbound) and the real ask is allocated on
        the placeholder's node; if it no longer fits there, on another node; if
        none, it stays pending and is reported FAILED so a shim can scale up.
        """
        app = placeholder.app
        ask = app.asks.get(placeholder.replacing_key)
        if ask is None or ask.parked_on != placeholder.uuid:
            return
        ask.parked_on = ""
        if ask.state != "Pending" or app.state not in ("Accepted", "Running", "Completing"):
            return
        if self._gang_waiting(app):
            self._set_scheduling_state(
                ask, SS.SKIPPED, "waiting for the gang's placeholder asks to be allocated")
            return
        if not self._headroom(app, ask):
            self._set_scheduling_state(ask, SS.SKIPPED, "queue quota reached")
            return
        node: Node | None = self.nodes.get(placeholder.node.id)
        if node is None or not node.schedulable or not res.fits(ask.resource, node.available) \
                or (node.reservation is not None and node.reservation != (app.id, ask.key)) \
                or not self._predicates(ask, node, True):
            self._failed_shapes = res.ShapeMemo()
            node = self._find_node(app, ask)
        if node is None:
            self._set_scheduling_state(ask, SS.FAILED,
                                       f"placeholder {placeholder.uuid} was released but no "
                                       "node has room for the real ask")
            return
        alloc = self._allocate(app, ask, node)
        alloc.replaces = placeholder.uuid
        alloc.replaced_node = placeholder.node.id
        alloc.fallback = node.id != placeholder.node.id

    def _try_replace(self, app: Application, ask: Ask) -> bool:
        """Start replacing a placeholder of the ask's task group; True when anything changed.

        ``001`` "Scheduler logic changes" steps 1-3: take the first unreleased
        placeholder of the same task group, mark it released, tell the shim
        (PLACEHOLDER_REPLACED) and park the real ask until the shim confirms.
        A placeholder smaller than the real ask can never be swapped: like
        YuniKorn, it is released with TIMEOUT and the next one is tried.
        """
        released = False
        for ph in list(app.allocations.values()):
            if not ph.placeholder or ph.state != "Allocated" or ph.task_group != ask.task_group:
                continue
            if not res.fits(ask.resource, ph.resource):
                self.core_release(ph, TT.TIMEOUT,
                                  f"placeholder cancelled: real ask {ask.key} "
                                  f"{res.to_str(ask.resource)} is larger than the placeholder")
                released = True
                continue
            self.core_release(ph, TT.PLACEHOLDER_REPLACED, f"replaced by ask {ask.key}")
            ph.replacing_key = ask.key
            ask.parked_on = ph.uuid
            return True
        return released

    def _start_placeholder_timer(self, app: Application) -> None:
        """``001`` "Cleanup": the timeout starts when the first placeholder is allocated."""
        app.placeholder_timer_started = True
        delay = (app.execution_timeout_ms / 1000.0 if app.execution_timeout_ms > 0
                 else PLACEHOLDER_TIMEOUT)
        self.core.schedule_timer(delay, "placeholder", app, app.placeholder_token)

    def _placeholder_timeout(self, app: Application) -> None:
        """``001`` "Cleanup", placeholder asks pending: release every placeholder.

        Placeholder allocations are released with TIMEOUT and pending
        placeholder asks with an AllocationAskRelease TIMEOUT, all in this
        call's one AllocationResponse. Hard: the application fails (its real
        allocations are released too, so Failed holds nothing) and is Failed
        once the shim confirmed every release. Soft: it resumes and is Accepted
        again once its placeholders are gone. An application that already runs
        and has no placeholder ask pending only loses its leftover placeholders
        (YuniKorn); one still Accepted with every placeholder allocated is
        treated as timed out, as in YuniKorn, so it can not wait forever.
        """
        pending_ph = [k for k in app.pending_asks.values() if k.placeholder]
        if app.state == "Running" and not pending_ph:
            self._release_placeholders(app, "placeholder timeout: not replaced in time")
            return
        if app.state not in ("Accepted", "Running"):
            return
        box = self.core.outbox(self.rm_id)
        for ask in pending_ph:
            self._drop_ask(ask, "placeholder timeout")
            box.released_asks.append((self.name, app.id, ask.key, TT.TIMEOUT,
                                      "placeholder timeout: placeholder ask released"))
        self._release_placeholders(app, "placeholder timeout")
        if app.gang_style == "Hard":
            for alloc in list(app.allocations.values()):
                if alloc.state == "Allocated":
                    self.core_release(alloc, TT.TIMEOUT, "gang failed: placeholder timeout")
            self._fire_app(app, "fail", "placeholder timeout (Hard)")
        elif app.state == "Accepted":
            self._fire_app(app, "resume", "placeholder timeout (Soft)")
        self._after_release(app)

    def _release_placeholders(self, app: Application, message: str) -> None:
        for alloc in list(app.allocations.values()):
            if alloc.placeholder and alloc.state == "Allocated":
                self.core_release(alloc, TT.TIMEOUT, message)
