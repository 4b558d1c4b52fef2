"""Paths in :class:`~scheduler.errors.ConfigError`: how a place in the document is written.

Map keys that are not plain words are written ``["nvidia.com/gpu"]``, so a
path stays readable and unambiguous when a resource name holds dots.
"""

from __future__ import annotations

import json
import re
from typing import Final

_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z0-9_-]+")


def key_path(prefix: str, key: str) -> str:
    """``prefix.key``, or ``prefix["key"]`` when the key is not a plain word."""
    if _PLAIN_KEY_RE.fullmatch(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{json.dumps(key)}]"
