"""The read-only ws/v1 routes: a request path to a status and a body.

Paths, messages and status codes follow YuniKorn's router and handlers (apache/yunikorn-core
be3bb48 pkg/webservice/routes.go, handlers.go ``getPartitionQueue``, ``getApplication``,
``buildJSONErrorResponse``): 404 for an unknown partition, queue, application or node,
400 for an invalid queue name, 405 for anything but GET, HEAD or OPTIONS. A path that is
too long, badly encoded or climbs out with ``..`` is a 400 before any lookup.
Two routes are our own: ``/``, the auditors' page (``page.py``), and ``/ui/state``, the
live data it polls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
import yaml

from scheduler import Scheduler

from . import dao, page
from .metrics import Metrics
from .snapshot import PartitionCopy, capture

MAX_PATH = 2048
"""Longer request targets are refused (400) before they are parsed."""
QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
"""YuniKorn's ``QueueNameRegExp`` (pkg/common/configs/configvalidator.go)."""
INVALID_QUEUE = ("invalid queue name, max 64 characters consisting of alphanumeric "
                 "characters and '-', '_', '#', '@', '/', ':' allowed")
"""YuniKorn's ``ErrorInvalidQueueName`` (pkg/common/errors.go)."""
PARTITION_NOT_FOUND = "Partition not found"
QUEUE_NOT_FOUND = "Queue not found"
APPLICATION_NOT_FOUND = "Application not found"
NODE_NOT_FOUND = "Node not found"
JSON = "application/json; charset=UTF-8"
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = JSON


def error(status: int, message: str) -> Response:
    """YuniKorn's ``YAPIError``: ``status_code``, ``message`` and ``description``."""
    body = {"status_code": status, "message": message, "description": message}
    return Response(status, json.dumps(body).encode() + b"\n")


def _json(value: Any) -> Response:
    return Response(200, orjson.dumps(value) + b"\n")


def _queue_name(raw: str) -> str | None:
    """The queue path, or None when a part of it is not a valid queue name."""
    return raw if all(QUEUE_NAME.match(part) for part in raw.split(".")) else None


def _detail(rest: list[str]) -> dict[str, Any]:
    """What of the asks and allocations a route under ``/ws/v1`` shows (``capture``'s
    ``app_detail`` and ``node_detail``): only its own application's, or its queue's, or the
    nodes'."""
    if len(rest) < 3 or rest[0] != "partition":
        return {}
    if rest[2] in ("nodes", "node"):
        return {"node_detail": True}
    if len(rest) < 4:
        return {}
    if rest[2] == "application":
        app_id = rest[3]
        return {"app_detail": lambda a: a.id == app_id}
    if rest[2] == "queue":
        path = _queue_name(rest[3])
        if len(rest) == 6 and rest[4] == "application":
            app_id = rest[5]
            return {"app_detail": lambda a: a.id == app_id}
        if rest[4:] == ["applications"] and path is not None:
            return {"app_detail": lambda a: a.queue_path.lower() == path.lower()}
    return {}


class Routes:
    """Answers one request from a fresh snapshot of the core."""

    def __init__(self, api: Scheduler, metrics: Metrics, started: float,
                 page_refresh: float = 2.0) -> None:
        self.api = api
        self.page_refresh = page_refresh
        self.metrics = metrics
        self.started = started

    def handle(self, method: str, target: str, accept: str = "") -> Response:
        if len(target) > MAX_PATH:
            return error(400, "Request path too long")
        if method not in ("GET", "HEAD", "OPTIONS"):
            return error(405, "Method not allowed")
        try:
            parts = urlsplit(target)
            raw_segments = parts.path.split("/")
            segments = [unquote(s, errors="strict") for s in raw_segments]
        except (ValueError, UnicodeDecodeError):
            return error(400, "Badly encoded request path")
        if any(s in (".", "..") or "\x00" in s for s in segments):
            return error(400, "Invalid request path")
        query = parts.query
        return self._route([s for s in segments[1:]], query, accept)

    def _route(self, seg: list[str], query: str, accept: str) -> Response:
        if seg == [""]:
            html = page.render(page.live_data(capture(self.api, app_detail=True),
                                              self.page_refresh))
            return Response(200, html.encode(), HTML)
        if seg == ["ui", "state"]:
            return _json(page.live_state(capture(self.api, app_detail=True)))
        if seg[:2] == ["debug", "fullstatedump"] and len(seg) == 2:
            return self._full_dump()
        if seg[:2] != ["ws", "v1"]:
            return error(404, "Not found")
        rest = seg[2:]
        if rest == ["metrics"]:
            return Response(200, self.metrics.exposition(),
                            "text/plain; version=0.0.4; charset=utf-8")
        if rest == ["fullstatedump"]:
            return self._full_dump()
        if rest == ["config"]:
            return self._config(accept)
        snap = capture(self.api, **_detail(rest))
        book = self.metrics.book
        if rest == ["clusters"]:
            return _json([dao.cluster(p, self.started) for p in snap.partitions])
        if rest == ["partitions"]:
            return _json([dao.partition(p) for p in snap.partitions])
        if rest == ["scheduler", "healthcheck"]:
            return _json(dao.health(snap.partitions))
        if rest == ["scheduler", "node-utilizations"]:
            return _json([dao.node_utilisation(p) for p in snap.partitions])
        if rest == ["history", "apps"]:
            return _json(dao.history(book.records(), 1, "totalApplications"))
        if rest == ["history", "containers"]:
            return _json(dao.history(book.records(), 2, "totalContainers"))
        if len(rest) >= 3 and rest[0] == "partition":
            p = snap.partition(rest[1])
            if p is None:
                return error(404, PARTITION_NOT_FOUND)
            return self._partition(p, rest[2:], query)
        return error(404, "Not found")

    def _partition(self, p: PartitionCopy, rest: list[str], query: str) -> Response:
        book = self.metrics.book
        if rest == ["queues"]:
            return _json(dao.queue(p, p.queues["root"]))
        if rest == ["nodes"]:
            return _json(dao.nodes(p))
        if len(rest) == 2 and rest[0] == "node":
            n = p.nodes.get(rest[1])
            return _json(dao.node(n)) if n is not None else error(404, NODE_NOT_FOUND)
        if len(rest) == 2 and rest[0] == "application":
            a = p.apps.get(rest[1])
            return (_json(dao.application(a, book)) if a is not None
                    else error(404, APPLICATION_NOT_FOUND))
        if len(rest) >= 2 and rest[0] == "queue":
            path = _queue_name(rest[1])
            if path is None:
                return error(400, INVALID_QUEUE)
            q = p.queues.get(path)
            if q is None:
                return error(404, QUEUE_NOT_FOUND)
            if len(rest) == 2:
                return _json(dao.queue(p, q, subtree="subtree" in query.split("&")))
            if rest[2:] == ["applications"]:
                return _json([dao.application(p.apps[i], book) for i in q.apps if i in p.apps])
            if len(rest) == 4 and rest[2] == "application":
                a = p.apps.get(rest[3])
                if a is None or a.queue != q.path:
                    return error(404, APPLICATION_NOT_FOUND)
                return _json(dao.application(a, book))
        return error(404, "Not found")

    def _config(self, accept: str) -> Response:
        snap = capture(self.api)
        text = snap.configs[0][1] if snap.configs else ""
        if accept == "application/json":
            parsed = yaml.safe_load(text) or {}
            body = {**parsed, "DeadlockDetectionEnabled": False, "DeadlockTimeoutSeconds": 0}
            return _json(body)
        return Response(200, text.encode(), "application/x-yaml; charset=UTF-8")

    def _full_dump(self) -> Response:
        snap = capture(self.api, with_dump=True, app_detail=True, node_detail=True)
        book = self.metrics.book
        return _json({
            "timestamp": int(snap.now * 1e9),
            "partitions": [dao.partition(p) for p in snap.partitions],
            "schedulerHealth": dao.health(snap.partitions),
            "applications": [dao.application(a, book) for p in snap.partitions
                             for a in p.apps.values()],
            "appHistory": dao.history(book.records(), 1, "totalApplications"),
            "nodes": [{"partitionName": p.name, "nodesInfo": dao.nodes(p)}
                      for p in snap.partitions],
            "nodesUtils": [dao.node_utilisation(p) for p in snap.partitions],
            "clusterInfo": [dao.cluster(p, self.started) for p in snap.partitions],
            "containerHistory": dao.history(book.records(), 2, "totalContainers"),
            "queues": [dao.queue(p, p.queues["root"]) for p in snap.partitions],
            "stateDump": snap.dump,
        })
