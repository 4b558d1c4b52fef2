"""What a shim knows: its applications, asks, nodes and running allocations, per RM.

The knowledge is built only from the traffic: the requests the shim sent and
the answers the core gave. The protocol monitor (``invariants/monitor.py``)
keeps it and judges every message against it; the checker's rules read it
to decide what a shim would do next (which allocation to release, which
release to confirm). Nothing here reads the core.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scheduler import si

from . import model
from . import quantities as qty

PLACEHOLDER_TIMEOUT = 15 * 60.0
COMPLETING_TIMEOUT = 30.0
RETENTION = 3 * 24 * 3600.0


@dataclass
class AppView:
    """An application the core accepted, as the shim sees it."""

    id: str
    partition: str
    request: si.AddApplicationRequest
    path: str
    """The queue the checker's own placement reading put it in."""
    state: str = "New"
    gang: bool = False
    style: str = "Soft"
    placeholder_timeout: float = PLACEHOLDER_TIMEOUT
    placeholder_start: float | None = None
    """When its first placeholder was allocated in the current Accepted spell."""
    placeholder_fired: bool = False
    """The placeholder timer of this spell has fired (it fires once)."""
    state_since: float = 0.0

    @property
    def live(self) -> bool:
        return self.state not in ("Completed", "Failed", "Rejected", "Expired")


@dataclass
class AskView:
    """An ask the shim sent and the core holds (a released ask is forgotten, like the core does)."""

    app: str
    key: str
    resource: dict[str, int]
    max_allocations: int
    placeholder: bool
    task_group: str
    timeout_ms: int
    allocated: int = 0

    @property
    def pending(self) -> int:
        return self.max_allocations - self.allocated


@dataclass
class NodeView:
    """A node the core accepted."""

    id: str
    partition: str
    capacity: dict[str, int]
    occupied: dict[str, int]
    state: str = "Schedulable"


@dataclass
class AllocView:
    """An allocation the shim runs (told by the core, or recovered)."""

    uuid: str
    app: str
    key: str
    node: str
    resource: dict[str, int]
    placeholder: bool
    task_group: str
    created: float
    timeout_ms: int = 0
    recovered: bool = False
    releasing: si.TerminationType | None = None
    """The type of a release the core started and the shim has not confirmed."""
    message: si.Allocation | None = None


@dataclass
class RMView:
    """Everything one RM knows; a registration starts it afresh."""

    rm_id: str
    config: model.ConfigModel
    paused: bool = False
    paused_at: float = 0.0
    stopped: bool = False
    apps: dict[str, AppView] = field(default_factory=dict)
    asks: dict[tuple[str, str], AskView] = field(default_factory=dict)
    nodes: dict[str, NodeView] = field(default_factory=dict)
    allocs: dict[str, AllocView] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)
    """Applications reported terminated, with the time: they expire after the retention."""
    partitions: dict[str, Any] = field(default_factory=dict)
    """The core's partition objects last seen (a reload that removes one ends them)."""

    def forget_partition(self, name: str) -> None:
        for app_id in [a for a, v in self.apps.items() if v.partition == name]:
            del self.apps[app_id]
            self.finished.pop(app_id, None)
            for key in [k for k in self.asks if k[0] == app_id]:
                del self.asks[key]
            for uuid in [u for u, a in self.allocs.items() if a.app == app_id]:
                del self.allocs[uuid]
        for node_id in [n for n, v in self.nodes.items() if v.partition == name]:
            del self.nodes[node_id]

    # -- views the monitor and the rules share ---------------------------------
    def allocs_of(self, app_id: str) -> list[AllocView]:
        return [a for a in self.allocs.values() if a.app == app_id]

    def allocs_on(self, node_id: str) -> list[AllocView]:
        return [a for a in self.allocs.values() if a.node == node_id]

    def free(self, node_id: str) -> dict[str, int]:
        """Schedulable minus occupied minus every allocation the shim knows on the node."""
        node = self.nodes[node_id]
        used = qty.total(a.resource for a in self.allocs.values() if a.node == node_id)
        return qty.minus(qty.minus(node.capacity, node.occupied), used)

    def apps_below(self, partition: str, path: str) -> list[AppView]:
        """The applications in ``path``'s subtree of a partition."""
        prefix = path + "."
        return [a for a in self.apps.values() if a.partition == partition
                and (a.path == path or a.path.startswith(prefix))]

    def usage_below(self, partition: str, path: str) -> dict[str, int]:
        """What the applications in ``path``'s subtree hold (placeholders and releasing too)."""
        inside = {a.id for a in self.apps_below(partition, path)}
        return qty.total(a.resource for a in self.allocs.values() if a.app in inside)

    def pending_placeholders(self, app_id: str) -> list[AskView]:
        return [k for k in self.asks.values()
                if k.app == app_id and k.placeholder and k.pending > 0]

    def pending_asks(self, app_id: str) -> list[AskView]:
        return [k for k in self.asks.values() if k.app == app_id and k.pending > 0]

    def holds_slot(self, app: AppView) -> bool:
        """``maxapplications``: live and holding an allocation, or started."""
        return app.live and (bool(self.allocs_of(app.id)) or app.state in ("Running",
                                                                            "Completing"))

    def live_apps(self) -> list[str]:
        return sorted(a for a, v in self.apps.items() if v.live)

    def running(self) -> Iterator[AllocView]:
        """Allocations the shim may release or must confirm, in a stable order."""
        for uuid in sorted(self.allocs):
            yield self.allocs[uuid]
