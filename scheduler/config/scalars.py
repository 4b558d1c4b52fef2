"""YAML scalars as YuniKorn reads them: numbers and booleans keep the text they were written as.

The loader builds these values; resource quantities and string fields read
their text back. They live below both so neither has to import the loader.
YuniKorn's decoder reads YAML 1.2, where only ``true`` and ``false`` are
booleans: ``no``, ``on`` and ``off`` are text (a queue or user may be called
so), and only a boolean field reads them as YAML 1.1 words (:data:`YamlBool`).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BeforeValidator, Strict


class _YamlInt(int):
    """An int read from YAML that remembers how it was written.

    YuniKorn decodes resource quantities and other string fields from the
    scalar's text, so ``010`` is ten there, not YAML 1.1's octal eight.
    Its name shows in an error message (a document that is just ``42``), so
    it keeps this spelling.
    """

    yaml_text: str


class _YamlFloat(float):
    """A float read from YAML that remembers how it was written."""

    yaml_text: str


def scalar_text(value: object) -> object:
    """A YAML scalar as the text YuniKorn's string fields would hold; others unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _YamlInt | _YamlFloat):
        return value.yaml_text
    if isinstance(value, int | float):
        return str(value)
    return value


YamlStr = Annotated[str, BeforeValidator(scalar_text)]
"""A string field; YAML numbers and booleans are taken as their text, as YuniKorn does."""


YAML12_BOOL_WORDS: Final = ("true", "True", "TRUE", "false", "False", "FALSE")
"""The scalars YAML 1.2 (and YuniKorn's decoder) resolves to booleans; the loader's only ones."""

_YAML11_WORDS: Final = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False),
}


def _yaml11_word(value: object) -> object:
    # YuniKorn's decoder still takes YAML 1.1's words when the field is a bool.
    if isinstance(value, str):
        return _YAML11_WORDS.get(value, value)
    return value


YamlBool = Annotated[bool, BeforeValidator(_yaml11_word), Strict()]
"""A boolean field: ``true``/``false``, or a YAML 1.1 word (``yes``, ``off``...) as YuniKorn
reads one into a bool; any other string or number is an error."""
