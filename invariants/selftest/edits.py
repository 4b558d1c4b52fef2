"""A broken core: one textual edit of one function of the core, applied by replacing the
function in its module (the core's flows call each other through module attributes, so the
edit takes effect). The snippet must exist, so an edit can not go stale silently."""

from __future__ import annotations
import __future__

import inspect
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any


@dataclass(frozen=True)
class Mutant:
    """One broken core: where the edit is, what it breaks, and the edit itself."""

    name: str
    area: str
    breaks: str
    owner: ModuleType | type
    function: str
    old: str
    new: str


M = Mutant


def _edited(mutant: Mutant) -> Callable[..., Any]:
    original = getattr(mutant.owner, mutant.function)
    source = textwrap.dedent(inspect.getsource(original))
    if mutant.old not in source:
        raise LookupError(f"mutant {mutant.name}: the code to edit is no longer in "
                          f"{mutant.function}; update the mutant")
    code = compile(source.replace(mutant.old, mutant.new, 1), f"<mutant {mutant.name}>",
                   "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    module = inspect.getmodule(original)
    namespace: dict[str, Any] = dict(vars(module)) if module is not None else {}
    exec(code, namespace)
    edited = namespace[mutant.function]
    assert isinstance(edited, FunctionType)
    return edited


@contextmanager
def applied(mutant: Mutant) -> Iterator[None]:
    """The core with ``mutant``'s edit, for the duration of the block."""
    original = getattr(mutant.owner, mutant.function)
    setattr(mutant.owner, mutant.function, _edited(mutant))
    try:
        yield
    finally:
        setattr(mutant.owner, mutant.function, original)
