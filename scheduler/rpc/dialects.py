"""Which SI an RM speaks over the wire: the seed's (``si.proto``) or today's (``si_today.proto``).

Both dialects use one service path (``/si.v1.Scheduler/...``) and, for most
messages, the same bytes; they differ in a few fields and one enum value. A
request is read against both: a field one dialect knows and the other does
not names the dialect (``asks``, ``UUID``, ``allocationAsksToRelease``,
``occupiedResource``, ``existingAllocations`` are the seed's; ``allocations``
and ``CREATE_DRAIN`` are today's). The answer for one request is one of:

- the RM's dialect, when it has one: the request is read with its classes;
- the dialect the request shows, for an RM that has none yet;
- none, for a request made only of fields both dialects share (an
  ``ApplicationRequest``, a release by key, a plain node): it is read in the
  RM's dialect, the seed's while the RM has none, and decides nothing;
- INVALID_ARGUMENT naming the fields, for a request with fields of both
  dialects, or with fields of the dialect the RM does not speak.

Fields neither dialect knows are ignored, as proto3 does.

Cost: for an RM whose dialect is known, a request is parsed once with that
dialect's class; ``DiscardUnknownFields`` then ``ByteSize`` against the
input length says whether it carried fields that class does not know (a
rare non-canonical encoding also differs), and only then, or when
validation fails, is the request walked field by field. The walk descends
only into messages whose two versions differ (never into a ``Resource``),
so it costs one step per item of a list that differs (asks, releases,
nodes), not per byte.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import grpc
import pydantic
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from scheduler import si
from scheduler.dialect import Dialect
from scheduler.si import today

from . import wire
from ._generated import si_pb2, si_today_pb2
from .convert import from_proto
from .status import Abort

__all__ = ["REQUESTS", "Dialect", "Reading", "differing_fields", "read"]

REQUESTS: Final[dict[str, dict[Dialect, tuple[type[Message], type[pydantic.BaseModel]]]]] = {
    "allocation": {Dialect.SEED: (si_pb2.AllocationRequest, si.AllocationRequest),
                   Dialect.TODAY: (si_today_pb2.AllocationRequest, today.AllocationRequest)},
    "application": {Dialect.SEED: (si_pb2.ApplicationRequest, si.ApplicationRequest),
                    Dialect.TODAY: (si_pb2.ApplicationRequest, today.ApplicationRequest)},
    "node": {Dialect.SEED: (si_pb2.NodeRequest, si.NodeRequest),
             Dialect.TODAY: (si_today_pb2.NodeRequest, today.NodeRequest)},
}
"""Each stream's request: its protobuf class and model in each dialect."""

_OTHER: Final = {Dialect.SEED: Dialect.TODAY, Dialect.TODAY: Dialect.SEED}
_SHOWN: Final = 4
"""How many fields an error names before it counts the rest."""


@dataclass(frozen=True)
class Reading:
    """A request read: the model, and the dialect its fields showed (None: shared fields only)."""

    request: Any
    shown: Dialect | None


# ------------------------------------------------------------------ the walk

# protobuf's descriptor types are loosely typed (C and Python kinds, optional
# enum and message types); the walk treats them as Any.
Descriptor = Any
FieldDescriptor = Any

_SAME: dict[tuple[Descriptor, Descriptor], bool] = {}


def _same(a: Descriptor, b: Descriptor) -> bool:
    """Whether two message types agree on every field number, type and enum value, deeply."""
    key = (a, b)
    same = _SAME.get(key)
    if same is None:
        _SAME[key] = True                       # a recursive type agrees with itself
        same = set(a.fields_by_number) == set(b.fields_by_number) and all(
            _same_field(fd, b.fields_by_number[n]) for n, fd in a.fields_by_number.items())
        _SAME[key] = same
    return same


def _same_field(a: FieldDescriptor, b: FieldDescriptor) -> bool:
    if a.type != b.type or a.is_repeated != b.is_repeated:
        return False
    if a.enum_type is not None:
        return ({v.number for v in a.enum_type.values}
                == {v.number for v in b.enum_type.values})
    if a.message_type is not None:
        return _same(a.message_type, b.message_type)
    return True


def differing_fields(message: Message, other: Descriptor) -> tuple[list[str], list[str]]:
    """The fields set in ``message`` that only its dialect knows, and those only ``other`` knows.

    ``message`` was parsed with one dialect's class, so the other's fields
    are among its unknown fields (or, for an enum value, in a known field);
    ``other`` is the same message type in the other dialect. Paths read like
    ``releases.allocationsToRelease[0].UUID`` or ``nodes[1].action=CREATE_DRAIN``.
    """
    own: list[str] = []
    others: list[str] = []
    _walk(message, other, "", own, others)
    return own, others


def _walk(message: Message, other: Descriptor, path: str, own: list[str],
          others: list[str]) -> None:
    if _same(message.DESCRIPTOR, other):
        return
    for fd, value in message.ListFields():
        ofd = other.fields_by_number.get(fd.number)
        where = path + fd.name
        if ofd is None or ofd.type != fd.type:
            own.append(where)
        elif fd.message_type is not None:
            for key, item in _items(fd, value):
                _walk(item, _value_type(ofd), f"{where}{key}.", own, others)
        elif fd.enum_type is not None:
            known = other.fields_by_number[fd.number].enum_type.values_by_number
            mine = fd.enum_type.values_by_number
            for key, number in _items(fd, value):
                if number not in mine and number in known:
                    others.append(f"{where}{key}={known[number].name}")
                elif number in mine and number not in known:
                    own.append(f"{where}{key}={mine[number].name}")
    unknowns: Any = UnknownFieldSet(message)
    for unknown in unknowns:
        ofd = other.fields_by_number.get(unknown.field_number)
        if ofd is not None:
            others.append(path + ofd.name)


def _items(fd: FieldDescriptor, value: Any) -> Iterator[tuple[str, Any]]:
    """``(path suffix, item)`` of a field's values: ``[i]`` for a list, ``[key]`` for a map."""
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        if fd.message_type.fields_by_name["value"].message_type is None:
            return
        for key in sorted(value):
            yield f"[{key}]", value[key]
    elif fd.is_repeated:
        for i, item in enumerate(value):
            yield f"[{i}]", item
    else:
        yield "", value


def _value_type(fd: FieldDescriptor) -> Descriptor:
    """The message type of a field's items (a map's value type for a map)."""
    msg = fd.message_type
    if msg.GetOptions().map_entry:
        return msg.fields_by_name["value"].message_type
    return msg


# ------------------------------------------------------------------ reading a request


def read(kind: str, raw: bytes, rm_id: str, speaks: Dialect | None) -> Reading:
    """The request of stream ``kind`` in ``raw`` from an RM speaking ``speaks`` (None: unknown).

    Raises ``Abort`` with INVALID_ARGUMENT for bytes that do not parse, for
    fields of both dialects, for fields of the dialect the RM does not speak,
    and for values the model refuses (naming the field).
    """
    dialect = Dialect.SEED if speaks is None else speaks
    cls, model = REQUESTS[kind][dialect]
    message = _parse(cls, raw)
    if speaks is not None:
        message.DiscardUnknownFields()
        if message.ByteSize() == len(raw):
            try:
                return Reading(from_proto(message, model), None)
            except pydantic.ValidationError:
                pass                             # maybe a value of the other dialect
        message = _parse(cls, raw)
    own, others = differing_fields(message, _class(kind, _OTHER[dialect]).DESCRIPTOR)
    if own and others:
        seed, now = (own, others) if dialect is Dialect.SEED else (others, own)
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                    f"{_names(seed)} of {Dialect.SEED.label} and {_names(now)} of "
                    f"{Dialect.TODAY.label} in one request: send the fields of one SI")
    if others:
        if speaks is not None:
            # worded as the core words a request of the other dialect in process
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"resource manager {rm_id} speaks {speaks.label}, and this request "
                        f"uses {_OTHER[speaks].label} ({_names(others)}): one registration "
                        "speaks one dialect; register again to change")
        dialect = Dialect.TODAY if dialect is Dialect.SEED else Dialect.SEED
        cls, model = REQUESTS[kind][dialect]
        message = _parse(cls, raw)
    try:
        request = from_proto(message, model)
    except pydantic.ValidationError as error:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, wire.invalid_details(error)) from None
    return Reading(request, dialect if (own or others) else None)


def _class(kind: str, dialect: Dialect) -> type[Message]:
    return REQUESTS[kind][dialect][0]


def _parse(cls: type[Message], raw: bytes) -> Message:
    try:
        return cls.FromString(raw)
    except DecodeError as error:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                    f"malformed {cls.DESCRIPTOR.name}: {error}") from None


def _names(paths: list[str]) -> str:
    """``a``, ``a and b``, ``a, b, c and d``, ``a, b, c, d and 3 more``."""
    if len(paths) > _SHOWN:
        return f"{', '.join(paths[:_SHOWN])} and {len(paths) - _SHOWN} more"
    if len(paths) == 1:
        return paths[0]
    return f"{', '.join(paths[:-1])} and {paths[-1]}"
