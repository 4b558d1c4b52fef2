"""Namespace quotas: the application tags that set a created leaf's limits.

The seeds are silent; YuniKorn reads three application tags (the SI constants
``AppTagNamespaceResourceQuota``, ``...Guaranteed``, ``...MaxApps`` of
apache/yunikorn-scheduler-interface ``2858f4d`` lib/go/common/constants.go) and,
when an application enters an unmanaged leaf, sets that leaf's max, guarantee and
``maxapplications`` from them (apache/yunikorn-core be3bb48 pkg/scheduler/partition.go
``AddApplication``, objects/application.go ``getResourceFromTags``, ``getUint64Tag``,
objects/queue.go ``setResources``). A value it can not read sets nothing: the tags are
the shim's, never a reason to reject the application.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

QUOTA = "namespace.resourcequota"
GUARANTEED = "namespace.resourceguaranteed"
MAX_APPS = "namespace.resourcemaxapps"

INT64 = (-(2 ** 63), 2 ** 63 - 1)
UINT64_MAX = 2 ** 64 - 1


class _Unreadable(Exception):
    """What Go's ``json.Unmarshal`` into an ``si.Resource`` would refuse (or panic on)."""


@dataclass(frozen=True, slots=True)
class NamespaceQuota:
    """What an application's tags set on an unmanaged leaf (None, 0: not set)."""

    max: dict[str, int] | None
    guaranteed: dict[str, int] | None
    max_applications: int

    @property
    def sets_resources(self) -> bool:
        """YuniKorn replaces both max and guarantee when either tag reads (``SetResources``:
        the one not given is cleared)."""
        return self.max is not None or self.guaranteed is not None

    @property
    def is_set(self) -> bool:
        return self.sets_resources or self.max_applications != 0


def tag(tags: Mapping[str, str], name: str) -> str:
    """YuniKorn ``GetTag``: the tag's name in any case; the first such key, in the order
    the shim sent them (Go takes whichever its map walk meets first)."""
    return next((v for k, v in tags.items() if k.lower() == name), "")


def read(tags: Mapping[str, str]) -> NamespaceQuota:
    """The namespace quota the application's tags give."""
    return NamespaceQuota(_resource(tag(tags, QUOTA)), _resource(tag(tags, GUARANTEED)),
                          _count(tag(tags, MAX_APPS)))


def _count(text: str) -> int:
    """Go's ``strconv.ParseUint(text, 10, 64)``: ASCII digits only, no sign; else 0."""
    if not text or not text.isascii() or not text.isdigit():
        return 0
    value = int(text)
    return value if value <= UINT64_MAX else 0


def _resource(text: str) -> dict[str, int] | None:
    """The tag's ``si.Resource`` JSON (``{"resources": {"memory": {"value": 10}}}``), kept
    only when strictly above zero (a quantity above zero, none below: YuniKorn
    ``StrictlyGreaterThanZero``). The legacy ``{"memory": 10}`` form reads as an empty
    resource, as in YuniKorn, and so sets nothing."""
    if not text:
        return None
    try:
        parsed = json.loads(text, object_pairs_hook=list, parse_float=_refuse,
                            parse_constant=_refuse)
        quantities = _resources(parsed)
    except (ValueError, _Unreadable, RecursionError):
        return None
    if any(v < 0 for v in quantities.values()) or not any(v > 0 for v in quantities.values()):
        return None
    return quantities


def _refuse(literal: str) -> Any:
    raise _Unreadable(literal)


def _fields(obj: Any) -> list[tuple[str, Any]]:
    if not isinstance(obj, list) or any(not isinstance(p, tuple) for p in obj):
        raise _Unreadable("not an object")
    return obj


def _resources(parsed: Any) -> dict[str, int]:
    """Go's decoding of the whole value: field names matched in any case, a repeated
    ``resources`` merged into the map (a null one empties it), unknown fields skipped."""
    if parsed is None:
        return {}
    out: dict[str, int] = {}
    for key, value in _fields(parsed):
        if key.lower() != "resources":
            continue
        if value is None:
            out = {}
            continue
        for name, quantity in _fields(value):
            out[name] = _quantity(quantity)
    return out


def _quantity(obj: Any) -> int:
    """One ``si.Quantity``: ``{"value": n}``, n a JSON integer within int64. A null
    quantity is refused here (YuniKorn would dereference it and panic)."""
    value = 0
    for key, v in _fields(obj):
        if key.lower() != "value" or v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not INT64[0] <= v <= INT64[1]:
            raise _Unreadable("value")
        value = v
    return value
