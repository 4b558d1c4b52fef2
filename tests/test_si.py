"""Tests of the SI message models (``scheduler.si``).

The messages, field names and enums come from the interface spec
(``002``) and the gang design's "Interface changes"
(``001``); ``tests/test_public_surface.py`` pins the Python
surface.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from scheduler import si

# ----------------------------------------------------------------------------- spec tables

# Every message of the spec with its JSON field names in spec order (002, plus
# the gang fields of 001 and the referenceID extension of EventRecord).
SPEC_FIELDS: dict[type[BaseModel], list[str]] = {
    si.RegisterResourceManagerRequest: [
        "rmID",
        "version",
        "policyGroup",
        "buildInfo",
        "config",
        "extraConfig",
    ],
    si.RegisterResourceManagerResponse: [],
    si.AllocationRequest: ["asks", "releases", "rmID"],
    si.ApplicationRequest: ["new", "remove", "rmID"],
    si.NodeRequest: ["nodes", "rmID"],
    si.AllocationResponse: ["new", "released", "releasedAsks", "rejected"],
    si.ApplicationResponse: ["rejected", "accepted", "updated"],
    si.NodeResponse: ["rejected", "accepted"],
    si.UpdatedApplication: ["applicationID", "state", "stateTransitionTimestamp", "message"],
    si.RejectedApplication: ["applicationID", "reason"],
    si.AcceptedApplication: ["applicationID"],
    si.RejectedNode: ["nodeID", "reason"],
    si.AcceptedNode: ["nodeID"],
    si.Resource: ["resources"],
    si.Quantity: ["value"],
    si.AllocationAsk: [
        "allocationKey",
        "applicationID",
        "partitionName",
        "resourceAsk",
        "maxAllocations",
        "priority",
        "executionTimeoutMilliSeconds",
        "tags",
        "taskGroupName",
        "placeholder",
        "Originator",
        "preemptionPolicy",
    ],
    si.PreemptionPolicy: ["allowPreemptSelf", "allowPreemptOther"],
    si.AddApplicationRequest: [
        "applicationID",
        "queueName",
        "partitionName",
        "ugi",
        "tags",
        "executionTimeoutMilliSeconds",
        "placeholderAsk",
        "gangSchedulingStyle",
    ],
    si.RemoveApplicationRequest: ["applicationID", "partitionName"],
    si.UserGroupInformation: ["user", "groups"],
    si.Allocation: [
        "allocationKey",
        "allocationTags",
        "UUID",
        "resourcePerAlloc",
        "priority",
        "nodeID",
        "applicationID",
        "partitionName",
        "taskGroupName",
        "placeholder",
    ],
    si.AllocationReleasesRequest: ["allocationsToRelease", "allocationAsksToRelease"],
    si.AllocationRelease: [
        "partitionName",
        "applicationID",
        "UUID",
        "terminationType",
        "message",
        "allocationKey",
    ],
    si.AllocationAskRelease: [
        "partitionName",
        "applicationID",
        "allocationKey",
        "terminationType",
        "message",
    ],
    si.NodeInfo: [
        "nodeID",
        "action",
        "attributes",
        "schedulableResource",
        "occupiedResource",
        "existingAllocations",
    ],
    si.RejectedAllocationAsk: ["allocationKey", "applicationID", "reason"],
    si.PredicatesArgs: ["allocationKey", "nodeID", "allocate"],
    si.PreemptionPredicatesArgs: [
        "allocationKey",
        "nodeID",
        "preemptAllocationKeys",
        "startIndex",
    ],
    si.PreemptionPredicatesResponse: ["success", "index"],
    si.UpdateContainerSchedulingStateRequest: [
        "applicartionID",
        "allocationKey",
        "state",
        "reason",
    ],
    si.UpdateConfigurationRequest: ["rmID", "policyGroup", "config", "extraConfig"],
    si.EventRecord: [
        "type",
        "objectID",
        "message",
        "timestampNano",
        "eventChangeType",
        "referenceID",
    ],
}

# (model, attribute, alias, the other required ids) for every id the spec requires
REQUIRED_IDS: list[tuple[type[BaseModel], str, str, dict[str, str]]] = [
    (si.RegisterResourceManagerRequest, "rm_id", "rmID", {}),
    (si.AllocationRequest, "rm_id", "rmID", {}),
    (si.ApplicationRequest, "rm_id", "rmID", {}),
    (si.NodeRequest, "rm_id", "rmID", {}),
    (si.UpdateConfigurationRequest, "rm_id", "rmID", {}),
    (si.AllocationAsk, "allocation_key", "allocationKey", {"application_id": "app"}),
    (si.AllocationAsk, "application_id", "applicationID", {"allocation_key": "k"}),
    (si.AddApplicationRequest, "application_id", "applicationID", {}),
    (si.RemoveApplicationRequest, "application_id", "applicationID", {}),
    (si.NodeInfo, "node_id", "nodeID", {}),
    (
        si.Allocation,
        "allocation_key",
        "allocationKey",
        {"application_id": "app", "node_id": "n"},
    ),
    (si.Allocation, "application_id", "applicationID", {"allocation_key": "k", "node_id": "n"}),
    (si.Allocation, "node_id", "nodeID", {"allocation_key": "k", "application_id": "app"}),
]

ENUMS: dict[type[si.ProtoEnum], list[tuple[str, int]]] = {
    si.TerminationType: [
        ("UNKNOWN_TERMINATION_TYPE", 0),
        ("STOPPED_BY_RM", 1),
        ("TIMEOUT", 2),
        ("PREEMPTED_BY_SCHEDULER", 3),
        ("PLACEHOLDER_REPLACED", 4),
    ],
    si.NodeAction: [
        ("UNKNOWN_ACTION_FROM_RM", 0),
        ("CREATE", 1),
        ("UPDATE", 2),
        ("DRAIN_NODE", 3),
        ("DECOMISSION", 4),
        ("DRAIN_TO_SCHEDULABLE", 5),
    ],
    si.SchedulingState: [
        ("UNKNOWN_SCHEDULING_STATE", 0),
        ("SKIPPED", 1),
        ("SCHEDULED", 2),
        ("RESERVED", 3),
        ("FAILED", 4),
    ],
    si.EventRecordType: [
        ("UNKNOWN_EVENTRECORD_TYPE", 0),
        ("REQUEST", 1),
        ("APP", 2),
        ("NODE", 3),
        ("QUEUE", 4),
    ],
    si.EventChangeType: [("NONE", 0), ("SET", 1), ("ADD", 2), ("REMOVE", 3)],
}

# (model, the other fields it needs, enum attribute, its alias) for every enum-typed field
ENUM_FIELDS: list[tuple[type[BaseModel], dict[str, Any], str, str, type[si.ProtoEnum]]] = [
    (si.AllocationRelease, {}, "termination_type", "terminationType", si.TerminationType),
    (si.AllocationAskRelease, {}, "termination_type", "terminationType", si.TerminationType),
    (si.NodeInfo, {"nodeID": "n"}, "action", "action", si.NodeAction),
    (si.UpdateContainerSchedulingStateRequest, {}, "state", "state", si.SchedulingState),
    (si.EventRecord, {}, "type", "type", si.EventRecordType),
    (si.EventRecord, {}, "event_change_type", "eventChangeType", si.EventChangeType),
]


def _full_ask_json() -> dict[str, Any]:
    return {
        "allocationKey": "ask-1",
        "applicationID": "app-1",
        "partitionName": "gpu",
        "resourceAsk": {"resources": {"memory": {"value": 10}, "vcore": {"value": 1}}},
        "maxAllocations": 3,
        "priority": -5,
        "executionTimeoutMilliSeconds": 60000,
        "tags": {"kubernetes.io/meta/namespace": "default"},
        "taskGroupName": "tg-a",
        "placeholder": True,
        "Originator": True,
        "preemptionPolicy": {"allowPreemptSelf": True, "allowPreemptOther": False},
    }


def _errors_text(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(exc.value)


def _error_locs(exc: pytest.ExceptionInfo[ValidationError]) -> list[str]:
    return [".".join(str(p) for p in e["loc"]) for e in exc.value.errors()]


# ----------------------------------------------------------------------------- field lists


def test_every_spec_message_has_a_model() -> None:
    assert set(SPEC_FIELDS) == set(si.MESSAGE_MODELS)
    assert len(si.MESSAGE_MODELS) == 32
    names = [m.__name__ for m in si.MESSAGE_MODELS]
    assert names == sorted(names)
    for model in si.MESSAGE_MODELS:
        assert getattr(si, model.__name__) is model
        assert model.__name__ in si.__all__


@pytest.mark.parametrize("model", list(SPEC_FIELDS), ids=lambda m: m.__name__)
def test_field_lists_and_json_names_follow_the_spec(model: type[BaseModel]) -> None:
    aliases = [
        field.serialization_alias or field.alias or name
        for name, field in model.model_fields.items()
    ]
    assert aliases == SPEC_FIELDS[model]
    for name in model.model_fields:
        assert name == name.lower(), f"{model.__name__}.{name} is not snake_case"


@pytest.mark.parametrize("model", list(SPEC_FIELDS), ids=lambda m: m.__name__)
def test_models_are_configured_and_documented(model: type[BaseModel]) -> None:
    assert model.model_config.get("populate_by_name") is True
    assert model.model_config.get("extra") == "forbid"
    assert not model.model_config.get("frozen")
    doc = model.__doc__ or ""
    assert doc.strip() and "\n" not in doc.strip(), "one-line docstring"
    assert "002" in doc or "001" in doc, "docstring cites the spec"


def test_id_attributes_are_snake_case_with_spec_aliases() -> None:
    assert si.AllocationAsk.model_fields["application_id"].alias == "applicationID"
    assert si.NodeInfo.model_fields["node_id"].alias == "nodeID"
    assert si.AllocationRequest.model_fields["rm_id"].alias == "rmID"
    assert si.EventRecord.model_fields["object_id"].alias == "objectID"
    assert si.EventRecord.model_fields["reference_id"].alias == "referenceID"
    assert si.Allocation.model_fields["uuid"].alias == "UUID"
    assert si.AllocationAsk.model_fields["originator"].alias == "Originator"


# ----------------------------------------------------------------------------- input forms


def test_allocation_ask_from_camel_case() -> None:
    ask = si.AllocationAsk.model_validate(_full_ask_json())
    assert ask.allocation_key == "ask-1"
    assert ask.application_id == "app-1"
    assert ask.partition_name == "gpu"
    assert ask.resource_ask.as_dict() == {"memory": 10, "vcore": 1}
    assert ask.max_allocations == 3
    assert ask.priority == -5
    assert ask.execution_timeout_milli_seconds == 60000
    assert ask.tags == {"kubernetes.io/meta/namespace": "default"}
    assert ask.task_group_name == "tg-a"
    assert ask.placeholder is True
    assert ask.originator is True
    assert ask.preemption_policy == si.PreemptionPolicy(
        allow_preempt_self=True, allow_preempt_other=False
    )


def test_allocation_ask_from_snake_case_equals_camel_case() -> None:
    ask = si.AllocationAsk(
        allocation_key="ask-1",
        application_id="app-1",
        partition_name="gpu",
        resource_ask=si.Resource.of(memory=10, vcore=1),
        max_allocations=3,
        priority=-5,
        execution_timeout_milli_seconds=60000,
        tags={"kubernetes.io/meta/namespace": "default"},
        task_group_name="tg-a",
        placeholder=True,
        originator=True,
        preemption_policy=si.PreemptionPolicy(allow_preempt_self=True),
    )
    assert ask == si.AllocationAsk.model_validate(_full_ask_json())
    by_name = si.AllocationAsk.model_validate(
        {"allocation_key": "k", "application_id": "a", "resource_ask": {"resources": {}}}
    )
    assert (by_name.allocation_key, by_name.application_id) == ("k", "a")


def test_proto3_defaults_and_the_exceptions() -> None:
    ask = si.AllocationAsk(allocation_key="k", application_id="a")
    assert ask.partition_name == "default"
    assert ask.max_allocations == 1
    assert ask.resource_ask == si.Resource()
    assert ask.resource_ask.resources == {}
    assert (ask.priority, ask.execution_timeout_milli_seconds) == (0, 0)
    assert (ask.tags, ask.task_group_name, ask.placeholder, ask.originator) == (
        {},
        "",
        False,
        False,
    )
    assert ask.preemption_policy is None

    app = si.AddApplicationRequest(application_id="app")
    assert app.partition_name == "default"
    assert app.queue_name == ""
    assert app.ugi == si.UserGroupInformation(user="", groups=[])
    assert app.placeholder_ask is None
    assert app.gang_scheduling_style == ""
    assert app.execution_timeout_milli_seconds == 0

    assert si.RemoveApplicationRequest(application_id="a").partition_name == "default"
    alloc = si.Allocation(allocation_key="k", application_id="a", node_id="n")
    assert (alloc.partition_name, alloc.uuid, alloc.resource_per_alloc) == (
        "default",
        "",
        si.Resource(),
    )
    release = si.AllocationRelease()
    assert release.partition_name == "default"
    assert release.termination_type is si.TerminationType.UNKNOWN_TERMINATION_TYPE
    assert si.AllocationAskRelease().partition_name == "default"

    node = si.NodeInfo(node_id="n")
    assert node.action is si.NodeAction.UNKNOWN_ACTION_FROM_RM
    assert node.schedulable_resource is None and node.occupied_resource is None
    assert node.existing_allocations == [] and node.attributes == {}

    assert si.AllocationRequest(rm_id="rm").releases is None
    event = si.EventRecord()
    assert event.type is si.EventRecordType.UNKNOWN_EVENTRECORD_TYPE
    assert event.event_change_type is si.EventChangeType.NONE
    assert event.reference_id == ""
    assert si.RegisterResourceManagerResponse().model_dump() == {}


def test_mutable_defaults_are_not_shared() -> None:
    a = si.AllocationAsk(allocation_key="k", application_id="a")
    b = si.AllocationAsk(allocation_key="k2", application_id="a")
    a.tags["x"] = "y"
    a.resource_ask.resources["memory"] = si.Quantity(value=1)
    assert b.tags == {} and b.resource_ask.resources == {}
    c = si.Allocation.model_construct(allocation_key="k", application_id="a", node_id="n")
    d = si.Allocation.model_construct(allocation_key="k", application_id="a", node_id="n")
    c.allocation_tags["x"] = "y"
    assert d.allocation_tags == {}


def test_models_are_mutable() -> None:
    ask = si.AllocationAsk(allocation_key="k", application_id="a")
    ask.priority = 7
    assert ask.priority == 7


# ----------------------------------------------------------------------------- output names


def test_dump_by_alias_uses_the_spec_names() -> None:
    alloc = si.Allocation(
        allocation_key="k",
        uuid="u-1",
        application_id="a",
        node_id="n",
        resource_per_alloc=si.Resource.of(memory=10),
    )
    dumped = alloc.model_dump(by_alias=True)
    assert dumped["UUID"] == "u-1"
    assert dumped["applicationID"] == "a"
    assert dumped["nodeID"] == "n"
    assert dumped["resourcePerAlloc"] == {"resources": {"memory": {"value": 10}}}
    assert "uuid" not in dumped and "application_id" not in dumped

    response = si.AllocationResponse(
        released_asks=[si.AllocationAskRelease(allocation_key="k")],
    )
    assert "releasedAsks" in response.model_dump(by_alias=True)
    assert "released_asks" in response.model_dump()

    state = si.UpdateContainerSchedulingStateRequest(application_id="a", allocation_key="k")
    dumped_state = state.model_dump(by_alias=True)
    assert dumped_state["applicartionID"] == "a"
    assert "applicationID" not in dumped_state

    ask = si.AllocationAsk(allocation_key="k", application_id="a", originator=True)
    assert ask.model_dump(by_alias=True)["Originator"] is True


def test_scheduling_state_request_accepts_both_spellings() -> None:
    typo = si.UpdateContainerSchedulingStateRequest.model_validate({"applicartionID": "a"})
    fixed = si.UpdateContainerSchedulingStateRequest.model_validate({"applicationID": "a"})
    by_name = si.UpdateContainerSchedulingStateRequest(application_id="a")
    assert typo.application_id == fixed.application_id == by_name.application_id == "a"
    assert typo == fixed == by_name
    assert json.loads(by_name.model_dump_json(by_alias=True))["applicartionID"] == "a"


def _populated_messages() -> list[BaseModel]:
    ask = si.AllocationAsk.model_validate(_full_ask_json())
    alloc = si.Allocation(
        allocation_key="k",
        allocation_tags={"t": "v"},
        uuid="u",
        resource_per_alloc=si.Resource.of(memory=5),
        priority=3,
        node_id="n",
        application_id="a",
        partition_name="p",
        task_group_name="tg",
        placeholder=True,
    )
    release = si.AllocationRelease(
        application_id="a",
        uuid="u",
        termination_type=si.TerminationType.PLACEHOLDER_REPLACED,
        message="m",
        allocation_key="k",
    )
    ask_release = si.AllocationAskRelease(
        application_id="a", allocation_key="k", termination_type="TIMEOUT", message="m"
    )
    return [
        si.RegisterResourceManagerRequest(
            rm_id="rm",
            version="1",
            policy_group="queues",
            build_info={"b": "1"},
            config="partitions: []",
            extra_config={"x": "y"},
        ),
        si.RegisterResourceManagerResponse(),
        si.UpdateConfigurationRequest(rm_id="rm", policy_group="q", config="c"),
        si.AllocationRequest(
            asks=[ask],
            releases=si.AllocationReleasesRequest(
                allocations_to_release=[release], allocation_asks_to_release=[ask_release]
            ),
            rm_id="rm",
        ),
        si.ApplicationRequest(
            new=[
                si.AddApplicationRequest(
                    application_id="a",
                    queue_name="root.a",
                    ugi=si.UserGroupInformation(user="u", groups=["g"]),
                    tags={"t": "v"},
                    execution_timeout_milli_seconds=5,
                    placeholder_ask=si.Resource.of(memory=20),
                    gang_scheduling_style="Hard",
                )
            ],
            remove=[si.RemoveApplicationRequest(application_id="b")],
            rm_id="rm",
        ),
        si.NodeRequest(
            nodes=[
                si.NodeInfo(
                    node_id="n",
                    action="CREATE",
                    attributes={"si/hostname": "n"},
                    schedulable_resource=si.Resource.of(memory=100, vcore=10),
                    occupied_resource=si.Resource.of(memory=1),
                    existing_allocations=[alloc],
                )
            ],
            rm_id="rm",
        ),
        si.AllocationResponse(
            new=[alloc],
            released=[release],
            released_asks=[ask_release],
            rejected=[si.RejectedAllocationAsk(allocation_key="k", application_id="a", reason="r")],
        ),
        si.ApplicationResponse(
            rejected=[si.RejectedApplication(application_id="a", reason="r")],
            accepted=[si.AcceptedApplication(application_id="b")],
            updated=[
                si.UpdatedApplication(
                    application_id="b", state="Running", state_transition_timestamp=7, message="m"
                )
            ],
        ),
        si.NodeResponse(
            rejected=[si.RejectedNode(node_id="n", reason="r")],
            accepted=[si.AcceptedNode(node_id="m")],
        ),
        si.PredicatesArgs(allocation_key="k", node_id="n", allocate=True),
        si.PreemptionPredicatesArgs(
            allocation_key="k", node_id="n", preempt_allocation_keys=["x", "y"], start_index=1
        ),
        si.PreemptionPredicatesResponse(success=True, index=1),
        si.UpdateContainerSchedulingStateRequest(
            application_id="a", allocation_key="k", state="RESERVED", reason="r"
        ),
        si.EventRecord(
            type=si.EventRecordType.REQUEST,
            object_id="k",
            message="m",
            timestamp_nano=123,
            event_change_type="ADD",
            reference_id="a",
        ),
    ]


@pytest.mark.parametrize("message", _populated_messages(), ids=lambda m: type(m).__name__)
def test_round_trip_through_the_spec_names(message: BaseModel) -> None:
    model = type(message)
    assert model.model_validate(message.model_dump(by_alias=True)) == message
    assert model.model_validate(message.model_dump()) == message
    as_json = message.model_dump_json(by_alias=True)
    assert model.model_validate_json(as_json) == message
    assert model.model_validate(json.loads(as_json)) == message
    assert model.model_validate(message.model_dump(mode="json", by_alias=True)) == message


def test_json_output_uses_enum_names_python_output_keeps_members() -> None:
    response = si.AllocationResponse(
        released=[si.AllocationRelease(uuid="u", termination_type=si.TerminationType.TIMEOUT)]
    )
    as_json = response.model_dump(mode="json", by_alias=True)
    assert as_json["released"][0]["terminationType"] == "TIMEOUT"
    assert json.loads(response.model_dump_json())["released"][0]["termination_type"] == "TIMEOUT"
    assert response.model_dump()["released"][0]["termination_type"] is si.TerminationType.TIMEOUT


# ----------------------------------------------------------------------------- enums


@pytest.mark.parametrize("enum_cls", list(ENUMS), ids=lambda e: e.__name__)
def test_enum_members_follow_the_spec(enum_cls: type[si.ProtoEnum]) -> None:
    assert [(m.name, m.value) for m in enum_cls] == ENUMS[enum_cls]
    assert issubclass(enum_cls, si.ProtoEnum)


def test_nested_enum_names_of_the_spec() -> None:
    assert si.NodeInfo.ActionFromRM is si.NodeAction
    assert si.NodeInfo.ActionFromRM.DRAIN_NODE is si.NodeAction.DRAIN_NODE
    assert si.UpdateContainerSchedulingStateRequest.SchedulingState is si.SchedulingState
    assert si.EventRecord.Type is si.EventRecordType
    assert si.EventRecord.ChangeType is si.EventChangeType
    assert "ActionFromRM" not in si.NodeInfo.model_fields
    assert "SchedulingState" not in si.UpdateContainerSchedulingStateRequest.model_fields


@pytest.mark.parametrize(
    ("model", "extra", "attr", "alias", "enum_cls"),
    ENUM_FIELDS,
    ids=[f"{m.__name__}.{a}" for m, _, a, _, _ in ENUM_FIELDS],
)
def test_enum_fields_accept_member_number_and_name(
    model: type[BaseModel],
    extra: dict[str, Any],
    attr: str,
    alias: str,
    enum_cls: type[si.ProtoEnum],
) -> None:
    for member in enum_cls:
        for given_value in (member, member.value, member.name):
            obj = model.model_validate({**extra, alias: given_value})
            assert getattr(obj, attr) is member
            assert obj.model_dump(mode="json", by_alias=True)[alias] == member.name
            assert obj.model_dump(by_alias=True)[alias] is member
            assert model.model_validate_json(obj.model_dump_json(by_alias=True)) == obj


@pytest.mark.parametrize(
    ("model", "extra", "attr", "alias", "enum_cls"),
    ENUM_FIELDS,
    ids=[f"{m.__name__}.{a}" for m, _, a, _, _ in ENUM_FIELDS],
)
@pytest.mark.parametrize("bad", ["FOO", 42, -1, True, "timeout", 1.5, None])
def test_unknown_enum_values_are_rejected_naming_the_field(
    model: type[BaseModel],
    extra: dict[str, Any],
    attr: str,
    alias: str,
    enum_cls: type[si.ProtoEnum],
    bad: Any,
) -> None:
    with pytest.raises(ValidationError) as exc:
        model.model_validate({**extra, alias: bad})
    assert alias in _errors_text(exc)
    assert all(loc.split(".")[0] == alias for loc in _error_locs(exc))


def test_termination_type_foo_and_42() -> None:
    for bad in ("FOO", 42):
        with pytest.raises(ValidationError, match="terminationType"):
            si.AllocationRelease.model_validate({"terminationType": bad})
        with pytest.raises(ValidationError, match="termination_type"):
            si.AllocationRelease(termination_type=bad)


def test_enum_of_another_kind_is_rejected() -> None:
    with pytest.raises(ValidationError, match="terminationType"):
        si.AllocationRelease.model_validate({"terminationType": si.NodeAction.CREATE})


def test_unknown_enum_in_a_nested_message_names_the_path() -> None:
    with pytest.raises(ValidationError) as exc:
        si.AllocationRequest.model_validate(
            {
                "rmID": "rm",
                "releases": {"allocationsToRelease": [{"UUID": "u", "terminationType": "FOO"}]},
            }
        )
    assert _error_locs(exc) == ["releases.allocationsToRelease.0.terminationType"]


# ----------------------------------------------------------------------------- resources


def test_resource_of_and_as_dict() -> None:
    res = si.Resource.of(memory=10, vcore=1)
    assert isinstance(res, si.Resource)
    assert res.resources == {"memory": si.Quantity(value=10), "vcore": si.Quantity(value=1)}
    assert res.as_dict() == {"memory": 10, "vcore": 1}
    assert all(type(v) is int for v in res.as_dict().values())
    assert si.Resource.of().as_dict() == {}
    assert si.Resource.of(memory=0).as_dict() == {"memory": 0}
    assert res == si.Resource.model_validate(
        {"resources": {"memory": {"value": 10}, "vcore": {"value": 1}}}
    )
    # as_dict is a copy
    res.as_dict()["memory"] = 99
    assert res.resources["memory"].value == 10


def test_negative_quantity_is_rejected_naming_the_field() -> None:
    with pytest.raises(ValidationError) as exc:
        si.Quantity(value=-1)
    assert _error_locs(exc) == ["value"]

    with pytest.raises(ValidationError) as exc:
        si.Resource.of(memory=10, vcore=-1)
    assert _error_locs(exc) == ["resources.vcore.value"]
    assert "resources.vcore.value" in _errors_text(exc)

    ask = _full_ask_json()
    ask["resourceAsk"] = {"resources": {"memory": {"value": -5}}}
    with pytest.raises(ValidationError) as exc:
        si.AllocationAsk.model_validate(ask)
    assert _error_locs(exc) == ["resourceAsk.resources.memory.value"]
    assert "resourceAsk.resources.memory.value" in _errors_text(exc)

    with pytest.raises(ValidationError) as exc:
        si.NodeRequest.model_validate(
            {
                "rmID": "rm",
                "nodes": [
                    {"nodeID": "n", "schedulableResource": {"resources": {"cpu": {"value": -1}}}}
                ],
            }
        )
    assert _error_locs(exc) == ["nodes.0.schedulableResource.resources.cpu.value"]


def test_quantity_is_an_int64() -> None:
    assert si.Quantity(value=2**63 - 1).value == 2**63 - 1
    with pytest.raises(ValidationError, match="value"):
        si.Quantity(value=2**63)
    with pytest.raises(ValidationError, match="value"):
        si.Quantity.model_validate({"value": 1.5})
    # proto3 JSON writes int64 as a string
    assert si.Quantity.model_validate_json('{"value": "12"}').value == 12


def test_resource_names_must_be_non_empty() -> None:
    with pytest.raises(ValidationError) as exc:
        si.Resource.model_validate({"resources": {"": {"value": 1}}})
    assert _error_locs(exc)[0].startswith("resources")
    with pytest.raises(ValidationError):
        si.Resource.of(**{"": 1})


def test_resource_from_dict_is_fast_path_for_the_same_object() -> None:
    built = si.resource_from_dict({"memory": 10, "vcore": 1})
    assert built == si.Resource.of(memory=10, vcore=1)
    assert built.as_dict() == {"memory": 10, "vcore": 1}
    assert built.model_fields_set == si.Resource.of(memory=1).model_fields_set
    assert built.resources["memory"].model_fields_set == {"value"}
    assert built.model_dump(by_alias=True) == {
        "resources": {"memory": {"value": 10}, "vcore": {"value": 1}}
    }
    assert si.resource_from_dict({}) == si.Resource()
    # no shared state with the input
    source = {"memory": 1}
    built = si.resource_from_dict(source)
    source["memory"] = 2
    assert built.as_dict() == {"memory": 1}


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(0, 2**63 - 1), max_size=6))
def test_resource_helpers_agree(amounts: dict[str, int]) -> None:
    validated = si.Resource.model_validate(
        {"resources": {k: {"value": v} for k, v in amounts.items()}}
    )
    assert validated.as_dict() == amounts
    assert si.resource_from_dict(amounts) == validated
    assert si.Resource.model_validate_json(validated.model_dump_json(by_alias=True)) == validated


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(max_value=-1), min_size=1))
def test_any_negative_amount_is_rejected(amounts: dict[str, int]) -> None:
    with pytest.raises(ValidationError) as exc:
        si.Resource.model_validate({"resources": {k: {"value": v} for k, v in amounts.items()}})
    assert all(loc.startswith("resources.") and loc.endswith(".value") for loc in _error_locs(exc))


# ----------------------------------------------------------------------------- required ids


@pytest.mark.parametrize(
    ("model", "attr", "alias", "others"),
    REQUIRED_IDS,
    ids=[f"{m.__name__}.{a}" for m, a, _, _ in REQUIRED_IDS],
)
def test_empty_required_id_is_rejected_naming_the_field(
    model: type[BaseModel], attr: str, alias: str, others: dict[str, str]
) -> None:
    # by attribute name
    with pytest.raises(ValidationError) as exc:
        model.model_validate({**others, attr: ""})
    assert _error_locs(exc) == [attr]
    assert attr in _errors_text(exc)
    # by spec name
    with pytest.raises(ValidationError) as exc:
        model.model_validate({**others, alias: ""})
    assert _error_locs(exc) == [alias]
    # missing altogether
    with pytest.raises(ValidationError) as exc:
        model.model_validate(others)
    assert _error_locs(exc) == [alias]
    assert exc.value.errors()[0]["type"] == "missing"
    # a non-empty id is fine
    assert getattr(model.model_validate({**others, attr: "x"}), attr) == "x"


def test_ids_the_spec_does_not_require_may_be_empty() -> None:
    assert si.AllocationRelease(application_id="", uuid="").uuid == ""
    assert si.AllocationAskRelease(allocation_key="").allocation_key == ""
    assert si.UpdateContainerSchedulingStateRequest().application_id == ""
    assert si.RejectedAllocationAsk().allocation_key == ""
    assert si.EventRecord(object_id="").object_id == ""


def test_nested_empty_id_names_the_path() -> None:
    with pytest.raises(ValidationError) as exc:
        si.AllocationRequest.model_validate(
            {"rmID": "rm", "asks": [{"allocationKey": "k", "applicationID": ""}]}
        )
    assert _error_locs(exc) == ["asks.0.applicationID"]


# ----------------------------------------------------------------------------- other limits


def test_an_explicit_zero_max_allocations_is_the_default_of_one() -> None:
    """proto3 writers send ``maxAllocations: 0`` for a field they never set."""
    ask = si.AllocationAsk.model_validate(
        {"allocationKey": "k", "applicationID": "a", "maxAllocations": 0})
    assert ask.max_allocations == 1
    assert si.AllocationAsk(allocation_key="k", application_id="a",
                            max_allocations=0).max_allocations == 1


@pytest.mark.parametrize("bad", [-1, 2**31])
def test_max_allocations_must_be_at_least_one(bad: int) -> None:
    with pytest.raises(ValidationError) as exc:
        si.AllocationAsk(allocation_key="k", application_id="a", max_allocations=bad)
    assert _error_locs(exc) == ["max_allocations"]
    with pytest.raises(ValidationError) as exc:
        si.AllocationAsk.model_validate(
            {"allocationKey": "k", "applicationID": "a", "maxAllocations": bad}
        )
    assert _error_locs(exc) == ["maxAllocations"]


def test_int32_fields_are_bounded() -> None:
    assert si.AllocationAsk(allocation_key="k", application_id="a", priority=-(2**31)).priority
    with pytest.raises(ValidationError, match="priority"):
        si.AllocationAsk(allocation_key="k", application_id="a", priority=2**31)
    with pytest.raises(ValidationError, match="startIndex"):
        si.PreemptionPredicatesArgs.model_validate({"startIndex": 2**31})


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (si.AllocationAsk, {"allocationKey": "k", "applicationID": "a", "foo": 1}),
        (
            si.Allocation,
            {"allocationKey": "k", "applicationID": "a", "nodeID": "n", "queueName": "q"},
        ),
        (si.EventRecord, {"groupID": "g"}),
        (si.EventRecord, {"reason": "r"}),
        (si.UpdateConfigurationRequest, {"rmID": "rm", "configs": "c"}),
        (si.Quantity, {"value": 1, "unit": "Mi"}),
        (si.RegisterResourceManagerResponse, {"anything": True}),
        (si.AllocationRelease, {"applicationId": "a"}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_extra_fields_are_rejected(model: type[BaseModel], data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    assert [e["type"] for e in exc.value.errors()] == ["extra_forbidden"]


def test_extra_field_in_nested_message_is_rejected() -> None:
    with pytest.raises(ValidationError) as exc:
        si.NodeRequest.model_validate({"rmID": "rm", "nodes": [{"nodeID": "n", "bogus": 1}]})
    assert _error_locs(exc) == ["nodes.0.bogus"]


# ----------------------------------------------------------------------------- model_construct


def test_model_construct_matches_validated_construction() -> None:
    resource = si.resource_from_dict({"memory": 10, "vcore": 1})
    pairs: list[tuple[BaseModel, BaseModel]] = [
        (
            si.Allocation.model_construct(
                allocation_key="k",
                uuid="k-0",
                resource_per_alloc=resource,
                node_id="n",
                application_id="a",
                task_group_name="tg",
                placeholder=True,
            ),
            si.Allocation(
                allocation_key="k",
                uuid="k-0",
                resource_per_alloc=si.Resource.of(memory=10, vcore=1),
                node_id="n",
                application_id="a",
                task_group_name="tg",
                placeholder=True,
            ),
        ),
        (
            si.AllocationRelease.model_construct(
                application_id="a",
                uuid="k-0",
                termination_type=si.TerminationType.PLACEHOLDER_REPLACED,
                message="replaced",
                allocation_key="k",
            ),
            si.AllocationRelease.model_validate(
                {
                    "applicationID": "a",
                    "UUID": "k-0",
                    "terminationType": "PLACEHOLDER_REPLACED",
                    "message": "replaced",
                    "allocationKey": "k",
                }
            ),
        ),
        (
            si.UpdatedApplication.model_construct(
                application_id="a", state="Running", state_transition_timestamp=5
            ),
            si.UpdatedApplication(
                application_id="a", state="Running", state_transition_timestamp=5
            ),
        ),
        (
            si.EventRecord.model_construct(
                type=si.EventRecordType.REQUEST,
                object_id="k",
                message="m",
                timestamp_nano=1,
                event_change_type=si.EventChangeType.ADD,
                reference_id="a",
            ),
            si.EventRecord(
                type="REQUEST",
                object_id="k",
                message="m",
                timestamp_nano=1,
                event_change_type=2,
                reference_id="a",
            ),
        ),
        (si.EventRecord.model_construct(), si.EventRecord()),
        (  # every field in declaration order: the fast path
            si.Allocation.model_construct(
                allocation_key="k", allocation_tags={"t": "v"}, uuid="k-1",
                resource_per_alloc=resource, priority=3, node_id="n", application_id="a",
                partition_name="p", task_group_name="", placeholder=False,
            ),
            si.Allocation(
                allocation_key="k", allocation_tags={"t": "v"}, uuid="k-1",
                resource_per_alloc=si.Resource.of(memory=10, vcore=1), priority=3,
                node_id="n", application_id="a", partition_name="p", task_group_name="",
                placeholder=False,
            ),
        ),
        (
            si.AllocationAskRelease.model_construct(
                application_id="a", allocation_key="k", termination_type=si.TerminationType.TIMEOUT
            ),
            si.AllocationAskRelease(application_id="a", allocation_key="k", termination_type=2),
        ),
    ]
    for constructed, validated in pairs:
        assert type(constructed) is type(validated)
        assert constructed == validated
        assert constructed.model_fields_set == validated.model_fields_set
        assert list(vars(constructed)) == list(vars(validated))  # same field order
        assert constructed.model_dump(by_alias=True) == validated.model_dump(by_alias=True)
        assert constructed.model_dump_json(by_alias=True) == validated.model_dump_json(
            by_alias=True
        )
        # the constructed object survives a strict re-validation
        assert type(validated).model_validate(constructed.model_dump(by_alias=True)) == validated
        # and matches what pydantic's own model_construct builds
        original = BaseModel.model_construct.__func__(  # type: ignore[attr-defined]
            type(constructed), **{k: getattr(constructed, k) for k in constructed.model_fields_set}
        )
        assert original == constructed
        assert original.model_fields_set == constructed.model_fields_set


def test_model_construct_falls_back_for_aliases_and_fields_set() -> None:
    spec_names: dict[str, Any] = {"UUID": "u", "applicationID": "a"}
    by_alias = si.AllocationRelease.model_construct(**spec_names)
    assert (by_alias.uuid, by_alias.application_id) == ("u", "a")
    assert by_alias == si.AllocationRelease(uuid="u", application_id="a")
    explicit = si.UpdatedApplication.model_construct({"state"}, application_id="a", state="New")
    assert explicit.model_fields_set == {"state"}
    assert explicit.application_id == "a"


def test_model_construct_of_a_nested_response() -> None:
    alloc = si.Allocation.model_construct(
        allocation_key="k",
        uuid="k-0",
        node_id="n",
        application_id="a",
        resource_per_alloc=si.resource_from_dict({"memory": 1}),
    )
    response = si.AllocationResponse.model_construct(new=[alloc])
    assert response == si.AllocationResponse(
        new=[
            si.Allocation(
                allocation_key="k",
                uuid="k-0",
                node_id="n",
                application_id="a",
                resource_per_alloc=si.Resource.of(memory=1),
            )
        ]
    )
    assert response.released == [] and response.released_asks == [] and response.rejected == []
    dumped = response.model_dump(mode="json", by_alias=True)
    assert dumped["new"][0]["UUID"] == "k-0"
    assert dumped["releasedAsks"] == []


# ----------------------------------------------------------------------------- JSON schemas


def test_write_json_schemas_is_deterministic(tmp_path: pathlib.Path) -> None:
    first = si.write_json_schemas(tmp_path / "a")
    second = si.write_json_schemas(tmp_path / "b")
    assert first == sorted(first)
    assert [p.name for p in first] == [p.name for p in second]
    assert [p.name for p in first] == sorted(f"{m.__name__}.schema.json" for m in si.MESSAGE_MODELS)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [p.name for p in first]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
        text = a.read_text(encoding="utf-8")
        assert text.endswith("}\n") and not text.endswith("\n\n")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    # a rewrite into the same directory gives the same bytes
    before = {p.name: p.read_bytes() for p in first}
    again = si.write_json_schemas(tmp_path / "a")
    assert {p.name: p.read_bytes() for p in again} == before


def test_json_schemas_use_spec_names_and_enum_names(tmp_path: pathlib.Path) -> None:
    paths = {p.name: p for p in si.write_json_schemas(tmp_path)}
    ask = json.loads(paths["AllocationAsk.schema.json"].read_text(encoding="utf-8"))
    assert list(ask["properties"]) == sorted(SPEC_FIELDS[si.AllocationAsk])
    assert sorted(ask["required"]) == ["allocationKey", "applicationID"]
    assert ask["properties"]["maxAllocations"]["minimum"] == 1
    assert ask["properties"]["maxAllocations"]["default"] == 1
    assert ask["additionalProperties"] is False

    state = json.loads(
        paths["UpdateContainerSchedulingStateRequest.schema.json"].read_text(encoding="utf-8")
    )
    assert "applicartionID" in state["properties"]
    enum_schema = state["$defs"]["SchedulingState"]
    choices = {tuple(c["enum"]) for c in enum_schema["anyOf"]}
    assert tuple(m.name for m in si.SchedulingState) in choices
    assert tuple(m.value for m in si.SchedulingState) in choices

    response = json.loads(paths["AllocationResponse.schema.json"].read_text(encoding="utf-8"))
    assert "releasedAsks" in response["properties"]
    release = response["$defs"]["AllocationRelease"]
    assert "UUID" in release["properties"]
    assert release["properties"]["terminationType"]["default"] == "UNKNOWN_TERMINATION_TYPE"
    quantity = json.loads(paths["Quantity.schema.json"].read_text(encoding="utf-8"))
    assert quantity["properties"]["value"]["minimum"] == 0


def test_write_json_schemas_creates_the_directory(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "deep" / "er"
    paths = si.write_json_schemas(out)
    assert len(paths) == len(si.MESSAGE_MODELS)
    assert all(p.parent == out and p.is_file() for p in paths)


def test_every_message_the_core_sends_parses_strictly_against_the_proto() -> None:
    """A gang's whole life, rejections included: each callback message, written as the
    spec's JSON, parses with protobuf's strict JSON reader (unknown fields refused), and
    ``referenceID`` (not in the seed spec's EventRecord) appears only when it is set."""
    from google.protobuf import json_format

    from scheduler import ManualClock, Scheduler
    from scheduler.rpc._generated import si_pb2
    from scheduler.testing import RecordingShim

    clock = ManualClock(start=10.0)
    api = Scheduler(clock=clock)
    shim = RecordingShim()
    rm = "rm"
    api.register_resource_manager(si.RegisterResourceManagerRequest(
        rm_id=rm, policy_group="q", config="partitions:\n  - name: default\n    queues:\n"
        "      - name: root\n        submitacl: '*'\n        queues:\n          - name: a\n"),
        shim)
    res = si.Resource.of
    api.update_node(si.NodeRequest(rm_id=rm, nodes=[
        si.NodeInfo(node_id="n1", action=si.NodeAction.CREATE,
                    schedulable_resource=res(memory=100, vcore=4000)),
        si.NodeInfo(node_id="n1", action=si.NodeAction.CREATE,
                    schedulable_resource=res(memory=100))]))
    api.update_application(si.ApplicationRequest(rm_id=rm, new=[
        si.AddApplicationRequest(application_id="g", queue_name="root.a",
                                 ugi=si.UserGroupInformation(user="u"),
                                 placeholder_ask=res(memory=20, vcore=2000),
                                 gang_scheduling_style="Hard",
                                 execution_timeout_milli_seconds=60_000),
        si.AddApplicationRequest(application_id="p", queue_name="root.a",
                                 ugi=si.UserGroupInformation(user="u")),
        si.AddApplicationRequest(application_id="x", queue_name="root.nope",
                                 ugi=si.UserGroupInformation(user="u"))]))

    def ask(key: str, memory: int, placeholder: bool = False, app: str = "g") -> si.AllocationAsk:
        return si.AllocationAsk(allocation_key=key, application_id=app,
                                resource_ask=res(memory=memory, vcore=1000),
                                task_group_name="tg", placeholder=placeholder)

    api.update_allocation(si.AllocationRequest(rm_id=rm, asks=[
        ask("ph1", 10, True), ask("ph2", 10, True), ask("stray", 10, app="unknown"),
        ask("huge", 1000, app="p")]))
    api.schedule()
    api.update_allocation(si.AllocationRequest(rm_id=rm, asks=[ask("real", 10)]))
    api.schedule()
    for response in shim.of("update_allocation"):
        for released in response.released:
            api.update_allocation(si.AllocationRequest(
                rm_id=rm, releases=si.AllocationReleasesRequest(allocations_to_release=[
                    released])))
    api.schedule()
    clock.advance(61)
    api.schedule()
    api.update_node(si.NodeRequest(rm_id=rm, nodes=[
        si.NodeInfo(node_id="n1", action=si.NodeAction.DECOMISSION)]))

    kinds = {
        "update_allocation": si_pb2.AllocationResponse,
        "update_application": si_pb2.ApplicationResponse,
        "update_node": si_pb2.NodeResponse,
        "send_event": si_pb2.EventRecord,
        "update_container_scheduling_state": si_pb2.UpdateContainerSchedulingStateRequest,
    }
    seen: dict[str, int] = {}
    for kind, message in shim.messages:
        for one in message if isinstance(message, list) else [message]:
            text = one.model_dump_json(by_alias=True)
            json_format.Parse(text, kinds[kind](), ignore_unknown_fields=False)
            if kind == "send_event" and not one.reference_id:
                assert "referenceID" not in json.loads(text)
            seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == set(kinds), seen


@pytest.mark.parametrize("field, bad", [
    ("allocationKey", "   "), ("allocationKey", "a\nb"), ("applicationID", "x\x00"),
    ("partitionName", "\t"), ("partitionName", "p\x7f"),
])
def test_blank_ids_and_control_characters_are_refused_naming_the_field(
        field: str, bad: str) -> None:
    data = {"allocationKey": "k", "applicationID": "a", field: bad}
    with pytest.raises(ValidationError) as exc:
        si.AllocationAsk.model_validate(data)
    assert _error_locs(exc) == [field]


@pytest.mark.parametrize("message, data", [
    (si.NodeInfo, {"nodeID": " "}),
    (si.AddApplicationRequest, {"applicationID": "a", "queueName": "root.\nq"}),
    (si.RegisterResourceManagerRequest, {"rmID": "rm\r"}),
    (si.AllocationRelease, {"UUID": "u\n"}),
])
def test_every_kind_of_id_is_held_to_the_same_rule(message: type[BaseModel],
                                                   data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        message.model_validate(data)


@pytest.mark.parametrize("data, field", [
    ({"maxAllocations": True}, "maxAllocations"),
    ({"placeholder": "yes"}, "placeholder"),
    ({"placeholder": 1}, "placeholder"),
    ({"priority": False}, "priority"),
    ({"executionTimeoutMilliSeconds": True}, "executionTimeoutMilliSeconds"),
])
def test_typed_fields_are_strict(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        si.AllocationAsk.model_validate({"allocationKey": "k", "applicationID": "a", **data})
    assert _error_locs(exc) == [field]
    # int64 as proto3's JSON writes it, a string of digits, is still read
    ask = si.AllocationAsk.model_validate({"allocationKey": "k", "applicationID": "a",
                                           "executionTimeoutMilliSeconds": "1500"})
    assert ask.execution_timeout_milli_seconds == 1500


def test_enum_errors_list_the_spec_names() -> None:
    with pytest.raises(ValidationError) as exc:
        si.AllocationRelease.model_validate({"terminationType": "KILLED"})
    text = str(exc.value)
    for name in si.TerminationType.__members__:
        assert name in text
    with pytest.raises(ValidationError) as exc:
        si.AllocationRelease.model_validate({"terminationType": 9})
    assert "PLACEHOLDER_REPLACED" in str(exc.value)
