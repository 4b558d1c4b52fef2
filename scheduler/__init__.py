"""yunikorn-fsm's scheduler core: Apache YuniKorn's design behind the SI.

``Scheduler`` implements the SchedulerAPI of the interface spec
(``002_1c9dede00f6609b9.txt``); ``si`` holds its messages. Everything else in
this package is internal and may change between releases.
"""

from __future__ import annotations

from . import si
from .api import Scheduler
from .clock import Clock, ManualClock, SystemClock
from .errors import ConfigError, SchedulerError

__all__ = [
    "Clock",
    "ConfigError",
    "ManualClock",
    "Scheduler",
    "SchedulerError",
    "SystemClock",
    "si",
]
