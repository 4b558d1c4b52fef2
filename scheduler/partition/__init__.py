"""A partition: the state of one RM's partition and the flows that change it.

Flows follow ``003`` ("Operations to add/remove app",
"... remove allocations and add or remove asks", "... add, update or remove
nodes", "Allocations") with the cache gone: every decision updates the one
object model directly and in one step. Scheduling follows
``004`` ("Implementation"); gang behaviour follows
``001``.

:class:`Partition` is a thin facade: :class:`~.state.PartitionState` plus
the entry points the API routes requests to. Each flow lives in its own
module as plain functions over the state, layered so that none imports one
above it:

=================  ===============================================================
``state``          maps, node order, reservations, per-call memos
``eligibility``    may an application start, an ask be placed (quota, gang, parking)
``reservations``   nodes kept for one ask
``ledger``         what each allocation and ask counts where; ending allocations
``queues``         the queue tree from the configuration, reload, drain, cleanup
``appstate``       application transitions, their report and timers
``asks``           the RM's asks and ask releases
``apps``           submission, removal, and moving an application on
``allocate``       placing one ask on a node, or reserving one
``gang``           placeholder replacement and the placeholder timeout
``victims``        committing a preemption (releases, preempting, the node kept)
``preemption``     general preemption: victims from queues above their guarantee
``required_node``  required-node asks: their node, reserved at once, preempted on
``releases``       the RM's releases and confirmations
``nodes``          node registration (with recovery), updates, drain, removal
``cycle``          the scheduling loop and the timers it fires
=================  ===============================================================

Nothing here assigns ``state``: objects move through ``CoreContext.fire``.
"""

from __future__ import annotations

from typing import Any

from .. import si
from ..config import PartitionConfig
from ..context import CoreContext
from . import apps, asks, cycle, nodes, queues, quota_preemption, releases
from .state import PartitionState

__all__ = ["Partition", "PartitionState"]


class Partition(PartitionState):
    """One partition of one RM (``004`` "Relations between Entities")."""

    def __init__(self, core: CoreContext, rm_id: str, config: PartitionConfig) -> None:
        super().__init__(core, rm_id, config.name)
        queues.apply_config(self, config, initial=True)
        quota_preemption.reloaded(self, config, {})

    # -- configuration ------------------------------------------------------
    def apply_config(self, config: PartitionConfig) -> None:
        """Hot reload: create, update and drain queues to match ``config``, then set each
        configured queue's quota-preemption clock from what the reload changed."""
        before = quota_preemption.snapshot(self)
        queues.apply_config(self, config)
        quota_preemption.reloaded(self, config, before)

    def check_update(self, config: PartitionConfig) -> None:
        """Raise ``ConfigError`` for an update the running state can not take."""
        queues.check_update(self, config)

    def drain(self) -> None:
        queues.drain(self)

    def stop(self) -> None:
        queues.stop(self)

    # -- requests from the RM -------------------------------------------------
    def add_application(self, req: si.AddApplicationRequest) -> None:
        apps.add_application(self, req)

    def remove_application(self, app_id: str) -> bool:
        return apps.remove_application(self, app_id)

    def add_ask(self, msg: si.AllocationAsk) -> None:
        asks.add_ask(self, msg)

    def release_asks(self, rel: si.AllocationAskRelease) -> None:
        asks.release_asks(self, rel)

    def release_allocations(self, rel: si.AllocationRelease) -> None:
        releases.release_allocations(self, rel)

    def roll_back(self, app_id: str, key: str, message: str) -> str:
        """The RM could not bind the pod of ``key``: scheduled again; "" or why not."""
        return releases.roll_back(self, app_id, key, message)

    def add_node(self, info: si.NodeInfo) -> None:
        nodes.add_node(self, info)

    def update_node(self, info: si.NodeInfo) -> None:
        nodes.update_node(self, info)

    def bind_allocation(self, msg: si.Allocation) -> None:
        """A pod the RM placed itself (today's SI: an allocation with a node)."""
        nodes.bind_allocation(self, msg)

    def resize_allocation(self, uuid: str, resource: dict[str, int]) -> str:
        """A running pod resized in place; "" when done, else why not."""
        return nodes.resize_allocation(self, uuid, resource)

    # -- the cycle --------------------------------------------------------------
    def schedule(self) -> int:
        return cycle.schedule(self)

    def on_timer(self, kind: str, target: Any, token: int) -> None:
        cycle.on_timer(self, kind, target, token)
