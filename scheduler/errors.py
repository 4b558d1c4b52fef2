"""Exceptions raised by the scheduler core.

Only configuration errors raise out of the public API (the contract: an invalid
config "raises ConfigError and changes nothing"); a shim's mistakes in requests
are answered with rejections or events instead.
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
