"""The JSON Schema of every SI message, for shims written in other languages."""

from __future__ import annotations

import json
import pathlib

from pydantic import BaseModel

from .base import Quantity, Resource
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


def write_json_schemas(out_dir: pathlib.Path,
                       models: tuple[type[BaseModel], ...] = MESSAGE_MODELS
                       ) -> list[pathlib.Path]:
    """Write ``<ModelName>.schema.json`` for every message model; return the paths, sorted.

    ``models`` defaults to the seed's messages; ``scheduler.si.today.MESSAGE_MODELS``
    gives today's SI.

    Schemas use the spec's JSON names (by alias) in "validation" mode, so they
    describe what the core accepts; enums accept their name or number.  The
    output is deterministic: keys sorted, two-space indent, trailing newline.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[pathlib.Path] = []
    for model in models:
        schema = model.model_json_schema(by_alias=True, mode="validation")
        path = out_dir / f"{model.__name__}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        paths.append(path)
    return sorted(paths)
