"""Time, only through a clock object.

The core never reads the system clock directly: every timer (placeholder,
completing, execution timeout, expiry) compares against ``clock.now()``, so a
:class:`ManualClock` makes every run reproducible byte for byte, in the spirit
of SimPy's explicit environment clock.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now() -> float`` seconds; monotonic non-decreasing."""

    def now(self) -> float: ...


class SystemClock:
    """Wall-clock seconds from ``time.time()`` (the default for real shims)."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock that only moves when told to: for tests, the checker and replays."""

    __slots__ = ("_lock", "_now")

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError("a clock can not go backwards")
        with self._lock:
            self._now += float(seconds)
            return self._now

    def set(self, now: float) -> None:
        """Jump to ``now``, which must not be in the past."""
        with self._lock:
            if now < self._now:
                raise ValueError("a clock can not go backwards")
            self._now = float(now)

    def __getstate__(self) -> float:
        """Copies (``copy.deepcopy``, ``pickle``) keep the time and get a lock of their own."""
        return self._now

    def __setstate__(self, now: float) -> None:
        self._now = now
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now})"
