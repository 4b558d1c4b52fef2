"""yunikorn-fsm's scheduler core: Apache YuniKorn's design behind the SI.

``Scheduler`` implements the SchedulerAPI of the interface spec
(``002``); ``si`` holds its messages;
``ResourceManagerCallback`` is what an RM hands over at registration. The
public modules are this package, ``si``, ``clock``, ``errors``, ``callback``,
``config`` (the ``queues.yaml`` model) and ``testing``; everything else is
internal and may change between releases (``docs/architecture.md``).
"""

from __future__ import annotations

from . import si
from .api import Scheduler
from .callback import ResourceManagerCallback
from .clock import Clock, ManualClock, SystemClock
from .errors import ConfigError, SchedulerError, UnknownResourceManager

__all__ = [
    "Clock",
    "ConfigError",
    "ManualClock",
    "ResourceManagerCallback",
    "Scheduler",
    "SchedulerError",
    "SystemClock",
    "UnknownResourceManager",
    "si",
]
