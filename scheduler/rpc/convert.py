"""Conversion between the SI's pydantic models (``scheduler.si``) and its protobuf messages.

The two describe the same messages (``tests/test_rpc_proto.py`` keeps them
equal), so one plan per message type, derived from the proto descriptor and the
pydantic fields, drives every conversion; nothing is hand-written per message.

Both dialects convert here: the seed's models (``scheduler.si``) to
``si_pb2`` (``si.proto``), today's own models (``scheduler.si.today``) to
``si_today_pb2`` (``si_today.proto``). The messages the two share are one
model each; at the top of a message they take the seed's class (the bytes
are the same), and inside a message the class of the field that holds them,
so a ``Resource`` inside today's ``Allocation`` becomes a
``si.today.v1.Resource``.

- :func:`to_proto` builds a protobuf message straight from a model's
  attributes (no JSON or dict round trip): the server's hot path, where one
  ``AllocationResponse`` can carry 10,000 allocations. Repeats of one ask share
  one ``si.Resource`` object in the core's responses; its protobuf form is
  built once per call.
- :func:`from_proto` validates what arrives over the wire by building the
  pydantic model from the message's set fields, so a bad message raises
  ``pydantic.ValidationError`` naming the field. Fields at their proto3
  default are unset and take the model's default (``maxAllocations`` 0 means 1,
  an empty ``partitionName`` means ``default``).
"""

from __future__ import annotations

import enum
from typing import Any, Final, TypeVar

from google.protobuf import message_factory
from google.protobuf.message import Message
from pydantic import BaseModel

from scheduler import si
from scheduler.si import today

from ._generated import si_pb2, si_today_pb2

__all__ = [
    "ENUMS",
    "PROTO_CLASSES",
    "TODAY_PROTO_CLASSES",
    "from_proto",
    "message_dict",
    "to_proto",
]

_M = TypeVar("_M", bound=BaseModel)

PROTO_CLASSES: Final[dict[type[BaseModel], type[Message]]] = {
    **{model: getattr(si_pb2, model.__name__) for model in si.MESSAGE_MODELS},
    **{model: getattr(si_today_pb2, model.__name__) for model in today.OWN_MODELS},
}
"""Every SI model and its protobuf class: the seed's and the shared models in package
``si.v1``, today's own in ``si.today.v1`` (same names)."""

TODAY_PROTO_CLASSES: Final[dict[type[BaseModel], type[Message]]] = {
    model: getattr(si_today_pb2, model.__name__) for model in today.MESSAGE_MODELS
}
"""Every model of today's SI and its class in ``si.today.v1`` (the shared ones too)."""

ENUMS: Final[dict[str, type[si.ProtoEnum]]] = {
    "si.v1.TerminationType": si.TerminationType,
    "si.v1.NodeInfo.ActionFromRM": si.NodeAction,
    "si.v1.UpdateContainerSchedulingStateRequest.SchedulingState": si.SchedulingState,
    "si.v1.EventRecord.Type": si.EventRecordType,
    "si.v1.EventRecord.ChangeType": si.EventChangeType,
    "si.today.v1.TerminationType": today.TerminationType,
    "si.today.v1.NodeInfo.ActionFromRM": today.NodeAction,
    "si.today.v1.UpdateContainerSchedulingStateRequest.SchedulingState": today.SchedulingState,
    "si.today.v1.EventRecord.Type": today.EventRecordType,
    "si.today.v1.EventRecord.ChangeType": today.EventChangeType,
    "si.today.v1.EventRecord.ChangeDetail": today.EventChangeDetail,
}
"""Every proto enum (full name) and the ``scheduler.si`` (or ``si.today``) enum it is."""

# field kinds
_SCALAR, _ENUM, _MSG, _LIST, _LIST_MSG, _MAP, _MAP_MSG = range(7)

# (attribute, proto name, kind, class of a message field's items or None)
_Step = tuple[str, str, int, "type[Message] | None"]
_PLANS: dict[tuple[type[BaseModel], type[Message]], tuple[_Step, ...]] = {}
_KINDS: dict[Any, int] = {}


def _kind(fd: Any) -> int:
    """How a field is converted (cached per field descriptor)."""
    kind = _KINDS.get(fd)
    if kind is None:
        msg = fd.message_type
        if msg is not None and msg.GetOptions().map_entry:
            kind = _MAP_MSG if msg.fields_by_name["value"].message_type is not None else _MAP
        elif fd.is_repeated:
            kind = _LIST_MSG if msg is not None else _LIST
        elif msg is not None:
            kind = _MSG
        else:
            kind = _ENUM if fd.enum_type is not None else _SCALAR
        _KINDS[fd] = kind
    return kind


def proto_name(model: type[BaseModel], attr: str) -> str:
    """The proto field name of a model attribute: its (serialization) alias, the spec's name."""
    info = model.model_fields[attr]
    name = info.serialization_alias or info.alias
    return name if name is not None else attr


def _plan(model: type[BaseModel], cls: type[Message]) -> tuple[_Step, ...]:
    plan = _PLANS.get((model, cls))
    if plan is None:
        steps: list[_Step] = []
        for attr in model.model_fields:
            fd: Any = cls.DESCRIPTOR.fields_by_name[proto_name(model, attr)]
            kind = _kind(fd)
            item = None
            if kind in (_MSG, _LIST_MSG):
                item = message_factory.GetMessageClass(fd.message_type)
            elif kind == _MAP_MSG:
                item = message_factory.GetMessageClass(
                    fd.message_type.fields_by_name["value"].message_type)
            steps.append((attr, fd.name, kind, item))
        plan = _PLANS[(model, cls)] = tuple(steps)
    return plan


def to_proto(obj: BaseModel, cls: type[Message] | None = None,
             _memo: dict[int, Message] | None = None) -> Message:
    """The protobuf message holding ``obj``'s values (defaults left unset, as proto3 does).

    ``cls`` is the protobuf class to build, ``PROTO_CLASSES[type(obj)]`` when
    omitted. One call converts one tree, whose messages all come from one
    proto file, so an object shared inside it has one protobuf form.
    """
    if cls is None:
        cls = PROTO_CLASSES[type(obj)]
    memo: dict[int, Message] = {} if _memo is None else _memo
    steps = _plan(type(obj), cls)
    values = obj.__dict__
    kwargs: dict[str, Any] = {}
    for attr, name, kind, item in steps:
        v = values[attr]
        if not v and kind != _MSG:
            continue                   # proto3 default: leave unset (enum 0 is falsy too)
        if kind in (_SCALAR, _LIST, _MAP):
            kwargs[name] = v
        elif kind == _ENUM:
            kwargs[name] = v.value if isinstance(v, enum.Enum) else v
        elif kind == _MSG:
            if v is not None:
                kwargs[name] = _shared(v, item, memo)
        elif kind == _LIST_MSG:
            kwargs[name] = [_shared(x, item, memo) for x in v]
        else:  # _MAP_MSG
            kwargs[name] = {k: _shared(x, item, memo) for k, x in v.items()}
    return cls(**kwargs)


def _shared(obj: BaseModel, cls: type[Message] | None, memo: dict[int, Message]) -> Message:
    """``to_proto`` of a sub-message, once per object (the core shares Resources)."""
    key = id(obj)
    msg = memo.get(key)
    if msg is None:
        msg = memo[key] = to_proto(obj, cls, memo)
    return msg


def message_dict(msg: Message) -> dict[str, Any]:
    """The set fields of ``msg`` as plain data keyed by the proto (= the spec's JSON) names."""
    out: dict[str, Any] = {}
    for fd, v in msg.ListFields():
        kind = _kind(fd)
        if kind == _MSG:
            out[fd.name] = message_dict(v)
        elif kind == _LIST_MSG:
            out[fd.name] = [message_dict(x) for x in v]
        elif kind == _MAP_MSG:
            out[fd.name] = {k: message_dict(x) for k, x in v.items()}
        elif kind == _LIST:
            out[fd.name] = list(v)
        elif kind == _MAP:
            out[fd.name] = dict(v)
        else:
            out[fd.name] = v
    return out


def from_proto(msg: Message, model: type[_M]) -> _M:
    """The validated model of ``msg``; raises ``pydantic.ValidationError`` naming the field."""
    return model.model_validate(message_dict(msg))
