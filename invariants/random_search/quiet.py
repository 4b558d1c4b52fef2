"""The core's configuration warnings kept quiet while the checker runs: it draws such
configurations on purpose and judges how they load itself."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


class _NoConfigurationWarnings(logging.Filter):
    """Drops the core's "configuration: ..." warnings (an unknown sort policy, say)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("configuration:")


@contextlib.contextmanager
def configuration_warnings_quiet() -> Iterator[None]:
    """The core logs a warning per registration of a configuration YuniKorn only warns
    about; the checker draws such configurations on purpose (and judges how they load
    itself), so a run would print hundreds of them a second."""
    core_log = logging.getLogger("yunikorn_fsm")
    quiet = _NoConfigurationWarnings()
    core_log.addFilter(quiet)
    # Through the wire the checker pauses and re-registers RMs on purpose: the server's
    # notes about it are its traffic, not news (errors still show).
    rpc_log = logging.getLogger("yunikorn_fsm.rpc")
    level = rpc_log.level
    rpc_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        core_log.removeFilter(quiet)
        rpc_log.setLevel(level)
