"""The SI's enumerations: proto numbers as values, the spec's names as members.

Each accepts its member, its proto number or its name on input and is
written as its name in JSON (the proto3 JSON mapping).
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema


def _enum_name(member: enum.Enum) -> str:
    return member.name


class ProtoEnum(enum.Enum):
    """Base of the SI enums: proto numbers as values, names as in the spec."""

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        """Map a member name to its member; anything else goes to the enum check."""
        if isinstance(value, bool):
            # bool is an int subclass: True must not silently mean member 1
            raise ValueError(f"expected a {cls.__name__} name or number, got a bool")
        if isinstance(value, enum.Enum) and not isinstance(value, cls):
            # The same member of the other SI dialect's enum (``si.TerminationType.TIMEOUT``
            # for ``si.today.TerminationType``) is that member; any other enum's is not
            # (pydantic would take it by its value).
            same = cls.__members__.get(value.name)
            if isinstance(value, ProtoEnum) and type(value).__name__ == cls.__name__ \
                    and same is not None and same.value == value.value:
                return same
            raise ValueError(f"expected a {cls.__name__}, got {value!r}")
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            member = cls.__members__.get(value)
            if member is not None:
                return member
        elif isinstance(value, int):
            for member in cls.__members__.values():
                if member.value == value:
                    return member
        # the spec's names, not pydantic's list of numbers
        raise ValueError(f"expected one of {', '.join(cls.__members__)} (or its number), "
                         f"got {value!r}")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(
            cls._coerce,
            core_schema.enum_schema(
                cls,
                list(cls.__members__.values()),
                sub_type="int",
                serialization=core_schema.plain_serializer_function_ser_schema(
                    _enum_name, when_used="json", return_schema=core_schema.str_schema()
                ),
            ),
            ref=f"{cls.__module__}.{cls.__qualname__}",
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "title": cls.__name__,
            "description": (cls.__doc__ or "").strip(),
            "anyOf": [
                {"type": "string", "enum": list(cls.__members__)},
                {"type": "integer", "enum": [m.value for m in cls.__members__.values()]},
            ],
        }


class TerminationType(ProtoEnum):
    """Why an allocation or ask is released (002 spec, "Release previously allocated resources")."""

    UNKNOWN_TERMINATION_TYPE = 0
    STOPPED_BY_RM = 1
    TIMEOUT = 2
    PREEMPTED_BY_SCHEDULER = 3
    PLACEHOLDER_REPLACED = 4


class NodeAction(ProtoEnum):
    """NodeInfo.ActionFromRM (002 spec, "Schedulable nodes registration and updates")."""

    UNKNOWN_ACTION_FROM_RM = 0
    CREATE = 1
    UPDATE = 2
    DRAIN_NODE = 3
    DECOMISSION = 4
    DRAIN_TO_SCHEDULABLE = 5


class SchedulingState(ProtoEnum):
    """UpdateContainerSchedulingStateRequest.SchedulingState (002 spec, "Scheduler plugin")."""

    UNKNOWN_SCHEDULING_STATE = 0
    SKIPPED = 1
    SCHEDULED = 2
    RESERVED = 3
    FAILED = 4


# the request class re-exports the enum under the spec's nested name, which shadows it there
_SchedulingState = SchedulingState


class EventRecordType(ProtoEnum):
    """EventRecord.Type: the kind of object an event is about (002 spec, "Event Plugin")."""

    UNKNOWN_EVENTRECORD_TYPE = 0
    REQUEST = 1
    APP = 2
    NODE = 3
    QUEUE = 4


class EventChangeType(ProtoEnum):
    """EventRecord.ChangeType: the kind of change an event reports (002 spec, "Event Plugin")."""

    NONE = 0
    SET = 1
    ADD = 2
    REMOVE = 3


