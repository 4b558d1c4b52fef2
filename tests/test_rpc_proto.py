"""The gRPC interface's protos against ``scheduler.si``: same messages, fields, enums; fresh code.

``scheduler/rpc/proto/si.proto`` is written from the interface spec and
``scheduler/si/`` models the same spec; ``si_today.proto`` and
``scheduler/si/today.py`` are today's SI (``2858f4d``). These tests fail as
soon as a proto and its models disagree on a message, a field name, a field
type or an enum member, or when the committed generated code is older than the
protos.
"""

from __future__ import annotations

import enum
import importlib.util
import types
import typing
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("grpc")

import annotated_types
import pydantic
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rpc_helpers import CONFIG

from scheduler import ManualClock, Scheduler, si
from scheduler.rpc._generated import si_pb2, si_today_pb2
from scheduler.rpc.convert import (
    ENUMS,
    PROTO_CLASSES,
    TODAY_PROTO_CLASSES,
    from_proto,
    proto_name,
    to_proto,
)
from scheduler.si import today
from scheduler.testing import RecordingShim

ROOT = Path(__file__).resolve().parent.parent


def _load_generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("generate_proto", ROOT / "scripts" /
                                                  "generate_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_code_is_current() -> None:
    pytest.importorskip("grpc_tools")
    generator = _load_generator()
    assert generator.stale(generator.generate()) == [], (
        "scheduler/rpc/_generated is stale: run python scripts/generate_proto.py")


_FILES = [(si_pb2, si.MESSAGE_MODELS, "si.v1"), (si_today_pb2, today.MESSAGE_MODELS, "si.today.v1")]
"""Each generated module, the models it mirrors, its package."""


@pytest.mark.parametrize(("module", "models", "package"), _FILES, ids=["seed", "today"])
def test_same_messages(module: Any, models: tuple[type[pydantic.BaseModel], ...],
                       package: str) -> None:
    assert set(module.DESCRIPTOR.message_types_by_name) == {m.__name__ for m in models}
    service = module.DESCRIPTOR.services_by_name["Scheduler"]
    assert service.full_name == f"{package}.Scheduler"
    methods = {m.name: (m.input_type.name, m.output_type.name) for m in service.methods}
    assert methods == {
        "RegisterResourceManager": ("RegisterResourceManagerRequest",
                                    "RegisterResourceManagerResponse"),
        "UpdateAllocation": ("AllocationRequest", "AllocationResponse"),
        "UpdateApplication": ("ApplicationRequest", "ApplicationResponse"),
        "UpdateNode": ("NodeRequest", "NodeResponse"),
    }


_SCALARS = {
    FieldDescriptor.TYPE_STRING: str,
    FieldDescriptor.TYPE_BOOL: bool,
    FieldDescriptor.TYPE_INT32: int,
    FieldDescriptor.TYPE_INT64: int,
}
_BITS = {FieldDescriptor.TYPE_INT32: 31, FieldDescriptor.TYPE_INT64: 63}


def _strip(annotation: Any) -> tuple[Any, list[Any]]:
    """The bare type of a pydantic annotation and its Annotated metadata; Optional removed."""
    metadata: list[Any] = []
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation, *extra = typing.get_args(annotation)
            metadata.extend(extra)
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            assert len(args) == 1, annotation
            annotation = args[0]
        else:
            return annotation, metadata


def _check_type(where: str, fd: FieldDescriptor, annotation: Any, meta: list[Any]) -> None:
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        assert typing.get_origin(annotation) is dict, where
        key, value = typing.get_args(annotation)
        assert _strip(key)[0] is str, where
        value_fd = fd.message_type.fields_by_name["value"]
        _check_single(where, value_fd, *_strip(value))
        return
    if fd.is_repeated:
        assert typing.get_origin(annotation) is list, where
        (item,) = typing.get_args(annotation)
        _check_single(where, fd, *_strip(item))
        return
    _check_single(where, fd, annotation, meta)


def _check_single(where: str, fd: FieldDescriptor, annotation: Any, meta: list[Any]) -> None:
    if fd.message_type is not None:
        assert isinstance(annotation, type) and annotation.__name__ == fd.message_type.name, where
    elif fd.enum_type is not None:
        assert annotation is ENUMS[fd.enum_type.full_name], where
    else:
        assert annotation is _SCALARS[fd.type], (where, annotation)
        if fd.type in _BITS:
            # the model must not accept a number the wire type can not carry
            top = 2 ** _BITS[fd.type] - 1
            limits = [m for m in meta if isinstance(m, annotated_types.Le | annotated_types.Ge)]
            upper = [m.le for m in limits if isinstance(m, annotated_types.Le)]
            assert upper and max(upper) <= top, (where, "no upper bound within the wire type")


_EVERY_MODEL = [(model, PROTO_CLASSES[model]) for model in si.MESSAGE_MODELS] + [
    (model, TODAY_PROTO_CLASSES[model]) for model in today.MESSAGE_MODELS]
"""Each model against its class in each proto (a shared model against both)."""


@pytest.mark.parametrize(("model", "cls"), _EVERY_MODEL,
                         ids=lambda m: f"{m.DESCRIPTOR.full_name}" if hasattr(m, "DESCRIPTOR")
                         else m.__name__)
def test_same_fields(model: type[pydantic.BaseModel], cls: type[Message]) -> None:
    descriptor: Descriptor = cls.DESCRIPTOR
    wire = set(descriptor.fields_by_name)
    ours = {proto_name(model, attr): attr for attr in model.model_fields}
    assert set(ours) == wire, f"{model.__name__}: fields differ"
    for name, attr in ours.items():
        info = model.model_fields[attr]
        annotation, meta = _strip(info.annotation)
        _check_type(f"{model.__name__}.{name}", descriptor.fields_by_name[name], annotation,
                    meta + list(info.metadata))


def test_same_enums() -> None:
    files = [si_pb2.DESCRIPTOR, si_today_pb2.DESCRIPTOR]
    every = [e for f in files for e in [
        *f.enum_types_by_name.values(),
        *(e for m in f.message_types_by_name.values() for e in m.enum_types)]]
    assert {e.full_name for e in every} == set(ENUMS)
    for full_name, ours in ENUMS.items():
        descriptor = next(e for e in every if e.full_name == full_name)
        wire = {v.name: v.number for v in descriptor.values}
        assert wire == {m.name: m.value for m in ours}, full_name


# ------------------------------------------------------------------ round trips


def _core_traffic() -> list[pydantic.BaseModel]:
    """Every message of a gang run and a release on the real core, requests included."""
    clock = ManualClock(start=1000.0)
    api = Scheduler(clock=clock)
    shim = RecordingShim()
    requests: list[pydantic.BaseModel] = [
        si.RegisterResourceManagerRequest(rm_id="rm-1", config=CONFIG, build_info={"a": "b"}),
        si.ApplicationRequest(rm_id="rm-1", new=[si.AddApplicationRequest(
            application_id="gang", queue_name="root.apps", tags={"t": "v"},
            ugi=si.UserGroupInformation(user="alice", groups=["g1", "g2"]),
            placeholder_ask=si.Resource.of(memory=20), gang_scheduling_style="Hard",
            execution_timeout_milli_seconds=5000),
            si.AddApplicationRequest(application_id="plain", queue_name="root.apps",
                                     ugi=si.UserGroupInformation(user="bob"))]),
        si.NodeRequest(rm_id="rm-1", nodes=[si.NodeInfo(
            node_id="node-1", action=si.NodeAction.CREATE, attributes={"si/hostname": "n1"},
            schedulable_resource=si.Resource.of(memory=100, vcore=10),
            occupied_resource=si.Resource.of(memory=1))]),
        si.AllocationRequest(rm_id="rm-1", asks=[
            si.AllocationAsk(allocation_key="ph", application_id="gang",
                             resource_ask=si.Resource.of(memory=10), max_allocations=2,
                             task_group_name="tg", placeholder=True, originator=True,
                             preemption_policy=si.PreemptionPolicy(allow_preempt_self=True)),
            si.AllocationAsk(allocation_key="real", application_id="gang", priority=-3,
                             resource_ask=si.Resource.of(memory=10), task_group_name="tg",
                             tags={"kubernetes.io/meta/namespace": "ns"}),
            si.AllocationAsk(allocation_key="huge", application_id="plain",
                             resource_ask=si.Resource.of(memory=1000))]),
    ]
    api.register_resource_manager(requests[0], shim)  # type: ignore[arg-type]
    api.update_application(requests[1])  # type: ignore[arg-type]
    api.update_node(requests[2])  # type: ignore[arg-type]
    api.update_allocation(requests[3])  # type: ignore[arg-type]
    api.schedule()
    api.schedule()
    for rel in shim.released:
        confirm = si.AllocationRequest(rm_id="rm-1", releases=si.AllocationReleasesRequest(
            allocations_to_release=[rel]))
        requests.append(confirm)
        api.update_allocation(confirm)
    api.schedule()
    clock.advance(3600)
    api.schedule()
    out = list(requests)
    for _kind, message in shim.messages:
        out.extend(message if isinstance(message, list) else [message])
    return out


def test_core_traffic_round_trips_through_the_wire() -> None:
    traffic = _core_traffic()
    kinds = {type(m).__name__ for m in traffic}
    assert {"AllocationResponse", "ApplicationResponse", "NodeResponse", "EventRecord",
            "UpdateContainerSchedulingStateRequest"} <= kinds
    assert any(r.released for r in traffic if isinstance(r, si.AllocationResponse))
    for message in traffic:
        wire = to_proto(message).SerializeToString()
        back = from_proto(PROTO_CLASSES[type(message)].FromString(wire), type(message))
        assert back == message, type(message).__name__


def _proto_strategy(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments for a random protobuf message of this type (valid or not)."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for fd in descriptor.fields:
        fields[fd.name] = _field_strategy(fd, depth)
    return st.fixed_dictionaries({}, optional=fields)


_TEXT = st.sampled_from(["", "a", "default", "root.apps", "ü-ñ", "x" * 40])


def _field_strategy(fd: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    msg = fd.message_type
    if msg is not None and msg.GetOptions().map_entry:
        value_fd = msg.fields_by_name["value"]
        return st.dictionaries(_TEXT, _single(value_fd, depth + 1), max_size=3)
    if fd.is_repeated:
        return st.lists(_single(fd, depth + 1), max_size=3 if depth < 2 else 0)
    return _single(fd, depth + 1)


def _single(fd: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    if fd.message_type is not None:
        if depth > 3:
            return st.just({})
        return _proto_strategy(fd.message_type, depth)
    if fd.enum_type is not None:
        return st.sampled_from([v.number for v in fd.enum_type.values] + [7])
    if fd.type == FieldDescriptor.TYPE_STRING:
        return _TEXT
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    bits = _BITS[fd.type]
    return st.integers(-(2**bits), 2**bits - 1)


@pytest.mark.parametrize("model", [*si.MESSAGE_MODELS, *today.OWN_MODELS],
                         ids=lambda m: f"{m.__module__.rsplit('.', 1)[-1]}.{m.__name__}")
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.filter_too_much])
@given(data=st.data())
def test_any_wire_message_validates_or_names_a_field(
        model: type[pydantic.BaseModel], data: st.DataObject) -> None:
    """A random wire message becomes a model that round-trips, or a ValidationError; never else."""
    cls = PROTO_CLASSES[model]
    wire: Message = cls(**data.draw(_proto_strategy(cls.DESCRIPTOR)))
    try:
        parsed = from_proto(wire, model)
    except pydantic.ValidationError as error:
        assert error.errors()[0]["loc"], "a rejection must name the field"
        assume(False)
        return
    again = from_proto(cls.FromString(to_proto(parsed).SerializeToString()), model)
    assert again == parsed


def test_proto_enums_are_python_enums() -> None:
    assert all(issubclass(e, enum.Enum) for e in ENUMS.values())


def test_todays_messages_nest_todays_classes() -> None:
    """A shared model inside today's message takes today's class; at the top, the seed's."""
    resource = si.Resource.of(memory=10, vcore=2)
    response = today.AllocationResponse(new=[
        today.Allocation(allocation_key="a", node_id="n", resource_per_alloc=resource,
                         originator=True, preemption_policy=si.PreemptionPolicy(
                             allow_preempt_other=True)),
        today.Allocation(allocation_key="b", node_id="n", resource_per_alloc=resource)])
    message: Any = to_proto(response)
    assert type(message) is si_today_pb2.AllocationResponse
    assert type(message.new[0].resourcePerAlloc) is si_today_pb2.Resource
    assert type(to_proto(resource)) is si_pb2.Resource
    back = from_proto(si_today_pb2.AllocationResponse.FromString(message.SerializeToString()),
                      today.AllocationResponse)
    assert back == response
    event = today.EventRecord(type=today.EventRecordType.USERGROUP, object_id="alice",
                              event_change_detail=today.EventChangeDetail.UG_USER_RESOURCE,
                              resource=resource)
    wire = to_proto(event).SerializeToString()
    assert from_proto(si_today_pb2.EventRecord.FromString(wire), today.EventRecord) == event
