from . import si_pb2 as _si_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PredicateQuestion(_message.Message):
    __slots__ = ("id", "predicates", "preemptionPredicates")
    ID_FIELD_NUMBER: _ClassVar[int]
    PREDICATES_FIELD_NUMBER: _ClassVar[int]
    PREEMPTIONPREDICATES_FIELD_NUMBER: _ClassVar[int]
    id: int
    predicates: _si_pb2.PredicatesArgs
    preemptionPredicates: _si_pb2.PreemptionPredicatesArgs
    def __init__(self, id: _Optional[int] = ..., predicates: _Optional[_Union[_si_pb2.PredicatesArgs, _Mapping]] = ..., preemptionPredicates: _Optional[_Union[_si_pb2.PreemptionPredicatesArgs, _Mapping]] = ...) -> None: ...

class PredicateAnswer(_message.Message):
    __slots__ = ("rmID", "id", "fits", "preemption", "error")
    RMID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    FITS_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    rmID: str
    id: int
    fits: bool
    preemption: _si_pb2.PreemptionPredicatesResponse
    error: str
    def __init__(self, rmID: _Optional[str] = ..., id: _Optional[int] = ..., fits: _Optional[bool] = ..., preemption: _Optional[_Union[_si_pb2.PreemptionPredicatesResponse, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("rmID",)
    RMID_FIELD_NUMBER: _ClassVar[int]
    rmID: str
    def __init__(self, rmID: _Optional[str] = ...) -> None: ...

class ShimUpdate(_message.Message):
    __slots__ = ("events", "schedulingState")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULINGSTATE_FIELD_NUMBER: _ClassVar[int]
    events: EventBatch
    schedulingState: _si_pb2.UpdateContainerSchedulingStateRequest
    def __init__(self, events: _Optional[_Union[EventBatch, _Mapping]] = ..., schedulingState: _Optional[_Union[_si_pb2.UpdateContainerSchedulingStateRequest, _Mapping]] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_si_pb2.EventRecord]
    def __init__(self, events: _Optional[_Iterable[_Union[_si_pb2.EventRecord, _Mapping]]] = ...) -> None: ...

class UpdateConfigurationResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UnregisterResourceManagerRequest(_message.Message):
    __slots__ = ("rmID",)
    RMID_FIELD_NUMBER: _ClassVar[int]
    rmID: str
    def __init__(self, rmID: _Optional[str] = ...) -> None: ...

class UnregisterResourceManagerResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StateDumpRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StateDumpResponse(_message.Message):
    __slots__ = ("json",)
    JSON_FIELD_NUMBER: _ClassVar[int]
    json: str
    def __init__(self, json: _Optional[str] = ...) -> None: ...
