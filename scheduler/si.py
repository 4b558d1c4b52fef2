"""The scheduler interface (SI) messages as pydantic v2 models.

One model per message of the interface spec (``002_1c9dede00f6609b9.txt``,
"Generic definitions" and the sections that follow it), plus the fields the
gang scheduling design adds (``001_77e2b1ca48512e76.txt``, "Interface
changes").

Conventions (``CONTRACT.md``, "Messages: scheduler.si"):

- Python attributes are snake_case; the spec's camelCase names are aliases and
  ``model_dump(by_alias=True)`` emits them.  ``...ID`` becomes ``..._id``,
  ``UUID`` becomes ``uuid``, ``Originator`` becomes ``originator``.
- Defaults follow proto3 (empty string, 0, False, empty collections, ``None``
  for an optional sub-message), except ``AllocationAsk.max_allocations`` (1)
  and every ``partition_name`` ("default").
- Enums accept the member, its proto number or its name on input and are
  written as their name in JSON (proto3 JSON mapping).
- The core builds its outgoing messages with ``Model.model_construct(...)``
  (no validation); nothing here depends on a validator having run, so such
  objects are complete and compare equal to validated ones.
"""

from __future__ import annotations

import builtins
import enum
import json
import pathlib
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Self, TypeVar, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

__all__ = [
    "DEFAULT_PARTITION",
    "MESSAGE_MODELS",
    "AcceptedApplication",
    "AcceptedNode",
    "AddApplicationRequest",
    "Allocation",
    "AllocationAsk",
    "AllocationAskRelease",
    "AllocationRelease",
    "AllocationReleasesRequest",
    "AllocationRequest",
    "AllocationResponse",
    "ApplicationRequest",
    "ApplicationResponse",
    "EventChangeType",
    "EventRecord",
    "EventRecordType",
    "NodeAction",
    "NodeInfo",
    "NodeRequest",
    "NodeResponse",
    "PredicatesArgs",
    "PreemptionPolicy",
    "PreemptionPredicatesArgs",
    "PreemptionPredicatesResponse",
    "ProtoEnum",
    "Quantity",
    "RegisterResourceManagerRequest",
    "RegisterResourceManagerResponse",
    "RejectedAllocationAsk",
    "RejectedApplication",
    "RejectedNode",
    "RemoveApplicationRequest",
    "Resource",
    "SchedulingState",
    "TerminationType",
    "UpdateConfigurationRequest",
    "UpdateContainerSchedulingStateRequest",
    "UpdatedApplication",
    "UserGroupInformation",
    "resource_from_dict",
    "write_json_schemas",
]

DEFAULT_PARTITION = "default"
"""The partition a message names when it names none."""

# proto3 scalar ranges
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_Int32 = Annotated[int, Field(ge=_INT32_MIN, le=_INT32_MAX)]
_Int64 = Annotated[int, Field(ge=_INT64_MIN, le=_INT64_MAX)]
# an id the spec requires: must be a non-empty string
_RequiredId = Annotated[str, Field(min_length=1)]
_ResourceName = Annotated[str, Field(min_length=1)]

_setattr = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


# --------------------------------------------------------------------------- enums


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
            # pydantic would take another enum's member by its value
            raise ValueError(f"expected a {cls.__name__}, got {value!r}")
        if isinstance(value, str):
            member = cls.__members__.get(value)
            if member is not None:
                return member
        return value

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


# --------------------------------------------------------------------------- base


_REQUIRED: Any = object()

# per model: (field names, ((name, default_factory or None, default or _REQUIRED), ...))
_ConstructPlan = tuple[frozenset[str], tuple[tuple[str, Callable[[], Any] | None, Any], ...]]
_CONSTRUCT_PLANS: dict[type[BaseModel], _ConstructPlan] = {}


def _new(cls: type[_M], data: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance holding ``data`` as is: what pydantic's ``model_construct`` ends with."""
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", data)
    _setattr(obj, "__pydantic_fields_set__", fields_set)
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj


def _construct_plan(cls: type[BaseModel]) -> _ConstructPlan:
    plan = _CONSTRUCT_PLANS.get(cls)
    if plan is None:
        steps: list[tuple[str, Callable[[], Any] | None, Any]] = []
        for name, field in cls.model_fields.items():
            factory = field.default_factory
            if factory is not None:
                steps.append((name, cast("Callable[[], Any]", factory), _REQUIRED))
            elif field.is_required():
                steps.append((name, None, _REQUIRED))
            else:
                steps.append((name, None, field.default))
        plan = (frozenset(cls.model_fields), tuple(steps))
        _CONSTRUCT_PLANS[cls] = plan
    return plan


class _Message(BaseModel):
    """Common configuration of every SI message."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=False)

    @classmethod
    def model_construct(  # type: ignore[override]  # pydantic's mypy plugin synthesises one
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """Pydantic's ``model_construct`` (no validation), with a fast path for attribute names.

        The core builds its outgoing messages this way on the hot path; the
        result is the object pydantic's own ``model_construct`` builds (defaults
        filled in, ``model_fields_set`` = the names passed).  Aliases and
        unknown keys take pydantic's own path.
        """
        names, steps = _construct_plan(cls)
        if not names.issuperset(values):
            return super().model_construct(_fields_set, **values)
        data: dict[str, Any] = {}
        for name, factory, default in steps:
            if name in values:
                data[name] = values[name]
            elif factory is not None:
                data[name] = factory()
            elif default is not _REQUIRED:
                # every non-factory default here is immutable (str, int, bool, enum, None)
                data[name] = default
        return _new(cls, data, set(values) if _fields_set is None else _fields_set)


# --------------------------------------------------------------------------- resources


class Quantity(_Message):
    """A single non-negative int64 amount (002 spec, "Ask for more resources", common fields)."""

    value: Annotated[int, Field(ge=0, le=_INT64_MAX)] = Field(default=0, alias="value")


class Resource(_Message):
    """A sparse map of resource name to Quantity (002 spec, "Ask for more resources")."""

    resources: dict[_ResourceName, Quantity] = Field(default_factory=dict, alias="resources")

    @classmethod
    def of(cls, **quantities: int) -> Self:
        """Validated Resource from keyword amounts: ``Resource.of(memory=10, vcore=1)``."""
        return cls.model_validate(
            {"resources": {name: {"value": v} for name, v in quantities.items()}}
        )

    def as_dict(self) -> dict[str, int]:
        """The resources as plain ``{name: int}``."""
        return {name: q.value for name, q in self.resources.items()}


def resource_from_dict(d: Mapping[str, int]) -> Resource:
    """Unvalidated Resource for the core's outgoing messages (built with model_construct)."""
    # Quantity.model_construct(value=v) / Resource.model_construct(resources=...), inlined
    return _new(
        Resource,
        {"resources": {k: _new(Quantity, {"value": v}, {"value"}) for k, v in d.items()}},
        {"resources"},
    )


# --------------------------------------------------------------------------- registration


class RegisterResourceManagerRequest(_Message):
    """An RM's registration and its configuration (002 spec, "RM register with scheduler")."""

    rm_id: _RequiredId = Field(alias="rmID")
    version: str = Field(default="", alias="version")
    policy_group: str = Field(default="", alias="policyGroup")
    build_info: dict[str, str] = Field(default_factory=dict, alias="buildInfo")
    config: str = Field(default="", alias="config")
    extra_config: dict[str, str] = Field(default_factory=dict, alias="extraConfig")


class RegisterResourceManagerResponse(_Message):
    """The (empty) answer to a registration (002 spec, "RM register with scheduler")."""


class UpdateConfigurationRequest(_Message):
    """A new configuration for an RM's policy group (002 spec, "Scheduler plugin")."""

    rm_id: _RequiredId = Field(alias="rmID")
    policy_group: str = Field(default="", alias="policyGroup")
    config: str = Field(default="", alias="config")
    extra_config: dict[str, str] = Field(default_factory=dict, alias="extraConfig")


# --------------------------------------------------------------------------- asks


class PreemptionPolicy(_Message):
    """An ask's preemption opt-out / opt-in flags (002 spec, "Preemption policy")."""

    allow_preempt_self: bool = Field(default=False, alias="allowPreemptSelf")
    allow_preempt_other: bool = Field(default=False, alias="allowPreemptOther")


class AllocationAsk(_Message):
    """A request for resources (002 spec, "Allocation ask"; gang fields: 001 "AllocationAsk")."""

    allocation_key: _RequiredId = Field(alias="allocationKey")
    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")
    resource_ask: Resource = Field(default_factory=Resource, alias="resourceAsk")
    max_allocations: Annotated[int, Field(ge=1, le=_INT32_MAX)] = Field(
        default=1, alias="maxAllocations"
    )
    priority: _Int32 = Field(default=0, alias="priority")
    execution_timeout_milli_seconds: _Int64 = Field(default=0, alias="executionTimeoutMilliSeconds")
    tags: dict[str, str] = Field(default_factory=dict, alias="tags")
    task_group_name: str = Field(default="", alias="taskGroupName")
    placeholder: bool = Field(default=False, alias="placeholder")
    originator: bool = Field(default=False, alias="Originator")
    preemption_policy: PreemptionPolicy | None = Field(default=None, alias="preemptionPolicy")


# --------------------------------------------------------------------------- applications


class UserGroupInformation(_Message):
    """The user and groups owning an application (002 spec, "User information")."""

    user: str = Field(default="", alias="user")
    groups: list[str] = Field(default_factory=list, alias="groups")


class AddApplicationRequest(_Message):
    """A new application (002 "Application requests"; placeholderAsk: 001 "AddApplication")."""

    application_id: _RequiredId = Field(alias="applicationID")
    queue_name: str = Field(default="", alias="queueName")
    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")
    ugi: UserGroupInformation = Field(default_factory=UserGroupInformation, alias="ugi")
    tags: dict[str, str] = Field(default_factory=dict, alias="tags")
    execution_timeout_milli_seconds: _Int64 = Field(default=0, alias="executionTimeoutMilliSeconds")
    placeholder_ask: Resource | None = Field(default=None, alias="placeholderAsk")
    gang_scheduling_style: str = Field(default="", alias="gangSchedulingStyle")


class RemoveApplicationRequest(_Message):
    """An application the RM removes (002 spec, "Application requests")."""

    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")


# --------------------------------------------------------------------------- allocations


class Allocation(_Message):
    """A new or recovered allocation (002 "Allocation of resources"; gang: 001 "Allocation")."""

    allocation_key: _RequiredId = Field(alias="allocationKey")
    allocation_tags: dict[str, str] = Field(default_factory=dict, alias="allocationTags")
    uuid: str = Field(default="", alias="UUID")
    resource_per_alloc: Resource = Field(default_factory=Resource, alias="resourcePerAlloc")
    priority: _Int32 = Field(default=0, alias="priority")
    node_id: _RequiredId = Field(alias="nodeID")
    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")
    task_group_name: str = Field(default="", alias="taskGroupName")
    placeholder: bool = Field(default=False, alias="placeholder")


class AllocationRelease(_Message):
    """An allocation release or its confirmation (002 "Release previously allocated resources")."""

    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")
    application_id: str = Field(default="", alias="applicationID")
    uuid: str = Field(default="", alias="UUID")
    termination_type: TerminationType = Field(
        default=TerminationType.UNKNOWN_TERMINATION_TYPE, alias="terminationType"
    )
    message: str = Field(default="", alias="message")
    allocation_key: str = Field(default="", alias="allocationKey")


class AllocationAskRelease(_Message):
    """An ask release or its confirmation (002 spec, "Release previously allocated resources")."""

    partition_name: str = Field(default=DEFAULT_PARTITION, alias="partitionName")
    application_id: str = Field(default="", alias="applicationID")
    allocation_key: str = Field(default="", alias="allocationKey")
    termination_type: TerminationType = Field(
        default=TerminationType.UNKNOWN_TERMINATION_TYPE, alias="terminationType"
    )
    message: str = Field(default="", alias="message")


class AllocationReleasesRequest(_Message):
    """The allocations and asks to release (002 spec, "Release previously allocated resources")."""

    allocations_to_release: list[AllocationRelease] = Field(
        default_factory=list, alias="allocationsToRelease"
    )
    allocation_asks_to_release: list[AllocationAskRelease] = Field(
        default_factory=list, alias="allocationAsksToRelease"
    )


# --------------------------------------------------------------------------- nodes


class NodeInfo(_Message):
    """A node and the RM's action on it (002 "Schedulable nodes registration and updates")."""

    ActionFromRM: ClassVar[type[NodeAction]] = NodeAction

    node_id: _RequiredId = Field(alias="nodeID")
    action: NodeAction = Field(default=NodeAction.UNKNOWN_ACTION_FROM_RM, alias="action")
    attributes: dict[str, str] = Field(default_factory=dict, alias="attributes")
    schedulable_resource: Resource | None = Field(default=None, alias="schedulableResource")
    occupied_resource: Resource | None = Field(default=None, alias="occupiedResource")
    existing_allocations: list[Allocation] = Field(
        default_factory=list, alias="existingAllocations"
    )


# --------------------------------------------------------------------------- feedback


class RejectedAllocationAsk(_Message):
    """An ask the scheduler rejected, with the reason (002 spec, "Feedback from Scheduler")."""

    allocation_key: str = Field(default="", alias="allocationKey")
    application_id: str = Field(default="", alias="applicationID")
    reason: str = Field(default="", alias="reason")


class UpdatedApplication(_Message):
    """An application state change reported to the RM (002 spec, "RM and scheduler updates")."""

    application_id: str = Field(default="", alias="applicationID")
    state: str = Field(default="", alias="state")
    state_transition_timestamp: _Int64 = Field(default=0, alias="stateTransitionTimestamp")
    message: str = Field(default="", alias="message")


class RejectedApplication(_Message):
    """A rejected application and the reason (002 spec, "RM and scheduler updates")."""

    application_id: str = Field(default="", alias="applicationID")
    reason: str = Field(default="", alias="reason")


class AcceptedApplication(_Message):
    """An application the scheduler accepted (002 spec, "RM and scheduler updates")."""

    application_id: str = Field(default="", alias="applicationID")


class RejectedNode(_Message):
    """A rejected node registration and the reason (002 spec, "RM and scheduler updates")."""

    node_id: str = Field(default="", alias="nodeID")
    reason: str = Field(default="", alias="reason")


class AcceptedNode(_Message):
    """A node registration the scheduler accepted (002 spec, "RM and scheduler updates")."""

    node_id: str = Field(default="", alias="nodeID")


# --------------------------------------------------------------------------- requests / responses


class AllocationRequest(_Message):
    """New or updated asks and releases from an RM (002 spec, "RM and scheduler updates")."""

    asks: list[AllocationAsk] = Field(default_factory=list, alias="asks")
    releases: AllocationReleasesRequest | None = Field(default=None, alias="releases")
    rm_id: _RequiredId = Field(alias="rmID")


class ApplicationRequest(_Message):
    """Applications an RM adds and removes (002 spec, "RM and scheduler updates")."""

    new: list[AddApplicationRequest] = Field(default_factory=list, alias="new")
    remove: list[RemoveApplicationRequest] = Field(default_factory=list, alias="remove")
    rm_id: _RequiredId = Field(alias="rmID")


class NodeRequest(_Message):
    """Node registrations and updates from an RM (002 spec, "RM and scheduler updates")."""

    nodes: list[NodeInfo] = Field(default_factory=list, alias="nodes")
    rm_id: _RequiredId = Field(alias="rmID")


class AllocationResponse(_Message):
    """New allocations, releases and rejected asks (002 spec, "RM and scheduler updates")."""

    new: list[Allocation] = Field(default_factory=list, alias="new")
    released: list[AllocationRelease] = Field(default_factory=list, alias="released")
    released_asks: list[AllocationAskRelease] = Field(default_factory=list, alias="releasedAsks")
    rejected: list[RejectedAllocationAsk] = Field(default_factory=list, alias="rejected")


class ApplicationResponse(_Message):
    """Rejected, accepted and updated applications (002 spec, "RM and scheduler updates")."""

    rejected: list[RejectedApplication] = Field(default_factory=list, alias="rejected")
    accepted: list[AcceptedApplication] = Field(default_factory=list, alias="accepted")
    updated: list[UpdatedApplication] = Field(default_factory=list, alias="updated")


class NodeResponse(_Message):
    """Rejected and accepted node registrations (002 spec, "RM and scheduler updates")."""

    rejected: list[RejectedNode] = Field(default_factory=list, alias="rejected")
    accepted: list[AcceptedNode] = Field(default_factory=list, alias="accepted")


# --------------------------------------------------------------------------- plugins


class PredicatesArgs(_Message):
    """The ask and node a predicates check runs for (002 spec, "Scheduler plugin")."""

    allocation_key: str = Field(default="", alias="allocationKey")
    node_id: str = Field(default="", alias="nodeID")
    allocate: bool = Field(default=False, alias="allocate")


class PreemptionPredicatesArgs(_Message):
    """A predicates check after tentatively removing allocations (002 spec, "Scheduler plugin")."""

    allocation_key: str = Field(default="", alias="allocationKey")
    node_id: str = Field(default="", alias="nodeID")
    preempt_allocation_keys: list[str] = Field(default_factory=list, alias="preemptAllocationKeys")
    start_index: _Int32 = Field(default=0, alias="startIndex")


class PreemptionPredicatesResponse(_Message):
    """The outcome of a preemption predicates check (002 spec, "Scheduler plugin")."""

    success: bool = Field(default=False, alias="success")
    index: _Int32 = Field(default=0, alias="index")


class UpdateContainerSchedulingStateRequest(_Message):
    """The scheduling state of one container for the RM (002 spec, "Scheduler plugin")."""

    SchedulingState: ClassVar[builtins.type[_SchedulingState]] = _SchedulingState

    # the spec spells the JSON name "applicartionID"; "applicationID" is accepted as well
    application_id: str = Field(
        default="",
        validation_alias=AliasChoices("applicartionID", "applicationID", "application_id"),
        serialization_alias="applicartionID",
    )
    allocation_key: str = Field(default="", alias="allocationKey")
    state: _SchedulingState = Field(
        default=_SchedulingState.UNKNOWN_SCHEDULING_STATE, alias="state"
    )
    reason: str = Field(default="", alias="reason")


class EventRecord(_Message):
    """An event about a scheduler object for the shim (002 spec, "Event Plugin")."""

    Type: ClassVar[builtins.type[EventRecordType]] = EventRecordType
    ChangeType: ClassVar[builtins.type[EventChangeType]] = EventChangeType

    type: EventRecordType = Field(default=EventRecordType.UNKNOWN_EVENTRECORD_TYPE, alias="type")
    object_id: str = Field(default="", alias="objectID")
    message: str = Field(default="", alias="message")
    timestamp_nano: _Int64 = Field(default=0, alias="timestampNano")
    event_change_type: EventChangeType = Field(
        default=EventChangeType.NONE, alias="eventChangeType"
    )
    # extension: newer SI versions carry it (e.g. the application of an ask event)
    reference_id: str = Field(default="", alias="referenceID")


# --------------------------------------------------------------------------- JSON schemas

MESSAGE_MODELS: tuple[type[BaseModel], ...] = (
    AcceptedApplication,
    AcceptedNode,
    AddApplicationRequest,
    Allocation,
    AllocationAsk,
    AllocationAskRelease,
    AllocationRelease,
    AllocationReleasesRequest,
    AllocationRequest,
    AllocationResponse,
    ApplicationRequest,
    ApplicationResponse,
    EventRecord,
    NodeInfo,
    NodeRequest,
    NodeResponse,
    PredicatesArgs,
    PreemptionPolicy,
    PreemptionPredicatesArgs,
    PreemptionPredicatesResponse,
    Quantity,
    RegisterResourceManagerRequest,
    RegisterResourceManagerResponse,
    RejectedAllocationAsk,
    RejectedApplication,
    RejectedNode,
    RemoveApplicationRequest,
    Resource,
    UpdateConfigurationRequest,
    UpdateContainerSchedulingStateRequest,
    UpdatedApplication,
    UserGroupInformation,
)
"""Every SI message model, sorted by name."""


def write_json_schemas(out_dir: pathlib.Path) -> list[pathlib.Path]:
    """Write ``<ModelName>.schema.json`` for every message model; return the paths, sorted.

    Schemas use the spec's JSON names (by alias) in "validation" mode, so they
    describe what the core accepts; enums accept their name or number.  The
    output is deterministic: keys sorted, two-space indent, trailing newline.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[pathlib.Path] = []
    for model in MESSAGE_MODELS:
        schema = model.model_json_schema(by_alias=True, mode="validation")
        path = out_dir / f"{model.__name__}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        paths.append(path)
    return sorted(paths)
