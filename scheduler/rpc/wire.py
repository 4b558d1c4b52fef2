"""What the server and the client agree on: method paths, message sizes, metadata, error texts."""

from __future__ import annotations

from typing import Any, Final

import pydantic
from google.protobuf.message import Message

from ._generated import si_pb2, yunikorn_fsm_ext_pb2

SCHEDULER_SERVICE: Final = si_pb2.DESCRIPTOR.services_by_name["Scheduler"].full_name
EXT_SERVICE: Final = yunikorn_fsm_ext_pb2.DESCRIPTOR.services_by_name[
    "SchedulerExtensions"].full_name


def method(service: str, name: str) -> str:
    """The gRPC path of a method: ``/si.v1.Scheduler/UpdateNode``."""
    return f"/{service}/{name}"


MAX_MESSAGE_BYTES: Final = 2 * 1024 * 1024
"""Largest message the server sends: bigger responses are split (gRPC's default receive
limit is 4 MiB in every language, so no client has to raise it)."""

MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
"""Largest request the server accepts (a resync of tens of thousands of nodes fits)."""

CONFIG_PATH_KEY: Final = "yunikorn-fsm-config-path"
CONFIG_REASON_KEY: Final = "yunikorn-fsm-config-reason"
"""Trailing metadata of a refused configuration: ``ConfigError.path`` and ``.reason``."""


PREDICATES_KEY: Final = "yunikorn-fsm-predicates"
"""Metadata of ``RegisterResourceManager``: the predicates the RM answers on its
``Predicates`` stream, comma-separated (``predicates``, ``preemption_predicates``)."""


def split(message: Message, limit: int = MAX_MESSAGE_BYTES) -> list[Message]:
    """``message`` as one or more messages of at most about ``limit`` bytes each.

    Only messages made of repeated fields are split (every response of the
    spec is). The pieces hold the items in the original order, field after
    field, so reading the pieces in order is reading the original message.
    """
    fields = message.ListFields()
    if message.ByteSize() <= limit or not all(fd.is_repeated for fd, _ in fields):
        return [message]
    pieces: list[Message] = []
    piece = type(message)()
    size = 0
    for fd, value in fields:
        for item in value:
            cost = item.ByteSize() + 8 if fd.message_type is not None else 16
            if size and size + cost > limit:
                pieces.append(piece)
                piece, size = type(message)(), 0
            getattr(piece, fd.name).append(item)
            size += cost
    pieces.append(piece)
    return pieces


def invalid_details(error: pydantic.ValidationError) -> str:
    """``<field path>: <reason>`` of the first problem, for an INVALID_ARGUMENT status."""
    problems = error.errors()
    first = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{format_loc(first['loc']) or 'message'}: {first['msg']}{more}"


def format_loc(loc: tuple[Any, ...]) -> str:
    """``("asks", 0, "resourceAsk")`` -> ``asks[0].resourceAsk``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
