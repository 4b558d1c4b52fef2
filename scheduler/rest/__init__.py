"""YuniKorn's REST interface (ws/v1) and Prometheus metrics for ``yunikorn-fsm serve``.

``RestServer`` serves the read-only routes YuniKorn's web UI reads and ``/ws/v1/metrics``
(``docs/observability.md``). It needs the ``rest`` extra (``prometheus_client``);
importing this package does not, so the command line can say what to install.
Modules, bottom-up: ``snapshot`` (the copy under the core's lock), ``metrics`` (the
transition observer and the registry), ``dao`` (YuniKorn's JSON shapes), ``routes``,
``server``.
"""

from __future__ import annotations

EXTRA_HINT = "the REST interface needs the rest extra: pip install 'yunikorn-fsm[rest]'"


def missing_extra() -> str | None:
    """None when prometheus_client imports; otherwise what to install, and why."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError as error:
        return f"{EXTRA_HINT} ({error})"
    return None
