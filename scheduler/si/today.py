"""The SI as YuniKorn's shims speak it today (scheduler interface ``2858f4d``), beside the seed's.

The seed's interface spec (``002``, at ``f59a9f4``) is the reference of the
design and of ``scheduler.si``. Between the two versions the SI made asks and
allocations one message and keyed everything by ``allocationKey``:

- ``Allocation`` is an ask while it has no ``nodeID`` and a pod already bound
  when it has one; ``AllocationRequest.allocations`` carries both and replaces
  ``asks``, and recovery no longer goes through ``NodeInfo.existingAllocations``.
  An allocation has no ``UUID`` and no ``maxAllocations`` (one pod, one key).
- Releases name the ``allocationKey``; ``AllocationAskRelease`` is gone, and so
  are ``AllocationResponse.releasedAsks`` and ``RejectedAllocationAsk``
  (``RejectedAllocation`` instead).
- ``NodeInfo`` lost ``occupiedResource`` (pods the scheduler does not manage
  arrive as ``foreign`` allocations) and its action gained ``CREATE_DRAIN``.
- ``EventRecord`` gained ``eventChangeDetail``, ``resource`` and the type
  ``USERGROUP``; ``UpdateContainerSchedulingStateRequest`` spells
  ``applicationID`` right.

The messages both versions share are the seed's models, re-exported here, so a
shim of today's dialect imports every message from this one module. The
conventions are those of ``scheduler.si`` (snake_case attributes, the proto's
camelCase names as aliases, validation naming the field). The core speaks the
seed's model; ``scheduler.dialect`` translates at the boundary.
"""

from __future__ import annotations

import builtins
from typing import ClassVar, Final

from pydantic import BaseModel, Field

from .base import (
    DEFAULT_PARTITION,
    Quantity,
    Resource,
    _Bool,
    _Id,
    _Int32,
    _Int64,
    _Message,
    _RequiredId,
)
from .enums import EventChangeType, ProtoEnum, SchedulingState, _SchedulingState
from .messages import (
    AcceptedApplication,
    AcceptedNode,
    AddApplicationRequest,
    ApplicationRequest,
    ApplicationResponse,
    NodeResponse,
    PredicatesArgs,
    PreemptionPolicy,
    PreemptionPredicatesArgs,
    PreemptionPredicatesResponse,
    RegisterResourceManagerRequest,
    RegisterResourceManagerResponse,
    RejectedApplication,
    RejectedNode,
    RemoveApplicationRequest,
    UpdateConfigurationRequest,
    UpdatedApplication,
    UserGroupInformation,
)

VERSION: Final = "2858f4d"
"""The commit of apache/yunikorn-scheduler-interface this module follows."""

FOREIGN_TAG: Final = "foreign"
"""Allocation tag marking a pod the scheduler does not manage; its value says how."""
FOREIGN_STATIC: Final = "static"
"""``foreign`` value of a pod that may never be preempted (a static or mirror pod)."""
FOREIGN_DEFAULT: Final = "default"
"""``foreign`` value of any other pod the scheduler does not manage."""
CREATION_TIME_TAG: Final = "creationTime"
"""Allocation tag with the pod's creation time in Unix seconds."""


class TerminationType(ProtoEnum):
    """Why a pod is released, with ``SCHEDULING_FAILED_ON_RM``: the RM could not bind it.

    The last member came after ``2858f4d`` (YUNIKORN-3316) and YuniKorn's
    Kubernetes shim sends it; the core schedules the pod again.
    """

    UNKNOWN_TERMINATION_TYPE = 0
    STOPPED_BY_RM = 1
    TIMEOUT = 2
    PREEMPTED_BY_SCHEDULER = 3
    PLACEHOLDER_REPLACED = 4
    SCHEDULING_FAILED_ON_RM = 5


class NodeAction(ProtoEnum):
    """NodeInfo.ActionFromRM, with ``CREATE_DRAIN``: a node that joins unschedulable."""

    UNKNOWN_ACTION_FROM_RM = 0
    CREATE = 1
    UPDATE = 2
    DRAIN_NODE = 3
    DECOMISSION = 4
    DRAIN_TO_SCHEDULABLE = 5
    CREATE_DRAIN = 6


class EventRecordType(ProtoEnum):
    """EventRecord.Type, with ``USERGROUP`` (events about user and group tracking)."""

    UNKNOWN_EVENTRECORD_TYPE = 0
    REQUEST = 1
    APP = 2
    NODE = 3
    QUEUE = 4
    USERGROUP = 5


class EventChangeDetail(ProtoEnum):
    """EventRecord.ChangeDetail: what exactly changed, by object kind (100s requests, ...)."""

    DETAILS_NONE = 0
    REQUEST_CANCEL = 100
    REQUEST_ALLOC = 101
    REQUEST_TIMEOUT = 102
    APP_ALLOC = 200
    APP_REQUEST = 201
    APP_REJECT = 202
    APP_NEW = 203
    APP_ACCEPTED = 204
    APP_RUNNING = 206
    APP_COMPLETING = 207
    APP_COMPLETED = 208
    APP_FAILING = 209
    APP_FAILED = 210
    APP_RESUMING = 211
    APP_EXPIRED = 212
    APP_CANNOTRUN_QUEUE = 213
    APP_RUNNABLE_QUEUE = 214
    APP_CANNOTRUN_QUOTA = 215
    APP_RUNNABLE_QUOTA = 216
    NODE_DECOMISSION = 300
    NODE_SCHEDULABLE = 302
    NODE_ALLOC = 303
    NODE_CAPACITY = 304
    NODE_OCCUPIED = 305
    NODE_RESERVATION = 306
    QUEUE_CONFIG = 400
    QUEUE_DYNAMIC = 401
    QUEUE_TYPE = 402
    QUEUE_MAX = 403
    QUEUE_GUARANTEED = 404
    QUEUE_APP = 405
    QUEUE_ALLOC = 406
    QUEUE_PREEMPTION = 407
    ALLOC_CANCEL = 500
    ALLOC_PREEMPT = 501
    ALLOC_TIMEOUT = 502
    ALLOC_REPLACED = 503
    ALLOC_NODEREMOVED = 504
    UG_USER_LIMIT = 600
    UG_GROUP_LIMIT = 601
    UG_APP_LINK = 602
    UG_USER_RESOURCE = 603
    UG_GROUP_RESOURCE = 604


class Allocation(_Message):
    """One pod: an ask while ``node_id`` is empty, a pod bound to that node when it is set."""

    allocation_key: _RequiredId = Field(alias="allocationKey")
    allocation_tags: dict[str, str] = Field(default_factory=dict, alias="allocationTags")
    resource_per_alloc: Resource = Field(default_factory=Resource, alias="resourcePerAlloc")
    priority: _Int32 = Field(default=0, alias="priority")
    node_id: _Id = Field(default="", alias="nodeID")
    application_id: _Id = Field(default="", alias="applicationID")
    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    task_group_name: _Id = Field(default="", alias="taskGroupName")
    placeholder: _Bool = Field(default=False, alias="placeholder")
    originator: _Bool = Field(default=False, alias="originator")
    preemption_policy: PreemptionPolicy | None = Field(default=None, alias="preemptionPolicy")

    @property
    def foreign(self) -> bool:
        """A pod the scheduler does not manage (tagged ``foreign``)."""
        return FOREIGN_TAG in self.allocation_tags


class AllocationRelease(_Message):
    """Release of one pod by its key, or of every pod of an application (empty key)."""

    partition_name: _Id = Field(default=DEFAULT_PARTITION, alias="partitionName")
    application_id: _Id = Field(default="", alias="applicationID")
    termination_type: TerminationType = Field(
        default=TerminationType.UNKNOWN_TERMINATION_TYPE, alias="terminationType"
    )
    message: str = Field(default="", alias="message")
    allocation_key: _Id = Field(default="", alias="allocationKey")


class AllocationReleasesRequest(_Message):
    """The releases of one ``AllocationRequest`` (asks and allocations alike, by key)."""

    allocations_to_release: list[AllocationRelease] = Field(
        default_factory=list, alias="allocationsToRelease"
    )


class AllocationRequest(_Message):
    """New, updated and bound pods, and releases, from one RM."""

    releases: AllocationReleasesRequest | None = Field(default=None, alias="releases")
    rm_id: _RequiredId = Field(alias="rmID")
    allocations: list[Allocation] = Field(default_factory=list, alias="allocations")


class RejectedAllocation(_Message):
    """A pod the core refused, with the reason."""

    allocation_key: _Id = Field(default="", alias="allocationKey")
    application_id: _Id = Field(default="", alias="applicationID")
    reason: str = Field(default="", alias="reason")


class AllocationResponse(_Message):
    """What the core decided about pods: placed, released, refused."""

    new: list[Allocation] = Field(default_factory=list, alias="new")
    released: list[AllocationRelease] = Field(default_factory=list, alias="released")
    rejected_allocations: list[RejectedAllocation] = Field(
        default_factory=list, alias="rejectedAllocations"
    )


class NodeInfo(_Message):
    """A node and what to do with it; no occupied resource, no existing allocations."""

    ActionFromRM: ClassVar[builtins.type[NodeAction]] = NodeAction

    node_id: _RequiredId = Field(alias="nodeID")
    action: NodeAction = Field(default=NodeAction.UNKNOWN_ACTION_FROM_RM, alias="action")
    attributes: dict[str, str] = Field(default_factory=dict, alias="attributes")
    schedulable_resource: Resource | None = Field(default=None, alias="schedulableResource")


class NodeRequest(_Message):
    """Node registrations and updates from one RM."""

    nodes: list[NodeInfo] = Field(default_factory=list, alias="nodes")
    rm_id: _RequiredId = Field(alias="rmID")


class UpdateContainerSchedulingStateRequest(_Message):
    """The scheduling state of one pod for the RM."""

    SchedulingState: ClassVar[builtins.type[SchedulingState]] = SchedulingState

    application_id: _Id = Field(default="", alias="applicationID")
    allocation_key: _Id = Field(default="", alias="allocationKey")
    state: _SchedulingState = Field(
        default=_SchedulingState.UNKNOWN_SCHEDULING_STATE, alias="state"
    )
    reason: str = Field(default="", alias="reason")


class EventRecord(_Message):
    """An event about a scheduler object, with what changed in detail and by how much."""

    Type: ClassVar[builtins.type[EventRecordType]] = EventRecordType
    ChangeType: ClassVar[builtins.type[EventChangeType]] = EventChangeType
    ChangeDetail: ClassVar[builtins.type[EventChangeDetail]] = EventChangeDetail

    type: EventRecordType = Field(default=EventRecordType.UNKNOWN_EVENTRECORD_TYPE, alias="type")
    object_id: str = Field(default="", alias="objectID")
    message: str = Field(default="", alias="message")
    timestamp_nano: _Int64 = Field(default=0, alias="timestampNano")
    event_change_type: EventChangeType = Field(
        default=EventChangeType.NONE, alias="eventChangeType"
    )
    event_change_detail: EventChangeDetail = Field(
        default=EventChangeDetail.DETAILS_NONE, alias="eventChangeDetail"
    )
    reference_id: str = Field(default="", alias="referenceID")
    resource: Resource | None = Field(default=None, alias="resource")


MESSAGE_MODELS: tuple[type[BaseModel], ...] = (
    AcceptedApplication,
    AcceptedNode,
    AddApplicationRequest,
    Allocation,
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
    RejectedAllocation,
    RejectedApplication,
    RejectedNode,
    RemoveApplicationRequest,
    Resource,
    UpdateConfigurationRequest,
    UpdateContainerSchedulingStateRequest,
    UpdatedApplication,
    UserGroupInformation,
)
"""Every message model of today's SI, sorted by name (the shared ones are the seed's)."""

OWN_MODELS: tuple[type[BaseModel], ...] = tuple(
    m for m in MESSAGE_MODELS if m.__module__ == __name__)
"""The models that differ from the seed's (the rest are shared)."""

__all__ = [
    "CREATION_TIME_TAG",
    "DEFAULT_PARTITION",
    "FOREIGN_DEFAULT",
    "FOREIGN_STATIC",
    "FOREIGN_TAG",
    "MESSAGE_MODELS",
    "OWN_MODELS",
    "VERSION",
    "AcceptedApplication",
    "AcceptedNode",
    "AddApplicationRequest",
    "Allocation",
    "AllocationRelease",
    "AllocationReleasesRequest",
    "AllocationRequest",
    "AllocationResponse",
    "ApplicationRequest",
    "ApplicationResponse",
    "EventChangeDetail",
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
    "Quantity",
    "RegisterResourceManagerRequest",
    "RegisterResourceManagerResponse",
    "RejectedAllocation",
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
]
