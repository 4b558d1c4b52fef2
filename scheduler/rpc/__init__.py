"""The interface spec's RPC interface: the core served over gRPC, and a Python client for it.

``Server`` serves ``si.v1.Scheduler`` (``scheduler/rpc/proto/si.proto``) and
the extension service ``yunikornfsm.ext.v1.SchedulerExtensions``
(``yunikorn_fsm_ext.proto``) in front of a :class:`scheduler.Scheduler`;
``yunikorn-fsm serve`` runs one. ``Client`` is the same SchedulerAPI for a
Python shim in another process. Both need the ``grpc`` extra
(``pip install 'yunikorn-fsm[grpc]'``). Importing this package needs nothing
more than the core: the classes load on first use, so the command line (and
``scheduler.rpc.commands``) works without the extra and says which to install.
``docs/shim-guide.md``, "Over gRPC".
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import Client, Disconnected
    from .server import Server, ServerOptions

PROTO_DIR = Path(__file__).resolve().parent / "proto"
"""Where ``si.proto`` and ``yunikorn_fsm_ext.proto`` are, for clients in other languages."""

EXTRA_HINT = "the gRPC interface needs the grpc extra: pip install 'yunikorn-fsm[grpc]'"

_LAZY = {"Client": "client", "Disconnected": "client", "Server": "server",
         "ServerOptions": "server"}

__all__ = ["EXTRA_HINT", "PROTO_DIR", "Client", "Disconnected", "Server", "ServerOptions",
           "missing_extra"]


def missing_extra() -> str | None:
    """None when grpcio and protobuf import; otherwise what to install, and why."""
    try:
        import google.protobuf  # noqa: F401
        import grpc  # noqa: F401
    except ImportError as error:
        return f"{EXTRA_HINT} ({error})"
    return None


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    problem = missing_extra()
    if problem is not None:
        raise ImportError(problem)
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
