"""The HTTP server of the REST routes and the metrics.

The standard library's ``ThreadingHTTPServer``: one thread per connection, a socket
timeout so a slow or half-open client only ever holds its own thread, a bounded request
line and header block. Each request takes the core's lock only while copying.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from typing import Any

from scheduler import Scheduler

from .metrics import Metrics
from .routes import Response, Routes, error
from .snapshot import capture

SOCKET_TIMEOUT = 5.0
"""Seconds a connection may stay silent before its thread drops it."""
PAGE_REFRESH = 2.0
"""Seconds between the live page's reads of ``/ui/state``."""
HISTORY_INTERVAL = 60.0
"""Seconds between history records (YuniKorn samples its internal metrics each minute)."""


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer
    timeout = SOCKET_TIMEOUT
    protocol_version = "HTTP/1.1"

    def _answer(self, response: Response, body: bool = True) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, OPTIONS")
        self.send_header("Access-Control-Allow-Headers",
                         "X-Requested-With,Content-Type,Accept,Origin")
        if response.status == 405:
            self.send_header("Allow", "GET, OPTIONS")
        self.end_headers()
        if body:
            self.wfile.write(response.body)

    def _serve(self) -> None:
        if int(self.headers.get("Content-Length") or 0):
            self.close_connection = True      # a body is never read: do not reuse
        routes = self.server.routes
        self._answer(routes.handle(self.command, self.path, self.headers.get("Accept", "")),
                     body=self.command != "HEAD")

    do_GET = do_HEAD = do_OPTIONS = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The standard library's own refusals (request line too long, bad version) as
        YuniKorn's JSON error."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self._answer(error(code if 400 <= code < 500 else 400, message or "Bad request"))

    def log_message(self, format: str, *args: Any) -> None:
        return


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    routes: Routes


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


class RestServer:
    """``serve --rest-port``: the routes and the metrics of one core, until ``stop()``."""

    def __init__(self, api: Scheduler, host: str = "127.0.0.1", port: int = 0,
                 history_interval: float = HISTORY_INTERVAL,
                 page_refresh: float = PAGE_REFRESH) -> None:
        self.api = api
        self.metrics = Metrics(api)
        server_class = _HTTPServer6 if ":" in host else _HTTPServer
        try:
            self._http = server_class((host, port), _Handler)
        except OSError:
            self.metrics.close()
            raise
        self._http.routes = Routes(api, self.metrics, api.clock.now(), page_refresh)
        self.port: int = self._http.server_address[1]
        self._interval = history_interval
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> int:
        self.metrics.book.sample(capture(self.api))
        for target, name in ((self._http.serve_forever, "yunikorn-fsm-rest"),
                             (self._sample, "yunikorn-fsm-rest-history")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.port

    def _sample(self) -> None:
        while not self._stop.wait(self._interval):
            self.metrics.book.sample(capture(self.api))

    def stop(self) -> None:
        self._stop.set()
        self._http.shutdown()
        self._http.server_close()
        for thread in self._threads:
            thread.join(timeout=2.0)
        self.metrics.close()
