"""Serving: a core behind the SI's ``si.v1.Scheduler`` service and the extension service.

``Server`` binds (TLS when given a certificate and key), serves both services
(``scheduler_service``, ``extension_service``) over one registry of RMs
(``registry``), and runs the core's background scheduling; ``stop()`` ends
every stream with UNAVAILABLE and stops both. ``yunikorn-fsm serve``
(``scheduler.rpc.commands``) runs one until a signal. Shape and choices:
``docs/shim-guide.md``, "Over gRPC"; ``docs/design-notes.md``, "The RPC
interface".
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass

import grpc

from scheduler import Scheduler

from . import wire
from .extension_service import ExtensionService
from .registry import Registry
from .scheduler_service import SchedulerService


@dataclass(frozen=True)
class ServerOptions:
    """How ``Server`` listens and what it tolerates (``yunikorn-fsm serve`` flags).

    The paused-RM timeout is not here: it is the core's
    (``Scheduler(rm_pause_timeout=...)``).
    """

    host: str = "127.0.0.1"
    port: int = 3333
    tls_cert: bytes | None = None
    """PEM certificate chain; with ``tls_key`` the server only speaks TLS."""
    tls_key: bytes | None = None
    token: str | None = None
    """When set, every call must carry ``authorization: Bearer <token>`` metadata."""
    stream_buffer_bytes: int = 64 * 1024 * 1024
    """Serialized bytes waiting for one stream before its client counts as not reading."""
    max_streams: int = 256
    """Concurrent calls (streams included) before new ones get RESOURCE_EXHAUSTED."""
    stalled_grace: float = 5.0
    """Seconds a stream ended for not reading may take to read its status before it is reset."""
    predicate_timeout: float = 0.5
    """Seconds the core's cycle waits for one answer of an RM's predicates (then: no fit)."""
    schedule_interval: float = 0.05
    """The background scheduling loop's idle wait (it wakes at once on new requests)."""


class Server:
    """``yunikorn-fsm serve``: the core's SchedulerAPI over gRPC, for shims in any language.

    ``start()`` binds, starts the core's background scheduling (unless the
    caller runs ``schedule()`` itself: ``background=False``) and returns the
    port; ``stop()`` ends every stream with UNAVAILABLE, then stops both.
    """

    def __init__(self, api: Scheduler | None = None, options: ServerOptions | None = None,
                 *, background: bool = True) -> None:
        self.api = api if api is not None else Scheduler()
        self.options = options if options is not None else ServerOptions()
        self._background = background
        self._registry = Registry(self.api, self.options.stream_buffer_bytes,
                                  self.options.stalled_grace, self.options.predicate_timeout)
        self._grpc: grpc.Server | None = None
        self.port: int | None = None

    def start(self) -> int:
        """Listen and serve; return the bound port (the real one for port 0)."""
        opts = self.options
        server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(
                max_workers=opts.max_streams + 8, thread_name_prefix="yunikorn-fsm-rpc"),
            maximum_concurrent_rpcs=opts.max_streams,
            options=[
                ("grpc.so_reuseport", 0),          # a port in use is an error, not shared
                ("grpc.max_receive_message_length", wire.MAX_REQUEST_BYTES),
                ("grpc.keepalive_time_ms", 30_000),
                ("grpc.keepalive_timeout_ms", 10_000),
            ])
        server.add_generic_rpc_handlers((
            SchedulerService(token=opts.token, registry=self._registry).handlers(),
            ExtensionService(token=opts.token, registry=self._registry).handlers()))
        address = (f"[{opts.host}]:{opts.port}" if ":" in opts.host
                   else f"{opts.host}:{opts.port}")
        try:
            if opts.tls_cert is not None and opts.tls_key is not None:
                creds = grpc.ssl_server_credentials([(opts.tls_key, opts.tls_cert)])
                port = server.add_secure_port(address, creds)
            else:
                port = server.add_insecure_port(address)
        except RuntimeError as error:
            raise OSError(f"can not listen on {address}: {error}") from None
        if port == 0:
            raise OSError(f"can not listen on {address}")
        self._registry.watch()
        server.start()
        self._grpc = server
        self.port = port
        if self._background:
            self.api.start(interval=opts.schedule_interval)
        return port

    def stop(self, grace: float = 1.0) -> None:
        """End every stream (UNAVAILABLE), stop serving and stop background scheduling."""
        self._registry.stop()
        if self._grpc is not None:
            self._grpc.stop(grace).wait()
        if self._background:
            self.api.stop()
        self._registry.shutdown()

    def sessions(self) -> dict[str, str]:
        """The RMs this server knows and their connection state (``running`` or ``paused``)."""
        return self._registry.states()
