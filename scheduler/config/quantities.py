"""Resource quantities: YuniKorn's ``ParseQuantity`` and ``ParseVCore``, and resource maps.

Quantities are stored as plain ints, ``vcore`` in milli-cores. A model
validated directly (``SchedulerConfig.model_validate(...)``) expects values
that are already plain non-negative ints; only
:func:`~scheduler.config.parse_config` parses quantity strings such as
``"4Gi"``, so a ``model_dump()`` / ``model_validate()`` round trip never
converts ``vcore`` twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Final

from pydantic import BeforeValidator, ValidationInfo
from pydantic_core import PydanticCustomError

from scheduler.errors import ConfigError

from .paths import key_path
from .scalars import _YamlFloat, _YamlInt, scalar_text

VCORE: Final = "vcore"
_INT64_MAX: Final = 2**63 - 1

_QUANTITY_RE: Final = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-z]*)")
_MULTIPLIERS: Final[Mapping[str, int]] = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}


def _quantity_text(value: object) -> str:
    if isinstance(value, bool):
        raise ConfigError(f"invalid quantity {value!r}: a boolean is not a quantity")
    if isinstance(value, _YamlInt | _YamlFloat):
        return value.yaml_text
    if isinstance(value, float):
        raise ConfigError(f"invalid quantity {value!r}: fractional values are not supported")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise ConfigError(
        f"invalid quantity: expected an integer or a string, got {type(value).__name__}"
    )


def _parse(value: object, *, milli: bool) -> int:
    text = _quantity_text(value)
    match = _QUANTITY_RE.fullmatch(text.strip())
    if match is None:
        stripped = text.strip()
        if stripped.startswith("-"):
            raise ConfigError(f"invalid quantity {text!r}: negative values are not allowed")
        if "." in stripped:
            raise ConfigError(f"invalid quantity {text!r}: fractional values are not supported")
        raise ConfigError(f"invalid quantity {text!r}")
    digits, suffix = match.group(1), match.group(2)
    if suffix == "m":
        if not milli:
            raise ConfigError(f"invalid quantity {text!r}: the 'm' suffix is only valid for vcore")
        scale = 1
    elif suffix in _MULTIPLIERS:
        scale = _MULTIPLIERS[suffix] * (1000 if milli else 1)
    else:
        raise ConfigError(
            f"invalid quantity {text!r}: unknown suffix {suffix!r} "
            "(k M G T P E, Ki Mi Gi Ti Pi Ei" + (", m" if milli else "") + ")"
        )
    if len(digits) > 19 or int(digits) * scale > _INT64_MAX:
        raise ConfigError(f"invalid quantity {text!r}: overflow (more than 2^63-1)")
    return int(digits) * scale


def parse_quantity(value: str | int) -> int:
    """A resource quantity as YuniKorn's ``ParseQuantity`` reads it.

    Digits with an optional suffix: ``k M G T P E`` (powers of 1000) or
    ``Ki Mi Gi Ti Pi Ei`` (powers of 1024); surrounding blanks and blanks
    before the suffix are allowed. Signs, fractions, other suffixes (``K``
    included) and values above 2^63-1 raise :class:`ConfigError` (empty path).
    """
    return _parse(value, milli=False)


def parse_vcore(value: str | int) -> int:
    """A ``vcore`` quantity in milli-cores, as YuniKorn's ``ParseVCore``.

    The config value is in cores (``2`` -> 2000, ``1k`` -> 1000000) unless it
    carries the ``m`` suffix (``500m`` -> 500).
    YuniKorn: fractions are rejected even where they would be whole milli-cores
    (``0.5`` is an error; write ``500m``).
    """
    return _parse(value, milli=True)


def parse_resource(resource: str, value: str | int) -> int:
    """One configured value: :func:`parse_vcore` for ``vcore``, else :func:`parse_quantity`."""
    return _parse(value, milli=resource == VCORE)


def parse_resources(values: Mapping[str, str | int]) -> dict[str, int]:
    """A whole resource map; a bad value raises :class:`ConfigError` whose path is its key."""
    out: dict[str, int] = {}
    for name, raw in values.items():
        try:
            out[name] = parse_resource(name, raw)
        except ConfigError as exc:
            raise ConfigError(exc.reason, key_path("", name)) from None
    return out


def _resource_map(value: object, info: ValidationInfo) -> object:
    """Validate a resource map; with the ``quantities`` context, parse YuniKorn quantities."""
    if not isinstance(value, Mapping):
        return value  # pydantic reports the type error
    parse = bool(info.context and info.context.get("quantities"))
    out: dict[str, int] = {}
    for key, raw in value.items():
        name = scalar_text(key)
        if not isinstance(name, str):
            raise PydanticCustomError("resource_name", "resource names must be strings")
        if parse:
            try:
                out[name] = parse_resource(name, raw)
            except ConfigError as exc:
                raise PydanticCustomError(
                    "quantity", "{reason}", {"reason": exc.reason, "resource": name}
                ) from None
        elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= _INT64_MAX:
            out[name] = int(raw)
        else:
            raise PydanticCustomError(
                "quantity",
                "{reason}",
                {
                    "reason": f"expected a non-negative integer quantity, got {raw!r}",
                    "resource": name,
                },
            )
    return out


ResourceMap = Annotated[dict[str, int], BeforeValidator(_resource_map)]
"""``{resource type: quantity}``; ``vcore`` in milli-cores."""
