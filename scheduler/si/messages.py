"""The SI's messages (``002`` spec; gang fields from the ``001`` gang design).

One pydantic model per message, snake_case attributes with the spec's
camelCase names as aliases; see the package docstring for the conventions.
"""

from __future__ import annotations

import builtins
from typing import Annotated, Any, ClassVar

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from .base import (
    _INT32_MAX,
    DEFAULT_PARTITION,
    Resource,
    _Bool,
    _Id,
    _Int32,
    _Int64,
    _Message,
    _RequiredId,
)
from .enums import (
    EventChangeType,
    EventRecordType,
    NodeAction,
    TerminationType,
    _SchedulingState,
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

    allow_preempt_self: _Bool = Field(default=False, alias="allowPreemptSelf")
    allow_preempt_other: _Bool = Field(default=False, alias="allowPreemptOther")


def _unset_is_one(value: Any) -> Any:
    """``maxAllocations: 0`` is what a proto3 writer sends for "not set": the spec's
    default, one allocation."""
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    return 1 if value == 0 else value


class AllocationAsk(_Message):
    """A request for resources (002 spec, "Allocation ask"; gang fields: 001 "AllocationAsk")."""

    allocation_key: _RequiredId = Field(alias="allocationKey")
    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    resource_ask: Resource = Field(default_factory=Resource, alias="resourceAsk")
    max_allocations: Annotated[int, Field(ge=1, le=_INT32_MAX), BeforeValidator(_unset_is_one)] = (
        Field(default=1, alias="maxAllocations"))
    priority: _Int32 = Field(default=0, alias="priority")
    execution_timeout_milli_seconds: _Int64 = Field(default=0, alias="executionTimeoutMilliSeconds")
    tags: dict[str, str] = Field(default_factory=dict, alias="tags")
    task_group_name: _Id = Field(default="", alias="taskGroupName")
    placeholder: _Bool = Field(default=False, alias="placeholder")
    originator: _Bool = Field(default=False, alias="Originator")
    preemption_policy: PreemptionPolicy | None = Field(default=None, alias="preemptionPolicy")


# --------------------------------------------------------------------------- applications


class UserGroupInformation(_Message):
    """The user and groups owning an application (002 spec, "User information")."""

    user: str = Field(default="", alias="user")
    groups: list[str] = Field(default_factory=list, alias="groups")


class AddApplicationRequest(_Message):
    """A new application (002 "Application requests"; placeholderAsk: 001 "AddApplication")."""

    application_id: _RequiredId = Field(alias="applicationID")
    queue_name: _Id = Field(default="", alias="queueName")
    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    ugi: UserGroupInformation = Field(default_factory=UserGroupInformation, alias="ugi")
    tags: dict[str, str] = Field(default_factory=dict, alias="tags")
    execution_timeout_milli_seconds: _Int64 = Field(default=0, alias="executionTimeoutMilliSeconds")
    placeholder_ask: Resource | None = Field(default=None, alias="placeholderAsk")
    gang_scheduling_style: str = Field(default="", alias="gangSchedulingStyle")


class RemoveApplicationRequest(_Message):
    """An application the RM removes (002 spec, "Application requests")."""

    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")


# --------------------------------------------------------------------------- allocations


class Allocation(_Message):
    """A new or recovered allocation (002 "Allocation of resources"; gang: 001 "Allocation")."""

    allocation_key: _RequiredId = Field(alias="allocationKey")
    allocation_tags: dict[str, str] = Field(default_factory=dict, alias="allocationTags")
    uuid: _Id = Field(default="", alias="UUID")
    resource_per_alloc: Resource = Field(default_factory=Resource, alias="resourcePerAlloc")
    priority: _Int32 = Field(default=0, alias="priority")
    node_id: _RequiredId = Field(alias="nodeID")
    application_id: _RequiredId = Field(alias="applicationID")
    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    task_group_name: _Id = Field(default="", alias="taskGroupName")
    placeholder: _Bool = Field(default=False, alias="placeholder")


class AllocationRelease(_Message):
    """An allocation release or its confirmation (002 "Release previously allocated resources")."""

    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    application_id: _Id = Field(default="", alias="applicationID")
    uuid: _Id = Field(default="", alias="UUID")
    termination_type: TerminationType = Field(
        default=TerminationType.UNKNOWN_TERMINATION_TYPE, alias="terminationType"
    )
    message: str = Field(default="", alias="message")
    allocation_key: _Id = Field(default="", alias="allocationKey")


class AllocationAskRelease(_Message):
    """An ask release or its confirmation (002 spec, "Release previously allocated resources")."""

    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    application_id: _Id = Field(default="", alias="applicationID")
    allocation_key: _Id = Field(default="", alias="allocationKey")
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

    allocation_key: _Id = Field(default="", alias="allocationKey")
    application_id: _Id = Field(default="", alias="applicationID")
    reason: str = Field(default="", alias="reason")


class UpdatedApplication(_Message):
    """An application state change reported to the RM (002 spec, "RM and scheduler updates")."""

    application_id: _Id = Field(default="", alias="applicationID")
    state: str = Field(default="", alias="state")
    state_transition_timestamp: _Int64 = Field(default=0, alias="stateTransitionTimestamp")
    message: str = Field(default="", alias="message")


class RejectedApplication(_Message):
    """A rejected application and the reason (002 spec, "RM and scheduler updates")."""

    application_id: _Id = Field(default="", alias="applicationID")
    reason: str = Field(default="", alias="reason")


class AcceptedApplication(_Message):
    """An application the scheduler accepted (002 spec, "RM and scheduler updates")."""

    application_id: _Id = Field(default="", alias="applicationID")


class RejectedNode(_Message):
    """A rejected node registration and the reason (002 spec, "RM and scheduler updates")."""

    node_id: _Id = Field(default="", alias="nodeID")
    reason: str = Field(default="", alias="reason")


class AcceptedNode(_Message):
    """A node registration the scheduler accepted (002 spec, "RM and scheduler updates")."""

    node_id: _Id = Field(default="", alias="nodeID")


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

    allocation_key: _Id = Field(default="", alias="allocationKey")
    node_id: _Id = Field(default="", alias="nodeID")
    allocate: _Bool = Field(default=False, alias="allocate")


class PreemptionPredicatesArgs(_Message):
    """A predicates check after tentatively removing allocations (002 spec, "Scheduler plugin")."""

    allocation_key: _Id = Field(default="", alias="allocationKey")
    node_id: _Id = Field(default="", alias="nodeID")
    preempt_allocation_keys: list[str] = Field(default_factory=list, alias="preemptAllocationKeys")
    start_index: _Int32 = Field(default=0, alias="startIndex")


class PreemptionPredicatesResponse(_Message):
    """The outcome of a preemption predicates check (002 spec, "Scheduler plugin")."""

    success: _Bool = Field(default=False, alias="success")
    index: _Int32 = Field(default=0, alias="index")


class UpdateContainerSchedulingStateRequest(_Message):
    """The scheduling state of one container for the RM (002 spec, "Scheduler plugin")."""

    SchedulingState: ClassVar[builtins.type[_SchedulingState]] = _SchedulingState

    # the spec spells the JSON name "applicartionID"; "applicationID" is accepted as well
    application_id: _Id = Field(
        default="",
        validation_alias=AliasChoices("applicartionID", "applicationID", "application_id"),
        serialization_alias="applicartionID",
    )
    allocation_key: _Id = Field(default="", alias="allocationKey")
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

    @model_serializer(mode="wrap")
    def _without_unset_reference(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``referenceID`` is not in the seed spec's EventRecord: a reader that parses
        strictly against it must not meet the field unless the core set it."""
        data = handler(self)
        if not self.reference_id and isinstance(data, dict):
            data.pop("referenceID", None)
            data.pop("reference_id", None)
        return data


