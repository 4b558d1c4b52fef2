"""The base of every SI message, proto3 scalar ranges, and the resource messages.

``_Message.model_construct`` has a fast path the core uses to build outgoing
messages without validation; ``Resource``/``Quantity`` are the spec's sparse
resource map (``002`` "Ask for more resources", common fields).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Self, TypeVar, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict

DEFAULT_PARTITION = "default"
"""The partition a message names when it names none."""

# proto3 scalar ranges
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

def _no_bool(value: Any) -> Any:
    """``True`` is an ``int`` in Python but not a number in the spec: refuse it."""
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    return value


_Int32 = Annotated[int, Field(ge=_INT32_MIN, le=_INT32_MAX), BeforeValidator(_no_bool)]
# int64: also from a string of digits, which is how proto3's JSON writes int64
_Int64 = Annotated[int, Field(ge=_INT64_MIN, le=_INT64_MAX), BeforeValidator(_no_bool)]
_Bool = Annotated[bool, Strict()]
"""A boolean field takes ``true``/``false`` only (not ``1`` or ``"yes"``)."""
def _clean_id(value: str) -> str:
    """An id a person and a log can read: not blank, no control characters."""
    if value and not value.strip():
        raise ValueError("must not be blank")
    for ch in value:
        if ord(ch) < 32 or ord(ch) == 127:
            raise ValueError(f"must not contain control characters (found {ch!r})")
    return value


# an id the spec requires: must be a non-empty string
_RequiredId = Annotated[str, Field(min_length=1), AfterValidator(_clean_id)]
# an id the spec allows to be empty (the default partition, a release of every ask, ...)
_Id = Annotated[str, AfterValidator(_clean_id)]
_ResourceName = Annotated[str, Field(min_length=1)]

_setattr = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


_REQUIRED: Any = object()

# per model: (field names, ((name, default_factory or None, default or _REQUIRED), ...),
# the names in declaration order)
_ConstructPlan = tuple[frozenset[str], tuple[tuple[str, Callable[[], Any] | None, Any], ...],
                       tuple[str, ...]]
_CONSTRUCT_PLANS: dict[type[BaseModel], _ConstructPlan] = {}


# BaseModel's slots, set through their descriptors: cheaper than ``object.__setattr__`` by
# name, and the core builds thousands of messages per scheduling call this way.
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _new(cls: type[_M], data: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance holding ``data`` as is: what pydantic's ``model_construct`` ends with."""
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", data)
    _set_fields_set(obj, fields_set)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def construct_exact(cls: type[_M], data: dict[str, Any]) -> _M:
    """``cls.model_construct(**data)`` for a ``data`` that names every field of ``cls`` in
    declaration order, skipping the checks that make sure of it: the caller does (the
    outbox, which builds thousands of event records per scheduling call)."""
    return _new(cls, data, set(data))


def construct_all(cls: type[_M], rows: Iterable[dict[str, Any]]) -> list[_M]:
    """:func:`construct_exact` for each of ``rows``, in one loop (a call's thousands of
    event records).

    Every row names every field, so the records share one ``model_fields_set``: a set of
    six names costs more to build than the rest of a record, and pydantic only ever adds
    to it a name it already holds (assignment) or copies it (``model_copy``)."""
    new = cls.__new__
    out: list[_M] = []
    append = out.append
    fields_set = set(cls.model_fields)
    for data in rows:
        obj = new(cls)
        _setattr(obj, "__dict__", data)
        _set_fields_set(obj, fields_set)
        _set_extra(obj, None)
        _set_private(obj, None)
        append(obj)
    return out


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
        plan = (frozenset(cls.model_fields), tuple(steps), tuple(cls.model_fields))
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
        names, steps, order = _construct_plan(cls)
        if len(values) == len(order) and tuple(values) == order:
            # Every field, in declaration order (the outbox passes them so): the kwargs
            # dict is already what the loop below would build.
            return _new(cls, values, set(values) if _fields_set is None else _fields_set)
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

    value: Annotated[int, Field(ge=0, le=_INT64_MAX), BeforeValidator(_no_bool)] = Field(
        default=0, alias="value")


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


