"""YAML scalars as YuniKorn reads them: numbers and booleans keep the text they were written as.

The loader builds these values; resource quantities and string fields read
their text back. They live below both so neither has to import the loader.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


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
