"""Test helpers for shim authors: a recording callback and a recording scheduler.

:class:`RecordingShim` keeps every message the core sent, in order, with the
views a shim needs (allocations, releases to confirm, rejections).
:class:`RecordingScheduler` wraps a ``Scheduler`` and writes every call to a
trace file that ``yunikorn-fsm replay`` checks against every invariant.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from . import si
from .api import Scheduler
from .callback import ResourceManagerCallback
from .si import today
from .trace import Step, header, write_lines


class RecordingShim:
    """Records every callback; ``predicates`` is optional (None: every node passes), and so
    is ``preemption_predicates`` (None: the core's first choice of victims is accepted)."""

    def __init__(
        self,
        predicates: Callable[[si.PredicatesArgs], bool] | None = None,
        preemption_predicates: Callable[
            [si.PreemptionPredicatesArgs], si.PreemptionPredicatesResponse] | None = None,
    ) -> None:
        self.messages: list[tuple[str, Any]] = []
        if predicates is not None:
            self.predicates = predicates
        if preemption_predicates is not None:
            self.preemption_predicates = preemption_predicates

    # -- the callback surface ------------------------------------------------
    def update_allocation(self, response: si.AllocationResponse) -> None:
        self.messages.append(("update_allocation", response))

    def update_application(self, response: si.ApplicationResponse) -> None:
        self.messages.append(("update_application", response))

    def update_node(self, response: si.NodeResponse) -> None:
        self.messages.append(("update_node", response))

    def send_event(self, events: list[si.EventRecord]) -> None:
        self.messages.append(("send_event", events))

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self.messages.append(("update_container_scheduling_state", request))

    # -- views -----------------------------------------------------------------
    def of(self, kind: str) -> list[Any]:
        return [m for k, m in self.messages if k == kind]

    @property
    def allocations(self) -> list[si.Allocation]:
        return [a for r in self.of("update_allocation") for a in r.new]

    @property
    def released(self) -> list[si.AllocationRelease]:
        return [a for r in self.of("update_allocation") for a in r.released]

    @property
    def released_asks(self) -> list[si.AllocationAskRelease]:
        """The seed's ask releases (today's SI has none: they arrive in ``released``)."""
        return [a for r in self.of("update_allocation") for a in getattr(r, "released_asks", ())]

    @property
    def rejected_asks(self) -> list[si.RejectedAllocationAsk]:
        """The seed's rejected asks (today's SI: :attr:`rejected_allocations`)."""
        return [a for r in self.of("update_allocation") for a in getattr(r, "rejected", ())]

    @property
    def rejected_allocations(self) -> list[today.RejectedAllocation]:
        """Today's rejected pods (the seed's SI: :attr:`rejected_asks`)."""
        return [a for r in self.of("update_allocation")
                for a in getattr(r, "rejected_allocations", ())]

    @property
    def accepted_apps(self) -> list[str]:
        return [a.application_id for r in self.of("update_application") for a in r.accepted]

    @property
    def rejected_apps(self) -> list[si.RejectedApplication]:
        return [a for r in self.of("update_application") for a in r.rejected]

    @property
    def app_updates(self) -> list[si.UpdatedApplication]:
        return [a for r in self.of("update_application") for a in r.updated]

    @property
    def accepted_nodes(self) -> list[str]:
        return [n.node_id for r in self.of("update_node") for n in r.accepted]

    @property
    def rejected_nodes(self) -> list[si.RejectedNode]:
        return [n for r in self.of("update_node") for n in r.rejected]

    @property
    def events(self) -> list[si.EventRecord]:
        return [e for batch in self.of("send_event") for e in batch]

    @property
    def scheduling_states(self) -> list[si.UpdateContainerSchedulingStateRequest]:
        return self.of("update_container_scheduling_state")

    def clear(self) -> None:
        self.messages.clear()


class RecordingScheduler:
    """A ``Scheduler`` that also writes every call to a trace file.

    Wrap the core a shim talks to, run the shim, then check the run with
    ``yunikorn-fsm replay FILE``: every invariant after every step. Clock
    movements between calls become ``advance`` steps, and every callback
    message is written as a ``{"callback": ...}`` line (ignored on replay, kept
    for the reader).
    """

    def __init__(self, api: Scheduler, path: str | Path, config: str = "") -> None:
        self.api = api
        self._last = api.clock.now()
        self._out = Path(path).open("w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._lock = threading.Lock()
        write_lines(self._out, header(config, self._last), ())

    def _write(self, item: Step | dict[str, Any]) -> None:
        with self._lock:
            self._out.write(json.dumps(item.to_json() if isinstance(item, Step) else item) + "\n")
            self._out.flush()

    def _step(self, step: Step) -> None:
        now = self.api.clock.now()
        if now > self._last:
            self._write(Step.advance(now - self._last))
            self._last = now
        self._write(step)

    def _callback(self, callback: ResourceManagerCallback) -> ResourceManagerCallback:
        recorder = self

        class Recorded:
            def __getattr__(self, name: str) -> Any:
                method = getattr(callback, name)
                if not callable(method) or name.startswith("_"):
                    return method

                def call(message: Any) -> Any:
                    recorder._write({"callback": name, "message": _message_json(message)})
                    return method(message)

                return call

        return cast(ResourceManagerCallback, Recorded())

    def register_resource_manager(
        self, request: si.RegisterResourceManagerRequest, callback: ResourceManagerCallback
    ) -> si.RegisterResourceManagerResponse:
        self._step(Step("register_resource_manager", request))
        return self.api.register_resource_manager(request, self._callback(callback))

    def update_application(self, request: si.ApplicationRequest) -> None:
        self._step(Step("update_application", request))
        self.api.update_application(request)

    def update_node(self, request: si.NodeRequest) -> None:
        self._step(Step("update_node", request))
        self.api.update_node(request)

    def update_allocation(self, request: si.AllocationRequest) -> None:
        self._step(Step("update_allocation", request))
        self.api.update_allocation(request)

    def update_configuration(self, request: si.UpdateConfigurationRequest) -> None:
        self._step(Step("update_configuration", request))
        self.api.update_configuration(request)

    def connection_lost(self, rm_id: str) -> None:
        self._step(Step("connection_lost", rm_id=rm_id))
        self.api.connection_lost(rm_id)

    def unregister_resource_manager(self, rm_id: str) -> None:
        self._step(Step("unregister_resource_manager", rm_id=rm_id))
        self.api.unregister_resource_manager(rm_id)

    def schedule(self) -> int:
        self._step(Step.schedule())
        return self.api.schedule()

    def state_dump(self) -> dict[str, Any]:
        return self.api.state_dump()

    def close(self) -> None:
        with self._lock:
            self._out.close()

    def __enter__(self) -> RecordingScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _message_json(message: Any) -> Any:
    if isinstance(message, list):
        return [_message_json(m) for m in message]
    if hasattr(message, "model_dump"):
        return message.model_dump(mode="json", by_alias=True)
    return message
