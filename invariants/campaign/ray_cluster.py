"""The Ray cluster a campaign runs on: imported lazily, joined, and asked who is alive."""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterator
from typing import Any

EXTRA = "yunikorn-fsm[ray]"


class ClusterError(Exception):
    """The campaign can not run on the cluster: the command says why and exits 2."""


class MissingExtra(ClusterError):
    """``ray`` is not installed: the command names the extra to install."""


def ray_module() -> Any:
    """``ray``, imported only when a campaign asks for it (it is heavy and optional)."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtra(f"--ray needs the ray extra: pip install '{EXTRA}'") from None


@contextlib.contextmanager
def connected(address: str) -> Iterator[Any]:
    """``ray`` joined to the cluster at ``address`` (``local``: a fresh one on this machine),
    left again on the way out, whatever ends the campaign.

    The dashboard is not started and the workers' output stays on their nodes: a campaign
    reports through its own progress line.
    """
    ray = ray_module()
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ClusterError(f"can not join the Ray cluster at {address}: {exc}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def alive(ray: Any) -> tuple[int, int]:
    """The nodes alive and the CPUs they offer."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return len(nodes), int(sum(n.get("Resources", {}).get("CPU", 0) for n in nodes))
