"""The scheduler interface (SI) messages as pydantic v2 models.

One model per message of the interface spec (``002``,
"Generic definitions" and the sections that follow it), plus the fields the
gang scheduling design adds (``001``, "Interface
changes").

Conventions (the public surface, pinned by ``tests/test_public_surface.py``):

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

from .base import DEFAULT_PARTITION, Quantity, Resource, resource_from_dict
from .enums import (
    EventChangeType,
    EventRecordType,
    NodeAction,
    ProtoEnum,
    SchedulingState,
    TerminationType,
)
from .messages import (
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
    RegisterResourceManagerRequest,
    RegisterResourceManagerResponse,
    RejectedAllocationAsk,
    RejectedApplication,
    RejectedNode,
    RemoveApplicationRequest,
    UpdateConfigurationRequest,
    UpdateContainerSchedulingStateRequest,
    UpdatedApplication,
    UserGroupInformation,
)
from .schema import MESSAGE_MODELS, write_json_schemas

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
