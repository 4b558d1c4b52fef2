"""Exceptions raised by the scheduler core.

Two things raise out of the public API: a configuration the core can not load
(the contract: an invalid config "raises ConfigError and changes nothing"),
and a request from an RM that never registered, which has no callback to be
answered through (:class:`UnknownResourceManager`). Every other mistake in a
shim's request is answered with a rejection or an event.
"""

from __future__ import annotations


class SchedulerError(Exception):
    """Base class of every exception the package raises on purpose."""


class ConfigError(SchedulerError, ValueError):
    """A queue configuration that can not be loaded.

    ``path`` locates the offending value inside the document, in the form
    ``partitions[0].queues[0].queues[1].resources.max`` (empty when the whole
    document is wrong); ``reason`` says why, for a human.
    """

    def __init__(self, reason: str, path: str = "") -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


class UnknownResourceManager(SchedulerError, LookupError):
    """A request from an ``rm_id`` that never registered: there is no callback to answer.

    Raised by ``update_application``, ``update_node``, ``update_allocation`` and
    ``update_configuration``; nothing changes. (``connection_lost`` and
    ``unregister_resource_manager`` of an unknown RM are no-ops: there is
    nothing to pause or remove.)
    """

    def __init__(self, rm_id: str) -> None:
        self.rm_id = rm_id
        super().__init__(f"resource manager {rm_id!r} is not registered: register it first")
